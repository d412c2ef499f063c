"""Stage "jaxpr": boolean masks and the positions of true elements: reading
`x[mask]`, `np.nonzero` / `x.nonzero()`, `np.where(cond)`, `np.flatnonzero`,
`np.argwhere`, `np.count_nonzero`, `np.extract`, `np.compress`, and the
mask-writing functions `np.place` and `np.putmask`.

In: traced arrays and masks (traced, or concrete NumPy / list masks).
Out: tracers whose selected dim is the number of true elements, a dim known
only when the program runs: the count result of the `flatnonzero` primitive.
Writes through a mask (`x[mask] = v`, `x[mask] += v`) are in mutation.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kiln.core import INDEX_DTYPE, Jaxpr, KilnIndexError, KilnTypeError, KilnValueError, is_static_dim, same_dim
from kiln.numpy._base import check, convert, operand, require_equal_dims, reshape_view, shape_product
from kiln.numpy._bindings import knp, numpy_function, tracer_method
from kiln.primitives import indexing as index_prims
from kiln.primitives.mutation import WRITE_PRIMITIVES
from kiln.tracing import Builder, Tracer, bind, current_builder

# --------------------------------------------------------------------------
# The positions of a mask's true elements, computed once per mask and scope


@dataclass
class _Positions:
    mask: Tracer  # held so that its id stays unique while the entry lives
    count: Any
    positions: Tracer
    valid_through: int  # the scope's equations up to here write nothing the mask aliases


# Each scope keeps ("true positions", mask id) -> _Positions in its `derived`
# table: `Z[I] = Z[I] ** 2 + C[I]` then finds the positions of I once, and
# the three selections share one count dim (so the write needs no run-time
# size check).


def _still_valid(builder: Builder, entry: _Positions) -> bool:
    """No equation since the entry was made wrote to the mask's array; a
    loop or branch (which may write anywhere) ends the entry too."""
    root = builder.aliases.root(entry.mask)
    for eqn in builder.eqns[entry.valid_through:]:
        if eqn.primitive in WRITE_PRIMITIVES and builder.aliases.root(eqn.invars[0]) is root:
            return False
        if any(isinstance(sub, Jaxpr) for value in eqn.params.values()
               for sub in (value if isinstance(value, (list, tuple)) else (value,))):
            return False
    entry.valid_through = len(builder.eqns)
    return True


def true_positions(mask: Any) -> tuple[Any, Any]:
    """(count, positions): how many elements of the bool array `mask` are
    true and their row-major flat positions (int64, increasing). A concrete
    mask gives a static count and constant positions."""
    if not isinstance(mask, Tracer):
        positions = np.flatnonzero(np.asarray(mask)).astype(INDEX_DTYPE)
        return positions.size, operand(positions)
    builder = current_builder()
    mask = builder.lift(mask)
    key = ("true positions", id(mask))
    entry = builder.derived.get(key)
    if entry is not None and _still_valid(builder, entry):
        return entry.count, entry.positions
    flat_input = mask if mask.aval.ndim else reshape_view(mask, [1])
    count, positions = bind(index_prims.flatnonzero_p, flat_input)
    builder.derived[key] = _Positions(mask, count, positions, len(builder.eqns))
    return count, positions


# --------------------------------------------------------------------------
# Boolean arrays inside an index


def is_boolean_array(e: Any) -> bool:
    """A boolean array of rank >= 1 used as an index (traced, NumPy, or a list of bools)."""
    if isinstance(e, Tracer):
        return e.aval.dtype == np.bool_ and e.aval.ndim > 0
    if isinstance(e, np.ndarray):
        return e.dtype == np.bool_ and e.ndim > 0
    if isinstance(e, list) and e and not _holds_tracer(e):
        return np.asarray(e).dtype == np.bool_
    return False


def _holds_tracer(e: list) -> bool:
    return any(isinstance(v, Tracer) or isinstance(v, list) and _holds_tracer(v) for v in e)


def has_boolean_array(idx: Any) -> bool:
    return any(is_boolean_array(e) for e in (idx if isinstance(idx, tuple) else (idx,)))


@dataclass
class MaskIndex:
    """An index holding one boolean array, with `...` expanded: `entries`
    has the mask at `position`; it covers the operand's dims
    `dim .. dim + mask.ndim - 1`."""

    entries: list
    position: int
    dim: int

    @property
    def mask(self) -> Any:
        return self.entries[self.position]

    @property
    def selects_only_mask(self) -> bool:
        """Every other entry is a full slice (`x[mask]`, `x[:, mask]`, `x[mask, ...]`)."""
        return all(_is_full_slice(e) for p, e in enumerate(self.entries) if p != self.position)


def _is_full_slice(e: Any) -> bool:
    return isinstance(e, slice) and e.start is None and e.stop is None and e.step is None


def parse_mask_index(x: Tracer, idx: Any, what: str) -> MaskIndex:
    """Expand `idx` (which holds a boolean array) against `x` and check that
    the mask's dims are those of `x` it covers, as NumPy does (IndexError)."""
    raw = list(idx) if isinstance(idx, tuple) else [idx]
    raw = [_mask_operand(e) if is_boolean_array(e) else e for e in raw]
    if sum(1 for e in raw if is_boolean_array(e)) > 1:
        raise KilnIndexError(f"{what}: kiln supports one boolean array per index; combine the masks with & "
                             "(x[m1 & m2]) or index in two steps")
    ellipses = sum(1 for e in raw if e is Ellipsis)
    if ellipses > 1:
        raise KilnIndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_ndim(e) if is_boolean_array(e) else 1 for e in raw if e is not None and e is not Ellipsis)
    if consumed > x.aval.ndim:
        raise KilnIndexError(
            f"too many indices for array: array is {x.aval.ndim}-dimensional, but {consumed} were indexed")
    entries: list = []
    for e in raw:
        if e is Ellipsis:
            entries.extend([slice(None)] * (x.aval.ndim - consumed))
        else:
            entries.append(e)
    if not ellipses:
        entries.extend([slice(None)] * (x.aval.ndim - consumed))
    position = next(p for p, e in enumerate(entries) if is_boolean_array(e))
    dim = sum(1 for e in entries[:position] if e is not None)
    mask = entries[position]
    for j, mask_dim in enumerate(_shape(mask)):
        require_equal_dims(x.aval.shape[dim + j], mask_dim, "IndexError",
                           f"boolean index did not match indexed array along axis {dim + j}; size of axis is "
                           "{} but size of corresponding boolean axis is {}")
    return MaskIndex(entries, position, dim)


def _mask_operand(e: Any) -> Any:
    """A traced mask as it is; a concrete one as a NumPy bool array (its
    positions are then computed while tracing)."""
    return e if isinstance(e, Tracer) else np.asarray(e, dtype=np.bool_)


def _ndim(e: Any) -> int:
    return e.aval.ndim if isinstance(e, Tracer) else np.ndim(e)


def _shape(e: Any) -> tuple:
    return e.aval.shape if isinstance(e, Tracer) else np.shape(e)


def merge_mask_axes(x: Tracer, dim: int, ndim: int) -> Tracer:
    """`x` with its dims `dim .. dim + ndim - 1` merged into one, along
    which the mask's flat positions index. A view when `x` is contiguous
    (mutation.py writes through it); callers copy other arrays first."""
    if ndim == 1:
        return x
    shape = x.aval.shape
    return reshape_view(x, list(shape[:dim]) + [shape_product(shape[dim:dim + ndim])] + list(shape[dim + ndim:]))


def getitem_with_mask(x: Tracer, idx: Any, getitem: Any) -> Tracer:
    """`x[idx]` for an index holding a boolean array: the mask becomes the
    flat positions of its true elements into `x` with the mask's dims
    merged; `getitem` reads the rest of the index as NumPy does."""
    parsed = parse_mask_index(x, idx, "x[mask]")
    mask = parsed.mask
    count, positions = true_positions(mask)
    builder = current_builder()
    source = builder.lift(x)
    if _ndim(mask) > 1 and not builder.aliases.is_contiguous(source):
        source = knp.copy(source)
    merged = merge_mask_axes(source, parsed.dim, _ndim(mask))
    if parsed.selects_only_mask:
        return bind(index_prims.gather_p, merged, positions, axis=parsed.dim)
    entries = list(parsed.entries)
    entries[parsed.position] = positions
    return getitem(merged, tuple(entries))


# --------------------------------------------------------------------------
# NumPy's functions of the true positions


def _nonzero_mask(a: Any) -> Any:
    """`a != 0` as a bool array (a bool array as it is)."""
    a = operand(a)
    return a if a.aval.dtype == np.bool_ else knp.not_equal(a, convert(0, a.aval.dtype))


def unravel_positions(positions: Any, shape: tuple) -> tuple:
    """The row-major coordinates of flat `positions` in an array of `shape`."""
    coordinates = []
    stride: Any = 1
    for d in reversed(shape):
        coordinate = positions if is_static_dim(stride) and stride == 1 else knp.floor_divide(positions, stride)
        if len(coordinates) < len(shape) - 1:
            coordinate = knp.remainder(coordinate, knp.maximum(d, 1) if not is_static_dim(d) else max(int(d), 1))
        coordinates.append(coordinate)
        stride = shape_product([stride, d])
    return tuple(reversed(coordinates))


@numpy_function("nonzero", method="nonzero")
def nonzero(a: Any) -> tuple:
    """`np.nonzero(a)`: one int64 array of coordinates per axis of `a`."""
    a = operand(a)
    if a.aval.ndim == 0:
        raise KilnValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() "
                             "instead.")
    _, positions = true_positions(_nonzero_mask(a))
    return unravel_positions(positions, a.aval.shape)


def where_one_argument(condition: Any) -> tuple:
    """`np.where(condition)`: `np.nonzero(condition)`."""
    return nonzero(condition)


@numpy_function("flatnonzero")
def flatnonzero(a: Any) -> Tracer:
    """`np.flatnonzero(a)`: the flat positions of the nonzero elements."""
    a = operand(a)
    mask = _nonzero_mask(a)
    _, positions = true_positions(mask if a.aval.ndim <= 1 else knp.ravel(mask))
    return positions


@numpy_function("argwhere")
def argwhere(a: Any) -> Tracer:
    """`np.argwhere(a)`: shape (count, a.ndim), one row of coordinates per nonzero element."""
    a = operand(a)
    if a.aval.ndim == 0:
        count, _ = true_positions(knp.reshape(_nonzero_mask(a), 1))
        return knp.zeros((count, 0), dtype=INDEX_DTYPE)
    _, positions = true_positions(_nonzero_mask(a))
    return knp.stack(list(unravel_positions(positions, a.aval.shape)), axis=1)


@numpy_function("count_nonzero")
def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Tracer:
    """`np.count_nonzero(a, axis)`: int64 counts."""
    return knp.sum(_nonzero_mask(a), axis=axis, dtype=INDEX_DTYPE, keepdims=keepdims)


@numpy_function("extract")
def extract(condition: Any, arr: Any) -> Tracer:
    """`np.extract(condition, arr)`: the elements of `arr` (flat) where
    `condition` (flat) is nonzero; a position past `arr`'s size raises IndexError."""
    _, positions = true_positions(knp.ravel(_nonzero_mask(condition)))
    return knp.take(knp.ravel(operand(arr)), positions)


@numpy_function("compress")
def compress(condition: Any, a: Any, axis: Any = None) -> Tracer:
    """`np.compress(condition, a, axis)`: the slices of `a` along `axis` (the
    flattened `a` when None) where the 1-D `condition` is true."""
    condition = _nonzero_mask(condition)
    if condition.aval.ndim != 1:
        raise KilnValueError("condition must be a 1-d array")
    _, positions = true_positions(condition)
    return knp.take(operand(a), positions, axis=axis)


@tracer_method("compress")
def _compress_method(self: Any, condition: Any, axis: Any = None) -> Tracer:
    """`a.compress(condition, axis)`."""
    return compress(condition, self, axis)


# --------------------------------------------------------------------------
# NumPy's mask writes by function: values taken in order, repeated


def _values_for(a: Tracer, values: Any, what: str) -> Tracer:
    """`values` flattened in `a`'s dtype: Python values (scalars, lists) are
    cast as NumPy casts them (unsafe), arrays only under the 'safe' rule."""
    given = operand(values)
    if isinstance(values, (Tracer, np.ndarray)) and not np.can_cast(given.aval.dtype, a.aval.dtype, "safe"):
        raise KilnTypeError(f"{what}: Cannot cast array data from dtype('{given.aval.dtype}') to "
                            f"dtype('{a.aval.dtype}') according to the rule 'safe'")
    return knp.ravel(convert(given, a.aval.dtype))


def _same_size_mask(a: Tracer, mask: Any, what: str) -> Tracer:
    """`mask != 0` shaped like `a`; a different number of elements is NumPy's ValueError."""
    mask = _nonzero_mask(mask)
    size, mask_size = shape_product(a.aval.shape), shape_product(mask.aval.shape)
    require_equal_dims(size, mask_size, "ValueError", f"{what}: mask and data must be the same size "
                       "(data has {} elements, the mask {})")
    return knp.reshape(mask, *a.aval.shape) if a.aval.ndim else knp.reshape(mask)


def _repeated(values: Tracer, count: Any, may_be_empty: bool) -> Tracer:
    """The first `count` elements of `values` repeated as often as needed.
    With `may_be_empty`, an empty `values` gives zeros (a padding element
    keeps every read in bounds; the caller writes none of them)."""
    n = values.aval.shape[0]
    if same_dim(n, count):
        return values
    if may_be_empty and not (is_static_dim(n) and n > 0):
        values = knp.concatenate([values, knp.zeros(1, dtype=values.aval.dtype)])
    return knp.take(values, knp.remainder(knp.arange(count), knp.maximum(n, 1)))


@numpy_function("place")
def place(arr: Any, mask: Any, vals: Any) -> None:
    """`np.place(arr, mask, vals)`: the true positions of `mask` (flat, same
    size as `arr`) take the first values of `vals` in order, repeated."""
    if not isinstance(arr, Tracer):
        raise KilnTypeError(f"np.place: the destination must be a traced array, got {type(arr).__name__}")
    mask = _same_size_mask(arr, mask, "place")
    values = _values_for(arr, vals, "np.place")
    count, _ = true_positions(mask)
    n = values.aval.shape[0]
    if is_static_dim(count) and is_static_dim(n):
        something_to_insert = count == 0 or n > 0
    else:
        something_to_insert = knp.logical_or(knp.equal(count, 0), knp.greater(n, 0))
    check(something_to_insert, "ValueError", "Cannot insert from an empty array!")
    arr[mask] = _repeated(values, count, may_be_empty=False)


@numpy_function("putmask")
def putmask(a: Any, mask: Any, values: Any) -> None:
    """`np.putmask(a, mask, values)`: `a.flat[n] = values.flat[n % values.size]`
    where `mask.flat[n]` is true (no write at all when values is empty)."""
    if not isinstance(a, Tracer):
        raise KilnTypeError(f"np.putmask: the destination must be a traced array, got {type(a).__name__}")
    mask = _same_size_mask(a, mask, "putmask")
    values = _values_for(a, values, "np.putmask")
    if is_static_dim(values.aval.shape[0]) and values.aval.shape[0] == 0:
        return
    spread = _repeated(values, shape_product(a.aval.shape), may_be_empty=True)
    spread = knp.reshape(spread, *a.aval.shape) if a.aval.ndim else knp.reshape(spread)
    if not is_static_dim(values.aval.shape[0]):
        mask = knp.logical_and(mask, knp.greater(values.aval.shape[0], 0))
    knp.copyto(a, spread, casting="unsafe", where=mask)
