"""Stage "jaxpr": NumPy's helpers built from elementwise operations,
reductions and writes (select, piecewise, nan_to_num, fill_diagonal,
ediff1d, ptp, polyval, gradient, average, isclose / allclose / array_equal,
sinc, trapezoid).

In: traced arrays and static options. Out: tracers; `fill_diagonal` and
`nan_to_num(copy=False)` write into their argument.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kiln.control_flow import cond, for_loop
from kiln.core import INDEX_DTYPE, KilnTypeError, KilnValueError, is_static_dim
from kiln.numpy._base import broadcast_shapes, broadcast_to, check, convert, materialize, operand, shape_product
from kiln.numpy._bindings import knp, numpy_function
from kiln.trace_namespace import replace_in_traced_code
from kiln.tracing import Tracer


def _dtype_of(x: Any) -> np.dtype:
    """NumPy's dtype of `x` as an array (a Python scalar takes its default dtype)."""
    return x.aval.dtype if isinstance(x, Tracer) else np.asarray(x).dtype


@numpy_function("select")
def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Tracer:
    """The first choice whose condition holds, else `default` (NumPy 2's
    dtype: the result type of the choices and `default` as arrays)."""
    if len(condlist) != len(choicelist):
        raise KilnValueError("list of cases must be same length as list of conditions")
    if len(choicelist) == 0:
        raise KilnValueError("select with an empty condition list is not possible")
    conds = [operand(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.aval.dtype != np.bool_:
            raise KilnTypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    choices = [operand(c) for c in choicelist] + [operand(default)]
    dtype = np.result_type(*[_dtype_of(c) for c in list(choicelist) + [default]])
    shape = broadcast_shapes([o.aval.shape for o in conds + choices], "select")
    result = broadcast_to(convert(choices[-1], dtype), shape)
    for holds, choice in reversed(list(zip(conds, choices[:-1]))):
        result = knp.where(holds, convert(choice, dtype), result)
    return materialize(result)


@numpy_function("piecewise")
def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Tracer:
    """Where each condition holds, its function of those elements of `x`
    (or its value); an extra function covers where none holds; elsewhere 0."""
    x = materialize(x)
    if isinstance(condlist, (Tracer, np.ndarray)) and operand(condlist).aval.ndim == x.aval.ndim:
        condlist = [condlist]
    elif isinstance(condlist, bool) or not isinstance(condlist, (list, tuple)):
        condlist = [condlist]
    conds = [broadcast_to(convert(operand(c), np.bool_), x.aval.shape) for c in condlist]
    if len(funclist) == len(conds) + 1:
        anything = conds[0]
        for c in conds[1:]:
            anything = knp.logical_or(anything, c)
        conds.append(knp.logical_not(anything))
    elif len(funclist) != len(conds):
        raise KilnValueError(f"with {len(conds)} condition(s), either {len(conds)} or {len(conds) + 1} functions "
                             f"are expected")
    y = knp.zeros_like(x)
    for holds, fn in zip(conds, funclist):
        if callable(fn):
            y[holds] = fn(x[holds], *args, **kw)
        else:
            y[holds] = fn
    return y


@numpy_function("nan_to_num")
def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> Tracer:
    """NaN -> `nan`, +inf -> `posinf` (the largest finite value by default),
    -inf -> `neginf`; ints and bools unchanged; complex by parts."""
    x = materialize(x)
    kind = x.aval.dtype.kind
    if kind not in "fc":
        return x if not copy else knp.copy(x)

    def fix(part: Tracer) -> Tracer:
        info = np.finfo(part.aval.dtype)
        hi = info.max if posinf is None else posinf
        lo = info.min if neginf is None else neginf
        part = knp.where(knp.isnan(part), convert(operand(nan), part.aval.dtype), part)
        part = knp.where(knp.isposinf(part), convert(operand(hi), part.aval.dtype), part)
        return knp.where(knp.isneginf(part), convert(operand(lo), part.aval.dtype), part)

    result = fix(x) if kind == "f" else knp.add(fix(knp.real(x)), knp.multiply(fix(knp.imag(x)), 1j)).astype(
        x.aval.dtype)
    if not copy:
        x[...] = result
        return x
    return result


@numpy_function("isposinf")
def isposinf(x: Any, out: Any = None) -> Tracer:
    x = operand(x)
    if x.aval.dtype.kind == "c":
        raise KilnTypeError("This operation is not supported for complex values because it would be ambiguous.")
    return knp.logical_and(knp.isinf(x), knp.greater(x, 0))


@numpy_function("isneginf")
def isneginf(x: Any, out: Any = None) -> Tracer:
    x = operand(x)
    if x.aval.dtype.kind == "c":
        raise KilnTypeError("This operation is not supported for complex values because it would be ambiguous.")
    return knp.logical_and(knp.isinf(x), knp.less(x, 0))


@numpy_function("fill_diagonal")
def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """Writes `val` (repeated in order, as NumPy's flat assignment) on the main
    diagonal of `a`; a tall 2-D matrix continues past each square block with `wrap`."""
    target = operand(a)
    if target.aval.ndim < 2:
        raise KilnValueError("array must be at least 2-d")
    shape = target.aval.shape
    if target.aval.ndim == 2:
        cols = shape[1]
        step = cols + 1
        end = shape_product(shape) if wrap else knp.minimum(shape_product(shape), cols * cols)
    else:
        for d in shape[1:]:
            if is_static_dim(d) and is_static_dim(shape[0]) and d != shape[0]:
                raise KilnValueError("All dimensions of input must be of equal length")
            if not (is_static_dim(d) and is_static_dim(shape[0])):
                check(knp.equal(d, shape[0]), "ValueError", "All dimensions of input must be of equal length")
        step, stride = 1, 1
        for d in reversed(shape[1:]):
            stride = stride * d
            step = step + stride
        end = shape_product(shape)
    count = knp.floor_divide(end + step - 1, step) if not all(map(is_static_dim, (end, step))) else \
        -(-end // step)
    positions = knp.arange(0, count, dtype=INDEX_DTYPE) * step
    v = knp.ravel(convert(operand(val), target.aval.dtype, weak_type=False))
    if v.aval.shape != (1,) and shape_product(v.aval.shape) != 1:
        size = v.aval.shape[0]
        check(knp.logical_or(knp.greater(size, 0), knp.equal(count, 0)), "ValueError",
              "np.fill_diagonal: val is empty but the diagonal is not")
        v = knp.take(v, knp.remainder(knp.arange(0, count, dtype=INDEX_DTYPE), knp.maximum(size, 1)))
    else:
        v = knp.reshape(v, ())
    knp.ravel(target)[positions] = v
    return None


@numpy_function("ediff1d")
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Tracer:
    """Differences of the flattened array, with `to_begin` / `to_end` around
    them (cast to the array's dtype under same_kind, as NumPy)."""
    x = knp.ravel(materialize(ary))
    dtype = x.aval.dtype
    parts = []
    for extra, name in ((to_begin, "to_begin"), (to_end, "to_end")):
        if extra is None:
            parts.append(None)
            continue
        e = operand(extra)
        if not np.can_cast(_dtype_of(extra), dtype, casting="same_kind") and isinstance(extra, Tracer):
            raise KilnTypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                                "`same_kind` rule.")
        parts.append(knp.ravel(convert(e, dtype)))
    body = x[1:] - x[:-1] if dtype != np.bool_ else knp.not_equal(x[1:], x[:-1])
    pieces = [p for p in (parts[0], body, parts[1]) if p is not None]
    return knp.concatenate(pieces) if len(pieces) > 1 else body


@numpy_function("ptp")
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tracer:
    """Peak to peak: max - min (in the array's dtype; empty raises as max does)."""
    if out is not None:
        raise KilnTypeError("np.ptp: out= is not supported by kiln; assign the result instead")
    a = materialize(a)
    return knp.subtract(knp.max(a, axis=axis, keepdims=keepdims), knp.min(a, axis=axis, keepdims=keepdims))


@numpy_function("polyval")
def polyval(p: Any, x: Any) -> Tracer:
    """Horner's rule over the coefficients `p` (highest power first), as
    NumPy computes it: y = y * x + c for each c, from y = zeros_like(x)."""
    p = materialize(p)
    x = materialize(x)
    if p.aval.ndim != 1:
        raise KilnValueError("np.polyval: kiln supports a 1-D array of coefficients")
    dtype = np.result_type(x.aval.dtype, p.aval.dtype)
    y0 = knp.zeros_like(x, dtype=dtype)

    @for_loop(0, p.aval.shape[0], 1)
    def horner(i, y):
        return y * x + convert(p[i], dtype)

    return horner(y0)


_TOO_SMALL = ("Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) "
              "elements are required.")


@numpy_function("gradient")
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """`np.gradient(f, *varargs, axis=None)`: NumPy's algorithm with edge_order=1:
    central differences inside, one-sided at both ends, per axis; a spacing is a
    scalar or a 1-D coordinate array (NumPy's uniform formula when its steps are all
    equal, checked when the call runs, else the second-order non-uniform one).
    One array for one axis, else a tuple. Too short an axis raises NumPy's error when
    the call runs (ValueError; IndexError for a coordinate array of fewer than 2).
    Not done: edge_order=2 (a TypeError naming it)."""
    if edge_order > 2:
        raise KilnValueError("'edge_order' greater than 2 not supported")
    if edge_order != 1:
        raise KilnTypeError("np.gradient: edge_order=2 is not supported by kiln (edge_order=1 is); call it "
                            "outside kiln.qjit or use one-sided second-order differences written out")
    f = materialize(f)
    ndim = f.aval.ndim
    if axis is None:
        axes = tuple(range(ndim))
    else:
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        for ax in axes:
            if not -ndim <= ax < ndim:
                raise KilnValueError(f"axis {ax} is out of bounds for array of dimension {ndim}")
        axes = tuple(ax % ndim for ax in axes)
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise KilnTypeError("invalid number of arguments")
    otype = f.aval.dtype
    if otype.kind not in "fc":
        if otype == np.bool_:
            raise KilnTypeError("np.gradient of a boolean array: NumPy's boolean subtract is not supported; "
                                "use .astype(float) first")
        f = convert(f, np.float64)
        otype = np.dtype(np.float64)
    outs = [_gradient_along(f, ax, h, otype) for ax, h in zip(axes, spacings)]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _gradient_along(f: Tracer, axis: int, h: Any, otype: np.dtype) -> Tracer:
    ndim = f.aval.ndim
    n = f.aval.shape[axis]

    def part(start: Any, stop: Any) -> Tracer:
        return f[(slice(None),) * axis + (slice(start, stop),)]

    def along(v: Tracer) -> Tracer:  # a 1-D coefficient broadcast along `axis`
        return knp.reshape(v, tuple(-1 if d == axis else 1 for d in range(ndim)))

    coordinates = np.ndim(h) != 0
    if coordinates:
        x = materialize(h)
        if x.aval.ndim != 1:
            raise KilnValueError("distances must be either scalars or 1d")
        from kiln.numpy._base import require_equal_dims
        require_equal_dims(x.aval.shape[0], n, "ValueError",
                           "when 1d, distances must match the length of the corresponding dimension")
        if x.aval.dtype.kind in "iub":
            x = convert(x, np.float64)
        dx = x[1:] - x[:-1]
        m = dx.aval.shape[0]
        check(knp.greater(m, 0) if not is_static_dim(m) else int(m) > 0, "IndexError",
              "index 0 is out of bounds for axis 0 with size 0")
    check(knp.greater_equal(n, 2) if not is_static_dim(n) else int(n) >= 2, "ValueError", _TOO_SMALL)
    forward, backward = part(1, 2) - part(0, 1), part(-1, None) - part(-2, -1)
    if not coordinates:
        h = operand(h) if isinstance(h, Tracer) else h
        pieces = [forward / h, (part(2, None) - part(None, -2)) / (2.0 * h), backward / h]
        return convert(knp.concatenate(pieces, axis=axis), otype)
    h0 = dx[0]
    uniform = knp.all(knp.equal(dx, h0))
    dx1, dx2 = dx[:-1], dx[1:]
    a = along(-dx2 / (dx1 * (dx1 + dx2)))
    b = along((dx2 - dx1) / (dx1 * dx2))
    c = along(dx1 / (dx2 * (dx1 + dx2)))
    varying = a * part(None, -2) + b * part(1, -1) + c * part(2, None)
    even = (part(2, None) - part(None, -2)) / (2.0 * h0)
    inner = knp.where(uniform, even, varying)
    last = knp.where(uniform, h0, dx[-1])
    return convert(knp.concatenate([forward / h0, inner, backward / last], axis=axis), otype)


@numpy_function("average")
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """The mean, or `sum(a * w) / sum(w)` with weights (1-D weights along
    `axis`); `returned=True` adds the sum of weights. Weights summing to zero
    raise ZeroDivisionError as NumPy."""
    a = materialize(a)
    if weights is None:
        avg = knp.mean(a, axis=axis, keepdims=keepdims)
        scl = convert(operand(shape_product(a.aval.shape) if axis is None else
                              _count(a.aval.shape, axis)), avg.aval.dtype)
        scl = broadcast_to(scl, avg.aval.shape)
    else:
        w = materialize(weights)
        dtype = np.result_type(a.aval.dtype, w.aval.dtype, np.float64 if a.aval.dtype.kind in "iub" else
                               a.aval.dtype)
        if w.aval.ndim != a.aval.ndim:
            if axis is None:
                raise KilnTypeError("Axis must be specified when shapes of a and weights differ.")
            axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            if w.aval.ndim != len(axes):
                raise KilnValueError("Shape of weights must be consistent with shape of a along specified axis.")
            axes = tuple(ax % a.aval.ndim for ax in axes)
            shape = [1] * a.aval.ndim
            for ax, d in zip(axes, w.aval.shape):
                shape[ax] = d
            w = broadcast_to(knp.reshape(w, tuple(shape)), a.aval.shape, "np.average")
        scl = knp.sum(w, axis=axis, dtype=dtype, keepdims=keepdims)
        check(knp.all(knp.not_equal(scl, 0)), "ZeroDivisionError", "Weights sum to zero, can't be normalized")
        avg = knp.divide(knp.sum(knp.multiply(a, w), axis=axis, dtype=dtype, keepdims=keepdims), scl)
    return (avg, scl) if returned else avg


def _count(shape: tuple, axis: Any) -> Any:
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return shape_product([shape[ax % len(shape)] for ax in axes])


@numpy_function("isclose")
def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tracer:
    """|a - b| <= atol + rtol * |b| where b is finite, or a == b; NaNs equal with `equal_nan`."""
    x, y = operand(a), operand(b)
    if isinstance(y, Tracer):
        y = convert(y, np.result_type(y.aval.dtype, 1.0))
    elif isinstance(b, (int, np.integer)) and not isinstance(b, bool):
        y = float(b)
    close = knp.less_equal(knp.abs(knp.subtract(x, y)), knp.add(atol, knp.multiply(rtol, knp.abs(y))))
    result = knp.logical_or(knp.logical_and(close, knp.isfinite(y)), knp.equal(x, y))
    if equal_nan:
        result = knp.logical_or(result, knp.logical_and(knp.isnan(x), knp.isnan(y)))
    return materialize(result)


@numpy_function("allclose")
def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tracer:
    return knp.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


@numpy_function("array_equal")
def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Tracer:
    """True when the shapes agree and every element is equal (NaNs equal with `equal_nan`)."""
    x, y = materialize(a1), materialize(a2)
    if x.aval.ndim != y.aval.ndim:
        return materialize(knp.asarray(False))
    same_shape: Any = True
    for dx, dy in zip(x.aval.shape, y.aval.shape):
        if is_static_dim(dx) and is_static_dim(dy):
            if dx != dy:
                return materialize(knp.asarray(False))
            continue
        same_shape = knp.logical_and(same_shape, knp.equal(dx, dy))
    if same_shape is True:
        return _all_equal(x, y, equal_nan)

    @cond(same_shape)
    def compare():
        return _all_equal(x, knp.reshape(y, x.aval.shape), equal_nan)

    @compare.otherwise
    def different():
        return materialize(knp.asarray(False))

    return compare()


def _all_equal(x: Tracer, y: Tracer, equal_nan: bool) -> Tracer:
    equal = knp.equal(x, y)
    if equal_nan and x.aval.dtype.kind in "fc" and y.aval.dtype.kind in "fc":
        equal = knp.logical_or(equal, knp.logical_and(knp.isnan(x), knp.isnan(y)))
    return knp.all(equal)


@numpy_function("sinc")
def sinc(x: Any) -> Tracer:
    """sin(pi x) / (pi x), 1 at 0 (computed as NumPy: x = 0 replaced by 1e-20)."""
    x = materialize(x)
    if x.aval.dtype.kind in "iub":
        x = convert(x, np.float64)
    y = knp.multiply(np.pi, knp.where(knp.equal(x, 0), convert(operand(1.0e-20), x.aval.dtype), x))
    return knp.divide(knp.sin(y), y)


@numpy_function("trapezoid")
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Tracer:
    """The trapezoidal rule along `axis`: sum(d * (y[1:] + y[:-1]) / 2)."""
    y = materialize(y)
    axis = axis % y.aval.ndim if y.aval.ndim else axis
    if x is None:
        d = dx
    else:
        x = materialize(x)
        d = knp.diff(x) if x.aval.ndim == 1 else knp.diff(x, axis=axis)
        if x.aval.ndim == 1 and y.aval.ndim > 1:
            shape = [1] * y.aval.ndim
            shape[axis] = d.aval.shape[0]
            d = knp.reshape(d, tuple(shape))
    before = (slice(None),) * axis
    upper, lower = y[before + (slice(1, None),)], y[before + (slice(None, -1),)]
    return knp.sum(knp.divide(knp.multiply(d, knp.add(upper, lower)), 2.0), axis=axis)
