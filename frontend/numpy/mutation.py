"""Stage "jaxpr": NumPy's in-place semantics on traced arrays.

In: writes — `x[idx] = v`, `x += y` (and the other augmented operators),
ufunc `out=`, `np.copyto`, `x.fill(v)` — and copies.
Out: `assign` / `scatter` equations on views of the written array (views
come from basic indexing, reshape, transpose, ...; see
`kiln.primitives.mutation`). Which function arguments were written is
recorded on the scope, so the caller's arrays receive the writes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.core import KilnTypeError, KilnValueError, Literal, is_static_dim, same_dim
from kiln.numpy import boolean_masks, indexing
from kiln.numpy._base import broadcast_to, check, convert, materialize, operand, reshape_view
from kiln.numpy._bindings import knp, numpy_function, tracer_method
from kiln.primitives import indexing as index_prims
from kiln.primitives import mutation
from kiln.primitives import shape as shape_prims
from kiln.tracing import Tracer, bind, current_builder


@numpy_function("copy", method="copy")
def copy(x: Any) -> Tracer:
    """`np.copy`: a fresh array that aliases nothing."""
    x = operand(x)
    if not isinstance(x, Tracer):
        x = materialize(x)
    return bind(mutation.copy_p, x)


def _writable_target(target: Any, what: str) -> Tracer:
    if not isinstance(target, Tracer):
        raise KilnTypeError(f"{what}: the destination must be a traced array, got {type(target).__name__}")
    builder = current_builder()
    target = builder.lift(target)
    if id(target) in builder.aliases.unresolved:
        raise KilnValueError(
            f"{what}: the destination was returned by a branch (an `if` on a traced value, kiln.cond) or a "
            "loop body as an outer array or a view of one on some run-time path only, so which array the write "
            "reaches is only known at run time; write to the outer array inside the branch or loop, or copy "
            "the result (np.copy) before writing to it")
    if id(target) in builder.aliases.scalars:
        raise KilnTypeError(
            f"{what}: the destination is a NumPy scalar (indexing every axis with an integer gives a copy, "
            "which does not support item assignment); write through the array instead, e.g. x[i] = v")
    if builder.aliases.is_readonly(target):
        raise KilnValueError(
            f"{what}: assignment destination is read-only (it is a broadcast_to view); copy it first "
            "(np.array(x) or x.copy())")
    return target


# Destination kinds a Python scalar (weak int, float, complex) casts to under
# 'same_kind', as np.copyto: an int goes to ints and floats, never to bool.
_SAME_KIND_FROM_PYTHON = {"i": "iufc", "f": "fc", "c": "c"}


def _drop_leading_unit_dims(value: Any, ndim: int) -> Any:
    """NumPy's assignment takes a value of higher rank when the extra leading
    dims are 1 (`x[0] = x` for x of shape (1, n))."""
    extra = value.aval.ndim - ndim
    if extra <= 0 or not all(is_static_dim(d) and d == 1 for d in value.aval.shape[:extra]):
        return value
    return knp.reshape(value, *value.aval.shape[extra:]) if ndim else knp.reshape(value)


def _python_float_for_int_target(value: Any, dtype: np.dtype, what: str) -> Any:
    """NumPy stores a Python float into an integer array through int():
    truncated, then range-checked (x[0] = -2.5 on uint8 is an OverflowError,
    NaN a ValueError), never a wrapped or undefined conversion."""
    if not (isinstance(value, Literal) and value.aval.weak_type and isinstance(value.val, float)
            and dtype.kind in "iu"):
        return value
    if not np.isfinite(value.val):
        raise KilnValueError(f"{what}: cannot convert float {value.val} to integer")
    return operand(int(value.val))


def assign(target: Any, value: Any, what: str, casting: str = "unsafe") -> Tracer:
    """Overwrite every element of `target` (an array or a view) with `value`,
    broadcast to its shape and cast to its dtype under NumPy's `casting` rule."""
    target = _writable_target(target, what)
    value = operand(value)
    if (casting == "same_kind" and value.aval.weak_type
            and target.aval.dtype.kind not in _SAME_KIND_FROM_PYTHON.get(value.aval.dtype.kind, "biufc")):
        raise KilnTypeError(
            f"{what}: cannot cast a Python {value.aval.dtype.kind == 'i' and 'int' or 'float'} to the "
            f"destination's {target.aval.dtype} with casting rule 'same_kind'; convert the value first")
    value = _python_float_for_int_target(value, target.aval.dtype, what)
    value = _drop_leading_unit_dims(value, target.aval.ndim)
    if casting != "unsafe" and not value.aval.weak_type and not np.can_cast(value.aval.dtype, target.aval.dtype,
                                                                            casting):
        raise KilnTypeError(
            f"{what}: cannot cast {value.aval.dtype} to the destination's {target.aval.dtype} with "
            f"casting rule {casting!r}; convert the value with .astype() first")
    value = broadcast_to(convert(value, target.aval.dtype), target.aval.shape, what)
    if value is target:
        return target
    root = current_builder().aliases.root(target)
    if any(is_static_dim(d) and d == 0 for d in target.aval.shape + root.aval.shape):
        # An empty destination, or a view of an empty array (a loop body that
        # never runs), takes no write; MLIR rejects slices into a buffer of
        # size 0. The index checks stay: running such a write is an IndexError.
        return target
    bind(mutation.assign_p, target, value)
    current_builder().aliases.mark_written(target)
    return target


def _holds_tracer(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_holds_tracer(v) for v in value)
    return isinstance(value, Tracer)


@tracer_method("__setitem__")
def setitem(x: Any, idx: Any, value: Any) -> None:
    """`x[idx] = value` with NumPy's basic and integer-array indexing."""
    target = _writable_target(x, "x[idx] = value")
    if isinstance(value, (list, tuple)) and _holds_tracer(value):
        # `row[0] = theta, omega`: NumPy makes an array of the sequence first.
        value = knp.asarray(value)
    if boolean_masks.has_boolean_array(idx):
        _masked_setitem(target, idx, value)
        return
    entries = indexing.expand_index(target, idx)
    if sum(1 for e in entries if e is not None and indexing._is_array_index(e)) > 1:
        _multi_array_assign(target, entries, value)
        return
    if not any(e is not None and indexing._is_array_index(e) for e in entries):
        # One element selected by integers only: NumPy refuses an array value
        # (even of size 1) instead of broadcasting it.
        parts = idx if isinstance(idx, tuple) else (idx,)
        shape = value.aval.shape if isinstance(value, Tracer) else np.shape(value)
        if shape and len(parts) == target.aval.ndim and all(indexing._is_scalar_index(p) for p in parts):
            raise KilnValueError(
                f"x[idx] = value: setting an array element with a sequence (idx selects one element, "
                f"value has shape {shape}); assign a scalar, e.g. value.reshape(()) or "
                f"value[(0,) * value.ndim]")
        if indexing.is_view_of_key(x, idx, value):
            # `x[idx] += v` (or `t = x[idx]; x[idx] = t`): the view already holds
            # exactly those elements. A copy of them onto themselves would be
            # a temporary and two copies per statement; the target still counts
            # as written (a read-only argument is refused as NumPy refuses it).
            current_builder().aliases.mark_written(value)
            return
        # getitem parses (and bounds-checks) the index: parsing it here too would check it twice.
        assign(indexing.getitem(target, idx), value, "x[idx] = value")
        return
    dim, arr = indexing.parse_index(target, idx).array_index
    entries = indexing.expand_index(target, idx)
    basic = [slice(None) if e is not None and indexing._is_array_index(e) else e for e in entries]
    view = indexing.getitem(target, tuple(e for e in basic if e is not None))
    axis = sum(1 for e in entries[: _entry_position(entries, dim)]
               if e is not None and not indexing._is_scalar_index(e))
    indices = indexing._normalize_index_array(operand(arr), view.aval.shape[axis], dim, "x[idx] = value")
    k = indices.aval.ndim
    basic_dims = list(view.aval.shape[:axis]) + list(view.aval.shape[axis + 1:])
    # The value broadcasts to NumPy's shape of x[idx], then takes the
    # scatter's layout: no None dims, the index dims at `axis`.
    numpy_shape = tuple(indexing.advanced_result_shape(entries, basic_dims, list(indices.aval.shape)))
    updates = convert(_python_float_for_int_target(operand(value), view.aval.dtype, "x[idx] = value"), view.aval.dtype)
    updates = broadcast_to(updates, numpy_shape, "x[idx] = value")
    first = indexing.advanced_dims_first(entries)
    layout = (list(indices.aval.shape) + basic_dims) if first else (
        basic_dims[:axis] + list(indices.aval.shape) + basic_dims[axis:])
    if len(layout) != updates.aval.ndim:
        updates = reshape_view(updates, layout)
    if first and axis:
        perm = list(range(k, k + axis)) + list(range(k)) + list(range(k + axis, len(layout)))
        updates = bind(shape_prims.transpose_p, updates, permutation=tuple(perm))
    bind(mutation.scatter_p, view, indices, updates, axis=axis)
    current_builder().aliases.mark_written(view)


def _multi_array_assign(target: Tracer, entries: list, value: Any) -> None:
    """`x[i, j] = v` with several integer arrays on adjacent axes: one
    scatter along those axes merged (the last write of a duplicate wins)."""
    merged, flat, axis = indexing.merged_array_index(target, entries, "x[idx] = value")
    updates_shape = merged.aval.shape[:axis] + flat.aval.shape + merged.aval.shape[axis + 1:]
    updates = convert(_python_float_for_int_target(operand(value), merged.aval.dtype, "x[idx] = value"), merged.aval.dtype)
    updates = broadcast_to(updates, updates_shape, "x[idx] = value")
    bind(mutation.scatter_p, merged, flat, updates, axis=axis)
    current_builder().aliases.mark_written(merged)


def _entry_position(entries: list, dim: int) -> int:
    """Position in `entries` of the entry that indexes operand dim `dim`."""
    seen = -1
    for pos, e in enumerate(entries):
        if e is None:
            continue
        seen += 1
        if seen == dim:
            return pos
    return len(entries)


def _masked_setitem(target: Tracer, idx: Any, value: Any) -> None:
    """`x[idx] = v` for an index holding a boolean array. A value that does
    not vary along the selection (a scalar, or one row for `x[mask]` of a
    matrix) is written with `where(mask, v, x)`; otherwise the value is
    scattered to the flat positions of the true elements."""
    what = "x[mask] = value"
    parsed = boolean_masks.parse_mask_index(target, idx, what)
    mask, dim = parsed.mask, parsed.dim
    mask_ndim = mask.aval.ndim if isinstance(mask, Tracer) else mask.ndim
    value = _python_float_for_int_target(operand(value), target.aval.dtype, what)
    if parsed.selects_only_mask:
        value = _drop_leading_unit_dims(value, target.aval.ndim - mask_ndim + 1)
    rest = target.aval.ndim - dim - mask_ndim
    if parsed.selects_only_mask and dim == 0 and mask_ndim == target.aval.ndim and value.aval.ndim > 1:
        raise KilnTypeError(f"NumPy boolean array indexing assignment requires a 0 or 1-dimensional input, input "
                            f"has {value.aval.ndim} dimensions")
    if parsed.selects_only_mask and value.aval.ndim <= rest:
        in_place = knp.reshape(mask, *mask.shape, *(1,) * rest) if rest else mask
        assign(target, knp.where(in_place, convert(value, target.aval.dtype), target), what)
        return
    builder = current_builder()
    if mask_ndim > 1 and not builder.aliases.is_contiguous(target):
        # Merging the mask's axes needs a contiguous array: write a copy, then copy it back.
        scratch = copy(target)
        _masked_setitem(scratch, idx, value)
        assign(target, scratch, what)
        return
    count, positions = boolean_masks.true_positions(mask)
    merged = boolean_masks.merge_mask_axes(target, dim, mask_ndim)
    if not parsed.selects_only_mask:
        entries = list(parsed.entries)
        entries[parsed.position] = positions
        setitem(merged, tuple(entries), value)
        return
    selected = list(merged.aval.shape[:dim]) + [count] + list(merged.aval.shape[dim + 1:])
    updates = _selection_sized(convert(value, target.aval.dtype), selected, dim, count)
    if any(is_static_dim(d) and d == 0 for d in merged.aval.shape + builder.aliases.root(merged).aval.shape):
        return
    bind(mutation.scatter_p, merged, positions, broadcast_to(updates, selected), axis=dim)
    builder.aliases.mark_written(merged)


def _selection_sized(value: Any, selected: list, dim: int, count: Any) -> Any:
    """`value` with its dim along the selection equal to `count` (or 1, then
    repeated): NumPy's rule for how many values a mask assignment takes."""
    axis = dim - (len(selected) - value.aval.ndim)
    if axis < 0 or not isinstance(value, Tracer):
        return value
    given = value.aval.shape[axis]
    if same_dim(given, count) or (is_static_dim(given) and given == 1):
        return value
    message = ("NumPy boolean array indexing assignment cannot assign {} input values to the {} output values "
               "where the mask is true")
    if is_static_dim(given) and is_static_dim(count):
        raise KilnValueError(message.format(given, count))
    check(knp.logical_or(knp.equal(given, 1), knp.equal(given, count)), "ValueError", message, given, count)
    if is_static_dim(given):
        return value
    repeated = knp.where(knp.equal(given, 1), 0, knp.arange(count))
    return bind(index_prims.gather_p, value, repeated, axis=axis)


def inplace(x: Tracer, result: Any, op_name: str) -> Tracer:
    """`x op= other`, given `result = x op other`: written into x for arrays
    (0-d ndarrays included), the new value for NumPy scalars (immutable)."""
    builder = current_builder()
    if x.aval.ndim == 0 and not builder.aliases.is_zero_d_array(builder.lift(x)):
        return result
    return assign(x, result, f"augmented assignment ({op_name})", casting="same_kind")


def write_out(fn: str, result: Any, out: Any) -> Any:
    """A ufunc's `out=`: write the result into `out` (same_kind casting) and return it."""
    return assign(out, result, f"{fn}(..., out=...)", casting="same_kind")


@numpy_function("copyto")
def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """`np.copyto(dst, src)`."""
    if where is not True:
        src = knp.where(where, src, dst)
    assign(dst, src, "np.copyto", casting=casting)


@tracer_method("fill")
def fill(x: Any, value: Any) -> None:
    """`x.fill(value)`."""
    assign(x, value, "x.fill(value)")
