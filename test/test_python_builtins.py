"""Python builtins and `math` on traced values (issue 14 item 4), against Python and NumPy."""

import math

import numpy as np
import pytest

import kiln
from kiln.errors import KilnTypeError

SIZES = (0, 1, 7, 1000)


def test_min_and_max_of_traced_numbers_nussinov_style():
    @kiln.qjit(autograph=True)
    def f(table, i, j):
        a = max(table[i, j], table[i + 1, j - 1] + 1.0)
        b = min(table[i, j], table[i + 1, j - 1], 0.25)
        return a, b, max(i, j), min(i, j, 2)

    table = np.random.rand(5, 5)
    for i, j in ((0, 1), (3, 4), (2, 2)):
        a, b, m, n = f(table, i, j)
        assert a == max(table[i, j], table[i + 1, j - 1] + 1.0)
        assert b == min(table[i, j], table[i + 1, j - 1], 0.25)
        assert (m, n) == (max(i, j), min(i, j, 2))


def test_max_keeps_the_first_of_equals_and_pythons_nan_order():
    @kiln.qjit(autograph=True)
    def f(a, b):
        return max(a, b), min(a, b)

    for a, b in ((np.nan, 1.0), (1.0, np.nan), (2.0, 2.0), (-0.0, 0.0)):
        got = f(a, b)
        np.testing.assert_array_equal(got, (max(a, b), min(a, b)))


def test_min_and_max_over_a_traced_array_and_an_iterable():
    @kiln.qjit(autograph=True)
    def f(x):
        return max(x), min(x), max([x[0], x[-1], 0.5]), min(v * 2.0 for v in (x[0], x[-1]))

    for size in SIZES[1:]:
        x = np.random.rand(size)
        got = f(x)
        want = (max(x), min(x), max([x[0], x[-1], 0.5]), min(v * 2.0 for v in (x[0], x[-1])))
        np.testing.assert_allclose(got, want)


def test_max_with_key_is_refused():
    @kiln.qjit(autograph=True)
    def f(a, b):
        return max(a, b, key=abs)

    with pytest.raises(KilnTypeError, match=r"max\(\.\.\., key=\.\.\.\) on traced values.*np\.argmax"):
        f(1.0, -2.0)


def test_max_over_a_2d_traced_array_is_refused():
    @kiln.qjit(autograph=True)
    def f(x):
        return max(x)

    with pytest.raises(KilnTypeError, match=r"max\(\) over a traced array of shape .*np\.max\(x, axis=0\)"):
        f(np.ones((2, 3)))


def test_sum_adds_rows_like_python():
    @kiln.qjit(autograph=True)
    def f(x, m, b):
        return sum(x), sum(m), sum(x, 10.0), sum(b), sum(v * v for v in (x[0], x[-1]))

    for size in SIZES[1:]:
        x = np.random.rand(size)
        m = np.random.rand(size, 3)
        b = np.random.rand(size) > 0.5
        got = f(x, m, b)
        want = (sum(x), sum(m), sum(x, 10.0), sum(b), sum(v * v for v in (x[0], x[-1])))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)
            assert np.asarray(g).dtype == np.asarray(w).dtype


def test_sum_of_an_empty_array_is_start():
    @kiln.qjit(autograph=True)
    def f(x):
        return sum(x), sum(x, 2.5)

    np.testing.assert_allclose(f(np.zeros(0)), (0.0, 2.5))


def test_len_of_a_traced_array_is_its_first_dim():
    @kiln.qjit(autograph=True)
    def f(x):
        return len(x) * 2

    for size in SIZES:
        assert f(np.zeros((size, 2))) == 2 * size


def test_conversions_give_traced_scalars():
    @kiln.qjit(autograph=True)
    def f(x, k):
        return float(k) / 2, int(x), bool(x), complex(x), complex(x, k), float(x > 0)

    for x, k in ((2.7, 3), (-2.7, -3), (0.0, 0), (1e10, 7)):
        got = f(x, k)
        want = (float(k) / 2, int(x), bool(x), complex(x), complex(x, k), float(x > 0))
        for g, w in zip(got, want):
            assert g == w
            assert np.asarray(g).dtype == np.asarray(w).dtype


def test_float_of_a_traced_array_is_refused():
    @kiln.qjit(autograph=True)
    def f(x):
        return float(x)

    with pytest.raises(KilnTypeError, match=r"float\(\) takes a number, but got a traced array"):
        f(np.ones(3))


def test_abs_round_divmod_pow_without_autograph():
    @kiln.qjit(autograph=False)
    def f(x, k):
        q, r = divmod(x, 0.75)
        qi, ri = divmod(k, 3)
        return abs(x), round(x), round(x, 1), q, r, qi, ri, pow(x, 2), pow(k, 2), divmod(7, k)[1]

    for x, k in ((2.5, 7), (-2.5, -7), (3.5, 1), (0.0, 5)):
        got = f(x, k)
        want = (abs(x), round(x), round(x, 1), *divmod(x, 0.75), *divmod(k, 3), pow(x, 2), pow(k, 2),
                divmod(7, k)[1])
        for g, w in zip(got, want):
            assert g == w, (x, k, got, want)


def test_round_of_a_traced_array_is_refused_as_numpy_refuses_it():
    @kiln.qjit(autograph=False)
    def f(x):
        return round(x)

    with pytest.raises(TypeError):
        round(np.ones(3))
    with pytest.raises(KilnTypeError, match=r"round\(\) of a traced array .*np\.round\(x, decimals\)"):
        f(np.ones(3))


MATH_UNARY = ["sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "atan", "sinh",
              "cosh", "tanh", "asinh", "fabs", "degrees", "radians", "floor", "ceil", "trunc", "isnan",
              "isinf", "isfinite"]


def test_math_functions_on_traced_scalars():
    fns = [getattr(math, name) for name in MATH_UNARY]

    @kiln.qjit(autograph=True)
    def f(x, y):
        return (tuple(fn(x) for fn in fns), math.atan2(y, x), math.hypot(x, y), math.fmod(y, x),
                math.pow(x, 2), math.log(x, 2), math.sqrt(3), math.pi * x, math.asin(y / 10), math.acos(y / 10))

    for x, y in ((2.5, 1.0), (0.5, -3.0), (7.0, 7.0)):
        unary, *rest = f(x, y)
        want = ([fn(x) for fn in fns], math.atan2(y, x), math.hypot(x, y), math.fmod(y, x), math.pow(x, 2),
                math.log(x, 2), math.sqrt(3), math.pi * x, math.asin(y / 10), math.acos(y / 10))
        for name, g, w in zip(MATH_UNARY, unary, want[0]):
            np.testing.assert_allclose(g, w, err_msg=name)
            assert np.asarray(g).dtype == np.asarray(w).dtype, name
        np.testing.assert_allclose(rest, want[1:])


def test_math_on_an_integer_traced_scalar_and_special_values():
    @kiln.qjit(autograph=True)
    def f(k, x):
        return math.sqrt(k), math.floor(k), math.isnan(x), math.isinf(x), math.isfinite(x)

    for k, x in ((4, np.nan), (9, np.inf), (0, 1.0)):
        got = f(k, x)
        assert got == (math.sqrt(k), math.floor(k), math.isnan(x), math.isinf(x), math.isfinite(x))


def test_builtins_in_a_helper_and_a_loop_over_traced_bounds():
    def best(a, b):
        return max(a, b)

    @kiln.qjit(autograph=True)
    def f(x):
        acc = -math.inf
        for i, v in enumerate(x):
            acc = best(acc, abs(v) + i)
        return acc

    for size in SIZES:
        x = np.random.randn(size)
        want = -math.inf
        for i, v in enumerate(x):
            want = max(want, abs(v) + i)
        np.testing.assert_allclose(f(x), want)


def test_reversed_over_a_traced_array():
    @kiln.qjit(autograph=True)
    def f(x):
        acc = 0.0
        for i, v in enumerate(reversed(x)):
            acc = acc * 0.5 + v * i
        return acc, reversed(x)

    for size in SIZES:
        x = np.random.rand(size)
        want = 0.0
        for i, v in enumerate(reversed(x)):
            want = want * 0.5 + v * i
        got = f(x)
        np.testing.assert_allclose(got[0], want)
        np.testing.assert_array_equal(got[1], x[::-1])


def test_builtins_outside_a_trace_are_pythons():
    assert max is __builtins__["max"] if isinstance(__builtins__, dict) else max is __builtins__.max
    from kiln.numpy.python_builtins import max_, sum_

    assert max_(1, 3, 2) == 3 and max_([], default=5) == 5 and sum_([1, 2], 3) == 6
    assert max_(["a", "bb"], key=len) == "bb"
