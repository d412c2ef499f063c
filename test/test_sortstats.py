"""Sorting, searching, sets and statistics (issue 15, sortstats) against
NumPy: every sortable dtype, sizes 0, 1, odd and large (past the runtime's
insertion-sort cutoff), NaNs and ties, axes, views sorted in place, the
reference interpreter, and NumPy's errors. The broad per-function cases are
in test/numpy_list/cases_sortstats.py."""

from __future__ import annotations

import numpy as np
import pytest

import kiln

DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8",
          "uint64", "uint32", "uint16", "uint8", "bool"]
SIZES = [0, 1, 7, 33, 2000]


def _data(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, 40, shape).astype(dtype)
    values = rng.integers(-20, 20, shape).astype(dtype)
    if dtype.kind == "f":
        values = (values + rng.random(shape).astype(dtype) * 0.5).astype(dtype)
        values.flat[::5] = np.nan
        values.flat[1::7] = -0.0
        values.flat[2::11] = np.inf
    return values


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_and_stable_argsort_every_dtype(dtype):
    rng = np.random.default_rng(0)

    @kiln.qjit
    def f(a):
        return np.sort(a), np.argsort(a, kind="stable"), np.sort(a, axis=0), np.argsort(a, axis=0, kind="stable")

    compiles = None
    for n in SIZES:
        a = _data(rng, (n, 3), dtype)
        got = f(a)
        if n == 7:
            compiles = f.num_compiles  # sizes 0 and 1 are signatures of their own (unit dims)
        want = (np.sort(a), np.argsort(a, kind="stable"), np.sort(a, axis=0), np.argsort(a, axis=0, kind="stable"))
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
    assert f.num_compiles == compiles


@pytest.mark.parametrize("dtype", ["float64", "int32", "uint8", "float32"])
def test_partition_puts_every_kth_in_place(dtype):
    rng = np.random.default_rng(1)

    @kiln.qjit
    def f(a, k):
        return np.partition(a, [0, k, -1]), np.argpartition(a, k)

    for n in (3, 9, 2001):
        a = _data(rng, n, dtype)
        k = n // 2
        p, i = f(a, k)
        s = np.sort(a)
        for kk in (0, k, n - 1):
            np.testing.assert_array_equal(p[kk], s[kk])
            assert not np.any(p[:kk] > s[kk]) and not np.any(p[kk + 1:] < s[kk])
        np.testing.assert_array_equal(np.sort(i), np.arange(n))
        np.testing.assert_array_equal(a[i[k]], s[k])
        np.testing.assert_array_equal(np.sort(p), s)


def test_partition_kth_out_of_bounds_is_numpys_value_error():
    f = kiln.qjit(lambda a, k: np.partition(a, k))
    with pytest.raises(ValueError, match="kth"):
        f(np.arange(4.0), 4)
    with pytest.raises(ValueError, match="kth"):
        kiln.qjit(lambda a: np.partition(a, 7))(np.zeros((2, 3)))


def test_sort_method_writes_through_views():
    def f(a):
        a[:, 1].sort()
        a[::2].sort(axis=1)
        b = a.T
        b.sort(axis=0)

    a = np.random.default_rng(2).standard_normal((9, 4))
    expected = a.copy()
    f(expected)
    kiln.qjit(f)(a)
    np.testing.assert_array_equal(a, expected)


def test_sort_matches_the_interpreter_and_refuses_complex():
    a = np.array([3.0, np.nan, -1.0, 2.0, -0.0, 0.0])
    np.testing.assert_array_equal(kiln.interpret(lambda x: np.sort(x))(a), np.sort(a))
    np.testing.assert_array_equal(kiln.qjit(lambda x: np.argsort(x, kind="stable"))(a),
                                  np.argsort(a, kind="stable"))
    with pytest.raises(TypeError, match="complex"):
        kiln.qjit(lambda x: np.sort(x))(np.ones(3, dtype=np.complex128))
    with pytest.raises(ValueError, match="kind"):
        kiln.qjit(lambda x: np.sort(x, kind="bogus"))(a)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_with_nans_and_ties(side):
    rng = np.random.default_rng(3)

    @kiln.qjit
    def f(a, v):
        return np.searchsorted(a, v, side=side)

    for n in (0, 1, 6, 1000):
        a = np.sort(np.concatenate([rng.integers(0, 5, n).astype(float), [np.nan] * (n % 3)]))
        v = np.array([-1.0, 0.0, 2.0, 2.5, 4.0, 9.0, np.nan])
        np.testing.assert_array_equal(f(a, v), np.searchsorted(a, v, side=side))


def test_digitize_rejects_non_monotonic_bins():
    f = kiln.qjit(lambda x, b: np.digitize(x, b))
    with pytest.raises(ValueError, match="monotonically"):
        f(np.ones(3), np.array([0.0, 2.0, 1.0]))
    x = np.array([-1.0, 0.0, 0.5, 3.0])
    for bins in (np.array([0.0, 1.0, 2.0]), np.array([2.0, 1.0, 0.0]), np.array([1.0, 1.0])):
        np.testing.assert_array_equal(f(x, bins), np.digitize(x, bins))


@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8", "bool", "float32"])
def test_unique_empty_full_and_every_dtype(dtype):
    rng = np.random.default_rng(4)

    @kiln.qjit
    def f(a):
        return np.unique(a, return_index=True, return_inverse=True, return_counts=True)

    for n in (0, 1, 5, 300):
        for a in (_data(rng, (n, 2), dtype), np.zeros((n, 2), dtype=dtype)):
            got, want = f(a), np.unique(a, return_index=True, return_inverse=True, return_counts=True)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_array_equal(g, w)


def test_set_functions_and_trim_zeros_on_empty_and_full():
    f = kiln.qjit(lambda a, b: (np.setdiff1d(a, b), np.intersect1d(a, b), np.union1d(a, b), np.setxor1d(a, b),
                                np.isin(a, b), np.trim_zeros(a)))
    for a, b in ((np.zeros(0), np.zeros(0)), (np.zeros(5), np.zeros(0)), (np.arange(5.0), np.arange(5.0)),
                 (np.array([0, 0, 1.0, 2, 0]), np.array([2.0, np.nan]))):
        want = (np.setdiff1d(a, b), np.intersect1d(a, b), np.union1d(a, b), np.setxor1d(a, b), np.isin(a, b),
                np.trim_zeros(a))
        for g, w in zip(f(a, b), want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_bincount_sizes_and_errors():
    f = kiln.qjit(lambda x: np.bincount(x, minlength=3))
    for x in (np.zeros(0, np.int64), np.array([0]), np.array([5, 1, 1, 0]), np.arange(1000) % 17):
        np.testing.assert_array_equal(f(x), np.bincount(x, minlength=3))
    with pytest.raises(ValueError, match="negative"):
        f(np.array([1, -2]))
    with pytest.raises(TypeError, match="safe"):
        kiln.qjit(lambda x: np.bincount(x))(np.ones(3))


def test_quantiles_of_large_and_single_rows():
    rng = np.random.default_rng(5)

    @kiln.qjit
    def f(a):
        return np.median(a, axis=1), np.quantile(a, [0.1, 0.9], axis=1), np.nanpercentile(a, 50, axis=1)

    for n in (1, 2, 1001):
        a = rng.standard_normal((3, n))
        a[0, ::3] = np.nan
        got = f(a)
        with np.errstate(all="ignore"):
            want = (np.median(a, axis=1), np.quantile(a, [0.1, 0.9], axis=1), np.nanpercentile(a, 50, axis=1))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-13, equal_nan=True)


def test_quantile_errors():
    with pytest.raises(ValueError, match="range"):
        kiln.qjit(lambda a: np.quantile(a, 1.5))(np.ones(3))
    with pytest.raises(IndexError):
        kiln.qjit(lambda a: np.quantile(a, 0.5))(np.ones(0))
    with pytest.raises(ValueError, match="All-NaN"):
        kiln.qjit(lambda a: np.nanargmax(a))(np.full(3, np.nan))


def test_partition_method_in_place_and_on_a_view():
    def f(a, k):
        a.partition(k)
        a[1:].argsort()
        return a[k]

    a = np.random.default_rng(6).permutation(11).astype(np.float64)
    b = a.copy()
    assert kiln.qjit(f)(a, 4) == f(b, 4)
    np.testing.assert_array_equal(np.sort(a[:4]), np.sort(b[:4]))
    np.testing.assert_array_equal(a[4], b[4])


# --- every quantile method, unique along an axis

QUANTILE_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
                    "midpoint", "nearest")


def test_quantile_methods_are_numpys_and_complete():
    from kiln.numpy.statistics import QUANTILE_METHODS as kiln_methods
    from numpy.lib._function_base_impl import _QuantileMethods

    assert kiln_methods == tuple(_QuantileMethods) == QUANTILE_METHODS


@pytest.mark.parametrize("method", QUANTILE_METHODS)
def test_quantile_method_bit_for_bit(method):
    def stats(a, q):
        return (np.quantile(a, q, method=method), np.percentile(a, 37.5, axis=1, method=method),
                np.nanquantile(a, q, axis=0, method=method, keepdims=True))

    f = kiln.qjit(stats)
    rng = np.random.default_rng(9)
    q = np.array([0.0, 0.01, 0.25, 0.5, 0.6, 0.99, 1.0])
    for rows in (1, 2, 7, 1001):
        a = rng.standard_normal((rows, 3))
        a[a > 2.0] = np.nan
        for got, want in zip(f(a, q), stats(a, q)):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
    ints = rng.integers(0, 9, (11, 2))
    g = kiln.qjit(lambda a: np.quantile(a, [0.3, 0.5], axis=0, method=method))
    want = np.quantile(ints, [0.3, 0.5], axis=0, method=method)
    assert g(ints).dtype == want.dtype
    np.testing.assert_array_equal(g(ints), want)


def test_quantile_method_errors():
    with pytest.raises(ValueError, match="'cubic' is not a valid method"):
        kiln.qjit(lambda a: np.quantile(a, 0.5, method="cubic"))(np.ones(3))


def test_unique_along_an_axis():
    def f(a):
        return (np.unique(a, axis=0, return_index=True, return_inverse=True, return_counts=True),
                np.unique(a, axis=1, return_inverse=True))

    compiled = kiln.qjit(f)
    rng = np.random.default_rng(10)
    for dtype in DTYPES:
        for rows in (0, 1, 7, 1001):
            a = rng.integers(0, 2, (rows, 3)).astype(dtype)
            got, want = compiled(a), f(a)
            for g, w in zip(got[0] + got[1], want[0] + want[1]):
                assert g.dtype == w.dtype and g.shape == w.shape, (dtype, rows)
                np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        kiln.qjit(lambda a: np.unique(a, axis=2))(np.ones((2, 2)))
