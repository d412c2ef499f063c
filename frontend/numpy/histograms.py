"""Stage "jaxpr": `np.histogram` on traced values.

In: the data (any shape, flattened), `bins` (a static or traced count, or an
array of edges), `range`, `weights`, `density`.
Out: `(hist, bin_edges)` as NumPy computes them (`np.histogram_bin_edges`:
the edges; an estimator string for `bins` gives a run-time number of bins): each value's bin by NumPy's
own arithmetic (equal bins: the scaled offset, corrected against the edges;
explicit edges: a vectorized binary search), the counts summed by the
`scatter_add` primitive; run-time checks raise NumPy's `ValueError`s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.control_flow import for_loop
from kiln.core import KilnTypeError, KilnValueError
from kiln.numpy._base import check, convert, dim_operand, match_dims, materialize, operand, require_equal_dims
from kiln.numpy._bindings import knp, numpy_function
from kiln.numpy.creation import iota
from kiln.primitives.indexing import scatter_add_p
from kiln.tracing import Tracer, bind


def _edge_dtype(a: Any, range_: Any) -> np.dtype:
    """NumPy's bin-edge dtype: the data's float dtype (or float64 for ints),
    promoted with a range given as arrays."""
    dtype = np.result_type(a.aval.dtype, *(operand(r).aval.dtype for r in range_ if isinstance(r, Tracer)))
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _outer_edges(a: Any, range_: Any, dtype: np.dtype) -> tuple:
    """The first and last edge, as NumPy's `_get_outer_edges`."""
    if range_ is not None:
        lo, hi = range_
        if not isinstance(lo, Tracer) and not isinstance(hi, Tracer):
            if lo > hi:
                raise KilnValueError("max must be larger than min in range parameter.")
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise KilnValueError(f"supplied range of [{lo}, {hi}] is not finite")
        first, last = (materialize(convert(operand(r), dtype)) for r in range_)
        check(knp.logical_not(first > last), "ValueError", "max must be larger than min in range parameter.")
        check(knp.isfinite(first) & knp.isfinite(last), "ValueError",
              "np.histogram: supplied range is not finite")
    else:
        # The min and max of an empty array are NumPy's range [0, 1]; the
        # infinite initial values make the reductions defined there (without
        # the copy of the data that appending them made).
        data = convert(a, dtype)
        low = knp.min(data, initial=np.inf)
        high = knp.max(data, initial=-np.inf)
        empty = knp.equal(a.shape[0], 0)
        first, last = convert(knp.where(empty, 0.0, low), dtype), convert(knp.where(empty, 1.0, high), dtype)
        check(knp.isfinite(first) & knp.isfinite(last), "ValueError",
              "np.histogram: autodetected range is not finite (the data holds NaN or inf); pass range=(lo, hi)")
    same = first == last
    return knp.where(same, first - 0.5, first), knp.where(same, last + 0.5, last)


def _linspace_at(first: Any, last: Any, count: Any, dtype: Any, i: Any) -> Tracer:
    """Element `i` (an int array) of `np.linspace(first, last, count + 1)`
    computed in `dtype`, as NumPy: `i * step + first`, the last edge exactly
    `last`. The same operations for every `i`, so an edge recomputed here is
    bit for bit the edge of `_linspace`."""
    first, last = convert(first, dtype), convert(last, dtype)
    step = (last - first) / convert(operand(count), dtype)
    return knp.where(i == count, last, i.astype(dtype) * step + first)


def _linspace(first: Any, last: Any, count: Any, dtype: Any) -> Tracer:
    """`np.linspace(first, last, count + 1)` computed in `dtype`."""
    return _linspace_at(first, last, count, dtype, iota(count + 1))


def _equal_bins(a: Any, bins: Any, range_: Any) -> tuple:
    """Bins of equal width: each kept value's bin and the edges (NumPy's
    uniform-bin path, with its corrections against the edges)."""
    count = dim_operand(bins)
    if isinstance(count, int):
        if count < 1:
            raise KilnValueError("`bins` must be positive, when an integer")
    else:
        check(count >= 1, "ValueError", "`bins` must be positive, when an integer")
    dtype = _edge_dtype(a, range_ or ())
    first, last = _outer_edges(a, range_, dtype)
    # NumPy's np.linspace computes in the dtype of the outer edges: the
    # data's (its min and max) or float64 (Python numbers: a given range, or
    # the [0, 1] of empty data), then casts to the edges' dtype.
    if range_ is not None:
        dtypes = [operand(r).aval for r in range_]
        weak = all(d.weak_type for d in dtypes)
        linspace_dtype = np.float64 if weak else np.result_type(*[d.dtype for d in dtypes])
        # The range as given (a Python float is not rounded to float32 data's
        # dtype first: NumPy's linspace starts from the float itself).
        low, high = (materialize(convert(operand(r), linspace_dtype)) for r in range_)
        same = low == high
        edge_first, edge_last = knp.where(same, low - 0.5, low), knp.where(same, high + 0.5, high)
    else:
        linspace_dtype, edge_first, edge_last = dtype, first, last
    edges = _linspace(edge_first, edge_last, count, linspace_dtype)
    if range_ is None and dtype != np.float64:
        edges = knp.where(knp.equal(a.shape[0], 0), _linspace(first, last, count, np.float64), edges)
    edges = edges.astype(dtype)

    def edge(i: Any) -> Tracer:
        # edges[i], recomputed elementwise instead of gathered: no index array,
        # no bounds check, and the whole binning fuses into one loop. (The
        # float64 edges of empty data differ, but then no value reads them.)
        return _linspace_at(edge_first, edge_last, count, linspace_dtype, i).astype(dtype)

    x = convert(a, dtype)
    keep = (x >= first) & (x <= last)
    scaled = knp.where(keep, (x - first) / (last - first) * convert(operand(count), dtype), 0.0)
    index = knp.clip(scaled.astype(np.int64), 0, count - 1)
    index = knp.where(keep & (x < edge(index)), index - 1, index)
    index = knp.where(keep & (x >= edge(index + 1)) & (index != count - 1), index + 1, index)
    return knp.clip(index, 0, count - 1), keep, edges, count


def _explicit_edges(a: Any, bins: Any) -> tuple:
    """Edges given as an array: the last bin holds its right edge; values
    outside the edges count nowhere."""
    edges = operand(bins if isinstance(bins, Tracer) else np.asarray(bins))
    if edges.aval.ndim != 1:
        raise KilnValueError("`bins` must be 1d, when an array")
    check(knp.all(knp.diff(edges) >= 0), "ValueError", "`bins` must increase monotonically, when an array")
    count = knp.maximum(edges.shape[0] - 1, 0)
    # With no edges or one there are no bins (NumPy returns an empty
    # histogram); the padding keeps the reads of the edges in bounds then.
    padded = knp.concatenate([edges, knp.zeros(1, dtype=edges.dtype)])
    keep = (a >= padded[0]) & (a <= padded[count]) & (count > 0)
    # Binary search for the last edge <= x among edges[0 : count]: after
    # ceil(log2(count)) halvings lo + 1 == hi.
    steps = knp.ceil(knp.log2(knp.maximum(count, 1).astype(np.float64))).astype(np.int64) + 1
    lo = knp.zeros(a.shape, dtype=np.int64)
    hi = knp.full(a.shape, knp.maximum(count, 1), dtype=np.int64)

    @for_loop(0, steps, 1)
    def halve(_, lo, hi):
        mid = (lo + hi) // 2
        right = padded[knp.minimum(mid, count)] <= a
        return knp.where(right, mid, lo), knp.where(right, hi, mid)

    lo, _ = halve(lo, hi)
    return knp.clip(lo, 0, knp.maximum(count - 1, 0)), keep, edges, count


# NumPy's bin-width estimators (`np.histogram_bin_edges`), on the values that
# count (`keep`): each gives a width (a traced float64).
def _kept_ptp(x: Any, keep: Any) -> Any:
    high = knp.max(knp.concatenate([knp.where(keep, x, -np.inf), knp.full(1, -np.inf)]))
    low = knp.min(knp.concatenate([knp.where(keep, x, np.inf), knp.full(1, np.inf)]))
    return high - low


def _width_sturges(x: Any, keep: Any, n: Any) -> Any:
    return _kept_ptp(x, keep) / (knp.log2(n) + 1.0)


def _width_fd(x: Any, keep: Any, n: Any) -> Any:
    # a NaN more keeps the axis non-empty (the estimators are not called on empty data)
    kept = knp.concatenate([knp.where(keep, x, np.nan), knp.full(1, np.nan)])
    upper, lower = knp.nanpercentile(kept, [75, 25])
    return 2.0 * (upper - lower) * n ** (-1.0 / 3.0)


def _width_auto(x: Any, keep: Any, n: Any) -> Any:
    # NumPy 2: FD's width, at least half the sqrt rule's (a cap on the number of bins), then Sturges' if smaller
    fd = knp.maximum(_width_fd(x, keep, n), _kept_ptp(x, keep) / knp.sqrt(n) / 2)
    return knp.minimum(fd, _width_sturges(x, keep, n))


def _width_scott(x: Any, keep: Any, n: Any) -> Any:
    mean = knp.sum(knp.where(keep, x, 0.0)) / n
    variance = knp.sum(knp.where(keep, (x - mean) ** 2, 0.0)) / n
    return (24.0 * np.pi ** 0.5 / n) ** (1.0 / 3.0) * knp.sqrt(variance)


_WIDTHS = {
    "auto": _width_auto,
    "fd": _width_fd,
    "sturges": _width_sturges,
    "sqrt": lambda x, keep, n: _kept_ptp(x, keep) / knp.sqrt(n),
    "rice": lambda x, keep, n: _kept_ptp(x, keep) / (2.0 * n ** (1.0 / 3)),
    "scott": _width_scott,
}


def _estimated_bin_count(a: Any, name: str, range_: Any) -> Any:
    """The number of equal bins NumPy's estimator `name` gives (a traced
    int): ceil(range / width), one bin for empty data or a zero width."""
    if name in ("stone", "doane"):
        raise KilnValueError(f"np.histogram: bins={name!r} is not supported by kiln (auto, fd, sturges, sqrt, "
                             "rice and scott are)")
    if name not in _WIDTHS:
        raise KilnValueError(f"{name!r} is not a valid estimator for `bins`")
    if a.aval.dtype.kind not in "biuf":
        raise KilnTypeError(f"np.histogram of {a.aval.dtype} data is not supported by kiln")
    dtype = _edge_dtype(a, range_ or ())
    first, last = _outer_edges(a, range_, dtype)
    x = convert(a, np.float64)
    keep = (a >= first) & (a <= last) if range_ is not None else knp.full(a.shape, True)
    n = knp.sum(keep, dtype=np.int64).astype(np.float64)
    width = _WIDTHS[name](x, keep, knp.maximum(n, 1.0))
    if a.aval.dtype.kind in "iu":
        width = knp.where((width != 0) & (width < 1), 1.0, width)
    span = convert(last, np.float64) - convert(first, np.float64)
    count = knp.ceil(span / knp.where(width != 0, width, 1.0)).astype(np.int64)
    return knp.where((n == 0) | (width == 0), 1, count)


@numpy_function("histogram_bin_edges")
def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Tracer:
    """`np.histogram_bin_edges(a, bins, range, weights)`: the edges `np.histogram` uses."""
    return histogram(a, bins, range, weights=weights)[1]


@numpy_function("histogram")
def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None) -> tuple:
    """`np.histogram(a, bins, range, density, weights)`: `bins` an int (static
    or traced) or an array of edges; returns `(hist, bin_edges)`."""
    a = operand(a)
    if isinstance(bins, str):
        if weights is not None:
            raise KilnTypeError("Automated estimation of the number of bins is not supported for weighted data")
        bins = _estimated_bin_count(knp.ravel(a), bins, range)
    if weights is not None:
        weights = operand(weights)
        if weights.aval.dtype.kind not in "biuf":
            raise KilnTypeError(f"np.histogram: weights of dtype {weights.aval.dtype} are not supported by kiln "
                                "(ints, floats and bools are)")
        if weights.aval.ndim != a.aval.ndim:
            raise KilnValueError("weights should have the same shape as a.")
        for w, d in zip(weights.aval.shape, a.aval.shape):
            require_equal_dims(w, d, "ValueError", "weights should have the same shape as a. (size {} vs {})")
        weights = knp.ravel(match_dims(weights, a.aval.shape))
    a = knp.ravel(a)
    if a.aval.dtype.kind not in "biuf":
        raise KilnTypeError(f"np.histogram of {a.aval.dtype} data is not supported by kiln")
    if isinstance(bins, (list, tuple, np.ndarray)) or isinstance(bins, Tracer) and bins.aval.ndim > 0:
        index, keep, edges, count = _explicit_edges(a, bins)
    else:
        index, keep, edges, count = _equal_bins(a, bins, range)
    # NumPy counts with bincount: in intp without weights, else in float64
    # cast to the weights' dtype.
    total = np.dtype(np.int64) if weights is None else np.dtype(np.float64)
    values = keep.astype(total) if weights is None else knp.where(keep, weights.astype(total), 0.0)
    # The base has at least one element, so that clamped indices of values
    # that count nowhere stay in bounds when there are no bins at all.
    base = knp.zeros(knp.maximum(count, 1), dtype=total)
    hist = bind(scatter_add_p, base, index, values)[:count]
    if weights is not None and weights.aval.dtype != total:
        hist = hist.astype(weights.aval.dtype)
    if density:
        widths = knp.diff(edges).astype(np.float64)
        return hist / widths / hist.sum(), edges
    return hist, edges
