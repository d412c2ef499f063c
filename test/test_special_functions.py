"""math.erf / math.erfc on traced numbers and scipy.special.erf / erfc on traced arrays
(issue 14), against Python's math (the same C library function: equal to the bit) and
scipy, at sizes 0, 1, odd and large, tails, signed zeros, infinities and NaN."""

import math

import numpy as np
import pytest
import scipy.special

import kiln
from kiln.errors import KilnTypeError

SIZES = (0, 1, 7, 1000)


def _points(size: int, rng: np.random.Generator) -> np.ndarray:
    special = np.array([0.0, -0.0, 5e-324, 1e-300, 1e-10, 0.84375, 1.25, 2.857, 6.0, 26.5, 27.3, 40.0, -6.0,
                        -40.0, np.inf, -np.inf, np.nan])
    bulk = np.concatenate([rng.normal(0, 3, size), rng.uniform(-30, 30, size)])[:size]
    return np.concatenate([bulk, special[:size]])


def _pythons(fn, x: np.ndarray) -> np.ndarray:
    return np.array([fn(float(v)) for v in x.ravel()], dtype=np.float64).reshape(x.shape)


def test_math_erf_and_erfc_in_a_loop_equal_pythons_to_the_bit(execution):
    @kiln.qjit
    def f(x):
        out = np.zeros((2, len(x)))
        for i in range(len(x)):
            out[0, i] = math.erf(x[i])
            out[1, i] = math.erfc(x[i])
        return out

    rng = np.random.default_rng(0)
    for size in SIZES:
        x = _points(size, rng)
        got = f(x)
        np.testing.assert_array_equal(got[0], _pythons(math.erf, x))
        np.testing.assert_array_equal(got[1], _pythons(math.erfc, x))
    assert f.num_compiles == 1


def test_math_erf_of_traced_ints_and_float32_computes_in_float64(execution):
    @kiln.qjit
    def f(k, y):
        return math.erf(k), math.erfc(y)

    for k, y in ((0, np.float32(0.5)), (-2, np.float32(3.25)), (1, np.float32(-1e-3))):
        a, b = f(k, y)
        assert a == math.erf(k) and np.asarray(a).dtype == np.float64
        assert b == math.erfc(float(y)) and np.asarray(b).dtype == np.float64


def test_scipy_erf_and_erfc_on_arrays_keep_scipys_dtypes(execution):
    @kiln.qjit
    def f(x, y, k):
        return scipy.special.erf(x), scipy.special.erfc(y), scipy.special.erf(k)

    rng = np.random.default_rng(1)
    compiles = None
    for size in SIZES:
        x = _points(size, rng).reshape(-1, 1) * np.ones(3)
        y = _points(size, rng).astype(np.float32)
        k = rng.integers(-3, 4, size)
        a, b, c = f(x, y, k)
        assert (a.dtype, b.dtype, c.dtype) == (np.float64, np.float32, np.float64)
        np.testing.assert_array_equal(a, _pythons(math.erf, x))
        np.testing.assert_allclose(a, scipy.special.erf(x), rtol=1e-15, atol=0)
        np.testing.assert_allclose(b, scipy.special.erfc(y), rtol=2e-6, atol=1e-37)
        np.testing.assert_array_equal(c, _pythons(math.erf, k))
        np.testing.assert_allclose(c, scipy.special.erf(k), rtol=1e-15, atol=0)
        if size == 7:
            compiles = f.num_compiles
    assert f.num_compiles == compiles  # the large size reuses the odd size's code


def test_erf_in_a_formula_black_scholes_style(execution):
    @kiln.qjit
    def price(S, K, sigma):
        d1 = (np.log(S / K) + 0.5 * sigma ** 2) / sigma
        return S * 0.5 * (1 + scipy.special.erf(d1 / math.sqrt(2))) - K * 0.5 * scipy.special.erfc(
            (d1 - sigma) / -math.sqrt(2))

    rng = np.random.default_rng(2)
    for size in SIZES:
        S, K = rng.uniform(50, 150, size), rng.uniform(50, 150, size)
        d1 = (np.log(S / K) + 0.5 * 0.2 ** 2) / 0.2
        want = S * 0.5 * (1 + scipy.special.erf(d1 / math.sqrt(2))) - K * 0.5 * scipy.special.erfc(
            (d1 - 0.2) / -math.sqrt(2))
        np.testing.assert_allclose(price(S, K, 0.2), want, rtol=1e-13, atol=1e-10)


def test_erf_of_a_complex_or_array_argument_is_refused(execution):
    @kiln.qjit
    def complex_erf(z):
        return scipy.special.erf(z)

    with pytest.raises(KilnTypeError, match=r"scipy.special.erf of a traced c128\[\?\] computes in complex128.*float32 and float64 only"):
        complex_erf(np.ones(3, dtype=np.complex128))

    @kiln.qjit
    def array_math_erf(x):
        return math.erf(x)

    with pytest.raises(KilnTypeError, match=r"math.erf\(\) takes a number, but got a traced array of shape"):
        array_math_erf(np.ones(3))
