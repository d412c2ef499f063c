"""Stage "jaxpr": array creation with traced sizes (zeros, ones, full, arange, ...).

In: shapes whose entries are ints or traced int scalars; fill values.
Out: tracers of the requested shape and dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.core import INDEX_DTYPE, Literal, is_static_dim
from kiln.numpy._base import (
    broadcast_to,
    canonical_dtype,
    convert,
    dim_operand,
    materialize,
    operand,
    split_shape,
)
from kiln.numpy._bindings import knp, numpy_function
from kiln.primitives import shape as shape_prims
from kiln.tracing import Tracer, bind


def _as_shape(shape: Any) -> tuple:
    if isinstance(shape, (int, np.integer, Tracer)):
        return (shape,)
    return tuple(shape)


def _default_dtype(value: Any) -> np.dtype:
    if isinstance(value, Tracer) or isinstance(value, Literal):
        return value.aval.dtype
    return np.asarray(value).dtype


@numpy_function("full")
def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tracer:
    """`np.full` with traced sizes: `full((n, 3), 0.5)`."""
    dtype = canonical_dtype(dtype if dtype is not None else _default_dtype(fill_value))
    value = convert(operand(fill_value), dtype)
    return materialize(broadcast_to(value, _as_shape(shape)))


@numpy_function("zeros")
def zeros(shape: Any, dtype: Any = float) -> Tracer:
    return full(shape, 0, dtype)


@numpy_function("ones")
def ones(shape: Any, dtype: Any = float) -> Tracer:
    return full(shape, 1, dtype)


@numpy_function("empty")
def empty(shape: Any, dtype: Any = float) -> Tracer:
    """Like NumPy's `empty`, but the contents are defined (zeros)."""
    return full(shape, 0, dtype)


def _like(x: Any, dtype: Any, shape: Any) -> tuple:
    x = operand(x)
    return (x.aval.shape if shape is None else shape), (x.aval.dtype if dtype is None else dtype)


@numpy_function("full_like")
def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Tracer:
    shape, dtype = _like(x, dtype, shape)
    return full(shape, fill_value, dtype)


@numpy_function("zeros_like")
def zeros_like(x: Any, dtype: Any = None, shape: Any = None) -> Tracer:
    return full_like(x, 0, dtype, shape)


@numpy_function("ones_like")
def ones_like(x: Any, dtype: Any = None, shape: Any = None) -> Tracer:
    return full_like(x, 1, dtype, shape)


@numpy_function("empty_like")
def empty_like(x: Any, dtype: Any = None, shape: Any = None) -> Tracer:
    return full_like(x, 0, dtype, shape)


def iota(size: Any, dtype: Any = INDEX_DTYPE) -> Tracer:
    """0, 1, ..., size - 1 (size may be traced)."""
    static, dyn = split_shape((size,))
    return bind(shape_prims.iota_p, *dyn, dtype=canonical_dtype(dtype), shape=static, dimension=0)


@numpy_function("arange")
def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Tracer:
    """`np.arange` with traced bounds; the length is ceil((stop - start) / step)."""
    if stop is None:
        start, stop = 0, start
    if all(is_static_dim(v) or isinstance(v, float) for v in (start, stop, step)):
        values = np.arange(start, stop, step, dtype=dtype)
        return convert(operand(values), values.dtype) if values.size else zeros((0,), values.dtype)
    ops = [operand(v) for v in (start, stop, step)]
    result = dtype or np.result_type(*[o.aval.dtype if not o.aval.weak_type else
                                       {"i": 0, "u": 0, "b": 0, "f": 0.0}[o.aval.dtype.kind] for o in ops])
    result = canonical_dtype(result)
    if all(o.aval.dtype.kind in "iub" for o in ops):
        length = knp.maximum(0, -knp.floor_divide(ops[0] - ops[1], ops[2]))
    else:
        length = knp.maximum(0, knp.ceil((ops[1] - ops[0]) / ops[2])).astype(INDEX_DTYPE)
    idx = iota(length, result)
    return convert(ops[0], result) + idx * convert(ops[2], result)


@numpy_function("linspace")
def linspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True, dtype: Any = None) -> Tracer:
    """`np.linspace` with a traced `num`."""
    dtype = canonical_dtype(dtype or np.float64)
    num = dim_operand(num)
    idx = iota(num, np.float64)
    div = (num - 1) if endpoint else num
    div_f = knp.maximum(convert(operand(div), np.float64), 1.0) if not is_static_dim(div) else float(max(div, 1))
    start_f, stop_f = asarray(start, np.float64), asarray(stop, np.float64)
    values = start_f + idx * ((stop_f - start_f) / div_f)
    if endpoint:
        # The last value is exactly `stop`, as NumPy guarantees, unless it is
        # also the first (num == 1 gives [start]).
        is_last = knp.logical_and(knp.equal(idx, convert(operand(num - 1), np.float64)), knp.greater(idx, 0.0))
        values = knp.where(is_last, stop_f, values)
    return values.astype(dtype)


@numpy_function("eye")
def eye(N: Any, M: Any = None, k: int = 0, dtype: Any = float) -> Tracer:
    """`np.eye` with traced sizes."""
    if M is None:
        M = N
    rows = broadcast_to(_column(iota(N)), (N, M))
    cols = broadcast_to(iota(M), (N, M))
    return knp.equal(rows + k, cols).astype(dtype)


def _column(v: Tracer) -> Tracer:
    from kiln.numpy.shape_ops import expand_dims

    return expand_dims(v, 1)


@numpy_function("asarray")
def asarray(x: Any, dtype: Any = None) -> Tracer:
    """A traced array for `x` (no copy of a traced value)."""
    x = operand(x)
    if isinstance(x, Literal):
        x = materialize(x)
    if dtype is not None:
        x = convert(x, canonical_dtype(dtype))
    return x


@numpy_function("array")
def array(x: Any, dtype: Any = None, copy: bool = True) -> Tracer:
    """`np.array`: a new array (a copy of a traced value)."""
    result = asarray(x, dtype)
    if copy:
        from kiln.numpy.mutation import copy as copy_fn

        return copy_fn(result)
    return result

