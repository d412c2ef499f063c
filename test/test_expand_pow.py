"""Powers by a constant (half-)integer exponent without libm (kiln-expand-pow;
the IR is in test/lit/passes/kiln-expand-pow.mlir): code written the way a
gravity simulation, a molecular-dynamics potential, an orbit or a
normalization is written, against NumPy at sizes 0, 1, odd and large;
results correctly rounded (against a 60-digit decimal reference) where
glibc's and NumPy's pow are not always; NumPy's special values (zeros,
infinities, NaN, negative bases, subnormals) exactly; and no pow call left
in the LLVM IR."""

from __future__ import annotations

import decimal

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 17, 1001, 100_003)
EXPONENTS = (-16.0, -7.5, -3.0, -2.0, -1.5, -1.0, -0.5, 1.5, 2.0, 2.5, 3.0, 4.0, 12.0, 15.5, 16.0)


def gravity(pos, mass, softening):
    x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
    dx, dy, dz = x.T - x, y.T - y, z.T - z
    inv_r3 = dx**2 + dy**2 + dz**2 + softening**2
    inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)
    return np.hstack(((dx * inv_r3) @ mass, (dy * inv_r3) @ mass, (dz * inv_r3) @ mass))


def lennard_jones(r, sigma, epsilon):
    sr = sigma / r
    return 4.0 * epsilon * (sr ** 12.0 - sr ** 6.0)


def orbit_periods(a):
    return 2.0 * np.pi * a ** 1.5


def normalize_rows(w):
    norms = (w ** 2.0).sum(axis=1, keepdims=True) ** 0.5
    return w * norms ** -1.0


def cube_in_loop(x, steps):
    for _ in range(steps):
        x **= 3.0
        x *= 0.5
    return x


def _power_function(c):
    namespace = {}
    exec(f"def power(x):\n    return x ** {c!r}\n", namespace)
    return namespace["power"]


def _correctly_rounded(x: float, c: float, dtype) -> float:
    """x ** c to 60 digits, rounded once to `dtype`."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        d = decimal.Decimal(float(x))
        twice = int(2 * c)
        value = d ** abs(twice)
        value = value.sqrt()
        if twice < 0:
            value = 1 / value
    return dtype(str(value)) if dtype is np.float32 else float(str(value))


def _same(a, b):
    """Equal values, NaN where NaN, zeros and infinities of the same sign."""
    return np.all(((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b)))


@pytest.mark.parametrize("n", [0, 1, 2, 25, 150])
def test_gravity_like_numpy(n):
    rng = np.random.default_rng(n)
    pos, mass = rng.standard_normal((n, 3)), rng.random((n, 1)) + 0.5
    got = kiln.qjit(gravity)(pos, mass, 0.1)
    np.testing.assert_allclose(got, gravity(pos, mass, 0.1), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_potentials_and_orbits(dtype, n):
    rng = np.random.default_rng(n)
    r = (rng.random(n) * 3 + 0.8).astype(dtype)
    rtol = 2e-6 if dtype == np.float32 else 1e-14
    got = kiln.qjit(lennard_jones)(r, dtype(1.0), dtype(0.5))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, lennard_jones(r, dtype(1.0), dtype(0.5)), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(kiln.qjit(orbit_periods)(r), orbit_periods(r), rtol=rtol)


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (7, 5), (300, 257)])
def test_normalize_rows(shape):
    w = np.random.default_rng(7).standard_normal(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = normalize_rows(w)
    np.testing.assert_allclose(kiln.qjit(normalize_rows)(w), expected, rtol=1e-15)


@pytest.mark.parametrize("n", [0, 1, 33, 10_001])
def test_power_in_place_in_a_loop(n):
    x = np.random.default_rng(n).random(n) + 0.5
    expected, got = cube_in_loop(x.copy(), 4), x.copy()
    kiln.qjit(cube_in_loop)(got, 4)
    np.testing.assert_allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("c", EXPONENTS)
def test_correctly_rounded_f64(c):
    rng = np.random.default_rng(int(c * 4) + 100)
    bound = 600 / max(abs(c), 1)  # results stay normal
    x = np.concatenate([rng.random(600) * 10, np.exp(rng.uniform(-bound, bound, 600)),
                        [1.0, 2.0, 4.0, 0.25, 9.0, 1e-300, 2.0 ** -1022, 1.7976931348623157e308]])
    x = x[np.abs(np.log2(x) * c) < 1020]
    got = kiln.qjit(_power_function(c))(x)
    expected = np.array([_correctly_rounded(v, c, np.float64) for v in x])
    assert np.array_equal(got, expected), x[got != expected][:5]
    np.testing.assert_array_max_ulp(got, x ** c, maxulp=1)


@pytest.mark.parametrize("c", (-1.5, -0.5, 2.0, 3.0, -2.5, 16.0))
def test_correctly_rounded_f32(c):
    rng = np.random.default_rng(int(c * 4) + 200)
    x = np.concatenate([rng.random(1000) * 10, np.exp(rng.uniform(-5, 5, 1000))]).astype(np.float32)
    got = kiln.qjit(_power_function(c))(x)
    assert got.dtype == np.float32
    expected = np.array([_correctly_rounded(v, c, np.float32) for v in x], dtype=np.float32)
    assert np.array_equal(got, expected)
    np.testing.assert_array_max_ulp(got, x ** np.float32(c), maxulp=1)


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, -2.5, 3.0, 5e-324, -5e-324, 1e-310,
            2.0 ** -1022, 1.7976931348623157e308, -1.7976931348623157e308, 1e-160, 1e160, 1e-200, 1e200]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("c", EXPONENTS + (0.0, 1.0, 0.5))
def test_special_values_as_numpy(dtype, c):
    extra = [1e-45, 1e-40, 3e38, -3e38, 1e-20, 1e20] if dtype == np.float32 else []
    with np.errstate(all="ignore"):
        x = np.array(SPECIALS + extra, dtype=dtype)
        expected = x ** dtype(c)
    got = kiln.qjit(_power_function(c))(x)
    assert got.dtype == expected.dtype
    exact = np.isnan(expected) | np.isinf(expected) | (expected == 0) | np.isnan(got)
    assert _same(got[exact], expected[exact]), (x[exact], got[exact], expected[exact])
    # Elsewhere at most one ulp from NumPy (subnormal results: of the subnormal spacing).
    np.testing.assert_array_max_ulp(got[~exact], expected[~exact], maxulp=1)


def test_exact_cases_are_numpys():
    x = np.random.default_rng(3).random(10_001) * 100
    square, root, inverse = kiln.qjit(lambda v: (v ** 2.0, v ** 0.5, v ** -1.0))(x)
    assert np.array_equal(square, x * x)
    assert np.array_equal(root, np.sqrt(x))
    assert np.array_equal(inverse, 1.0 / x)


def test_a_traced_exponent_still_calls_pow():
    x = np.random.default_rng(4).random(101) + 0.1
    power = kiln.qjit(lambda v, e: v ** e, keep_intermediate=True)
    np.testing.assert_array_equal(power(x, 1.5), np.array([pow(v, 1.5) for v in x]))


def test_no_pow_call_left():
    power = kiln.qjit(lambda v: (v ** -1.5) * (v ** 3.0), keep_intermediate=True)
    x = np.linspace(0.5, 4.0, 1001)
    np.testing.assert_allclose(power(x), x ** -1.5 * x ** 3.0, rtol=1e-15)
    text = kiln.get_compilation_stage(power, "llvmir")
    assert "@pow(" not in text and "llvm.pow" not in text
    assert "prefer-vector-width" in text
