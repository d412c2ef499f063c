"""Divisions by a value that does not change along a loop run through its
reciprocal, exactly (kiln-divide-by-reciprocal; the IR is in
test/lit/passes/kiln-divide-by-reciprocal.mlir): quotients equal to NumPy's
bit for bit, written the way finite differences, normalizations and unit
conversions are written, at sizes 0, 1, around the block of 1024 and large,
with the values that take the division again (zeros of both signs, NaN,
infinities, huge and subnormal dividends; zero, infinite, NaN and extreme
divisors), through views and in place."""

from __future__ import annotations

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 7, 1023, 1024, 1025, 5000)


def central_difference(u, dx):
    return (u[2:] - u[:-2]) / (2 * dx)


def normalize_rows(e):
    return e / e.sum(axis=1, keepdims=True)


def normalize_thirds(e):
    # (The per-row divisor is itself a quotient: both divide, the first once per row.)
    return e / (e.sum(axis=1, keepdims=True) / 3.0)


def to_celsius(kelvin, scale):
    return (kelvin - 273.15) / scale


def pressure_step(p, b, dx, dy):
    out = np.zeros_like(p)
    out[1:-1, 1:-1] = (((p[1:-1, 2:] + p[1:-1, :-2]) * dy ** 2 + (p[2:, 1:-1] + p[:-2, 1:-1]) * dx ** 2)
                       / (2 * (dx ** 2 + dy ** 2)) - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
    return out


def _same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    # Bit for bit, NaN for NaN (NumPy's NaN payloads are not compared).
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint8), expected[~nan].view(np.uint8))


def _special(dtype):
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, np.nan, np.inf, -np.inf, float(info.max), float(-info.max),
                     float(info.tiny), float(info.tiny) / 8, float(info.smallest_subnormal), 1e-30, 1e30, 1.0,
                     -3.0], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", SIZES)
def test_random_quotients_match_numpy_bit_for_bit(dtype, n):
    rng = np.random.default_rng(n)
    u = (rng.standard_normal(n + 2) * 10.0 ** rng.integers(-8, 8, n + 2)).astype(dtype)
    f = kiln.qjit(central_difference)
    for dx in (0.1, 3.0, 1e-7, -2.5, 7.0 / 3.0):
        _same(f(u, dtype(dx)), central_difference(u, dtype(dx)))
    kelvin = rng.uniform(0, 500, n).astype(dtype)
    _same(kiln.qjit(to_celsius)(kelvin, dtype(1.8)), to_celsius(kelvin, dtype(1.8)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_dividends_anywhere_in_a_block(dtype):
    rng = np.random.default_rng(7)
    f = kiln.qjit(lambda x, c: x / c)
    for value in _special(dtype):
        for position in (0, 511, 1023, 1024, 2999):
            x = rng.standard_normal(3000).astype(dtype)
            x[position] = value
            for c in (3.0, -0.1, 1e-20, 1e20):
                with np.errstate(all="ignore"):
                    expected = x / dtype(c)
                _same(f(x, dtype(c)), expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_divisors(dtype):
    x = np.concatenate([_special(dtype), np.random.default_rng(1).standard_normal(2000).astype(dtype)])
    f = kiln.qjit(lambda x, c: x / c)
    info = np.finfo(dtype)
    for c in [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.max), float(info.tiny),
              float(info.smallest_subnormal), 2.0 ** -40, 2.0 ** 40, 2.0 ** -120, 2.0 ** 120]:
        c = dtype(c)
        if not np.isfinite(c) and np.isfinite(float(c)):
            continue
        with np.errstate(all="ignore"):
            expected = x / c
        _same(f(x, c), expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(0, 4), (1, 1), (3, 1025), (40, 61)])
def test_one_divisor_per_row(dtype, shape):
    # (Eighths: every row sum is exact in any order, so the divisors are NumPy's.)
    e = (np.random.default_rng(shape[1]).integers(0, 64, shape) / 8).astype(dtype)
    if e.size:
        e[0, 0] = 0.0  # a zero row sum in a 1-wide row: 0 / 0
    for fn in (normalize_rows, normalize_thirds):
        with np.errstate(all="ignore"):
            expected = fn(e)
            got = kiln.qjit(fn)(e)
        _same(got, expected)


@pytest.mark.parametrize("n", [3, 4, 61, 130])
def test_pressure_stencil_matches_numpy(n):
    rng = np.random.default_rng(n)
    p, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    _same(kiln.qjit(pressure_step)(p, b, 2.0 / 40, 2.0 / 60), pressure_step(p, b, 2.0 / 40, 2.0 / 60))


@pytest.mark.parametrize("fn, args", [(central_difference, (np.ones(9), 0.5)),
                                      (normalize_rows, (np.ones((3, 4), dtype=np.float32),)),
                                      (pressure_step, (np.ones((5, 5)), np.ones((5, 5)), 0.1, 0.2))])
def test_the_quotients_above_take_the_reciprocal(fn, args):
    f = kiln.qjit(fn, keep_intermediate=True)
    f(*args)
    assert "kiln.rarely_taken" in kiln.get_compilation_stage(f, "bufferized")


def test_in_place_and_overlapping_views_keep_numpy_semantics():
    def scale_in_place(x, c):
        x /= c
        return x

    def shifted(x, c):
        x[1:] = x[:-1] / c
        return x

    rng = np.random.default_rng(3)
    for n in (0, 1, 1025, 3000):
        x = rng.standard_normal(n)
        x[: n // 2] *= 1e300
        expected = x.copy()
        with np.errstate(over="ignore"):
            scale_in_place(expected, 1e-10)
        got = x.copy()
        with np.errstate(over="ignore"):
            kiln.qjit(scale_in_place)(got, 1e-10)
        _same(got, expected)
        expected, got = x.copy(), x.copy()
        shifted(expected, 3.0)
        kiln.qjit(shifted)(got, 3.0)
        _same(got, expected)


def test_a_divisor_that_changes_inside_a_time_loop():
    def relax(u, steps):
        for k in range(steps):
            u = u / (1.0 + 0.5 * k)
            u[0] = 1.0
        return u

    u = np.linspace(0.0, 1.0, 2049)
    _same(kiln.qjit(relax)(u.copy(), 6), relax(u.copy(), 6))


def test_the_arithmetic_matches_division_on_every_f32_dividend():
    """cmake-free-scripts/check_reciprocal_division.py --quick, in C: for 3
    divisors every f32 dividend the pass keeps on its fast path, and 2e7
    random f64 pairs, give x / c bit for bit (the full run checks 40 f32
    divisors and 2.56e9 f64 pairs)."""
    import os
    import subprocess
    import sys

    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cmake-free-scripts",
                          "check_reciprocal_division.py")
    done = subprocess.run([sys.executable, script, "--quick"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("0 mismatches")


def _quotients(a, c):
    return a / c, a[::2] / c, a.T / c


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("order", ["C", "F"])
def test_views_orders_and_integer_true_division(dtype, order):
    rng = np.random.default_rng(5)
    a = np.asarray(rng.integers(-50, 50, (37, 1030)), dtype=dtype, order=order)
    f = kiln.qjit(_quotients)
    for c in (3, 7.5, -0.2):
        with np.errstate(all="ignore"):
            expected = _quotients(a, c)
        for got, want in zip(f(a, c), expected):
            _same(got, want)


def test_three_dimensional_and_per_plane_divisors():
    def per_plane(x):
        return x / x.max(axis=(1, 2), keepdims=True), x / np.float64(x.shape[2])

    x = np.random.default_rng(2).uniform(0.5, 2.0, (4, 5, 2049))
    for got, want in zip(kiln.qjit(per_plane)(x), per_plane(x)):
        _same(got, want)


def test_a_divisor_that_changes_every_iteration_of_an_outer_loop():
    def damped(u, steps):
        out = np.zeros((steps, u.shape[0]))
        for k in range(steps):
            out[k] = u / (k + 0.5)
        return out

    u = np.random.default_rng(4).standard_normal(3001)
    _same(kiln.qjit(damped)(u, 7), damped(u, 7))


def test_complex_and_mixed_precision_quotients():
    def mixed(a, b, c):
        return a / c, b / c, (a + 1j * a) / c

    rng = np.random.default_rng(6)
    a = rng.standard_normal(1500).astype(np.float32)
    b = rng.standard_normal(1500)
    got, want = kiln.qjit(mixed)(a, b, np.float32(3.3)), mixed(a, b, np.float32(3.3))
    _same(got[0], want[0])
    _same(got[1], want[1])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
