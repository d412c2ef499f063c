"""Stage "jaxpr": reductions (sum, prod, max, min, mean, argmax, any, all, cumsum)
and the ufunc methods `np.add.reduce`, `np.maximum.accumulate`, ....

In: a traced array, `axis` (None, int or tuple), `keepdims`, `dtype`.
Out: a tracer with NumPy's result dtype; reductions without identity
(max/min/argmax/argmin) on a dynamically empty axis raise at run time.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from kiln.core import INDEX_DTYPE, KilnValueError, Primitive, is_static_dim
from kiln.numpy._base import check, convert, dims_equal, operand, shape_product
from kiln.numpy._bindings import knp, numpy_function, ufunc_method
from kiln.primitives import reduction
from kiln.tracing import Tracer, bind


def _axes(x, axis, ufunc_reduce: bool = False) -> tuple[int, ...]:
    n = x.aval.ndim
    if axis is None:
        return tuple(range(n))
    if ufunc_reduce and n == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return ()  # NumPy's ufunc reductions (sum, max, any, ...) take axis 0 / -1 on a 0-d array
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -n <= a < n:
            raise KilnValueError(f"axis {a} is out of bounds for array of dimension {n}")
        out.append(int(a) % n)
    if len(set(out)) != len(out):
        raise KilnValueError(f"duplicate value in 'axis': {axis}")
    return tuple(sorted(out))


def _keep(x: Tracer, result: Tracer, axes: tuple, keepdims: bool) -> Tracer:
    if not keepdims:
        return result
    from kiln.numpy.shape_ops import reshape

    shape = [1 if i in axes else d for i, d in enumerate(x.aval.shape)]
    return reshape(result, *shape) if shape else result


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """np.add.reduce's default: small ints and bools accumulate in 64 bits."""
    if dtype.kind in "bi" and dtype.itemsize < 8:
        return np.dtype(np.int64)
    if dtype.kind == "u" and dtype.itemsize < 8:
        return np.dtype(np.uint64)
    return dtype


def _reduce(prim: Primitive, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Tracer:
    x = operand(x)
    axes = _axes(x, axis, ufunc_reduce=True)
    if dtype is not None:
        x = convert(x, dtype)
    result = bind(prim, x, axes=axes)
    return _keep(x, result, axes, keepdims)


@numpy_function("sum", method="sum")
def sum(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tracer:
    x = operand(x)
    return _reduce(reduction.reduce_sum_p, x, axis, dtype or _sum_dtype(x.aval.dtype), keepdims)


@numpy_function("prod", method="prod")
def prod(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tracer:
    x = operand(x)
    return _reduce(reduction.reduce_prod_p, x, axis, dtype or _sum_dtype(x.aval.dtype), keepdims)


def _require_nonempty(x: Tracer, axes: tuple, fn: str) -> None:
    size = shape_product([x.aval.shape[a] for a in axes])
    if is_static_dim(size):
        if size == 0:
            raise KilnValueError(f"zero-size array to reduction operation {fn} which has no identity")
        return
    check(knp.logical_not(dims_equal(size, 0)), "ValueError",
          f"zero-size array to reduction operation {fn} which has no identity (reduced size {{}})", size)


@numpy_function("max", "amax", method="max")
def max(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Tracer:
    x = operand(x)
    if initial is None:
        _require_nonempty(x, _axes(x, axis, ufunc_reduce=True), "maximum")
    result = _reduce(reduction.reduce_max_p if x.aval.dtype != np.bool_ else reduction.reduce_or_p, x, axis, None, keepdims)
    if initial is not None:
        result = knp.maximum(result, initial)
    return result


@numpy_function("min", "amin", method="min")
def min(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Tracer:
    x = operand(x)
    if initial is None:
        _require_nonempty(x, _axes(x, axis, ufunc_reduce=True), "minimum")
    result = _reduce(reduction.reduce_min_p if x.aval.dtype != np.bool_ else reduction.reduce_and_p, x, axis, None, keepdims)
    if initial is not None:
        result = knp.minimum(result, initial)
    return result


@numpy_function("any", method="any")
def any(x: Any, axis: Any = None, keepdims: bool = False) -> Tracer:
    return _reduce(reduction.reduce_or_p, convert(operand(x), np.bool_), axis, None, keepdims)


@numpy_function("all", method="all")
def all(x: Any, axis: Any = None, keepdims: bool = False) -> Tracer:
    return _reduce(reduction.reduce_and_p, convert(operand(x), np.bool_), axis, None, keepdims)


# np.<ufunc>.reduce reduces axis 0 by default, where the functions above
# (np.sum, np.max, ...) reduce every axis.
@ufunc_method("add", "reduce")
def add_reduce(x: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False) -> Tracer:
    return sum(x, axis, dtype, keepdims)


@ufunc_method("multiply", "reduce")
def multiply_reduce(x: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False) -> Tracer:
    return prod(x, axis, dtype, keepdims)


@ufunc_method("maximum", "reduce")
def maximum_reduce(x: Any, axis: Any = 0, keepdims: bool = False, initial: Any = None) -> Tracer:
    return max(x, axis, keepdims, initial)


@ufunc_method("minimum", "reduce")
def minimum_reduce(x: Any, axis: Any = 0, keepdims: bool = False, initial: Any = None) -> Tracer:
    return min(x, axis, keepdims, initial)


@ufunc_method("logical_or", "reduce")
def logical_or_reduce(x: Any, axis: Any = 0, keepdims: bool = False) -> Tracer:
    return any(x, axis, keepdims)


@ufunc_method("logical_and", "reduce")
def logical_and_reduce(x: Any, axis: Any = 0, keepdims: bool = False) -> Tracer:
    return all(x, axis, keepdims)


@numpy_function("mean", method="mean")
def mean(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tracer:
    """Sum over the count; ints average in float64 as NumPy (empty gives nan),
    float16 in float32 with a float16 result (NumPy's rule too)."""
    x = operand(x)
    axes = _axes(x, axis)
    acc = dtype or (x.aval.dtype if x.aval.dtype.kind in "fc" else np.dtype(np.float64))
    half = dtype is None and x.aval.dtype == np.float16
    if half:
        acc = np.dtype(np.float32)
    total = sum(convert(x, acc), axis=axes, keepdims=keepdims)
    count = shape_product([x.aval.shape[a] for a in axes])
    result = total / (convert(operand(count), acc) if not is_static_dim(count) else float(count))
    return convert(result, np.dtype(np.float16)) if half else result


@numpy_function("var", method="var")
def var(x: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False) -> Tracer:
    x = operand(x)
    axes = _axes(x, axis)
    m = mean(x, axis=axes, dtype=dtype, keepdims=True)
    d = x - m
    acc = m.aval.dtype
    total = sum(d * d, axis=axes, keepdims=keepdims)
    # NumPy divides by max(n - ddof, 0): too large a ddof gives inf / nan.
    count = shape_product([x.aval.shape[a] for a in axes]) - ddof
    if is_static_dim(count):
        return total / float(builtins.max(count, 0))
    return total / convert(knp.maximum(count, 0), acc)


@numpy_function("std", method="std")
def std(x: Any, axis: Any = None, dtype: Any = None, ddof: int = 0, keepdims: bool = False) -> Tracer:
    return knp.sqrt(var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _arg(prim: Primitive, fn: str, x: Any, axis: Any, keepdims: bool) -> Tracer:
    x = operand(x)
    if axis is None:
        from kiln.numpy.shape_ops import ravel

        flat = ravel(x)
        _require_nonempty(flat, (0,), fn)
        result = bind(prim, flat,
                      axis=0, index_dtype=INDEX_DTYPE)
        if keepdims:
            from kiln.numpy.shape_ops import reshape

            return reshape(result, *([1] * x.aval.ndim))
        return result
    axes = _axes(x, axis)
    _require_nonempty(x, axes, fn)
    result = bind(prim, x,
                  axis=axes[0], index_dtype=INDEX_DTYPE)
    return _keep(x, result, axes, keepdims)


@numpy_function("argmax", method="argmax")
def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Tracer:
    return _arg(reduction.argmax_p, "argmax", x, axis, keepdims)


@numpy_function("argmin", method="argmin")
def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Tracer:
    return _arg(reduction.argmin_p, "argmin", x, axis, keepdims)


def _cumulative(prim: Primitive, x: Any, axis: Any, dtype: Any) -> Tracer:
    x = operand(x)
    if axis is None:
        from kiln.numpy.shape_ops import ravel

        x, axis = ravel(x), 0
    (axis,) = _axes(x, axis)
    x = convert(x, dtype or _sum_dtype(x.aval.dtype))
    return bind(prim, x, axis=axis)


@numpy_function("cumsum", method="cumsum")
def cumsum(x: Any, axis: Any = None, dtype: Any = None) -> Tracer:
    return _cumulative(reduction.cumsum_p, x, axis, dtype)


@numpy_function("cumprod", method="cumprod")
def cumprod(x: Any, axis: Any = None, dtype: Any = None) -> Tracer:
    return _cumulative(reduction.cumprod_p, x, axis, dtype)


def running_extreme(prim: Primitive, x: Any, axis: int = 0, dtype: Any = None) -> Tracer:
    """`np.maximum.accumulate` / `np.minimum.accumulate` (`cummax_p` or
    `cummin_p`): the dtype is kept; bools scan as int8 (False < True)."""
    x = operand(x)
    if dtype is not None:
        x = convert(x, dtype)
    (axis,) = _axes(x, axis)
    if x.aval.dtype == np.bool_:
        scanned = bind(prim, convert(x, np.int8), axis=axis)
        return convert(scanned, np.bool_)
    return bind(prim, x, axis=axis)


@ufunc_method("add", "accumulate")
def _add_accumulate(x: Any, axis: int = 0, dtype: Any = None) -> Tracer:
    return cumsum(x, axis=axis, dtype=dtype)


@ufunc_method("multiply", "accumulate")
def _multiply_accumulate(x: Any, axis: int = 0, dtype: Any = None) -> Tracer:
    return cumprod(x, axis=axis, dtype=dtype)


@ufunc_method("maximum", "accumulate")
def _maximum_accumulate(x: Any, axis: int = 0, dtype: Any = None) -> Tracer:
    return running_extreme(reduction.cummax_p, x, axis, dtype)


@ufunc_method("minimum", "accumulate")
def _minimum_accumulate(x: Any, axis: int = 0, dtype: Any = None) -> Tracer:
    return running_extreme(reduction.cummin_p, x, axis, dtype)
