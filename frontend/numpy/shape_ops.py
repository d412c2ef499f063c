"""Stage "jaxpr": reshaping and joining (reshape, transpose, squeeze, concatenate, ...).

In: tracers; sizes may be traced ints.
Out: tracers. Sizes that must agree at run time get a run-time check.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kiln.core import KilnTypeError, KilnValueError, is_static_dim, same_dim
from kiln.numpy._base import (
    broadcast_shapes,
    broadcast_to,
    check,
    convert,
    dim_operand,
    dims_equal,
    operand,
    promote,
    result_dtype,
    materialize,
    match_dims,
    require_equal_dims,
    shape_product,
    split_shape,
    reshape_view,
)
from kiln.numpy._bindings import knp, numpy_function, tracer_method, tracer_property
from kiln.primitives import elementwise, shape as shape_prims
from kiln.tracing import Tracer, bind, current_builder


def _normalize_axis(axis: int, ndim: int, fn: str) -> int:
    if not -ndim <= axis < ndim:
        raise KilnValueError(f"{fn}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


@numpy_function("reshape", method="reshape")
def reshape(x: Any, *shape: Any, order: str = "C") -> Tracer:
    """`np.reshape` (C order); sizes may be traced and one may be -1."""
    if order != "C":
        raise KilnValueError(f"reshape: only order='C' is supported, got {order!r}")
    x = operand(x)
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, Tracer)):
        shape = tuple(shape[0])
    shape = tuple(dim_operand(d) for d in shape)
    total = shape_product(x.aval.shape)
    unknown = [i for i, d in enumerate(shape) if is_static_dim(d) and d == -1]
    if len(unknown) > 1:
        raise KilnValueError("reshape: can only specify one unknown dimension (-1)")
    known = shape_product([d for i, d in enumerate(shape) if i not in unknown])
    if unknown:
        if is_static_dim(total) and is_static_dim(known):
            if known == 0 or total % known:
                raise KilnValueError(f"reshape: cannot reshape array of size {total} into shape {_fmt(shape)}")
            inferred = total // known
        else:
            safe_known = knp.maximum(known, 1)
            check(knp.equal(knp.remainder(total, safe_known), 0), "ValueError",
                  "reshape: cannot reshape an array of size {} into a shape whose other dims multiply to {}",
                  total, known)
            inferred = knp.floor_divide(total, safe_known)
        shape = tuple(inferred if i in unknown else d for i, d in enumerate(shape))
    else:
        if is_static_dim(total) and is_static_dim(known):
            if total != known:
                raise KilnValueError(f"reshape: cannot reshape array of size {total} into shape {_fmt(shape)}")
        elif not same_dim(total, known):
            check(dims_equal(total, known), "ValueError",
                  "reshape: cannot reshape an array of size {} into a shape of size {}", total, known)
    if len(shape) == x.aval.ndim and all(same_dim(a, b) for a, b in zip(shape, x.aval.shape)):
        return x
    if isinstance(x, Tracer) and not _only_unit_dims_change(x.aval.shape, shape):
        builder = current_builder()
        x = builder.lift(x)
        if not builder.aliases.is_contiguous(x):
            # NumPy gives a view only when the elements are contiguous; else a copy.
            source = x
            x = knp.copy(x)
            if not _numpy_surely_copies(builder, source, shape):
                # NumPy may return a view here (when the strides allow it,
                # depending on run-time sizes): writes to either are refused.
                builder.aliases.ambiguous_copies[id(x)] = builder.aliases.root(source)
    return reshape_view(x, shape)


def _numpy_surely_copies(builder, x: Tracer, shape: Sequence[Any]) -> bool:
    """NumPy's reshape copies a non-contiguous `x` whatever the run-time
    sizes: flattening an axis permutation of a contiguous array that no
    size of 1 makes contiguous (`x.T.reshape(-1)`, `x.T.ravel()`)."""
    return len(shape) == 1 and builder.aliases.only_regrouped(x) and not builder.aliases.may_be_contiguous(x)


def _only_unit_dims_change(old: Sequence[Any], new: Sequence[Any]) -> bool:
    """Reshapes that only add or drop size-1 dims are views of any array."""
    def non_unit(dims):
        return [d for d in dims if not (is_static_dim(d) and d == 1)]

    a, b = non_unit(old), non_unit(new)
    return len(a) == len(b) and all(same_dim(x, y) for x, y in zip(a, b))


def _fmt(shape: Sequence[Any]) -> str:
    return "(" + ", ".join(str(d) if is_static_dim(d) else "?" for d in shape) + ")"


@numpy_function("ravel", method="ravel")
def ravel(x: Any) -> Tracer:
    return reshape(x, -1)


@numpy_function("transpose")
def transpose(x: Any, axes: Sequence[int] | None = None) -> Tracer:
    x = operand(x)
    if axes is None:
        axes = tuple(reversed(range(x.aval.ndim)))
    axes = tuple(_normalize_axis(a, x.aval.ndim, "transpose") for a in axes)
    if sorted(axes) != list(range(x.aval.ndim)):
        raise KilnValueError(f"transpose: axes {axes} don't match an array of dimension {x.aval.ndim}")
    if axes == tuple(range(x.aval.ndim)):
        return x
    return bind(shape_prims.transpose_p, x, permutation=axes)


@numpy_function("swapaxes", method="swapaxes")
def swapaxes(x: Any, axis1: int, axis2: int) -> Tracer:
    x = operand(x)
    n = x.aval.ndim
    a, b = _normalize_axis(axis1, n, "swapaxes"), _normalize_axis(axis2, n, "swapaxes")
    perm = list(range(n))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


@numpy_function("moveaxis")
def moveaxis(x: Any, source: Any, destination: Any) -> Tracer:
    """Axes `source` (an int or a sequence) moved to `destination`, the others in order."""
    x = operand(x)
    n = x.aval.ndim
    sources = [source] if isinstance(source, (int, np.integer)) else list(source)
    destinations = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(sources) != len(destinations):
        raise KilnValueError("`source` and `destination` arguments must have the same number of elements")
    sources = [_normalize_axis(a, n, "moveaxis") for a in sources]
    destinations = [_normalize_axis(a, n, "moveaxis") for a in destinations]
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise KilnValueError("moveaxis: repeated axis")
    perm = [i for i in range(n) if i not in sources]
    for d, s in sorted(zip(destinations, sources)):
        perm.insert(d, s)
    return transpose(x, perm)


@numpy_function("expand_dims")
def expand_dims(x: Any, axis: int | Sequence[int]) -> Tracer:
    x = operand(x)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out_ndim = x.aval.ndim + len(axes)
    axes = sorted(_normalize_axis(a, out_ndim, "expand_dims") for a in axes)
    shape = list(x.aval.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, *shape) if shape else x


@numpy_function("squeeze", method="squeeze")
def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> Tracer:
    x = operand(x)
    if axis is None:
        axes = [i for i, d in enumerate(x.aval.shape) if is_static_dim(d) and d == 1]
    else:
        axes = [(axis,) if isinstance(axis, (int, np.integer)) else axis][0]
        axes = [_normalize_axis(a, x.aval.ndim, "squeeze") for a in axes]
        for a in axes:
            d = x.aval.shape[a]
            if is_static_dim(d) and d != 1:
                raise KilnValueError(f"squeeze: cannot select an axis to squeeze out which has size not equal to one (axis {a}, size {d})")
            if not is_static_dim(d):
                check(dims_equal(d, 1), "ValueError",
                      f"squeeze: axis {a} has size {{}}, not one", d)
    shape = [d for i, d in enumerate(x.aval.shape) if i not in axes]
    # Dropping dims of size 1 is a view of any array (no copy, as in NumPy).
    return reshape_view(x, shape) if len(shape) != x.aval.ndim else x


@numpy_function("atleast_1d")
def atleast_1d(*arys: Any) -> Any:
    """Each argument with at least one axis; several arguments give a tuple, as NumPy."""
    results = [reshape(x, 1) if x.aval.ndim == 0 else x for x in map(operand, arys)]
    return results[0] if len(results) == 1 else tuple(results)


@numpy_function("atleast_2d")
def atleast_2d(*arys: Any) -> Any:
    """Each argument with at least two axes (a 1-D array becomes one row)."""
    results = [reshape(x, 1, *(x.aval.shape or (1,))) if x.aval.ndim < 2 else x for x in map(operand, arys)]
    return results[0] if len(results) == 1 else tuple(results)


@numpy_function("flip")
def flip(x: Any, axis: int | Sequence[int] | None = None) -> Tracer:
    """`np.flip`: `x[..., ::-1, ...]` on each axis given (all when None)."""
    x = materialize(x)
    axes = range(x.aval.ndim) if axis is None else ((axis,) if isinstance(axis, (int, np.integer)) else axis)
    axes = {_normalize_axis(a, x.aval.ndim, "flip") for a in axes}
    return x[tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.aval.ndim))]


@numpy_function("diff")
def diff(x: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Tracer:
    """`np.diff`: the n-th forward difference `x[1:] - x[:-1]` along `axis`,
    after `prepend` / `append` (broadcast to one slice when scalar) join `x`."""
    x = materialize(x)
    if n < 0:
        raise KilnValueError(f"diff: order must be non-negative but got {n}")
    if x.aval.ndim == 0:
        raise KilnValueError("diff requires input that is at least one dimensional")
    axis = _normalize_axis(axis, x.aval.ndim, "diff")
    if prepend is not None or append is not None:
        before = [_diff_slab(x, prepend, axis)] if prepend is not None else []
        after = [_diff_slab(x, append, axis)] if append is not None else []
        x = concatenate(before + [x] + after, axis=axis)
    before = (slice(None),) * axis
    for _ in range(n):
        later, earlier = x[before + (slice(1, None),)], x[before + (slice(None, -1),)]
        # NumPy's diff of booleans is "not equal", not subtraction.
        x = knp.not_equal(later, earlier) if x.aval.dtype == np.bool_ else knp.subtract(later, earlier)
    return x


def _diff_slab(x: Tracer, extra: Any, axis: int) -> Tracer:
    """`prepend` / `append` of np.diff: a scalar becomes one slice of `x`'s shape."""
    extra = operand(extra)
    if extra.aval.ndim == 0:
        extra = broadcast_to(extra, tuple(1 if d == axis else s for d, s in enumerate(x.aval.shape)))
    return extra


@numpy_function("concatenate")
def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Tracer:
    arrays = promote(*arrays)
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    first = arrays[0]
    if first.aval.ndim == 0:
        raise KilnValueError("concatenate: zero-dimensional arrays cannot be concatenated")
    axis = _normalize_axis(axis, first.aval.ndim, "concatenate")
    for a in arrays[1:]:
        if a.aval.ndim != first.aval.ndim:
            raise KilnValueError(
                f"concatenate: all the input arrays must have the same number of dimensions "
                f"({first.aval.ndim} vs {a.aval.ndim})")
    # Other axes must agree; reuse the first array's dims for every operand.
    arrays = [_match_other_dims(a, first, axis) for a in arrays]
    total: Any = 0
    for a in arrays:
        d = a.aval.shape[axis]
        total = total + d if not (is_static_dim(total) and is_static_dim(d)) else total + int(d)
    if is_static_dim(total):
        return bind(shape_prims.concatenate_p, *arrays, dimension=axis, size=int(total))
    return bind(shape_prims.concatenate_p, *arrays, dim_operand(total), dimension=axis, size=None)


def _match_other_dims(a: Tracer, like: Tracer, axis: int) -> Tracer:
    target = list(like.aval.shape)
    target[axis] = a.aval.shape[axis]
    for i, (d, t) in enumerate(zip(a.aval.shape, target)):
        if i == axis or same_dim(d, t):
            continue
        if is_static_dim(d) and is_static_dim(t):
            raise KilnValueError(
                f"concatenate: all the input array dimensions except for the concatenation axis must "
                f"match exactly, but along dimension {i} the sizes are {t} and {d}")
        check(dims_equal(d, t), "ValueError",
              f"concatenate: sizes along dimension {i} differ ({{}} vs {{}})", d, t)
    if all(same_dim(d, t) for d, t in zip(a.aval.shape, target)):
        return a
    static, dyn = split_shape(target)
    return bind(shape_prims.reshape_p, a, *dyn, new_sizes=static)


@numpy_function("hstack")
def hstack(tup: Sequence[Any]) -> Tracer:
    """`np.hstack`: concatenate along axis 1 (axis 0 for 1-D arrays)."""
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, axis=0 if arrays and arrays[0].aval.ndim == 1 else 1)


@numpy_function("vstack")
def vstack(tup: Sequence[Any]) -> Tracer:
    """`np.vstack`: concatenate along axis 0, 1-D arrays as rows."""
    return concatenate([atleast_2d(a) for a in tup], axis=0)


@numpy_function("stack")
def stack(arrays: Sequence[Any], axis: int = 0) -> Tracer:
    arrays = [operand(a) for a in arrays]
    if not arrays:
        raise KilnValueError("stack: need at least one array to stack")
    shape = arrays[0].aval.shape
    if any(a.aval.ndim != len(shape) for a in arrays):
        raise KilnValueError("stack: all input arrays must have the same shape")
    # NumPy stacks equal shapes only: no broadcasting, not even of a 1.
    for a in arrays[1:]:
        for i, (d, first) in enumerate(zip(a.aval.shape, shape)):
            require_equal_dims(first, d, "ValueError", f"stack: all input arrays must have the same shape "
                               f"(axis {i}: sizes {{}} and {{}})")
    axis = _normalize_axis(axis, len(shape) + 1, "stack")
    expanded = [expand_dims(match_dims(a, shape), axis) for a in arrays]
    return concatenate(expanded, axis=axis)


@numpy_function("where")
def where(condition: Any, x: Any = None, y: Any = None) -> Tracer:
    if x is None and y is None:
        return knp.nonzero(condition)
    if x is None or y is None:
        raise KilnValueError("either both or neither of x and y should be given")
    cond = convert(operand(condition), np.bool_)
    x, y = operand(x), operand(y)
    dtype, weak = result_dtype(x, y)
    shape = broadcast_shapes([cond.aval.shape, x.aval.shape, y.aval.shape], "np.where")
    return bind(elementwise.select_p, broadcast_to(cond, shape),
                broadcast_to(convert(x, dtype, weak), shape), broadcast_to(convert(y, dtype, weak), shape))


@tracer_method("transpose")
def _transpose_method(self, *axes):
    """`x.transpose(1, 0)` and `x.transpose((1, 0))`."""
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = tuple(axes[0])
    return transpose(self, axes or None)


@tracer_property("T")
def _transposed(self):
    return transpose(self)


@tracer_method("flatten")
def _flatten(self):
    return ravel(knp.copy(self))  # copy first: never a view


@numpy_function("repeat", method="repeat")
def repeat(x: Any, repeats: Any, axis: int | None = None) -> Tracer:
    """`np.repeat` with one count (static or traced) for every element:
    each element is followed by its copies along `axis` (flattened when None)."""
    if isinstance(repeats, (list, tuple, np.ndarray)) or (isinstance(repeats, Tracer) and repeats.aval.shape != ()):
        return _repeat_each(x, repeats, axis)
    if is_static_dim(repeats) and repeats < 0:
        raise KilnValueError(f"np.repeat: repeats may not contain negative values (got {repeats})")
    x = operand(x)
    if axis is None:
        x, axis = reshape(x, -1), 0
    axis = _normalize_axis(axis, x.aval.ndim, "repeat")
    count = dim_operand(repeats)
    shape = list(x.aval.shape)
    copies = broadcast_to(expand_dims(x, axis + 1), shape[:axis + 1] + [count] + shape[axis + 1:])
    return reshape(copies, *shape[:axis], shape[axis] * count, *shape[axis + 1:])


def _repeat_each(x: Any, repeats: Any, axis: int | None) -> Tracer:
    """`np.repeat` with a count per element: element i fills the positions
    from the running total of the counts before it; the result's length,
    the counts' sum, is known when the program runs."""
    from kiln.primitives.indexing import scatter_add_p

    x = operand(x)
    if axis is None:
        x, axis = reshape(x, -1), 0
    axis = _normalize_axis(axis, x.aval.ndim, "repeat")
    counts = operand(repeats if isinstance(repeats, Tracer) else np.asarray(repeats))
    if counts.aval.dtype.kind not in "iub" or counts.aval.ndim != 1:
        raise KilnTypeError("np.repeat: repeats must be integers, one count or a 1-D array of counts")
    counts = convert(counts, np.int64)
    n = x.aval.shape[axis]
    if is_static_dim(counts.aval.shape[0]) and counts.aval.shape[0] == 1:
        return repeat(x, counts[0], axis)
    require_equal_dims(counts.aval.shape[0], n, "ValueError",
                       "np.repeat: operands could not be broadcast together ({} counts for an axis of size {})")
    counts = match_dims(counts, (n,))
    check(knp.all(knp.greater_equal(counts, 0)), "ValueError", "np.repeat: repeats may not contain negative values")
    ends = knp.cumsum(counts)
    total = knp.sum(counts)
    starts = ends - counts
    marks = bind(scatter_add_p, knp.zeros(total + 1, dtype=np.int64), starts, knp.ones_like(starts))
    source = knp.cumsum(marks)[:total] - 1
    return knp.take(x, source, axis=axis)


@numpy_function("broadcast_to")
def _broadcast_to(x: Any, shape: Any) -> Any:
    """A read-only view, as NumPy's broadcast_to."""
    result = materialize(broadcast_to(x, shape))
    if isinstance(result, Tracer) and result is not x:
        current_builder().aliases.readonly.add(id(result))
    return result


@numpy_function("shape")
def _shape(a: Any) -> tuple:
    return operand(a).aval.shape


@numpy_function("ndim")
def _ndim(a: Any) -> int:
    return operand(a).aval.ndim


@numpy_function("size")
def _size(a: Any) -> Any:
    return shape_product(operand(a).aval.shape)


@tracer_property("size")
def _size_property(self) -> Any:
    return shape_product(self.shape)
