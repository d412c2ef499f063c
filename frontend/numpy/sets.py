"""Stage "jaxpr": functions whose result size is data: `np.unique`,
`np.isin`, `np.setdiff1d`, `np.intersect1d`, `np.union1d`, `np.setxor1d`,
`np.trim_zeros`, `np.bincount`.

In: traced arrays (flattened, as NumPy flattens them).
Out: tracers whose size is a dim known only when the program runs: the
count of a mask's true elements (`flatnonzero`) or a traced maximum. Sets
come from the stable sort (the `sort` primitive): equal neighbours of the
sorted values mark the groups, so the results are sorted and, for
`return_index`, give each group's first position, as NumPy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.control_flow import for_loop
from kiln.core import INDEX_DTYPE, KilnTypeError, KilnValueError
from kiln.numpy._base import check, convert, operand, promote, shape_product
from kiln.numpy._bindings import knp, numpy_function
from kiln.numpy.boolean_masks import true_positions
from kiln.numpy.creation import iota
from kiln.numpy.sorting import search_sorted
from kiln.primitives.indexing import scatter_add_p
from kiln.primitives.sorting import sort_p
from kiln.tracing import Tracer, bind


def _no_kth() -> Any:
    return operand(np.zeros(0, dtype=INDEX_DTYPE))


def _group_starts(values: Tracer, equal_nan: bool) -> Tracer:
    """For sorted 1-D `values`, True where an element differs from the one
    before it (the first element always starts a group)."""
    n = values.aval.shape[0]
    before = knp.concatenate([values[:1], values[:-1]])
    differs = knp.not_equal(values, before)
    if equal_nan and values.aval.dtype.kind == "f":
        differs = knp.logical_and(differs, knp.logical_not(knp.isnan(values) & knp.isnan(before)))
    return knp.logical_or(differs, iota(n) == 0)


@numpy_function("unique")
def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: Any = None, *, equal_nan: bool = True, sorted: bool = True) -> Any:
    """`np.unique(ar, return_index, return_inverse, return_counts, axis)`:
    the sorted distinct values (NaNs collapse into one, equal_nan), or with
    `axis` the distinct slices along it in lexicographic order."""
    ar = operand(ar)
    if ar.aval.dtype.kind == "c":
        raise KilnTypeError("np.unique of complex arrays is not supported by kiln")
    if axis is not None:
        return _unique_along(ar, axis, return_index, return_inverse, return_counts)
    flat = knp.ravel(ar)
    n = flat.aval.shape[0]
    order = bind(sort_p, flat, _no_kth(), indices=True)
    values = knp.take(flat, order)
    starts = _group_starts(values, equal_nan)
    count, positions = true_positions(starts)
    result = [knp.take(values, positions)]
    if return_index:
        result.append(knp.take(order, positions))
    if return_inverse:
        group = knp.cumsum(starts.astype(INDEX_DTYPE)) - 1
        # argsort of the permutation is its inverse: each element's place among the sorted values
        place = bind(sort_p, order, _no_kth(), indices=True)
        inverse = knp.take(group, place)
        result.append(knp.reshape(inverse, *ar.aval.shape) if ar.aval.ndim else knp.reshape(inverse))
    if return_counts:
        ends = knp.concatenate([positions[1:], knp.full(1, n, dtype=INDEX_DTYPE)])
        result.append(ends - positions)
    return result[0] if len(result) == 1 else tuple(result)


def _unique_along(ar: Tracer, axis: Any, return_index: bool, return_inverse: bool, return_counts: bool) -> Any:
    """np.unique(ar, axis=axis): NumPy compares the slices along `axis` as
    records of their elements, in order. Here the slices, flattened to rows,
    are sorted lexicographically by stable sorts from the last element to the
    first; rows differing from the one before start a group. As in NumPy,
    NaN never equals NaN here (each row holding one is distinct)."""
    ndim = ar.aval.ndim
    if not isinstance(axis, (int, np.integer)):
        raise KilnTypeError(f"np.unique: axis must be an int known when kiln compiles, got {axis!r}; pass it as "
                            "a constant or a static argument")
    if not -ndim <= axis < ndim:
        raise KilnValueError(f"np.unique: axis {axis} is out of bounds for array of dimension {ndim}")
    axis = int(axis) % ndim
    moved = knp.moveaxis(ar, axis, 0)
    rest = moved.aval.shape[1:]
    n = moved.aval.shape[0]
    rows = knp.reshape(moved, (n, shape_product(rest)))
    k = rows.aval.shape[1]

    @for_loop(0, k, 1)
    def by_element(i, order):
        column = knp.take(rows[:, k - 1 - i], order)
        return knp.take(order, bind(sort_p, column, _no_kth(), indices=True))

    order = by_element(iota(n).astype(INDEX_DTYPE))
    ordered = knp.take(rows, order, axis=0)
    before = knp.concatenate([ordered[:1], ordered[:-1]])
    starts = knp.logical_or(knp.any(knp.not_equal(ordered, before), axis=1), iota(n) == 0)
    count, positions = true_positions(starts)
    distinct = knp.reshape(knp.take(ordered, positions, axis=0), (count, *rest))
    result = [knp.moveaxis(distinct, 0, axis)]
    if return_index:
        result.append(knp.take(order, positions))
    if return_inverse:
        group = knp.cumsum(starts.astype(INDEX_DTYPE)) - 1
        result.append(knp.take(group, bind(sort_p, order, _no_kth(), indices=True)))
    if return_counts:
        ends = knp.concatenate([positions[1:], knp.full(1, n, dtype=INDEX_DTYPE)])
        result.append(ends - positions)
    return result[0] if len(result) == 1 else tuple(result)


def _membership(element: Tracer, test: Tracer) -> Tracer:
    """Whether each element equals some element of `test` (as `==`: NaN never)."""
    element, test = promote(element, test)
    ordered = bind(sort_p, knp.ravel(test), _no_kth(), indices=False)
    m = ordered.shape[0]
    where = search_sorted(ordered, element, right=False)
    padded = knp.concatenate([ordered, knp.zeros(1, dtype=ordered.aval.dtype)])
    return knp.logical_and(where < m, knp.equal(padded[knp.minimum(where, m)], element))


@numpy_function("isin")
def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
         kind: Any = None) -> Tracer:
    """`np.isin(element, test_elements, invert)`: a bool array of `element`'s shape."""
    element, test = operand(element), operand(test_elements)
    for x in (element, test):
        if x.aval.dtype.kind == "c":
            raise KilnTypeError("np.isin of complex arrays is not supported by kiln")
    found = _membership(element, test)
    return knp.logical_not(found) if invert else found


def _unique_flat(x: Any, assume_unique: bool) -> Tracer:
    return knp.ravel(operand(x)) if assume_unique else unique(x)


@numpy_function("setdiff1d")
def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Tracer:
    """`np.setdiff1d`: the sorted distinct values of `ar1` not in `ar2`."""
    a = _unique_flat(ar1, assume_unique)
    return a[knp.logical_not(_membership(a, operand(ar2)))]


@numpy_function("intersect1d")
def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False) -> Tracer:
    """`np.intersect1d`: the sorted distinct values in both (NaN never matches)."""
    if return_indices:
        raise KilnValueError("np.intersect1d: return_indices=True is not supported by kiln")
    a, b = promote(_unique_flat(ar1, assume_unique), _unique_flat(ar2, assume_unique))
    return a[_membership(a, b)]


@numpy_function("union1d")
def union1d(ar1: Any, ar2: Any) -> Tracer:
    """`np.union1d`: the sorted distinct values of either."""
    a, b = promote(operand(ar1), operand(ar2))
    return unique(knp.concatenate([knp.ravel(a), knp.ravel(b)]))


@numpy_function("setxor1d")
def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Tracer:
    """`np.setxor1d`: the sorted values in exactly one of the two."""
    a, b = promote(_unique_flat(ar1, assume_unique), _unique_flat(ar2, assume_unique))
    aux = bind(sort_p, knp.concatenate([a, b]), _no_kth(), indices=False)
    n = aux.shape[0]
    # NumPy: flag = [True, aux[1:] != aux[:-1], True]; keep where both neighbours' flags are set
    inner = knp.not_equal(aux[1:], aux[:-1])
    first = knp.concatenate([knp.full(knp.minimum(n, 1), True), inner])
    last = knp.concatenate([inner, knp.full(knp.minimum(n, 1), True)])
    return aux[first & last]


@numpy_function("trim_zeros")
def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Tracer:
    """`np.trim_zeros(filt, trim)` of a 1-D array: leading ('f') and/or
    trailing ('b') zeros removed."""
    filt = operand(filt)
    if filt.aval.ndim != 1 or axis not in (None, 0, -1):
        raise KilnValueError("np.trim_zeros: kiln trims 1-D arrays (axis=None)")
    trim = trim.lower()
    if any(c not in "fb" for c in trim):
        raise KilnValueError(f"unexpected character(s) in `trim`: {trim!r}")
    n = filt.shape[0]
    nonzero = knp.not_equal(filt, convert(0, filt.aval.dtype)) if filt.aval.dtype != np.bool_ else filt
    index = iota(n)
    start = knp.min(knp.concatenate([knp.where(nonzero, index, n), knp.full(1, n, dtype=INDEX_DTYPE)])) \
        if "f" in trim else 0
    stop = knp.max(knp.concatenate([knp.where(nonzero, index + 1, 0), knp.zeros(1, dtype=INDEX_DTYPE)])) \
        if "b" in trim else n
    stop = knp.maximum(stop, start)
    return filt[start:stop]


@numpy_function("bincount")
def bincount(x: Any, weights: Any = None, minlength: Any = 0) -> Tracer:
    """`np.bincount(x, weights, minlength)`: the count (or summed weight) of
    each value 0 .. max(x); its size is known when the program runs."""
    x = operand(x)
    if x.aval.ndim != 1:
        raise KilnValueError("object too deep for desired array" if x.aval.ndim > 1 else
                             "object of too small depth for desired array")
    if x.aval.dtype.kind not in "iub" or (x.aval.dtype.kind == "u" and x.aval.dtype.itemsize == 8):
        raise KilnTypeError(f"Cannot cast array data from dtype('{x.aval.dtype}') to dtype('int64') according "
                            "to the rule 'safe'")
    if not isinstance(minlength, Tracer) and minlength < 0:
        raise KilnValueError("'minlength' must not be negative")
    x = convert(x, INDEX_DTYPE)
    check(knp.logical_not(knp.any(x < 0)), "ValueError", "'list' argument must have no negative elements")
    if isinstance(minlength, Tracer):
        check(minlength >= 0, "ValueError", "'minlength' must not be negative")
    largest = knp.max(knp.concatenate([x, knp.full(1, -1, dtype=INDEX_DTYPE)]))
    size = knp.maximum(largest + 1, minlength)
    if weights is None:
        total = np.dtype(INDEX_DTYPE)
        updates = knp.ones(x.shape[0], dtype=total)
    else:
        weights = operand(weights)
        if weights.aval.ndim != 1:
            raise KilnValueError("object too deep for desired array")
        total = np.dtype(np.float64)
        from kiln.numpy._base import require_equal_dims
        require_equal_dims(weights.aval.shape[0], x.aval.shape[0], "ValueError",
                           "The weights and list don't have the same length. ({} vs {})")
        updates = convert(weights, total) if weights.aval.dtype.kind != "c" else None
        if updates is None:
            raise KilnTypeError("np.bincount: complex weights are not supported by kiln")
    base = knp.zeros(size, dtype=total)
    return bind(scatter_add_p, base, x, knp.reshape(updates, x.shape[0]))
