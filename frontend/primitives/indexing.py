"""Stage "jaxpr": reading parts of arrays (strided slices, gathers, mask positions),
and accumulating into them (scatter_add).

In: an operand, dynamic starts/sizes as scalar int operands (`None` in the
static params where dynamic), static strides; for gather an integer index
array; for flatnonzero a bool array.
Out: the selected elements (a slice is a view of its operand). Bounds are already valid: the numpy layer clamps
slices as NumPy does and emits run-time checks for scalar indices. flatnonzero's
result size is data: its count is an implicit result (the result's dim).
`scatter_add(base, indices, updates)` is a new array: `base` with each
`updates[k]` added at `indices[k]` (1-D, duplicates accumulate, as
`np.add.at` on a copy); the indices are in bounds (the caller clamps them).
"""

from __future__ import annotations

import numpy as np

from kiln.core import INDEX_DTYPE, DShapedArray, KilnInternalError, OutDBIdx, Primitive, ViewRule, is_static_dim
from kiln.primitives._rules import shape_with_dynamic


def _slice_keeps_contiguity(base, view, params, is_unit) -> bool:
    """Unit strides, and after the first axis of size > 1 every axis whole."""
    if any(s != 1 and not is_unit(size) for s, size in zip(params["strides"], view.shape)):
        return False
    first = True
    for axis, (dim, size) in enumerate(zip(base.shape, view.shape)):
        if is_unit(size):
            continue
        whole = params["starts"][axis] == 0 and (
            size is dim or (is_static_dim(size) and is_static_dim(dim) and size == dim))
        if not first and not whole:
            return False
        first = False
    return True


slice_p = Primitive("slice", view=ViewRule(_slice_keeps_contiguity))
gather_p = Primitive("gather")
scatter_add_p = Primitive("scatter_add")
# The row-major flat positions of the True elements of a bool array of rank
# >= 1, and their count: `count:i64[] positions:i64[count] = flatnonzero mask`.
# The count is only known when the program runs, so it is a result of the
# equation, the dim of the positions (what boolean-mask indexing, nonzero
# and argwhere are built from in kiln/numpy/boolean_masks.py).
flatnonzero_p = Primitive("flatnonzero", multiple_results=True)


@slice_p.def_abstract_eval
def _slice_rule(x, *dyn, starts, sizes, strides):
    if not (len(starts) == len(sizes) == len(strides) == x.aval.ndim):
        raise KilnInternalError("slice: one start, size and stride per dim")
    if any(s <= 0 for s in strides):
        raise KilnInternalError(f"slice: strides must be positive, got {strides}")
    n_dyn_starts = sum(s is None for s in starts)
    shape = shape_with_dynamic(sizes, list(dyn[n_dyn_starts:]))
    return DShapedArray(shape, x.aval.dtype, x.aval.weak_type)


@gather_p.def_abstract_eval
def _gather_rule(x, indices, *, axis):
    """`take(x, indices, axis)` with indices already in bounds and non-negative."""
    if indices.aval.dtype.kind not in "iu":
        raise KilnInternalError(f"gather: indices must be integers, got {indices.aval}")
    shape = x.aval.shape[:axis] + indices.aval.shape + x.aval.shape[axis + 1 :]
    return DShapedArray(shape, x.aval.dtype, x.aval.weak_type)


@scatter_add_p.def_abstract_eval
def _scatter_add_rule(base, indices, updates):
    b, i, u = base.aval, indices.aval, updates.aval
    if b.ndim != 1 or i.ndim != 1 or u.ndim != 1 or i.dtype.kind not in "iu" or u.dtype != b.dtype:
        raise KilnInternalError(f"scatter_add: needs a 1-D base, integer indices and updates of the base's dtype, "
                                f"got {b}, {i}, {u}")
    if b.dtype.kind not in "iuf":
        raise KilnInternalError(f"scatter_add: accumulates ints and floats, got {b.dtype}")
    return DShapedArray(b.shape, b.dtype, b.weak_type)


@flatnonzero_p.def_abstract_eval
def _flatnonzero_rule(mask):
    if mask.aval.dtype != np.bool_ or mask.aval.ndim == 0:
        raise KilnInternalError(f"flatnonzero: the mask must be a bool array of rank >= 1, got {mask.aval}")
    return [DShapedArray((), INDEX_DTYPE), DShapedArray((OutDBIdx(0),), INDEX_DTYPE)]


PRIMITIVES = [slice_p, gather_p, flatnonzero_p, scatter_add_p]


# --------------------------------------------------------------------------
# Interpreter rules (kiln.interpreter): a slice is a NumPy view of its operand.

from kiln.interpreter import checked_shape, fill_dims, interpret_rule  # noqa: E402


@interpret_rule(slice_p)
def _slice_value(x, *dyn, starts, sizes, strides):
    n_dyn_starts = sum(s is None for s in starts)
    start_values = fill_dims(starts, dyn[:n_dyn_starts])
    size_values = checked_shape(fill_dims(sizes, dyn[n_dyn_starts:]))
    index = tuple(slice(start, start + (size - 1) * stride + 1 if size else start, stride)
                  for start, size, stride in zip(start_values, size_values, strides))
    return x[index]


@interpret_rule(gather_p)
def _gather_value(x, indices, *, axis):
    return np.take(x, indices, axis=axis)


@interpret_rule(scatter_add_p)
def _scatter_add_value(base, indices, updates):
    out = np.array(base, copy=True)
    np.add.at(out, indices, updates)
    return out


@interpret_rule(flatnonzero_p)
def _flatnonzero_value(mask):
    positions = np.flatnonzero(mask).astype(INDEX_DTYPE)
    return [np.array(positions.size, INDEX_DTYPE), positions]
