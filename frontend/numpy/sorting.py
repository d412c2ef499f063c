"""Stage "jaxpr": sorting, selection and searching: `np.sort` / `x.sort()`,
`np.argsort`, `np.partition` / `np.argpartition`, `np.searchsorted`,
`np.digitize`.

In: traced arrays of a real dtype or bool, an axis, `kth` (ints, static or
traced), search values.
Out: tracers. Sorting is the `sort` primitive along the last axis (the axis
moved there and back), compiled to the runtime's radix sort / quickselect
(runtime/sort.c): NumPy's order with NaNs last, and kind='stable' order for
every kind (NumPy leaves the order of equal elements unspecified for the
other kinds). Searching is a vectorized binary search under the same order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.control_flow import for_loop
from kiln.core import INDEX_DTYPE, KilnTypeError, KilnValueError, is_static_dim
from kiln.numpy._base import check, convert, operand
from kiln.numpy._bindings import knp, numpy_function, tracer_method, traced
from kiln.numpy.creation import iota
from kiln.primitives.sorting import sort_p
from kiln.tracing import Tracer, bind

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _sortable(a: Any, fn: str) -> Tracer:
    a = operand(a)
    if a.aval.dtype.kind == "c":
        raise KilnTypeError(f"np.{fn}: sorting complex arrays is not supported by kiln; sort the real and "
                            "imaginary parts (np.lexsort order) yourself")
    return a


def _check_kind(kind: Any, fn: str) -> None:
    if kind not in _KINDS:
        raise KilnValueError(f"{fn}: sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def _no_kth() -> Tracer:
    return operand(np.zeros(0, dtype=INDEX_DTYPE))


def _along_last(a: Tracer, axis: Any, fn: str) -> tuple[Tracer, int | None]:
    """`a` with `axis` moved last (None: flattened), and the axis to move back."""
    if axis is None:
        return knp.ravel(a), None
    if a.aval.ndim == 0:
        raise KilnValueError(f"np.{fn}: axis {axis} is out of bounds for array of dimension 0")
    n = a.aval.ndim
    if not -n <= axis < n:
        raise KilnValueError(f"axis {axis} is out of bounds for array of dimension {n}")
    axis = int(axis) % n
    return (a if axis == n - 1 else knp.moveaxis(a, axis, -1)), axis


def _back(result: Tracer, axis: int | None) -> Tracer:
    if axis is None or axis == result.aval.ndim - 1:
        return result
    return knp.moveaxis(result, -1, axis)


def _sorted(a: Any, axis: Any, kind: Any, order: Any, name: str) -> Tracer:
    """np.sort ("sort": the values) or np.argsort ("argsort": the positions) along `axis`."""
    a = _sortable(a, name)
    _check_kind(kind, f"np.{name}")
    if order is not None:
        raise KilnTypeError(f"np.{name}: order= sorts structured arrays, which kiln does not support")
    moved, axis = _along_last(a, axis, name)
    return _back(bind(sort_p, moved, _no_kth(), indices=name == "argsort"), axis)


@numpy_function("sort")
def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Tracer:
    """`np.sort(a, axis, kind)`: ascending, NaNs last."""
    return _sorted(a, axis, kind, order, "sort")


@numpy_function("argsort", method="argsort")
def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> Tracer:
    """`np.argsort(a, axis, kind)`: int64 positions of the stable ascending order."""
    return _sorted(a, axis, kind, order, "argsort")


@tracer_method("sort")
def _sort_method(self: Any, axis: int = -1, kind: Any = None, order: Any = None, *, stable: Any = None) -> None:
    """`x.sort(axis, kind)`: sorts `x` in place (a view writes through to its base)."""
    if self.aval.ndim == 0:
        raise KilnValueError("Cannot sort a 0-d array")
    knp.copyto(self, sort(self, axis=axis, kind=kind, order=order))


def _kth_positions(kth: Any, n: Any, fn: str) -> Tracer:
    """`kth` as increasing int64 positions in [0, n), negative ones counted
    from the end; out of bounds is NumPy's ValueError."""
    if traced(kth):
        kth = operand(kth)
        if kth.aval.dtype.kind not in "iu" or kth.aval.ndim > 1:
            raise KilnTypeError(f"np.{fn}: kth must be an integer or a 1-D array of integers, got {kth.aval}")
        ks = convert(kth, INDEX_DTYPE)
        ks = knp.reshape(ks, 1) if ks.aval.ndim == 0 else ks
    else:
        values = np.asarray(kth)
        if values.dtype.kind not in "iu" or values.ndim > 1:
            raise KilnTypeError("Partition index must be integer")
        ks = operand(values.reshape(-1).astype(INDEX_DTYPE))
        if is_static_dim(n):
            for k in values.reshape(-1):
                if not -n <= k < n:
                    raise KilnValueError(f"kth(={k}) out of bounds ({n})")
    given = ks
    ks = knp.where(ks < 0, ks + n, ks)
    if ks.aval.shape[0] != 1 or not is_static_dim(n):
        bad = knp.logical_or(ks < 0, ks >= n)
        if is_static_dim(ks.aval.shape[0]) and ks.aval.shape[0] == 1:
            check(knp.logical_not(bad[0]), "ValueError", "kth(={}) out of bounds ({})", given[0], n)
        else:
            check(knp.logical_not(knp.any(bad)), "ValueError", f"np.{fn}: a kth is out of bounds ({{}})", n)
    if not (is_static_dim(ks.aval.shape[0]) and ks.aval.shape[0] <= 1):
        ks = bind(sort_p, ks, _no_kth(), indices=False)
    return ks


def _partition(a: Any, kth: Any, axis: Any, kind: Any, indices: bool, fn: str) -> Tracer:
    a = _sortable(a, fn)
    if kind != "introselect":
        raise KilnValueError(f"np.{fn}: kind must be 'introselect' (got {kind!r})")
    if a.aval.ndim == 0 and axis is not None:
        raise KilnValueError(f"np.{fn}: a 0-d array cannot be partitioned along an axis")
    moved, axis = _along_last(a, axis, fn)
    ks = _kth_positions(kth, moved.aval.shape[-1], fn)
    return _back(bind(sort_p, moved, ks, indices=indices), axis)


@numpy_function("partition")
def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> Tracer:
    """`np.partition(a, kth, axis)`: each kth position holds its sorted
    element; smaller ones before it, larger after (in unspecified order)."""
    return _partition(a, kth, axis, kind, False, "partition")


@numpy_function("argpartition", method="argpartition")
def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> Tracer:
    """`np.argpartition(a, kth, axis)`: the positions `np.partition` moves."""
    return _partition(a, kth, axis, kind, True, "argpartition")


@tracer_method("partition")
def _partition_method(self: Any, kth: Any, axis: int = -1, kind: str = "introselect", order: Any = None) -> None:
    """`x.partition(kth, axis)`: partitions `x` in place."""
    knp.copyto(self, partition(self, kth, axis=axis, kind=kind))


# --------------------------------------------------------------------------
# Searching


def ordered_less(a: Any, b: Any) -> Tracer:
    """`a < b` in NumPy's sort order: NaN after everything, equal to NaN."""
    if operand(a).aval.dtype.kind != "f" and operand(b).aval.dtype.kind != "f":
        return knp.less(a, b)
    return knp.logical_or(knp.less(a, b), knp.logical_and(knp.isnan(b), knp.logical_not(knp.isnan(a))))


def search_sorted(a: Tracer, v: Tracer, right: bool) -> Tracer:
    """The insertion points of `v` in the sorted 1-D `a` (int64, shape of `v`):
    the first i with `not a[i] < v` (left) or `v < a[i]` (right), by a
    vectorized binary search of ceil(log2(n + 1)) halvings."""
    n = a.aval.shape[0]
    padded = knp.concatenate([a, knp.zeros(1, dtype=a.aval.dtype)])
    steps = knp.ceil(knp.log2((n + 1) * 1.0)).astype(INDEX_DTYPE) + 1
    lo = knp.zeros(v.aval.shape, dtype=INDEX_DTYPE)
    hi = knp.full(v.aval.shape, n, dtype=INDEX_DTYPE)

    @for_loop(0, steps, 1)
    def halve(_, lo, hi):
        active = lo < hi
        mid = (lo + hi) // 2
        probe = padded[knp.minimum(mid, n)]
        # a[mid] stays left of the insertion point: a[mid] < v (left), not v < a[mid] (right)
        up = knp.logical_not(ordered_less(v, probe)) if right else ordered_less(probe, v)
        return knp.where(active & up, mid + 1, lo), knp.where(active & knp.logical_not(up), mid, hi)

    lo, _ = halve(lo, hi)
    return lo


@numpy_function("searchsorted", method="searchsorted")
def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Tracer:
    """`np.searchsorted(a, v, side, sorter)`: int64 indices of `v`'s shape."""
    a = operand(a)
    if a.aval.ndim != 1:
        raise KilnValueError("object too deep for desired array" if a.aval.ndim > 1 else
                             "object of too small depth for desired array")
    if side not in ("left", "right"):
        raise KilnValueError(f"side must be 'left' or 'right' (got {side!r})")
    if sorter is not None:
        sorter = operand(sorter)
        if sorter.aval.ndim != 1:
            raise KilnValueError("sorter must be 1-D")
        a = knp.take(a, sorter)
    v = operand(v)
    dtype = np.result_type(a.aval.dtype, v.aval.dtype) if not v.aval.weak_type else a.aval.dtype
    if v.aval.weak_type and a.aval.dtype.kind in "iub" and v.aval.dtype.kind == "f":
        dtype = np.result_type(a.aval.dtype, np.float64)
    return search_sorted(convert(a, dtype), convert(v, dtype), side == "right")


@numpy_function("digitize")
def digitize(x: Any, bins: Any, right: bool = False) -> Tracer:
    """`np.digitize(x, bins, right)`: the bin of each value, for increasing
    or decreasing `bins` (else ValueError)."""
    x, bins = operand(x), operand(bins)
    if bins.aval.ndim != 1:
        raise KilnValueError("object too deep for desired array" if bins.aval.ndim > 1 else
                             "object of too small depth for desired array")
    if x.aval.dtype.kind == "c":
        raise KilnTypeError("x may not be complex")
    steps = knp.diff(bins)
    increasing = knp.all(knp.logical_not(steps < 0))
    decreasing = knp.all(knp.logical_not(steps > 0))
    check(knp.logical_or(increasing, decreasing), "ValueError",
          "bins must be monotonically increasing or decreasing")
    dtype = np.result_type(x.aval.dtype, bins.aval.dtype)
    xs, bs = convert(x, dtype), convert(bins, dtype)
    forward = search_sorted(bs, xs, not right)
    backward = bins.aval.shape[0] - search_sorted(knp.flip(bs), xs, not right)
    # An increasing (or constant) `bins` takes the forward search, as NumPy's `bins[-1] >= bins[0]` test.
    return knp.where(increasing, forward, backward)
