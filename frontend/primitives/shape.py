"""Stage "jaxpr": shape primitives (broadcast, reshape, transpose, iota, concatenate).

In: an operand plus dynamic dims passed as scalar int operands; the static
shape param holds `None` where the dim is dynamic.
Out: one value whose dims are ints or those operands. `reshape`,
`transpose`, `reverse` and `match_dims` are views of their operand.
"""

from __future__ import annotations

from kiln.core import DShapedArray, KilnInternalError, Primitive, ViewRule, is_static_dim, same_dim
from kiln.primitives._rules import shape_with_dynamic


def _always_contiguous(base, view, params, is_unit) -> bool:
    """Reshape and dim renaming keep the elements in C order."""
    return True


def _transpose_keeps_contiguity(base, view, params, is_unit) -> bool:
    """Only axes of size 1 may move past each other."""
    moved = [p for p in params["permutation"] if not is_unit(base.shape[p])]
    return moved == sorted(moved)


def _reverse_keeps_contiguity(base, view, params, is_unit) -> bool:
    """Reversing an axis of at most one element changes nothing."""
    return all((is_static_dim(base.shape[d]) and base.shape[d] <= 1) or is_unit(base.shape[d])
               for d in params["dimensions"])


broadcast_in_dim_p = Primitive("broadcast_in_dim")
reshape_p = Primitive("reshape", view=ViewRule(_always_contiguous, regroups_only=True))
transpose_p = Primitive("transpose", view=ViewRule(_transpose_keeps_contiguity, regroups_only=True))
iota_p = Primitive("iota")
concatenate_p = Primitive("concatenate")
reverse_p = Primitive("reverse", view=ViewRule(_reverse_keeps_contiguity))
# `x` with some dims renamed to other dim values that a run-time check has
# already proven equal; lowers to nothing (MLIR types carry no dim identity).
match_dims_p = Primitive("match_dims", view=ViewRule(_always_contiguous, regroups_only=True))


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_rule(x, *dyn_shape, shape, broadcast_dimensions, expanding=()):
    """`expanding` lists the operand axes whose dynamic dim is, at run time,
    either 1 (and then broadcasts) or the result dim (a checked fact)."""
    out_shape = shape_with_dynamic(shape, list(dyn_shape))
    if len(broadcast_dimensions) != x.aval.ndim:
        raise KilnInternalError("broadcast_in_dim: one broadcast dimension per operand dim")
    for axis, (src, dst) in enumerate(zip(x.aval.shape, broadcast_dimensions)):
        if axis in expanding:
            if is_static_dim(src):
                raise KilnInternalError(f"broadcast_in_dim: expanding operand axis {axis} has static size {src}")
            continue
        if not (same_dim(src, 1) or same_dim(src, out_shape[dst])):
            raise KilnInternalError(
                f"broadcast_in_dim: operand dim {src} does not match result dim {out_shape[dst]}"
            )
    return DShapedArray(out_shape, x.aval.dtype, x.aval.weak_type)


@reshape_p.def_abstract_eval
def _reshape_rule(x, *dyn_shape, new_sizes):
    return DShapedArray(shape_with_dynamic(new_sizes, list(dyn_shape)), x.aval.dtype, x.aval.weak_type)


@transpose_p.def_abstract_eval
def _transpose_rule(x, *, permutation):
    if sorted(permutation) != list(range(x.aval.ndim)):
        raise KilnInternalError(f"transpose: {permutation} is not a permutation of rank {x.aval.ndim}")
    return DShapedArray(tuple(x.aval.shape[p] for p in permutation), x.aval.dtype, x.aval.weak_type)


@iota_p.def_abstract_eval
def _iota_rule(*dyn_shape, dtype, shape, dimension):
    return DShapedArray(shape_with_dynamic(shape, list(dyn_shape)), dtype)


@concatenate_p.def_abstract_eval
def _concatenate_rule(*operands, dimension, size):
    """`size` is the static result size along `dimension`, or None when it is
    the last operand (a dim the numpy layer computed)."""
    arrays = operands if size is not None else operands[:-1]
    out_dim = size if size is not None else operands[-1]
    first = arrays[0].aval
    for a in arrays[1:]:
        if a.aval.dtype != first.dtype or a.aval.ndim != first.ndim:
            raise KilnInternalError("concatenate: operands differ in dtype or rank")
        for axis, (d1, d2) in enumerate(zip(first.shape, a.aval.shape)):
            if axis != dimension and not same_dim(d1, d2):
                raise KilnInternalError(f"concatenate: dims {d1} and {d2} differ on axis {axis}")
    shape = list(first.shape)
    shape[dimension] = out_dim
    return DShapedArray(shape, first.dtype, all(a.aval.weak_type for a in arrays))


@reverse_p.def_abstract_eval
def _reverse_rule(x, *, dimensions):
    return x.aval


@match_dims_p.def_abstract_eval
def _match_dims_rule(x, *dyn_shape, shape):
    out_shape = shape_with_dynamic(shape, list(dyn_shape))
    if len(out_shape) != x.aval.ndim:
        raise KilnInternalError("match_dims: rank must not change")
    for a, b in zip(x.aval.shape, out_shape):
        if is_static_dim(a) and is_static_dim(b) and a != b:
            raise KilnInternalError(f"match_dims: static dims {a} and {b} differ")
    return DShapedArray(out_shape, x.aval.dtype, x.aval.weak_type)


PRIMITIVES = [broadcast_in_dim_p, reshape_p, transpose_p, iota_p, concatenate_p, reverse_p, match_dims_p]


# --------------------------------------------------------------------------
# Interpreter rules (kiln.interpreter): reshape, transpose, reverse and
# match_dims return NumPy views of their operand.

import numpy as np  # noqa: E402

from kiln.interpreter import checked_shape, fill_dims, interpret_rule  # noqa: E402


@interpret_rule(broadcast_in_dim_p)
def _broadcast_in_dim_value(x, *dyn_shape, shape, broadcast_dimensions, expanding=()):
    out_shape = checked_shape(fill_dims(shape, dyn_shape))
    placed = [1] * len(out_shape)
    for size, dim in zip(x.shape, broadcast_dimensions):
        placed[dim] = size
    return np.array(np.broadcast_to(x.reshape(placed), out_shape))


@interpret_rule(reshape_p)
def _reshape_value(x, *dyn_shape, new_sizes):
    return x.reshape(checked_shape(fill_dims(new_sizes, dyn_shape)))


@interpret_rule(transpose_p)
def _transpose_value(x, *, permutation):
    return x.transpose(permutation)


@interpret_rule(iota_p)
def _iota_value(*dyn_shape, dtype, shape, dimension):
    out_shape = checked_shape(fill_dims(shape, dyn_shape))
    placed = [1] * len(out_shape)
    placed[dimension] = out_shape[dimension]
    return np.array(np.broadcast_to(np.arange(out_shape[dimension], dtype=dtype).reshape(placed), out_shape))


@interpret_rule(concatenate_p)
def _concatenate_value(*operands, dimension, size):
    return np.concatenate(operands if size is not None else operands[:-1], axis=dimension)


@interpret_rule(reverse_p)
def _reverse_value(x, *, dimensions):
    return np.flip(x, tuple(dimensions))


@interpret_rule(match_dims_p)
def _match_dims_value(x, *dyn_shape, shape):
    return x
