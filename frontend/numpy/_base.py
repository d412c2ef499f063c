"""Stage "jaxpr": the machinery under kiln.numpy — operands, NEP 50 dtype
promotion, dim arithmetic, broadcasting with run-time checks.

In: tracers, Python scalars, NumPy arrays.
Out: tracers of the current scope (via `bind`).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Sequence

import numpy as np

from kiln.core import (
    INDEX_DTYPE,
    KilnIndexError,
    SUPPORTED_DTYPES,
    KilnTypeError,
    KilnValueError,
    Literal,
    is_static_dim,
    same_dim,
)
from kiln.errors import CHECK_ERRORS, KilnOverflowError
from kiln.primitives import checks, elementwise, shape
from kiln.tracing import Tracer, as_operand, bind, literal
from kiln.numpy._bindings import knp

ArrayLike = Any


def is_traced(x: Any) -> bool:
    return isinstance(x, Tracer)


def canonical_dtype(dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in SUPPORTED_DTYPES:
        raise KilnTypeError(f"dtype {dt} is not supported by kiln; use one of "
                            + ", ".join(sorted(str(d) for d in SUPPORTED_DTYPES)))
    return dt


def operand(x: ArrayLike) -> Any:
    """A Tracer or Literal for `x`; lists and tuples become constants."""
    if isinstance(x, (list, tuple)):
        if any(is_traced(e) for e in _flatten(x)):
            return knp.stack([operand(e) for e in x])
        x = np.asarray(x)
    if isinstance(x, np.ndarray):
        canonical_dtype(x.dtype)
    return as_operand(x)


def _flatten(xs):
    for e in xs:
        if isinstance(e, (list, tuple)):
            yield from _flatten(e)
        else:
            yield e


# --------------------------------------------------------------------------
# dtypes (NEP 50: Python scalars are weak)


def _weak_stand_in(aval) -> Any:
    kind = aval.dtype.kind
    return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[kind]


def result_dtype(*operands: Any) -> tuple[np.dtype, bool]:
    """NumPy 2's result dtype of the operands, and whether it stays weak."""
    avals = [x.aval for x in operands]
    strong = [a.dtype for a in avals if not a.weak_type]
    weak = [_weak_stand_in(a) for a in avals if a.weak_type]
    if not strong:
        return np.result_type(*weak), True
    return np.result_type(*strong, *weak), False


def int_literal_fits(x: Any, dtype: np.dtype) -> bool:
    """False for a weak (Python) int literal outside `dtype`'s integer range."""
    if dtype.kind not in "iu" or not isinstance(x, Literal) or not x.aval.weak_type:
        return True
    if not isinstance(x.val, int) or isinstance(x.val, bool):
        return True
    info = np.iinfo(dtype)
    return info.min <= x.val <= info.max


def convert(x: Any, dtype: Any, weak_type: bool = False) -> Any:
    """`x` as `dtype`; literals convert in place, tracers through an equation."""
    dtype = np.dtype(dtype)
    x = operand(x)
    if x.aval.dtype == dtype and x.aval.weak_type == weak_type:
        return x
    if isinstance(x, Literal):
        if not int_literal_fits(x, dtype):
            raise KilnOverflowError(
                f"Python integer {x.val} out of bounds for {dtype} (NumPy 2 / NEP 50: a Python int takes the "
                "array's dtype); convert the array to a wider dtype first.")
        return Literal(np.array(x.val).astype(dtype)[()].item() if dtype.kind != "c" else complex(x.val),
                       x.aval.update(dtype=dtype, weak_type=weak_type))
    if x.aval.dtype == dtype:
        return x
    _check_weak_int_fits(x, dtype)
    return bind(elementwise.convert_element_type_p, x, new_dtype=dtype, weak_type=weak_type)


def _check_weak_int_fits(x: Tracer, dtype: np.dtype) -> None:
    """A traced Python int (an int argument, a loop index, a dim) meeting a
    narrower integer array must fit its dtype, as a Python int literal must
    (NEP 50): checked when the program runs, an OverflowError like NumPy's."""
    if not (x.aval.weak_type and x.aval.dtype.kind == "i" and dtype.kind in "iu"):
        return
    if dtype.kind == "i" and dtype.itemsize >= x.aval.dtype.itemsize:
        return
    info = np.iinfo(dtype)
    fits = knp.greater_equal(x, int(info.min))
    if info.max < np.iinfo(x.aval.dtype).max:
        fits = knp.logical_and(fits, knp.less_equal(x, int(info.max)))
    check(fits, "OverflowError", f"Python integer {{}} out of bounds for {dtype} (NumPy 2 / NEP 50: a Python "
          "int takes the array's dtype); convert the array to a wider dtype first.", x)


def promote(*xs: Any) -> list:
    ops = [operand(x) for x in xs]
    dtype, weak = result_dtype(*ops)
    return [convert(x, dtype, weak) for x in ops]


# --------------------------------------------------------------------------
# dims


def dim_operand(d: Any) -> Any:
    """A dim as a static int or an i64 scalar tracer."""
    if is_static_dim(d):
        return int(d)
    if isinstance(d, Tracer):
        if d.aval.shape != () or d.aval.dtype.kind not in "iu":
            raise KilnTypeError(f"a size must be an integer scalar, got a traced {d.aval.str_short()}")
        if d.aval.dtype != INDEX_DTYPE:
            return bind(elementwise.convert_element_type_p, d, new_dtype=INDEX_DTYPE)
        return d
    raise KilnTypeError(f"a size must be an int or a traced integer scalar, got {type(d).__name__}")


def split_shape(shape_: Sequence[Any]) -> tuple[tuple, list]:
    """(static shape with None for dynamic dims, list of dynamic dim tracers)."""
    static, dyn = [], []
    for d in shape_:
        d = dim_operand(d)
        if is_static_dim(d):
            if d < 0:
                raise KilnValueError(f"negative dimensions are not allowed (got {d})")
            static.append(d)
        else:
            static.append(None)
            dyn.append(d)
    return tuple(static), dyn


class _CheckSwitch(threading.local):
    """Whether `check` emits run-time checks in this thread's trace."""

    enabled = True


_check_switch = _CheckSwitch()


@contextlib.contextmanager
def runtime_checks_enabled(enabled: bool) -> Iterator[None]:
    """Trace with run-time checks on or off (`qjit(runtime_checks=...)`).
    Off, no `check` equation is emitted: a size mismatch or an index out of
    bounds is then undefined behaviour. Checks decided at trace time still
    raise."""
    previous = _check_switch.enabled
    _check_switch.enabled = enabled
    try:
        yield
    finally:
        _check_switch.enabled = previous


def check(pred: Any, kind: str, message: str, *values: Any) -> None:
    """Emit a run-time check: when `pred` is false, the call raises `kind`."""
    if isinstance(pred, (bool, np.bool_)):
        if not pred:
            raise CHECK_ERRORS[kind](message.format(*[v if is_static_dim(v) else "?" for v in values]))
        return
    if not _check_switch.enabled:
        return
    vals = [dim_operand(v) for v in values]
    bind(checks.check_p, pred, *vals, kind=kind, message=message)


def dims_equal(a: Any, b: Any) -> Any:
    if same_dim(a, b):
        return True
    if is_static_dim(a) and is_static_dim(b):
        return False
    return bind(elementwise.eq_p, operand(a) if not is_static_dim(a) else literal(int(a), INDEX_DTYPE),
                operand(b) if not is_static_dim(b) else literal(int(b), INDEX_DTYPE))


def require_equal_dims(a: Any, b: Any, kind: str, message: str) -> None:
    """Dims `a` and `b` must be equal: a trace-time error when both are
    static, else a run-time check (emitted once per pair and scope)."""
    if same_dim(a, b):
        return
    if is_static_dim(a) and is_static_dim(b):
        err = KilnValueError if kind == "ValueError" else KilnIndexError
        raise err(message.format(a, b))
    from kiln.tracing import current_builder

    proven = current_builder().proven_equal_dims
    key = frozenset((id(a), id(b)))
    if key in proven:
        return
    check(dims_equal(a, b), kind, message, a, b)
    proven.add(key)


def broadcast_shapes(shapes: Sequence[tuple], opname: str) -> tuple:
    """NumPy broadcasting, with run-time checks where dims are dynamic.

    Per axis the result is NumPy's rule: equal dims give that dim, a dim of 1
    gives the other. A dynamic dim that may be 1 at run time (a computed
    size; argument dims too unless size-1 dims are specialized) broadcasts
    when it is 1: the result is the other dim, or, when every dim of the
    axis may be 1, the run-time `select(a == 1, b, a)`. Each pair is checked
    at run time (NumPy's ValueError) and recorded, so `broadcast_to` knows
    the operand dim is 1 or the result dim.
    """
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    shapes_text = None  # the message's shapes, formatted once and only when a check needs them
    result = []
    for axis in range(ndim):
        dims = [s[axis] for s in padded]
        non_one = [d for d in dims if not (is_static_dim(d) and d == 1)]
        if not non_one:
            result.append(1)
            continue
        statics = sorted({int(d) for d in non_one if is_static_dim(d)})
        if len(statics) > 1:
            raise KilnValueError(
                f"{opname}: operands could not be broadcast together with shapes "
                + " ".join(_shape_str(s) for s in shapes)
                + f" (axis {axis - ndim}: sizes {statics[0]} and {statics[1]}); reshape an operand "
                "or index fewer dimensions."
            )
        # A dim that is never 1 (static, or an argument dim) decides the axis.
        fixed = [d for d in non_one if not may_be_unit(d)]
        chosen = statics[0] if statics else (fixed[0] if fixed else non_one[0])
        if all(same_dim(chosen, d) for d in non_one):
            result.append(chosen)  # what broadcast_dim gives for the same dim: no check, no message
            continue
        if shapes_text is None:
            shapes_text = " ".join(_shape_str(s) for s in shapes)
        message = (f"{opname}: operands could not be broadcast together with shapes {shapes_text}"
                   f" (axis {axis - ndim}: sizes {{}} and {{}}); reshape an operand or index fewer dimensions.")
        for d in non_one:
            chosen = broadcast_dim(chosen, d, message)
        result.append(chosen)
    return tuple(result)


def may_be_unit(d: Any) -> bool:
    """Whether dim `d` can be 1 when the program runs."""
    if is_static_dim(d):
        return d == 1
    from kiln.tracing import current_builder

    return current_builder().aliases.may_be_unit(d)


def broadcast_dim(a: Any, b: Any, message: str) -> Any:
    """The dim NumPy's broadcasting gives for dims `a` and `b` (neither a
    static 1), checked at run time; `message` takes the two sizes."""
    if same_dim(a, b):
        return a
    from kiln.tracing import current_builder

    builder = current_builder()
    if frozenset((id(a), id(b))) in builder.proven_equal_dims:
        return b if is_static_dim(b) else a
    unit_a, unit_b = may_be_unit(a), may_be_unit(b)
    if not (unit_a or unit_b):
        require_equal_dims(a, b, "ValueError", message)
        return b if is_static_dim(b) else a
    if unit_a and unit_b:
        ok = knp.logical_or(knp.equal(a, b), knp.logical_or(knp.equal(a, 1), knp.equal(b, 1)))
        check(ok, "ValueError", message, a, b)
        result = dim_operand(bind(elementwise.select_p, knp.equal(a, 1), operand(b), operand(a)))
        builder.proven_broadcast_dims.update({(id(a), id(result)), (id(b), id(result))})
        builder.broadcast_results[id(result)] = (a, b)
        return result
    unit, other = (a, b) if unit_a else (b, a)
    if (id(unit), id(other)) not in builder.proven_broadcast_dims:
        check(knp.logical_or(knp.equal(unit, other), knp.equal(unit, 1)), "ValueError", message, a, b)
        builder.proven_broadcast_dims.add((id(unit), id(other)))
    return other


def keep_carried_dims(name: str, carried: Sequence[Any], outs: list) -> list:
    """A loop body's results with their carried dims back where only
    broadcasting changed them: `acc + x[:m]` gives `select(c == 1, s, c)`
    for a carried dim `c` that may be 1. A loop keeps its carried sizes, so
    that dim must be `c` again (a run-time check; NumPy would let the array
    grow instead), and the result is retyped to `c`."""
    from kiln.tracing import current_builder

    made = current_builder().broadcast_results

    def made_from(d: Any, c: Any) -> bool:
        sources = made.get(id(d))
        return sources is not None and any(same_dim(s, c) or made_from(s, c) for s in sources)

    kept = []
    for k, (arg, out) in enumerate(zip(carried, outs)):
        dims, changed = list(out.aval.shape), False
        for axis, (c, d) in enumerate(zip(arg.aval.shape, out.aval.shape)):
            if out.aval.ndim != arg.aval.ndim or same_dim(c, d) or not made_from(d, c):
                continue
            changed = True
            require_equal_dims(c, d, "ValueError",
                               f"{name}: carried array {k} enters the loop with size {{}} on axis {axis} but "
                               "broadcasting in the body makes it size {}; a loop keeps the sizes of its carried "
                               "arrays (NumPy would let the array grow): give it its final size before the loop")
            dims[axis] = c
        kept.append(match_dims(out, dims) if changed else out)
    return kept


def _shape_str(s: tuple) -> str:
    return "(" + ",".join(str(d) if is_static_dim(d) else "?" for d in s) + ("," if len(s) == 1 else "") + ")"


def broadcast_to(x: Any, shape_: Sequence[Any], what: str = "broadcast_to") -> Any:
    """`x` broadcast to `shape_` as NumPy does. An operand dim that may be 1
    at run time and is not the target dim broadcasts when it is 1 (checked
    at run time unless `broadcast_shapes` already did): it is an `expanding`
    axis of the broadcast, which the compiler versions (kiln-legalize-dynamic)."""
    x = operand(x)
    shape_ = tuple(dim_operand(d) for d in shape_)
    xs = x.aval.shape
    if len(xs) == len(shape_) and all(same_dim(a, b) for a, b in zip(xs, shape_)):
        return x
    if len(xs) > len(shape_):
        raise KilnValueError(f"{what}: cannot broadcast {_shape_str(xs)} to a lower rank {_shape_str(shape_)}")
    from kiln.tracing import current_builder

    builder = current_builder()
    lead = len(shape_) - len(xs)
    expanding = []
    for i, d in enumerate(xs):
        target = shape_[lead + i]
        if same_dim(d, 1) or same_dim(d, target) or frozenset((id(d), id(target))) in builder.proven_equal_dims:
            continue
        if is_static_dim(d) and is_static_dim(target):
            raise KilnValueError(
                f"{what}: could not broadcast shape {_shape_str(xs)} to {_shape_str(shape_)} "
                f"(axis {i}: size {d} vs {target}); reshape the operand or give a compatible shape"
            )
        message = (f"{what}: could not broadcast shape {_shape_str(xs)} to {_shape_str(shape_)} "
                   f"(axis {i}: size {{}} vs {{}}); reshape the operand or give a compatible shape")
        if (id(d), id(target)) in builder.proven_broadcast_dims:
            expanding.append(i)
        elif may_be_unit(d) and not (is_static_dim(target) and target == 1):
            check(knp.logical_or(knp.equal(d, target), knp.equal(d, 1)), "ValueError", message, d, target)
            builder.proven_broadcast_dims.add((id(d), id(target)))
            expanding.append(i)
        else:
            require_equal_dims(d, target, "ValueError", message)
    x = match_dims(x, [d if same_dim(d, 1) or i in expanding else shape_[lead + i] for i, d in enumerate(xs)])
    if not expanding and len(xs) == len(shape_) and all(same_dim(a, b) for a, b in zip(x.aval.shape, shape_)):
        return x
    static, dyn = split_shape(shape_)
    params = {"expanding": tuple(expanding)} if expanding else {}
    return bind(shape.broadcast_in_dim_p, x, *dyn, shape=static,
                broadcast_dimensions=tuple(range(lead, len(shape_))), **params)


def materialize(x: Any) -> Any:
    """A tracer for `x`: a scalar literal becomes a 0-d array equation (what
    users receive must be an array, never a bare literal)."""
    x = operand(x)
    if not isinstance(x, Literal):
        return x
    return bind(shape.broadcast_in_dim_p, x, shape=(), broadcast_dimensions=())


def match_dims(x: Any, dims: Sequence[Any]) -> Any:
    """`x` with its dims replaced by `dims`, which run-time checks already
    proved equal to them (no-op when they are the same)."""
    if all(same_dim(a, b) for a, b in zip(x.aval.shape, dims)):
        return x
    static, dyn = split_shape(dims)
    return bind(shape.match_dims_p, x, *dyn, shape=static)


def shape_product(dims: Sequence[Any]) -> Any:
    """The number of elements of a shape: an int, or a traced i64. Factors
    of 1 are skipped, so the size of `(1, n)` is `n` itself and a reshape
    that only adds or drops unit dims needs no run-time check."""
    total: Any = 1
    for d in dims:
        if is_static_dim(total) and is_static_dim(d):
            total = int(total) * int(d)
        elif is_static_dim(d) and d == 1:
            continue
        elif is_static_dim(total) and total == 1:
            total = d
        else:
            total = total * d
    return total


def reshape_view(x: Any, sizes: Sequence[Any]) -> Tracer:
    """The reshape primitive: a view of `x` (callers ensure NumPy views too)."""
    static, dyn = split_shape(sizes)
    return bind(shape.reshape_p, x, *dyn, new_sizes=static)
