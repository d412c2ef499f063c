"""The NumPy list, family "sortstats": sorting, searching, sets,
statistics and the functions whose result size is data (issue 15).

Cases whose NumPy answer leaves an order unspecified (partition, argsort
with ties under a non-stable kind) compare what NumPy fixes: the kth
elements and the sorted halves."""

from __future__ import annotations

import numpy as np

from test.numpy_list.args import floats, ints
from test.numpy_list.case import Case
from test.numpy_list.numba_page import page_names

_PAGE = set(page_names())


def _case(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "sortstats", name in _PAGE, **kw)


def _nans(n, rng, cols=None):
    a = floats(rng, n) if cols is None else floats(rng, n, cols)
    a[a > 1.5] = np.nan
    return a


def _distinct(n, rng, dtype=np.float64):
    """Values without ties (so every sort kind gives the same order)."""
    return (rng.permutation(n) - n // 2).astype(dtype)


def sort_forms(a):
    return np.sort(a), np.sort(a, kind="stable"), np.sort(a, axis=None)


def sort_axis0(a):
    return np.sort(a, axis=0), np.argsort(a, axis=0, kind="stable")


def argsort_forms(a):
    return np.argsort(a, kind="stable"), a.argsort(kind="mergesort"), np.argsort(a, axis=None, kind="stable")


def sort_method(a):
    a.sort()
    return a


def sort_view(a):
    a[:, 1].sort()
    a[::2].sort(axis=1)


def partition_sorted_halves(a):
    n = a.shape[0]
    k = n // 2
    p = np.partition(a, k)
    return p[k], np.sort(p[:k]), np.sort(p[k + 1:])


def partition_many(a):
    p = np.partition(a, [0, -1])
    return p[0], p[-1], np.sort(p[1:-1])


def argpartition_forms(a):
    k = a.shape[0] // 2
    i = np.argpartition(a, k)
    return a[i[k]], np.sort(i)


def searchsorted_forms(a, v):
    s = np.sort(a)
    return (np.searchsorted(s, v), np.searchsorted(s, v, side="right"),
            np.searchsorted(a, v, sorter=np.argsort(a, kind="stable")), s.searchsorted(v))


def digitize_forms(x):
    return (np.digitize(x, np.array([-1.0, 0.0, 0.5, 1.0])), np.digitize(x, np.array([1.0, 0.0, -1.0])),
            np.digitize(x, np.array([-1.0, 0.0, 1.0]), right=True))


def unique_all(a):
    return np.unique(a, return_index=True, return_inverse=True, return_counts=True)


def unique_rows_and_columns(a):
    return (np.unique(a, axis=0, return_index=True, return_inverse=True, return_counts=True),
            np.unique(a, axis=1), np.unique(a, axis=-1, return_counts=True))


def _row_data(n, rng, dtype=np.int64):
    """n rows of 3 with repeats (and a NaN row for floats: never equal to another)."""
    a = ints(rng, n, 3, low=0, high=2).astype(dtype)
    if dtype == np.float64 and n > 2:
        a[n // 2, 1] = np.nan
    return (a,)


def sets(a, b):
    return np.setdiff1d(a, b), np.intersect1d(a, b), np.union1d(a, b), np.setxor1d(a, b)


def trims(a):
    return np.trim_zeros(a), np.trim_zeros(a, "f"), np.trim_zeros(a, "b")


def _with_zeros(n, rng):
    a = ints(rng, n, low=-2, high=3)
    if n > 3:
        a[:2] = 0
        a[-1] = 0
    return (a,)


def quantiles(a):
    return (np.quantile(a, 0.3), np.quantile(a, [0.0, 0.25, 1.0]), np.percentile(a, 40.0),
            np.percentile(a, [10, 90], axis=0), np.quantile(a, 0.5, axis=1, keepdims=True))


def nan_quantiles(a):
    return np.nanquantile(a, 0.3), np.nanpercentile(a, [25, 75], axis=0), np.nanmedian(a, axis=1)


QUANTILE_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
                    "midpoint", "nearest")


def _quantile_method(method):
    """quantile / percentile / nanquantile with NumPy's `method`."""
    def quantiles_by(a):
        return (np.quantile(a, [0.0, 0.1, 0.25, 0.5, 0.7, 1.0], method=method),
                np.percentile(a, [10, 33.3, 90], axis=0, method=method),
                np.nanquantile(a, 0.4, axis=1, method=method),
                np.nanpercentile(a, [0, 50, 95], axis=0, method=method, keepdims=True))
    quantiles_by.__name__ = f"quantiles_{method}"
    return quantiles_by


def int_quantile_methods(a):
    return tuple(np.quantile(a, [0.2, 0.5, 0.9], axis=0, method=m) for m in QUANTILE_METHODS)


def medians(a):
    return np.median(a), np.median(a, axis=0), np.median(a, axis=1, keepdims=True)


def nan_reductions(a):
    return (np.nansum(a), np.nansum(a, axis=0), np.nanprod(a, axis=1), np.nanmean(a, axis=0), np.nanvar(a),
            np.nanstd(a, axis=0, ddof=1), np.nancumsum(a), np.nancumprod(a, axis=0))


def nan_extremes(a):
    return np.nanmax(a, axis=1), np.nanmin(a, axis=1), np.nanmax(a), np.nanmin(a)


def nan_args(a):
    return np.nanargmax(a), np.nanargmin(a)


def moments(a):
    return (np.mean(a, axis=0), np.std(a, ddof=1), np.var(a, axis=1, ddof=1), a.std(axis=0),
            np.var(a, axis=(0, 1)))


def covariances(a):
    return np.cov(a), np.cov(a, rowvar=False), np.cov(a, bias=True), np.cov(a[:, 0], a[:, 1], ddof=0)


def correlations(a):
    return np.corrcoef(a, rowvar=False), np.corrcoef(a[:, 0], a[:, 2])


def interps(x, xp, fp):
    xp = np.sort(xp)
    return (np.interp(x, xp, fp), np.interp(x, xp, fp, left=-9.0, right=9.0),
            np.interp(x, xp, fp, period=1.5))


def _interp_args(n, rng):
    return floats(rng, n, low=-3, high=3), floats(rng, 6), floats(rng, 6)


def convolutions(a, v):
    return np.convolve(a, v), np.convolve(a, v, "same"), np.convolve(a, v, mode="valid")


def correlations_1d(a, v):
    return np.correlate(a, v), np.correlate(a, v, "same"), np.correlate(a, v, "full")


def diffs(a):
    return np.diff(a, prepend=0.0), np.diff(a, append=a[:1]), np.diff(a, n=2, prepend=1.0, append=2.0)


def bincounts(x, w):
    return np.bincount(x), np.bincount(x, weights=w), np.bincount(x, minlength=12)


def _bincount_args(n, rng):
    return ints(rng, n, low=0, high=9), floats(rng, n)


def nonzeros(a):
    return np.nonzero(a), np.flatnonzero(a), np.argwhere(a), np.count_nonzero(a), np.count_nonzero(a, axis=0)


def histograms(a):
    return (np.histogram(a), np.histogram(a, bins="auto"), np.histogram(a, bins="fd", range=(-1, 1)),
            np.histogram(a, bins="sturges", density=True), np.histogram(a, bins=4, weights=a))


def bin_edges(a):
    return np.histogram_bin_edges(a, bins="sqrt"), np.histogram_bin_edges(a, 5, range=(-3, 3))


def unwraps(a):
    return np.unwrap(np.cumsum(a)), np.unwrap(np.cumsum(a) * 3.0, period=4.0)


CASES = [
    _case("numpy.sort", sort_forms, lambda n, rng: (_nans(n, rng),)),
    _case("numpy.sort", lambda a: np.sort(a), lambda n, rng: (ints(rng, n, dtype=np.int32),)),
    _case("numpy.sort", lambda a: np.sort(a), lambda n, rng: (floats(rng, n, dtype=np.float32),)),
    _case("numpy.sort", lambda a: np.sort(a), lambda n, rng: (ints(rng, n, dtype=np.uint8, low=0),)),
    _case("numpy.sort", lambda a: np.sort(a), lambda n, rng: (rng.random(n) < 0.5,)),
    _case("numpy.sort", sort_axis0, lambda n, rng: (_nans(n, rng, 3),)),
    _case("numpy.argsort", argsort_forms, lambda n, rng: (ints(rng, n, low=-3, high=3),)),
    _case("numpy.argsort", lambda a: np.argsort(a), lambda n, rng: (_distinct(n, rng),)),
    _case("numpy.argsort", lambda a: np.argsort(a, kind="stable"), lambda n, rng: (_nans(n, rng),)),
    _case("ndarray.argsort", lambda a: a.argsort(kind="stable"), lambda n, rng: (ints(rng, n, dtype=np.int16),)),
    _case("ndarray.sort", sort_method, lambda n, rng: (_nans(n, rng),)),
    _case("ndarray.sort", sort_view, lambda n, rng: (floats(rng, n, 3),)),
    _case("numpy.partition", partition_sorted_halves, lambda n, rng: (_nans(n, rng),), sizes=(1, 5, 17)),
    _case("numpy.partition", partition_many, lambda n, rng: (ints(rng, n),), sizes=(2, 5, 17)),
    _case("numpy.argpartition", argpartition_forms, lambda n, rng: (_distinct(n, rng),), sizes=(1, 5, 17)),
    _case("numpy.searchsorted", searchsorted_forms, lambda n, rng: (_nans(n, rng), _nans(7, rng))),
    _case("numpy.searchsorted", searchsorted_forms, lambda n, rng: (ints(rng, n), ints(rng, 9))),
    _case("numpy.digitize", digitize_forms, lambda n, rng: (floats(rng, n),)),
    _case("numpy.unique", lambda a: np.unique(a), lambda n, rng: (_nans(n, rng),)),
    _case("numpy.unique", unique_all, lambda n, rng: (ints(rng, n, 2, low=-3, high=3),)),
    _case("numpy.unique", unique_all, lambda n, rng: (ints(rng, n, dtype=np.uint8, low=0, high=4),)),
    _case("numpy.unique", unique_rows_and_columns, _row_data, note="axis= too (slices in lexicographic order)"),
    _case("numpy.unique", unique_rows_and_columns, lambda n, rng: _row_data(n, rng, np.float64)),
    _case("numpy.isin", lambda a, b: (np.isin(a, b), np.isin(a, b, invert=True)),
          lambda n, rng: (ints(rng, n, 2), ints(rng, 5))),
    _case("numpy.setdiff1d", sets, lambda n, rng: (ints(rng, n), ints(rng, 6))),
    _case("numpy.intersect1d", sets, lambda n, rng: (_nans(n, rng), _nans(6, rng))),
    _case("numpy.union1d", sets, lambda n, rng: (ints(rng, n, dtype=np.int32), ints(rng, n, dtype=np.int32))),
    _case("numpy.setxor1d", sets, lambda n, rng: (ints(rng, n, dtype=np.int8), ints(rng, 4, dtype=np.int8))),
    _case("numpy.trim_zeros", trims, _with_zeros),
    _case("numpy.trim_zeros", trims, lambda n, rng: (np.zeros(n),)),
    # NumPy's bincount of an empty x is int64 even with weights: a dtype that
    # depends on a run-time size, which kiln's cannot (float64 there).
    _case("numpy.bincount", bincounts, _bincount_args, sizes=(1, 5, 17),
          note="with weights, an empty x gives float64 zeros (NumPy: int64)"),
    _case("numpy.bincount", lambda x: np.bincount(x, minlength=3), lambda n, rng: (ints(rng, n, low=0, high=20),)),
    _case("numpy.nonzero", nonzeros, lambda n, rng: (ints(rng, n, 3, low=-1, high=2),)),
    _case("numpy.flatnonzero", nonzeros, lambda n, rng: (rng.random((n, 2)) < 0.5,)),
    _case("numpy.argwhere", nonzeros, lambda n, rng: (np.ones((n, 2)),)),
    _case("numpy.count_nonzero", nonzeros, lambda n, rng: (np.zeros((n, 2), np.int32),)),
    _case("numpy.median", medians, lambda n, rng: (_nans(n, rng, 3),)),
    _case("numpy.median", medians, lambda n, rng: (ints(rng, n, 4),)),
    _case("numpy.nanmedian", nan_quantiles, lambda n, rng: (_nans(n, rng, 3),), sizes=(1, 5, 17)),
    _case("numpy.quantile", quantiles, lambda n, rng: (_nans(n, rng, 3),), sizes=(1, 5, 17)),
    _case("numpy.quantile", quantiles, lambda n, rng: (floats(rng, n, 3, dtype=np.float32),), sizes=(1, 5, 17)),
    _case("numpy.percentile", quantiles, lambda n, rng: (ints(rng, n, 3),), sizes=(1, 5, 17)),
    _case("numpy.nanquantile", nan_quantiles, lambda n, rng: (_nans(n, rng, 3),), sizes=(1, 5, 17)),
    *[_case("numpy.quantile", _quantile_method(m), lambda n, rng: (_nans(n, rng, 3),), sizes=(1, 5, 17),
            note="every method= of NumPy") for m in QUANTILE_METHODS],
    _case("numpy.quantile", int_quantile_methods, lambda n, rng: (ints(rng, n, 3),), sizes=(1, 5, 17)),
    _case("numpy.nanpercentile", nan_quantiles, lambda n, rng: (_nans(n, rng, 3),), sizes=(1, 5, 17)),
    _case("numpy.nansum", nan_reductions, lambda n, rng: (_nans(n, rng, 3),), rtol=1e-10),
    _case("numpy.nanprod", nan_reductions, lambda n, rng: (_nans(n, rng, 3),), rtol=1e-10),
    _case("numpy.nanmean", nan_reductions, lambda n, rng: (_nans(n, rng, 3),), rtol=1e-10),
    _case("numpy.nanvar", nan_reductions, lambda n, rng: (_nans(n, rng, 3),), rtol=1e-10),
    _case("numpy.nanstd", nan_reductions, lambda n, rng: (_nans(n, rng, 3),), rtol=1e-10),
    _case("numpy.nancumsum", nan_reductions, lambda n, rng: (_nans(n, rng, 3),), rtol=1e-10),
    _case("numpy.nancumprod", nan_reductions, lambda n, rng: (_nans(n, rng, 3),), rtol=1e-10),
    _case("numpy.nanmax", nan_extremes, lambda n, rng: (_nans(n, rng, 3),)),
    _case("numpy.nanmin", nan_extremes, lambda n, rng: (_nans(n, rng, 3),)),
    _case("numpy.nanargmax", nan_args, lambda n, rng: (_nans(n, rng, 3),)),
    _case("numpy.nanargmin", nan_args, lambda n, rng: (_nans(n, rng, 3),)),
    _case("numpy.mean", moments, lambda n, rng: (floats(rng, n, 3),), rtol=1e-10),
    _case("numpy.std", moments, lambda n, rng: (floats(rng, n, 3),), rtol=1e-10),
    _case("numpy.var", moments, lambda n, rng: (floats(rng, n, 3),), rtol=1e-10),
    _case("numpy.cov", covariances, lambda n, rng: (floats(rng, n, 3),), sizes=(2, 5, 17), rtol=1e-10),
    _case("numpy.corrcoef", correlations, lambda n, rng: (floats(rng, n, 3),), sizes=(2, 5, 17), rtol=1e-10),
    _case("numpy.interp", interps, _interp_args, rtol=1e-10),
    _case("numpy.convolve", convolutions, lambda n, rng: (floats(rng, n + 3), floats(rng, 3)), rtol=1e-10),
    _case("numpy.convolve", convolutions, lambda n, rng: (ints(rng, 4), ints(rng, n + 1))),
    _case("numpy.correlate", correlations_1d, lambda n, rng: (floats(rng, n + 3), floats(rng, 3)), rtol=1e-10),
    _case("numpy.diff", diffs, lambda n, rng: (floats(rng, n),)),
    _case("numpy.histogram", histograms, lambda n, rng: (floats(rng, n),), rtol=1e-10),
    _case("numpy.histogram", histograms, lambda n, rng: (ints(rng, n, low=0, high=7),), rtol=1e-10),
    _case("numpy.histogram_bin_edges", bin_edges, lambda n, rng: (floats(rng, n),), rtol=1e-10),
    _case("numpy.unwrap", unwraps, lambda n, rng: (floats(rng, n, low=-4, high=4),), rtol=1e-10),
]
