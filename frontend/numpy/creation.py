"""Stage "jaxpr": array creation with traced sizes (zeros, ones, full, arange, ...).

In: shapes whose entries are ints or traced int scalars; fill values.
Out: tracers of the requested shape and dtype.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kiln.core import INDEX_DTYPE, KilnValueError, Literal, is_static_dim
from kiln.numpy._base import (
    broadcast_to,
    canonical_dtype,
    check,
    convert,
    dim_operand,
    materialize,
    operand,
    split_shape,
)
from kiln.errors import KilnTypeError, KilnValueError
from kiln.numpy._bindings import FUNCTIONS, knp, numpy_function, traced
from kiln.primitives import shape as shape_prims
from kiln.trace_namespace import replace_in_traced_code
from kiln.tracing import Tracer, bind


def _as_shape(shape: Any) -> tuple:
    if isinstance(shape, (int, np.integer, Tracer)):
        return (shape,)
    return tuple(shape)


def _default_dtype(value: Any) -> np.dtype:
    if isinstance(value, Tracer) or isinstance(value, Literal):
        return value.aval.dtype
    return np.asarray(value).dtype


def _creation(*names: str) -> Callable[[Callable], Callable]:
    """Declare a NumPy function that takes sizes or values, not arrays:
    `np.zeros(n)` never reaches `__array_function__`, so traced code sees
    kiln's function under NumPy's name (kiln/trace_namespace.py)."""

    def register(impl: Callable) -> Callable:
        numpy_function(*names)(impl)
        for name in names:
            replace_in_traced_code(getattr(np, name), FUNCTIONS[name])
        return impl

    return register


@_creation("full")
def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *, like: Any = None) -> Tracer:
    """`np.full` with traced sizes: `full((n, 3), 0.5)`."""
    dtype = canonical_dtype(dtype if dtype is not None else _default_dtype(fill_value))
    value = convert(operand(fill_value), dtype)
    shape = _as_shape(shape)
    _refuse_negative_dims(shape)
    return materialize(broadcast_to(value, shape))


def _refuse_negative_dims(shape: tuple) -> None:
    """NumPy refuses a negative size (`np.zeros(-1)`): a static one now, a
    traced one when the program runs (the allocation may be optimized away,
    so its own size check cannot be relied on). Dims of arguments are never
    negative and need no check."""
    for d in shape:
        if isinstance(d, Tracer) and not _is_argument_dim(d):
            check(knp.greater_equal(d, 0), "ValueError", "negative dimensions are not allowed (got {})",
                  dim_operand(d))
        elif is_static_dim(d) and d < 0:
            raise KilnValueError(f"negative dimensions are not allowed (got {int(d)})")


def _is_argument_dim(d: Tracer) -> bool:
    """Whether `d` is an implicit dim argument (a dim of an array argument
    or of a carried array) of its scope or of an enclosing one."""
    while d is not None:
        builder = d.builder
        if any(d is v and not explicit for v, explicit in zip(builder.invars, builder.in_explicit)):
            return True
        d = builder.outer_source(d)
    return False


@_creation("zeros")
def zeros(shape: Any, dtype: Any = float, order: str = "C", *, like: Any = None) -> Tracer:
    return full(shape, 0, dtype)


@_creation("ones")
def ones(shape: Any, dtype: Any = float, order: str = "C", *, like: Any = None) -> Tracer:
    return full(shape, 1, dtype)


@_creation("empty")
def empty(shape: Any, dtype: Any = float, order: str = "C", *, like: Any = None) -> Tracer:
    """Like NumPy's `empty`, but the contents are defined (zeros)."""
    return full(shape, 0, dtype)


def _like(x: Any, dtype: Any, shape: Any) -> tuple:
    x = operand(x)
    return (x.aval.shape if shape is None else shape), (x.aval.dtype if dtype is None else dtype)


@_creation("full_like")
def full_like(x: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None) -> Tracer:
    shape, dtype = _like(x, dtype, shape)
    return full(shape, fill_value, dtype)


@_creation("zeros_like")
def zeros_like(x: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> Tracer:
    return full_like(x, 0, dtype, shape=shape)


@_creation("ones_like")
def ones_like(x: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> Tracer:
    return full_like(x, 1, dtype, shape=shape)


@_creation("empty_like")
def empty_like(x: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> Tracer:
    return full_like(x, 0, dtype, shape=shape)


def iota(size: Any, dtype: Any = INDEX_DTYPE) -> Tracer:
    """0, 1, ..., size - 1 (size may be traced)."""
    static, dyn = split_shape((size,))
    return bind(shape_prims.iota_p, *dyn, dtype=canonical_dtype(dtype), shape=static, dimension=0)


@_creation("arange")
def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *, like: Any = None) -> Tracer:
    """`np.arange` with traced bounds; the length is ceil((stop - start) / step)."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if all(is_static_dim(v) or isinstance(v, (float, np.floating)) for v in (start, stop, step)):
        values = np.arange(start, stop, step, dtype=dtype)
        return convert(operand(values), values.dtype) if values.size else zeros((0,), values.dtype)
    ops = [operand(v) for v in (start, stop, step)]
    result = canonical_dtype(dtype or np.result_type(*[_discovered_dtype(o) for o in ops]))
    if all(o.aval.dtype.kind in "iub" for o in ops):
        length = knp.maximum(0, -knp.floor_divide(ops[0] - ops[1], ops[2]))
    else:
        length = knp.maximum(0, knp.ceil((ops[1] - ops[0]) / ops[2])).astype(INDEX_DTYPE)
    idx = iota(length, result)
    return convert(ops[0], result) + idx * convert(ops[2], result)


@_creation("linspace")
def linspace(start: Any, stop: Any, num: Any = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0) -> Any:
    """`np.linspace` with a traced `num` (scalar `start` and `stop`)."""
    if axis != 0:
        raise KilnTypeError("np.linspace: kiln supports axis=0 only; transpose the result instead")
    num = dim_operand(num)
    if is_static_dim(num) and num < 0:
        raise KilnValueError(f"np.linspace: number of samples, {num}, must be non-negative")
    idx = iota(num, np.float64)
    div = (num - 1) if endpoint else num
    div_f = knp.maximum(convert(operand(div), np.float64), 1.0) if not is_static_dim(div) else float(max(div, 1))
    start_f, stop_f = asarray(start, np.float64), asarray(stop, np.float64)
    step = (stop_f - start_f) / div_f
    values = start_f + idx * step
    if endpoint:
        # The last value is exactly `stop`, as NumPy guarantees, unless it is
        # also the first (num == 1 gives [start]).
        is_last = knp.logical_and(knp.equal(idx, convert(operand(num - 1), np.float64)), knp.greater(idx, 0.0))
        values = knp.where(is_last, stop_f, values)
    values = values.astype(canonical_dtype(dtype or np.float64))
    return (values, step) if retstep else values


@_creation("eye")
def eye(N: Any, M: Any = None, k: int = 0, dtype: Any = float, order: str = "C", *, like: Any = None) -> Tracer:
    """`np.eye` with traced sizes (and a traced diagonal offset `k`)."""
    from kiln.numpy.shape_ops import expand_dims

    if M is None:
        M = N
    rows = broadcast_to(expand_dims(iota(N), 1), (N, M))
    cols = broadcast_to(iota(M), (N, M))
    return knp.equal(rows + k, cols).astype(dtype)


@_creation("identity")
def identity(n: Any, dtype: Any = None, *, like: Any = None) -> Tracer:
    """`np.identity(n)`: the n x n identity, n may be traced."""
    return eye(n, dtype=float if dtype is None else dtype)


def _triangle(m: Any, k: Any, keep_upper: bool) -> Tracer:
    """`m` with the elements below (upper) or above (lower) diagonal `k` of its last two axes zeroed."""
    from kiln.numpy.shape_ops import expand_dims

    m = operand(m)
    if m.aval.ndim < 2:
        m = broadcast_to(m, (m.aval.shape[0] if m.aval.ndim else 1,) * 2)
    rows, cols = m.aval.shape[-2:]
    offset = broadcast_to(iota(cols), (rows, cols)) - broadcast_to(expand_dims(iota(rows), 1), (rows, cols))
    keep = knp.greater_equal(offset, k) if keep_upper else knp.less_equal(offset, k)
    return knp.where(keep, m, knp.zeros((), dtype=m.aval.dtype))


@numpy_function("triu")
def triu(m: Any, k: Any = 0) -> Tracer:
    """`np.triu`: zero below the k-th diagonal (k may be traced)."""
    return _triangle(m, k, keep_upper=True)


@numpy_function("tril")
def tril(m: Any, k: Any = 0) -> Tracer:
    """`np.tril`: zero above the k-th diagonal (k may be traced)."""
    return _triangle(m, k, keep_upper=False)


def _discovered_dtype(x: Any) -> np.dtype:
    """The dtype `np.array` gives an element: Python numbers are not weak
    here (`np.array([f32_scalar, 1.0])` is float64)."""
    if isinstance(x, (Tracer, Literal)):
        if x.aval.weak_type:
            return np.dtype({"b": np.bool_, "i": np.int64, "u": np.int64, "f": np.float64,
                             "c": np.complex128}[x.aval.dtype.kind])
        return x.aval.dtype
    return np.asarray(x).dtype


def _nested_leaves(x: Any) -> list:
    if isinstance(x, (list, tuple)):
        return [leaf for e in x for leaf in _nested_leaves(e)]
    return [x]


def _from_nested(x: Any, dtype: np.dtype) -> Tracer:
    """A list (of lists ...) of numbers and traced values as one array of `dtype`."""
    from kiln.numpy.shape_ops import stack

    if isinstance(x, (list, tuple)):
        if not x:
            return zeros((0,), dtype)
        return stack([_from_nested(e, dtype) for e in x])
    return materialize(convert(operand(x), dtype))


@_creation("asarray")
def asarray(x: Any, dtype: Any = None, order: Any = None, *, copy: Any = None, device: Any = None,
            like: Any = None) -> Tracer:
    """A traced array for `x` (no copy of a traced value); lists may hold traced values."""
    if isinstance(x, (list, tuple)) and traced(*x):
        leaves = _nested_leaves(x)
        chosen = canonical_dtype(dtype) if dtype is not None else canonical_dtype(
            np.result_type(*[_discovered_dtype(operand(leaf)) for leaf in leaves]))
        return _from_nested(x, chosen)
    x = operand(x)
    if isinstance(x, Literal):
        x = materialize(x)
    if dtype is not None:
        x = convert(x, canonical_dtype(dtype))
    return x


@_creation("array")
def array(x: Any, dtype: Any = None, *, copy: bool = True, order: str = "K", subok: bool = False,
          ndmin: int = 0, like: Any = None) -> Tracer:
    """`np.array`: a new array (a copy of a traced value)."""
    from kiln.numpy.shape_ops import expand_dims

    result = asarray(x, dtype)
    if copy and isinstance(x, Tracer):
        from kiln.numpy.mutation import copy as copy_fn

        result = copy_fn(result)
    missing = ndmin - len(result.aval.shape)
    return expand_dims(result, tuple(range(missing))) if missing > 0 else result


@_creation("asanyarray")
def asanyarray(x: Any, dtype: Any = None, order: Any = None, *, like: Any = None) -> Tracer:
    return asarray(x, dtype)


@_creation("ascontiguousarray")
def ascontiguousarray(x: Any, dtype: Any = None, *, like: Any = None) -> Tracer:
    """Contiguous already: kiln lays out every array it makes in C order."""
    return asarray(x, dtype)


@numpy_function("meshgrid")
def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple:
    """`np.meshgrid` of traced (or constant) 1-D coordinate arrays."""
    from kiln.numpy.shape_ops import expand_dims, reshape

    if indexing not in ("xy", "ij"):
        raise KilnValueError(f"np.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    count = len(xi)
    axes = list(range(count))
    if indexing == "xy" and count > 1:
        axes[0], axes[1] = 1, 0
    grids = []
    for x, axis in zip(xi, axes):
        flat = reshape(asarray(x), (-1,))
        grids.append(expand_dims(flat, tuple(a for a in range(count) if a != axis)) if count > 1 else flat)
    if sparse:
        return tuple(grids)
    shape = tuple(grids[axes.index(a)].aval.shape[a] for a in range(count))
    return tuple(materialize(broadcast_to(g, shape)) for g in grids)
