"""Stage "jaxpr": one-dimensional signal functions: `np.interp`,
`np.convolve`, `np.correlate`, `np.unwrap` (`np.ediff1d` is in array_math.py
on wt/list).

In: traced 1-D arrays (`unwrap`: any rank), NumPy's keywords.
Out: tracers with NumPy's values: `interp` follows NumPy's C loop (the
interval found by a binary search, its slope, the retries when the slope
gives NaN); correlation sums the products of a sliding window in a loop
over the shorter operand (O(n m), as NumPy's direct method).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.control_flow import for_loop
from kiln.core import INDEX_DTYPE, KilnTypeError, KilnValueError, is_static_dim
from kiln.numpy._base import check, convert, operand, promote
from kiln.numpy._bindings import knp, numpy_function
from kiln.numpy.sorting import search_sorted
from kiln.primitives.indexing import slice_p
from kiln.tracing import Tracer, bind


def _one_d(x: Tracer, what: str) -> Tracer:
    if x.aval.ndim != 1:
        raise KilnValueError(f"object too deep for desired array ({what} must be 1-D)" if x.aval.ndim > 1 else
                             f"object of too small depth for desired array ({what} must be 1-D)")
    return x


def _window(x: Tracer, start: Any, size: Any) -> Tracer:
    """`x[start:start + size]` whose dim is `size` itself (a loop carries it)."""
    starts = (None,) if not is_static_dim(start) else (int(start),)
    sizes = (None,) if not is_static_dim(size) else (int(size),)
    dyn = [s for s in (start,) if not is_static_dim(s)] + [s for s in (size,) if not is_static_dim(s)]
    return bind(slice_p, x, *dyn, starts=starts, sizes=sizes, strides=(1,))


def _full_correlation(a: Tracer, v: Tracer) -> Tracer:
    """c[k] = sum_j a_padded[k + j] * v[j], k in [0, n + m - 1): a padded
    with m - 1 zeros on each side."""
    n, m = a.aval.shape[0], v.aval.shape[0]
    zeros = knp.zeros(m - 1, dtype=a.aval.dtype)
    padded = knp.concatenate([zeros, a, zeros])
    length = n + m - 1
    acc = knp.zeros(length, dtype=a.aval.dtype)

    @for_loop(0, m, 1)
    def add_shifted(j, acc):
        return acc + _window(padded, j, length) * v[j]

    return add_shifted(acc)


def _correlate(a: Any, v: Any, mode: str, fn: str, convolution: bool = False) -> Tracer:
    a, v = promote(operand(a), operand(v))
    _one_d(a, "a"), _one_d(v, "v")
    if a.aval.dtype.kind == "c":
        raise KilnTypeError(f"np.{fn} of complex arrays is not supported by kiln")
    if a.aval.dtype == np.bool_:
        a, v = convert(a, np.bool_), convert(v, np.bool_)
    if mode not in ("full", "same", "valid"):
        raise KilnValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    n, m = a.aval.shape[0], v.aval.shape[0]
    for size, name in ((n, "a"), (m, "v")):
        if is_static_dim(size) and size == 0:
            raise KilnValueError(f"{name} cannot be empty")
        check(knp.greater(size, 0), "ValueError", f"{name} cannot be empty")
    if is_static_dim(n) and is_static_dim(m) and m > n:
        return knp.flip(_correlate(v, a, mode, fn))
    if not (is_static_dim(n) and is_static_dim(m)):
        # Which operand is longer is known when the program runs: the longer
        # slides over the shorter either way, so compute with the roles the
        # sizes give and flip back (NumPy's swap).
        swap = knp.greater(m, n)
        longer_n, shorter_m = knp.maximum(n, m), knp.minimum(n, m)
        big = knp.where(swap, _pad_to(v, longer_n), _pad_to(a, longer_n))
        small = knp.where(swap, _pad_to(a, longer_n), _pad_to(v, longer_n))
        big, small = _window(big, 0, longer_n), _window(small, 0, shorter_m)
        full = _full_correlation(big, small)
        full = knp.where(swap, knp.flip(full), full)
        # A convolution is symmetric: its centre does not move with the swap.
        return _mode(full, longer_n, shorter_m, mode, None if convolution else swap)
    return _mode(_full_correlation(a, v), n, m, mode, None)


def _pad_to(x: Tracer, size: Any) -> Tracer:
    return knp.concatenate([x, knp.zeros(size - x.aval.shape[0], dtype=x.aval.dtype)])


def _mode(full: Tracer, n: Any, m: Any, mode: str, swap: Any) -> Tracer:
    """The part of the full correlation (length n + m - 1, n >= m) a mode keeps."""
    if mode == "full":
        return full
    if mode == "valid":
        return _window(full, m - 1, n - m + 1)
    start = (m - 1) // 2
    if swap is not None:
        # after a swap the flipped result keeps the other end of the centre
        start = knp.where(swap, (m - 1) - (m - 1) // 2, start)
    return _window(full, start, n)


@numpy_function("correlate")
def correlate(a: Any, v: Any, mode: str = "valid") -> Tracer:
    """`np.correlate(a, v, mode)`: c[k] = sum_n a[n + k] v[n]."""
    return _correlate(a, v, mode, "correlate")


@numpy_function("convolve")
def convolve(a: Any, v: Any, mode: str = "full") -> Tracer:
    """`np.convolve(a, v, mode)`: the correlation with `v` reversed."""
    a, v = operand(a), operand(v)
    if a.aval.ndim == 1 and v.aval.ndim == 1 and is_static_dim(a.aval.shape[0]) and \
            is_static_dim(v.aval.shape[0]) and v.aval.shape[0] > a.aval.shape[0]:
        a, v = v, a
    return _correlate(a, knp.flip(v) if v.aval.ndim == 1 else v, mode, "convolve", convolution=True)


@numpy_function("interp")
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Tracer:
    """`np.interp(x, xp, fp, left, right, period)`: float64 values of `x`'s shape."""
    x, xp, fp = operand(x), operand(xp), operand(fp)
    if fp.aval.dtype.kind == "c":
        raise KilnTypeError("np.interp with complex fp is not supported by kiln")
    if xp.aval.ndim != 1 or fp.aval.ndim != 1:
        raise KilnValueError("object too deep for desired array")
    from kiln.numpy._base import require_equal_dims

    require_equal_dims(xp.aval.shape[0], fp.aval.shape[0], "ValueError", "fp and xp are not of the same length.")
    n = xp.aval.shape[0]
    if is_static_dim(n) and n == 0:
        raise KilnValueError("array of sample points is empty")
    check(knp.greater(n, 0), "ValueError", "array of sample points is empty")
    x, xp, fp = convert(x, np.float64), convert(xp, np.float64), convert(fp, np.float64)
    if period is not None:
        if not isinstance(period, Tracer) and period == 0:
            raise KilnValueError("period must be a non-zero value")
        period = abs(period) if not isinstance(period, Tracer) else knp.abs(period)
        left = right = None
        x, xp = knp.remainder(x, period), knp.remainder(xp, period)
        order = knp.argsort(xp)
        xp, fp = knp.take(xp, order), knp.take(fp, order)
        xp = knp.concatenate([xp[-1:] - period, xp, xp[0:1] + period])
        fp = knp.concatenate([fp[-1:], fp, fp[0:1]])
        n = xp.aval.shape[0]
    left_value = fp[0] if left is None else convert(operand(left), np.float64)
    right_value = fp[-1] if right is None else convert(operand(right), np.float64)
    j = knp.clip(search_sorted(xp, x, right=True) - 1, 0, n - 1)
    following = knp.minimum(j + 1, n - 1)
    x0, x1, f0, f1 = xp[j], xp[following], fp[j], fp[following]
    slope = (f1 - f0) / (x1 - x0)
    value = slope * (x - x0) + f0
    value = knp.where(knp.isnan(value), slope * (x - x1) + f1, value)
    value = knp.where(knp.isnan(value) & (f0 == f1), f0, value)
    value = knp.where((j == n - 1) | (x0 == x), f0, value)
    value = knp.where(x < xp[0], left_value, value)
    value = knp.where(x > xp[-1], right_value, value)
    return knp.where(knp.isnan(x), np.nan, value)


@numpy_function("unwrap")
def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * np.pi) -> Tracer:
    """`np.unwrap(p, discont, axis, period)`: jumps larger than `discont`
    replaced by their complement modulo `period` (float data)."""
    p = operand(p)
    if p.aval.dtype.kind not in "f" or isinstance(period, int) and not isinstance(period, bool):
        if p.aval.dtype.kind in "iub" and isinstance(period, int):
            raise KilnTypeError("np.unwrap of integers with an integer period is not supported by kiln")
    dd = knp.diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dtype = np.result_type(dd.aval.dtype, np.float64 if isinstance(period, float) else period)
    if dtype.kind != "f":
        raise KilnTypeError("np.unwrap of integers with an integer period is not supported by kiln")
    dd = convert(dd, dtype)
    high = period / 2
    low = -high
    ddmod = knp.remainder(dd - low, period) + low
    ddmod = knp.where((ddmod == low) & (dd > 0), high, ddmod)
    correct = knp.where(knp.abs(dd) < discont, 0, ddmod - dd)
    axis = axis % p.aval.ndim
    head = tuple(slice(None) for _ in range(axis))
    first, rest = p[head + (slice(0, 1),)], p[head + (slice(1, None),)]
    return knp.concatenate([convert(first, dtype), convert(rest, dtype) + knp.cumsum(correct, axis=axis)], axis=axis)
