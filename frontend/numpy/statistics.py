"""Stage "jaxpr": order statistics and NaN-aware statistics: `np.median`,
`np.percentile`, `np.quantile` and their `nan` forms, `np.nansum`,
`np.nanprod`, `np.nanmean`, `np.nanvar`, `np.nanstd`, `np.nanmax`,
`np.nanmin`, `np.nanargmax`, `np.nanargmin`, `np.nancumsum`,
`np.nancumprod`, `np.cov`, `np.corrcoef`.

In: traced arrays of real dtypes, `axis` (None, an int or a tuple), `q`
(Python numbers or arrays, static or traced), NumPy's keywords.
Out: tracers with NumPy's values and dtypes. Quantiles sort the reduced
axes (the `sort` primitive) and pick or interpolate as NumPy's 13 `method`s
do (`_lerp` included); a slice holding NaN gives NaN (the nan forms skip them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.core import INDEX_DTYPE, KilnIndexError, KilnTypeError, KilnValueError, is_static_dim
from kiln.numpy._base import check, convert, operand, shape_product
from kiln.numpy._bindings import knp, numpy_function
from kiln.primitives.sorting import sort_p
from kiln.tracing import Tracer, bind


def _reduced_last(a: Tracer, axis: Any) -> tuple[Tracer, tuple, tuple]:
    """`a` with the axes of `axis` merged into one last axis; the kept shape
    and the normalized axes (all of them for None)."""
    n = a.aval.ndim
    if axis is None:
        axes = tuple(range(n))
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        for ax in axes:
            if not -n <= ax < n:
                raise KilnValueError(f"axis {ax} is out of bounds for array of dimension {n}")
        axes = tuple(sorted(int(ax) % n for ax in axes))
        if len(set(axes)) != len(axes):
            raise KilnValueError("repeated axis")
    kept = [d for d in range(n) if d not in axes]
    moved = knp.transpose(a, kept + list(axes)) if kept + list(axes) != list(range(n)) else a
    kept_shape = tuple(a.aval.shape[d] for d in kept)
    size = shape_product([a.aval.shape[d] for d in axes])
    return knp.reshape(moved, *kept_shape, size), kept_shape, axes


def _keepdims(result: Tracer, a_shape: tuple, axes: tuple, lead: int) -> Tracer:
    """`result` (q dims first, then the kept dims) with the reduced axes back as 1s."""
    shape = list(result.aval.shape[:lead]) + [1 if d in axes else s for d, s in enumerate(a_shape)]
    return knp.reshape(result, *shape)


def _sorted_rows(rows: Tracer) -> Tracer:
    return bind(sort_p, rows, operand(np.zeros(0, dtype=INDEX_DTYPE)), indices=False)


def _row_select(sorted_rows: Tracer, index: Tracer) -> Tracer:
    """`sorted_rows[..., index[..., j]]` per row: `index` has the rows' batch
    shape plus one trailing axis."""
    batch = sorted_rows.aval.shape[:-1]
    n = sorted_rows.aval.shape[-1]
    rows = shape_product(batch)
    flat = knp.reshape(sorted_rows, rows, n)
    picks = knp.reshape(index, rows, index.aval.shape[-1])
    offsets = knp.reshape(knp.arange(rows) * n, rows, 1)
    taken = knp.take(knp.ravel(flat), knp.ravel(picks + offsets))
    return knp.reshape(taken, *batch, index.aval.shape[-1])


def _lerp(a: Tracer, b: Tracer, t: Any, dtype: np.dtype) -> Tracer:
    """NumPy's `_lerp` in `dtype`: a + (b - a) t, or b - (b - a)(1 - t) where
    t >= 0.5; b - a is taken in the data's own dtype first, as NumPy does."""
    diff = convert(b - a, dtype)
    a, b = convert(a, dtype), convert(b, dtype)
    return knp.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


# NumPy's `method`s of quantile/percentile (Hyndman & Fan's nine and four
# others), in NumPy's order. The continuous ones interpolate at the virtual
# index n q + (alpha + q (1 - alpha - beta)) - 1 (their alpha, beta here);
# the discrete ones pick one order statistic (an integer index, the data's dtype).
QUANTILE_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
                    "hazen", "weibull", "linear", "median_unbiased", "normal_unbiased", "lower", "higher",
                    "midpoint", "nearest")
_CONTINUOUS = {"interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
_DISCRETE = ("inverted_cdf", "closest_observation", "lower", "higher", "nearest")


def _discrete_index(method: str, n: Tracer, q: Tracer) -> Tracer:
    """The order statistic a discrete `method` picks (NumPy's integer virtual
    index, negative ones clipped to 0), `n` the sample sizes in q's dtype."""
    if method in ("lower", "higher", "nearest"):
        rounding = {"lower": knp.floor, "higher": knp.ceil, "nearest": knp.round}[method]
        return rounding((n - 1) * q).astype(INDEX_DTYPE)
    if method == "inverted_cdf":
        index = n * q - 1
    else:  # closest_observation: the nearest even order statistic (1-based) at g = 0
        index = n * q - 1 - 0.5
    previous = knp.floor(index)
    take_previous = knp.equal(index - previous, 0)
    if method == "closest_observation":
        take_previous = knp.logical_and(take_previous, knp.equal(knp.remainder(previous, 2), 1))
    return knp.maximum(knp.where(take_previous, previous, previous + 1).astype(INDEX_DTYPE), 0)


def _continuous_index(method: str, n: Tracer, q: Tracer) -> Tracer:
    """NumPy's float virtual index of a continuous `method` (its rounding order)."""
    if method == "linear":
        return (n - 1) * q
    if method == "averaged_inverted_cdf":
        return n * q - 1
    if method == "midpoint":
        return 0.5 * (knp.floor((n - 1) * q) + knp.ceil((n - 1) * q))
    alpha, beta = _CONTINUOUS[method]
    return n * q + (alpha + q * (1 - alpha - beta)) - 1


def _fixed_gamma(method: str, gamma: Tracer, virtual: Tracer) -> Tracer:
    """The interpolation weight: the index's fraction, except for the methods
    that fix it (NumPy's `fix_gamma`)."""
    if method == "averaged_inverted_cdf":
        return knp.where(knp.equal(gamma, 0), 0.5, 1.0).astype(gamma.aval.dtype)
    if method == "midpoint":
        return knp.where(knp.equal(knp.remainder(virtual, 1), 0), 0.0, 0.5).astype(gamma.aval.dtype)
    return gamma


def _quantile(a: Any, q: Any, axis: Any, keepdims: bool, method: str, fn: str, ignore_nan: bool,
              percent: bool = False) -> Tracer:
    a = operand(a)
    if a.aval.dtype.kind == "c":
        raise KilnTypeError("a must be an array of real numbers")
    if method not in QUANTILE_METHODS:
        raise KilnValueError(f"np.{fn}: {method!r} is not a valid method. Use one of: "
                             f"{', '.join(QUANTILE_METHODS)}")
    weak_q = type(q) in (int, float)
    if isinstance(q, Tracer):
        qv = q
    else:
        qv = operand(np.asarray(q))
        if percent:
            qs = np.true_divide(np.asarray(q), 100)
        else:
            qs = np.asarray(q)
        if not np.all((qs >= 0) & (qs <= 1)):
            raise KilnValueError("Percentiles must be in the range [0, 100]" if percent else
                                 "Quantiles must be in the range [0, 1]")
    if percent:
        qv = knp.true_divide(qv, 100)
    if isinstance(q, Tracer):
        check(knp.all((qv >= 0) & (qv <= 1)), "ValueError",
              "Percentiles must be in the range [0, 100]" if percent else "Quantiles must be in the range [0, 1]")
    rows, kept_shape, axes = _reduced_last(a, axis)
    n = rows.aval.shape[-1]
    # NumPy: the virtual indices are in q's float dtype (float64 for Python
    # numbers and ints); a Python-number q is weak, so the interpolation
    # keeps the data's float dtype; an array q promotes with it.
    index_dtype = qv.aval.dtype if qv.aval.dtype.kind == "f" and not weak_q else np.dtype(np.float64)
    data_dtype = a.aval.dtype if a.aval.dtype.kind == "f" else np.dtype(np.float64)
    value_dtype = data_dtype if weak_q else np.result_type(a.aval.dtype, index_dtype)
    if is_static_dim(n) and n == 0:
        raise KilnIndexError("index -1 is out of bounds for axis 0 with size 0")
    check(knp.greater(n, 0), "IndexError", "index -1 is out of bounds for axis 0 with size {}", n)
    s = _sorted_rows(rows)
    nan_kinds = a.aval.dtype.kind == "f"
    if ignore_nan and nan_kinds:
        count = knp.sum(knp.logical_not(knp.isnan(rows)), axis=-1, keepdims=True)
    else:
        count = knp.full(kept_shape + (1,), n, dtype=INDEX_DTYPE)
    qflat = knp.ravel(convert(qv, index_dtype))
    sizes = convert(count, index_dtype)  # batch + (1,), against q's (nq,)
    last = count - 1
    if method in _DISCRETE:
        # One order statistic, in the data's dtype (NumPy takes it from the sorted data).
        result = _row_select(s, knp.clip(knp.minimum(_discrete_index(method, sizes, qflat), last), 0, n - 1))
    else:
        virtual = _continuous_index(method, sizes, qflat)  # batch + (nq,)
        previous = knp.floor(virtual)
        above = virtual >= convert(last, index_dtype)
        below = virtual < 0
        prev_i = knp.where(above, last, knp.where(below, 0, previous.astype(INDEX_DTYPE)))
        next_i = knp.where(above, last, knp.where(below, 0, previous.astype(INDEX_DTYPE) + 1))
        prev_i = knp.clip(prev_i, 0, n - 1)
        next_i = knp.clip(next_i, 0, n - 1)
        lo, hi = _row_select(s, prev_i), _row_select(s, next_i)
        gamma = convert(_fixed_gamma(method, virtual - previous, virtual), value_dtype)
        result = _lerp(lo, hi, gamma, value_dtype)
    if nan_kinds:
        has_nan = knp.isnan(_row_select(s, knp.full(kept_shape + (1,), n - 1, dtype=INDEX_DTYPE)))
        if ignore_nan:
            has_nan = count == 0
        result = knp.where(has_nan, np.nan, result).astype(result.aval.dtype)
    # q's dims go first, as NumPy's
    result = knp.moveaxis(result, -1, 0) if result.aval.ndim > 1 else result
    result = knp.reshape(result, *qv.aval.shape, *kept_shape)
    if keepdims:
        result = _keepdims(result, a.aval.shape, axes, qv.aval.ndim)
    return result


@numpy_function("quantile")
def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False) -> Tracer:
    """`np.quantile(a, q, axis, method=..., keepdims)`, every NumPy method
    ('linear' by default; see QUANTILE_METHODS)."""
    _no_out(out, "quantile")
    return _quantile(a, q, axis, keepdims, method, "quantile", ignore_nan=False)


@numpy_function("percentile")
def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False) -> Tracer:
    """`np.percentile(a, q, axis, keepdims)`: the quantile at q / 100."""
    _no_out(out, "percentile")
    return _quantile(a, q, axis, keepdims, method, "percentile", ignore_nan=False, percent=True)


@numpy_function("nanquantile")
def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False) -> Tracer:
    """`np.nanquantile`: the quantile of the non-NaN values (NaN for none)."""
    _no_out(out, "nanquantile")
    return _quantile(a, q, axis, keepdims, method, "nanquantile", ignore_nan=True)


@numpy_function("nanpercentile")
def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False) -> Tracer:
    """`np.nanpercentile`: the percentile of the non-NaN values (NaN for none)."""
    _no_out(out, "nanpercentile")
    return _quantile(a, q, axis, keepdims, method, "nanpercentile", ignore_nan=True, percent=True)


def _no_out(out: Any, fn: str) -> None:
    if out is not None:
        raise KilnTypeError(f"np.{fn}: out= is not supported by kiln; assign the result instead")


def _median(a: Any, axis: Any, keepdims: bool, ignore_nan: bool) -> Tracer:
    a = operand(a)
    if a.aval.dtype.kind == "c":
        raise KilnTypeError("np.median of complex arrays is not supported by kiln")
    rows, kept_shape, axes = _reduced_last(a, axis)
    n = rows.aval.shape[-1]
    dtype = a.aval.dtype if a.aval.dtype.kind == "f" else np.dtype(np.float64)
    # One element past the data, sorted last, keeps the reads in bounds for an empty axis.
    kind = rows.aval.dtype.kind
    pad = np.nan if kind == "f" else True if kind == "b" else np.iinfo(rows.aval.dtype).max
    padded = knp.concatenate([rows, knp.full(kept_shape + (1,), pad, dtype=rows.aval.dtype)], axis=-1)
    s = _sorted_rows(padded)
    if ignore_nan and a.aval.dtype.kind == "f":
        count = knp.sum(knp.logical_not(knp.isnan(rows)), axis=-1, keepdims=True)
    else:
        count = knp.full(kept_shape + (1,), n, dtype=INDEX_DTYPE)
    half = count // 2
    lower = knp.where(count % 2 == 1, half, knp.maximum(half - 1, 0))
    pair = _row_select(s, knp.concatenate([lower, half], axis=-1))
    acc = np.dtype(np.float32) if dtype == np.float16 else dtype
    a0, a1 = convert(pair[..., 0], acc), convert(pair[..., 1], acc)
    value = knp.where(knp.reshape(count % 2 == 1, *kept_shape), a0 / 1.0, (a0 + a1) / 2.0)
    if a.aval.dtype.kind == "f":
        if ignore_nan:
            bad = knp.reshape(count == 0, *kept_shape)
        else:
            last = knp.reshape(_row_select(s, knp.maximum(count - 1, 0)), *kept_shape)
            bad = knp.logical_or(knp.isnan(last), knp.equal(n, 0))
        value = knp.where(bad, np.nan, value)
    else:
        value = knp.where(knp.equal(n, 0), np.nan, value)
    value = convert(value, dtype)
    if keepdims:
        value = _keepdims(value, a.aval.shape, axes, 0)
    return value


@numpy_function("median")
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False) -> Tracer:
    """`np.median(a, axis, keepdims)`: the middle value, or the mean of the two middle ones."""
    _no_out(out, "median")
    return _median(a, axis, keepdims, ignore_nan=False)


@numpy_function("nanmedian")
def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tracer:
    """`np.nanmedian`: the median of the non-NaN values (NaN for none)."""
    _no_out(out, "nanmedian")
    return _median(a, axis, keepdims, ignore_nan=True)


# --------------------------------------------------------------------------
# NaN-skipping reductions


def _is_float(a: Tracer) -> bool:
    return a.aval.dtype.kind in "fc"


def _nan_to(a: Tracer, value: Any) -> Tracer:
    return knp.where(knp.isnan(a), value, a) if _is_float(a) else a


@numpy_function("nansum")
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    """`np.nansum`: the sum with NaNs counted as zero."""
    _no_out(out, "nansum")
    a = operand(a)
    return knp.sum(_nan_to(a, 0), axis=axis, dtype=dtype, keepdims=keepdims)


@numpy_function("nanprod")
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    """`np.nanprod`: the product with NaNs counted as one."""
    _no_out(out, "nanprod")
    a = operand(a)
    return knp.prod(_nan_to(a, 1), axis=axis, dtype=dtype, keepdims=keepdims)


@numpy_function("nancumsum")
def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tracer:
    """`np.nancumsum`: the running sum with NaNs counted as zero."""
    _no_out(out, "nancumsum")
    return knp.cumsum(_nan_to(operand(a), 0), axis=axis, dtype=dtype)


@numpy_function("nancumprod")
def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Tracer:
    """`np.nancumprod`: the running product with NaNs counted as one."""
    _no_out(out, "nancumprod")
    return knp.cumprod(_nan_to(operand(a), 1), axis=axis, dtype=dtype)


def _count_valid(a: Tracer, axis: Any, keepdims: bool) -> Tracer:
    return knp.sum(knp.logical_not(knp.isnan(a)), axis=axis, dtype=INDEX_DTYPE, keepdims=keepdims)


@numpy_function("nanmean")
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    """`np.nanmean`: the mean of the non-NaN values (NaN for none)."""
    _no_out(out, "nanmean")
    a = operand(a)
    if not _is_float(a):
        return knp.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    acc = np.dtype(dtype) if dtype is not None else a.aval.dtype
    total = knp.sum(convert(_nan_to(a, 0), acc), axis=axis, keepdims=keepdims)
    return total / convert(_count_valid(a, axis, keepdims), acc)


@numpy_function("nanvar")
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False) -> Tracer:
    """`np.nanvar`: the variance of the non-NaN values, divided by count - ddof."""
    _no_out(out, "nanvar")
    a = operand(a)
    if not _is_float(a):
        return knp.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    acc = np.dtype(dtype) if dtype is not None else a.aval.dtype
    valid = knp.logical_not(knp.isnan(a))
    count = knp.sum(valid, axis=axis, dtype=INDEX_DTYPE, keepdims=True)
    mean = knp.sum(convert(_nan_to(a, 0), acc), axis=axis, keepdims=True) / convert(count, acc)
    d = knp.where(valid, convert(a, acc) - mean, 0)
    total = knp.sum(d * d, axis=axis, keepdims=keepdims)
    dof = convert(knp.maximum(knp.sum(valid, axis=axis, dtype=INDEX_DTYPE, keepdims=keepdims) - ddof, 0), acc)
    return total / dof


@numpy_function("nanstd")
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False) -> Tracer:
    """`np.nanstd`: the square root of `np.nanvar`."""
    _no_out(out, "nanstd")
    return knp.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _nan_extreme(a: Any, axis: Any, keepdims: bool, largest: bool, fn: str) -> Tracer:
    a = operand(a)
    if not _is_float(a):
        return (knp.max if largest else knp.min)(a, axis=axis, keepdims=keepdims)
    fill = -np.inf if largest else np.inf
    value = (knp.max if largest else knp.min)(_nan_to(a, fill), axis=axis, keepdims=keepdims)
    all_nan = knp.logical_not(knp.any(knp.logical_not(knp.isnan(a)), axis=axis, keepdims=keepdims))
    return knp.where(all_nan, np.nan, value).astype(a.aval.dtype)


@numpy_function("nanmax")
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    """`np.nanmax`: the largest non-NaN value (NaN for none)."""
    _no_out(out, "nanmax")
    return _nan_extreme(a, axis, keepdims, True, "nanmax")


@numpy_function("nanmin")
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    """`np.nanmin`: the smallest non-NaN value (NaN for none)."""
    _no_out(out, "nanmin")
    return _nan_extreme(a, axis, keepdims, False, "nanmin")


def _nan_arg(a: Any, axis: Any, keepdims: bool, largest: bool, fn: str) -> Tracer:
    a = operand(a)
    if not _is_float(a):
        return (knp.argmax if largest else knp.argmin)(a, axis=axis, keepdims=keepdims)
    all_nan = knp.logical_not(knp.any(knp.logical_not(knp.isnan(a)), axis=axis))
    check(knp.logical_not(knp.any(all_nan)), "ValueError", "All-NaN slice encountered")
    fill = -np.inf if largest else np.inf
    return (knp.argmax if largest else knp.argmin)(_nan_to(a, fill), axis=axis, keepdims=keepdims)


@numpy_function("nanargmax")
def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tracer:
    """`np.nanargmax`: the position of the largest non-NaN value; an all-NaN slice is a ValueError."""
    _no_out(out, "nanargmax")
    return _nan_arg(a, axis, keepdims, True, "nanargmax")


@numpy_function("nanargmin")
def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Tracer:
    """`np.nanargmin`: the position of the smallest non-NaN value; an all-NaN slice is a ValueError."""
    _no_out(out, "nanargmin")
    return _nan_arg(a, axis, keepdims, False, "nanargmin")


# --------------------------------------------------------------------------
# Covariance


def _observations(m: Any, rowvar: bool, dtype: Any) -> Tracer:
    x = operand(m)
    if x.aval.ndim > 2:
        raise KilnValueError("m has more than 2 dimensions")
    if x.aval.dtype.kind == "c":
        raise KilnTypeError("np.cov of complex data is not supported by kiln")
    x = convert(x, dtype)
    if x.aval.ndim < 2:
        x = knp.reshape(x, 1, *x.aval.shape) if x.aval.ndim == 1 else knp.reshape(x, 1, 1)
    if not rowvar and not (is_static_dim(x.aval.shape[0]) and x.aval.shape[0] == 1):
        x = knp.transpose(x)
    return x


@numpy_function("cov")
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None, fweights: Any = None,
        aweights: Any = None, *, dtype: Any = None) -> Tracer:
    """`np.cov(m, y, rowvar, bias, ddof)`: the covariance matrix of the rows
    (variables) of `m` (and `y`); one variable gives a 0-d array."""
    if fweights is not None or aweights is not None:
        raise KilnTypeError("np.cov: fweights/aweights are not supported by kiln")
    if dtype is None:
        dtype = np.result_type(operand(m).aval.dtype, np.float64) if y is None else \
            np.result_type(operand(m).aval.dtype, operand(y).aval.dtype, np.float64)
    x = _observations(m, rowvar, dtype)
    if y is not None:
        x = knp.concatenate([x, _observations(y, rowvar, dtype)], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.aval.shape[1]
    fact = knp.maximum(n - ddof, 0)
    centered = x - knp.mean(x, axis=1, keepdims=True)
    c = knp.matmul(centered, knp.transpose(centered)) * (1.0 / convert(operand(fact), dtype) if not
                                                         is_static_dim(fact) else (1.0 / fact if fact else np.inf))
    return knp.squeeze(c)


@numpy_function("corrcoef")
def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Tracer:
    """`np.corrcoef(x, y, rowvar)`: the covariance normalized by the standard
    deviations, clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.aval.ndim == 0:
        return c / c
    d = knp.sqrt(_diagonal(c))
    c = c / knp.reshape(d, d.aval.shape[0], 1)
    c = c / knp.reshape(d, 1, d.aval.shape[0])
    return knp.clip(c, -1, 1)


def _diagonal(c: Tracer) -> Tracer:
    n = c.aval.shape[0]
    return knp.take(knp.ravel(c), knp.arange(n) * (n + 1))
