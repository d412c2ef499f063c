"""Stage "jaxpr": rearranging arrays (roll, flips, rot90, tile, pad, splits,
append/insert/delete, column_stack/dstack/atleast_3d, broadcast_arrays,
take_along_axis/put_along_axis, diagonal).

In: tracers; counts, shifts and positions static or traced.
Out: tracers built from slicing, gathers (`take`), concatenation and
broadcasts; sizes that must agree at run time get a run-time check.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kiln.core import INDEX_DTYPE, KilnIndexError, KilnTypeError, KilnValueError, is_static_dim, same_dim
from kiln.numpy._base import broadcast_shapes, broadcast_to, check, convert, materialize, operand, shape_product
from kiln.numpy._bindings import knp, numpy_function, tracer_method
from kiln.tracing import Tracer


def _axis(axis: Any, ndim: int, fn: str) -> int:
    if not isinstance(axis, (int, np.integer)):
        raise KilnTypeError(f"np.{fn}: axis must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise KilnValueError(f"np.{fn}: axis {axis} is out of bounds for array of dimension {ndim}")
    return int(axis) % ndim


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) or (isinstance(v, Tracer) and v.aval.shape == ()
                                                 and v.aval.dtype.kind in "iu")


def _positions(start: Any, stop: Any) -> Tracer:
    """start, start + 1, ..., stop - 1 as int64 (bounds static or traced)."""
    return knp.arange(start, stop, dtype=INDEX_DTYPE)


def _take(x: Tracer, idx: Tracer, axis: int) -> Tracer:
    """`x` gathered at in-range positions `idx` along `axis`."""
    return knp.take(x, idx, axis=axis)


def _safe(n: Any) -> Any:
    """n, or 1 when n is 0: a divisor for positions of an axis that may be empty."""
    return n if is_static_dim(n) and n > 0 else knp.maximum(n, 1)


# --------------------------------------------------------------------------
# roll, flips, rot90


@numpy_function("roll")
def roll(a: Any, shift: Any, axis: Any = None) -> Tracer:
    """`np.roll`: elements shifted along `axis` (the flattened array when
    None), those past the end coming back at the start; shifts static or traced."""
    a = materialize(a)
    if axis is None:
        return knp.reshape(roll(knp.ravel(a), shift, 0), a.aval.shape)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise KilnValueError("np.roll: 'shift' and 'axis' should be scalars or 1D sequences of the same length")
    total: dict[int, Any] = {}
    for s, ax in zip(shifts, axes):
        if not _is_int(s):
            raise KilnTypeError(f"np.roll: shift must be an integer, got {type(s).__name__}")
        ax = _axis(ax, a.aval.ndim, "roll")
        total[ax] = total[ax] + s if ax in total else s
    for ax, s in total.items():
        n = a.aval.shape[ax]
        if is_static_dim(n) and n == 0:
            continue
        source = knp.remainder(_positions(0, n) - s, _safe(n))
        a = _take(a, source, ax)
    return a


@numpy_function("fliplr")
def fliplr(m: Any) -> Tracer:
    m = operand(m)
    if m.aval.ndim < 2:
        raise KilnValueError("np.fliplr: Input must be >= 2-d.")
    return knp.flip(m, 1)


@numpy_function("flipud")
def flipud(m: Any) -> Tracer:
    m = operand(m)
    if m.aval.ndim < 1:
        raise KilnValueError("np.flipud: Input must be >= 1-d.")
    return knp.flip(m, 0)


@numpy_function("rot90")
def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Tracer:
    """`np.rot90`: rotation by 90 degrees `k` times from the first axis of
    `axes` towards the second (a flip and a transpose, both views)."""
    m = operand(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise KilnValueError("np.rot90: len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.aval.ndim:
        raise KilnValueError("np.rot90: Axes must be different.")
    if not all(-m.aval.ndim <= ax < m.aval.ndim for ax in axes):
        raise KilnValueError(f"np.rot90: Axes={axes} out of range for array of ndim={m.aval.ndim}.")
    if not isinstance(k, (int, np.integer)):
        raise KilnTypeError("np.rot90: k must be a Python int (it selects the rotation when kiln compiles)")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return knp.flip(knp.flip(m, axes[0]), axes[1])
    order = list(range(m.aval.ndim))
    a0, a1 = axes[0] % m.aval.ndim, axes[1] % m.aval.ndim
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return knp.transpose(knp.flip(m, axes[1]), order)
    return knp.flip(knp.transpose(m, order), axes[1])


# --------------------------------------------------------------------------
# tile and pad


@numpy_function("tile")
def tile(A: Any, reps: Any) -> Tracer:
    """`np.tile`: `A` repeated `reps[i]` times along axis i (counts static or traced)."""
    A = materialize(A)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    if not all(_is_int(r) for r in reps):
        raise KilnTypeError("np.tile: reps must be integers (static or traced)")
    for r in reps:
        if is_static_dim(r) and r < 0:
            raise KilnValueError(f"np.tile: negative dimensions are not allowed (reps has {r})")
        if not is_static_dim(r):
            check(knp.greater_equal(r, 0), "ValueError", "np.tile: negative dimensions are not allowed "
                  "(a traced count is {})", r)
    ndim = max(len(reps), A.aval.ndim)
    A = knp.reshape(A, (1,) * (ndim - A.aval.ndim) + tuple(A.aval.shape))
    reps = (1,) * (ndim - len(reps)) + reps
    if all(is_static_dim(r) and r == 1 for r in reps):
        return knp.copy(A)
    # (r0, n0, r1, n1, ...) by broadcasting, then merged pairwise.
    spread = knp.reshape(A, tuple(d for n in A.aval.shape for d in (1, n)))
    copies = broadcast_to(spread, tuple(d for r, n in zip(reps, A.aval.shape) for d in (r, n)))
    return knp.reshape(copies, tuple(r * n if not (is_static_dim(r) and r == 1) else n
                                     for r, n in zip(reps, A.aval.shape)))


def _pad_widths(pad_width: Any, ndim: int) -> list[tuple[Any, Any]]:
    """NumPy's `pad_width` forms (n, (n,), (before, after), ((b0, a0), ...)) as one pair per axis."""
    widths = pad_width
    if _is_int(widths):
        return [(widths, widths)] * ndim
    widths = list(widths)
    if widths and all(_is_int(w) for w in widths):
        if len(widths) == 1:
            return [(widths[0], widths[0])] * ndim
        if len(widths) == 2:
            return [(widths[0], widths[1])] * ndim
    pairs = [tuple(w) if isinstance(w, (tuple, list)) else (w, w) for w in widths]
    pairs = [(p[0], p[0]) if len(p) == 1 else p for p in pairs]
    if len(pairs) == 1:
        pairs = pairs * ndim
    if len(pairs) != ndim or any(len(p) != 2 or not all(_is_int(v) for v in p) for p in pairs):
        raise KilnValueError(f"np.pad: unable to create correctly shaped tuple from {pad_width!r} for an array "
                             f"of dimension {ndim}")
    return pairs


def _pad_values(values: Any, ndim: int) -> list[tuple[Any, Any]]:
    if isinstance(values, (tuple, list)):
        return _pad_widths_like(values, ndim)
    return [(values, values)] * ndim


def _pad_widths_like(values: Sequence[Any], ndim: int) -> list[tuple[Any, Any]]:
    flat = list(values)
    if len(flat) == 2 and not isinstance(flat[0], (tuple, list)):
        return [(flat[0], flat[1])] * ndim
    pairs = [tuple(v) if isinstance(v, (tuple, list)) else (v, v) for v in flat]
    pairs = [(p[0], p[0]) if len(p) == 1 else p for p in pairs]
    return pairs * ndim if len(pairs) == 1 else pairs


_PAD_MODES = ("constant", "edge", "wrap", "reflect", "symmetric")


@numpy_function("pad")
def pad(array: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0,
        reflect_type: str = "even") -> Tracer:
    """`np.pad` in the modes constant, edge, wrap, reflect and symmetric (widths static or traced):
    along each axis, each output position reads the input position its mode maps it to."""
    if not isinstance(mode, str) or mode not in _PAD_MODES:
        raise KilnValueError(f"np.pad: mode {mode!r} is not supported by kiln (supported: "
                             f"{', '.join(_PAD_MODES)}); compute it with concatenate")
    if reflect_type != "even":
        raise KilnValueError("np.pad: only reflect_type='even' is supported by kiln")
    x = materialize(array)
    widths = _pad_widths(pad_width, x.aval.ndim)
    for before, after in widths:
        for w in (before, after):
            if is_static_dim(w) and w < 0:
                raise KilnValueError("np.pad: index can't contain negative values")
            if not is_static_dim(w):
                check(knp.greater_equal(w, 0), "ValueError", "np.pad: index can't contain negative values "
                      "(got {})", w)
    values = _pad_values(constant_values, x.aval.ndim) if mode == "constant" else None
    for axis, (before, after) in enumerate(widths):
        if all(is_static_dim(w) and w == 0 for w in (before, after)):
            continue
        x = _pad_axis(x, axis, before, after, mode, values[axis] if values else None)
    return x


def _pad_axis(x: Tracer, axis: int, before: Any, after: Any, mode: str, values: Any) -> Tracer:
    n = x.aval.shape[axis]
    if mode == "constant":
        lead, trail = list(x.aval.shape), list(x.aval.shape)
        lead[axis], trail[axis] = before, after
        fill_before = knp.full(tuple(lead), convert(operand(values[0]), x.aval.dtype), dtype=x.aval.dtype)
        fill_after = knp.full(tuple(trail), convert(operand(values[1]), x.aval.dtype), dtype=x.aval.dtype)
        return knp.concatenate((fill_before, x, fill_after), axis=axis)
    if is_static_dim(n) and n == 0:
        raise KilnValueError(f"np.pad: can't extend empty axis {axis} using modes other than 'constant' or "
                             "'empty'")
    if not is_static_dim(n):
        check(knp.logical_or(knp.greater(n, 0), knp.logical_and(knp.equal(before, 0), knp.equal(after, 0))),
              "ValueError", f"np.pad: can't extend empty axis {axis} using modes other than 'constant' or "
              "'empty'")
    i = _positions(-before, n + after)
    size = _safe(n)
    if mode == "edge":
        source = knp.clip(i, 0, size - 1)
    elif mode == "wrap":
        source = knp.remainder(i, size)
    elif mode == "symmetric":
        j = knp.remainder(i, 2 * size)
        source = knp.where(j < size, j, 2 * size - 1 - j)
    else:  # reflect: mirror about the edge elements, period 2(n - 1)
        period = knp.maximum(2 * (size - 1), 1)
        j = knp.remainder(i, period)
        source = knp.where(j < size, j, period - j)
        source = knp.minimum(source, size - 1)
    return _take(x, source, axis)


# --------------------------------------------------------------------------
# splits


def _split_points(n: Any, sections: Any, fn: str, equal: bool) -> list[Any]:
    if isinstance(sections, (list, tuple, np.ndarray)):
        return [int(s) if isinstance(s, (int, np.integer)) else s for s in sections]
    if not isinstance(sections, (int, np.integer)):
        raise KilnTypeError(f"np.{fn}: the number of sections must be a Python int (the number of arrays "
                            "returned is fixed when kiln compiles) or a list of split points")
    if sections <= 0:
        raise KilnValueError("number sections must be larger than 0.")
    if equal:
        if is_static_dim(n):
            if n % sections:
                raise KilnValueError("array split does not result in an equal division")
        else:
            check(knp.equal(knp.remainder(n, sections), 0), "ValueError",
                  f"np.{fn}: array split does not result in an equal division (axis size {{}} into "
                  f"{sections} sections)", n)
    each, extras = (n // sections, n % sections) if is_static_dim(n) else (knp.floor_divide(n, sections),
                                                                          knp.remainder(n, sections))
    points = []
    for i in range(1, sections):
        points.append(i * each + (min(i, extras) if is_static_dim(extras) else knp.minimum(i, extras)))
    return points


def _split(ary: Any, indices_or_sections: Any, axis: int, fn: str, equal: bool) -> list[Tracer]:
    x = materialize(ary)
    axis = _axis(axis, x.aval.ndim, fn) if x.aval.ndim else axis
    points = _split_points(x.aval.shape[axis], indices_or_sections, fn, equal)
    bounds = [0, *points, None]
    before = (slice(None),) * axis
    return [x[before + (slice(lo, hi),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


@numpy_function("split")
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tracer]:
    """`np.split`: views of equal parts (a number of sections) or between split points."""
    return _split(ary, indices_or_sections, axis, "split", equal=True)


@numpy_function("array_split")
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Tracer]:
    """`np.array_split`: like split, the first `n % sections` parts one longer."""
    return _split(ary, indices_or_sections, axis, "array_split", equal=False)


@numpy_function("hsplit")
def hsplit(ary: Any, indices_or_sections: Any) -> list[Tracer]:
    x = operand(ary)
    if x.aval.ndim == 0:
        raise KilnValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split(x, indices_or_sections, 1 if x.aval.ndim > 1 else 0, "hsplit", equal=True)


@numpy_function("vsplit")
def vsplit(ary: Any, indices_or_sections: Any) -> list[Tracer]:
    x = operand(ary)
    if x.aval.ndim < 2:
        raise KilnValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(x, indices_or_sections, 0, "vsplit", equal=True)


@numpy_function("dsplit")
def dsplit(ary: Any, indices_or_sections: Any) -> list[Tracer]:
    x = operand(ary)
    if x.aval.ndim < 3:
        raise KilnValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(x, indices_or_sections, 2, "dsplit", equal=True)


# --------------------------------------------------------------------------
# append, insert, delete


@numpy_function("append")
def append(arr: Any, values: Any, axis: Any = None) -> Tracer:
    if axis is None:
        return knp.concatenate((knp.ravel(operand(arr)), knp.ravel(operand(values))), axis=0)
    return knp.concatenate((arr, values), axis=axis)


@numpy_function("insert")
def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Tracer:
    """`np.insert` at one position (static or traced): `values` placed before it along `axis`."""
    x = materialize(arr)
    if axis is None:
        x, axis = knp.ravel(x), 0
    axis = _axis(axis, x.aval.ndim, "insert")
    if not _is_int(obj):
        raise KilnTypeError("np.insert: kiln supports one insertion position (an int, static or traced); "
                            "insert at several positions with several calls, from the last position back")
    n = x.aval.shape[axis]
    index = _bounded_position(obj, n, "insert", inclusive=True)
    v = convert(operand(values), x.aval.dtype)
    # NumPy: values = array(values, ndmin=arr.ndim), its first axis moved to `axis`.
    if v.aval.ndim < x.aval.ndim:
        v = knp.reshape(v, (1,) * (x.aval.ndim - v.aval.ndim) + tuple(v.aval.shape))
    v = knp.moveaxis(v, 0, axis)
    target = list(x.aval.shape)
    target[axis] = v.aval.shape[axis]
    v = broadcast_to(v, tuple(target), "np.insert")
    before = (slice(None),) * axis
    return knp.concatenate((x[before + (slice(None, index),)], v, x[before + (slice(index, None),)]), axis=axis)


def _bounded_position(i: Any, n: Any, fn: str, inclusive: bool) -> Any:
    """A position along an axis of size n, negative counted from the end; out of bounds raises IndexError."""
    limit = "n" if inclusive else "n - 1"
    if is_static_dim(i) and is_static_dim(n):
        if not -n <= i <= (n if inclusive else n - 1):
            raise KilnIndexError(f"np.{fn}: index {i} is out of bounds for axis with size {n}")
        return int(i) % (n + 1 if inclusive else n) if i < 0 else int(i)
    ok = knp.logical_and(knp.greater_equal(i, -n), knp.less_equal(i, n) if inclusive else knp.less(i, n))
    check(ok, "IndexError", f"np.{fn}: index {{}} is out of bounds for axis with size {{}} (allowed: -n to {limit})",
          i, n)
    return knp.where(knp.less(i, 0), i + n, i)


@numpy_function("delete")
def delete(arr: Any, obj: Any, axis: Any = None) -> Tracer:
    """`np.delete`: one position (the result one shorter), or a slice, a
    list or an array of positions (the result's size known at run time)."""
    x = materialize(arr)
    if axis is None:
        x, axis = knp.ravel(x), 0
    axis = _axis(axis, x.aval.ndim, "delete")
    n = x.aval.shape[axis]
    before = (slice(None),) * axis
    if _is_int(obj):
        index = _bounded_position(obj, n, "delete", inclusive=False)
        return knp.concatenate((x[before + (slice(None, index),)], x[before + (slice(index + 1, None),)]),
                               axis=axis)
    keep = knp.ones(n, dtype=np.bool_)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        positions = operand(obj)
        if positions.aval.dtype == np.bool_:
            raise KilnTypeError("np.delete: a boolean mask is not supported by kiln; use x[~mask]")
        keep[positions] = False
    return knp.compress(keep, x, axis=axis)


# --------------------------------------------------------------------------
# stacking helpers and broadcast_arrays


@numpy_function("column_stack")
def column_stack(tup: Sequence[Any]) -> Tracer:
    """1-D arrays as columns, 2-D arrays as they are, joined along axis 1."""
    arrays = []
    for a in tup:
        a = materialize(a)
        arrays.append(knp.reshape(a, (-1, 1)) if a.aval.ndim < 2 else a)
    return knp.concatenate(arrays, axis=1)


def _atleast_3d(a: Any) -> Tracer:
    a = materialize(a)
    if a.aval.ndim == 0:
        return knp.reshape(a, (1, 1, 1))
    if a.aval.ndim == 1:
        return knp.reshape(a, (1, a.aval.shape[0], 1))
    if a.aval.ndim == 2:
        return knp.reshape(a, (*a.aval.shape, 1))
    return a


@numpy_function("atleast_3d")
def atleast_3d(*arys: Any) -> Any:
    results = [_atleast_3d(a) for a in arys]
    return results[0] if len(results) == 1 else tuple(results)


@numpy_function("dstack")
def dstack(tup: Sequence[Any]) -> Tracer:
    return knp.concatenate([_atleast_3d(a) for a in tup], axis=2)


@numpy_function("broadcast_arrays")
def broadcast_arrays(*args: Any, subok: bool = False) -> tuple:
    """Read-only broadcasts of every argument to their common shape."""
    ops = [materialize(a) for a in args]
    shape = broadcast_shapes([o.aval.shape for o in ops], "broadcast_arrays")
    return tuple(o if len(o.aval.shape) == len(shape) and all(same_dim(a, b) for a, b in zip(o.aval.shape, shape))
                 else knp.broadcast_to(o, shape) for o in ops)


# --------------------------------------------------------------------------
# take_along_axis, put_along_axis, diagonal


def _along_axis_positions(arr: Tracer, indices: Any, axis: Any, fn: str) -> tuple[Tracer, Tracer]:
    """(the flat array, flat positions) for NumPy's *_along_axis: `indices`
    selects along `axis`, every other axis is matched by broadcasting."""
    idx = operand(indices)
    if idx.aval.dtype.kind not in "iu":
        raise KilnIndexError(f"np.{fn}: `indices` must be an integer array")
    if axis is None:
        if idx.aval.ndim != 1:
            raise KilnValueError(f"np.{fn}: when axis=None, `indices` must have a single dimension.")
        arr, axis = knp.ravel(arr), 0
    if idx.aval.ndim != arr.aval.ndim:
        raise KilnValueError(f"np.{fn}: `indices` and `arr` must have the same number of dimensions")
    axis = _axis(axis, arr.aval.ndim, fn)
    n = arr.aval.shape[axis]
    idx = idx.astype(INDEX_DTYPE)
    check(knp.all(knp.logical_and(knp.greater_equal(idx, -n), knp.less(idx, n))), "IndexError",
          f"np.{fn}: an index is out of bounds for axis {axis} with size {{}}", n)
    idx = knp.where(knp.less(idx, 0), idx + n, idx)
    arr_shape = list(arr.aval.shape)
    idx_shape = list(idx.aval.shape)
    other = broadcast_shapes([tuple(arr_shape[:axis] + [1] + arr_shape[axis + 1:]),
                              tuple(idx_shape[:axis] + [1] + idx_shape[axis + 1:])], fn)
    out_shape = list(other)
    out_shape[axis] = idx_shape[axis]
    full_shape = list(other)
    full_shape[axis] = n
    arr = broadcast_to(arr, tuple(full_shape), f"np.{fn}")
    idx = broadcast_to(idx, tuple(out_shape), f"np.{fn}")
    flat = idx * shape_product(full_shape[axis + 1:])
    for d in range(arr.aval.ndim):
        if d == axis:
            continue
        coord = knp.reshape(_positions(0, out_shape[d]), tuple(out_shape[d] if i == d else 1
                                                                for i in range(len(out_shape))))
        flat = flat + coord * shape_product(full_shape[d + 1:])
    return arr, flat


@numpy_function("take_along_axis")
def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Tracer:
    arr = materialize(arr)
    full, flat = _along_axis_positions(arr, indices, axis, "take_along_axis")
    return knp.take(knp.ravel(full), flat)


@numpy_function("put_along_axis")
def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    """Writes `values` into `arr` (an array or a C-contiguous view of one) at the positions given."""
    target = operand(arr)
    if axis is None:
        raise KilnValueError("np.put_along_axis: kiln needs an axis (axis=None flattens a copy)")
    full, flat = _along_axis_positions(target, indices, axis, "put_along_axis")
    if tuple(full.aval.shape) != tuple(target.aval.shape):
        raise KilnValueError("np.put_along_axis: `indices` may not broadcast `arr` when writing")
    values = broadcast_to(convert(operand(values), target.aval.dtype), flat.aval.shape, "np.put_along_axis")
    knp.ravel(target)[knp.ravel(flat)] = knp.ravel(values)
    return None


@numpy_function("diagonal", method="diagonal")
def diagonal(a: Any, offset: Any = 0, axis1: int = 0, axis2: int = 1) -> Tracer:
    """The diagonal `offset` of the plane (axis1, axis2), as the last axis (a copy: NumPy's is read-only)."""
    a = materialize(a)
    if a.aval.ndim < 2:
        raise KilnValueError("diag requires an array of at least two dimensions")
    ax1, ax2 = _axis(axis1, a.aval.ndim, "diagonal"), _axis(axis2, a.aval.ndim, "diagonal")
    if ax1 == ax2:
        raise KilnValueError("axis1 and axis2 cannot be the same")
    rest = [d for d in range(a.aval.ndim) if d not in (ax1, ax2)]
    a = knp.transpose(a, (*rest, ax1, ax2))
    rows, cols = a.aval.shape[-2:]
    if is_static_dim(offset):
        first_row, first_col = max(-offset, 0), max(offset, 0)
    else:
        first_row, first_col = knp.maximum(-offset, 0), knp.maximum(offset, 0)
    length = knp.maximum(knp.minimum(rows - first_row, cols - first_col), 0)
    if all(is_static_dim(v) for v in (rows, cols, first_row, first_col)):
        length = max(min(rows - first_row, cols - first_col), 0)
    steps = _positions(0, length)
    flat = knp.reshape(a, (*a.aval.shape[:-2], shape_product((rows, cols))))
    return knp.take(flat, (steps + first_row) * cols + steps + first_col, axis=-1)


@tracer_method("item")
def _item(self, *args: Any) -> Tracer:
    """`x.item()`: the one element as a Python-typed scalar (int64, float64,
    complex128 or bool); `x.item(i)` / `x.item(i, j)` an element by flat or full index."""
    x = materialize(self)
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    if not args:
        size = shape_product(x.aval.shape)
        if is_static_dim(size) and size != 1:
            raise KilnValueError("can only convert an array of size 1 to a Python scalar")
        if not is_static_dim(size):
            check(knp.equal(size, 1), "ValueError", "can only convert an array of size 1 to a Python scalar "
                  "(the array has {} elements)", size)
        value = knp.reshape(x, (1,))[0]
    elif len(args) == 1:
        value = knp.ravel(x)[args[0]]
    elif len(args) == x.aval.ndim:
        value = x[tuple(args)]
    else:
        raise KilnValueError("incorrect number of indices for array")
    kind = x.aval.dtype.kind
    python_type = {"b": np.bool_, "i": np.int64, "u": np.uint64 if x.aval.dtype.itemsize == 8 else np.int64,
                   "f": np.float64, "c": np.complex128}[kind]
    return convert(operand(value), np.dtype(python_type))
