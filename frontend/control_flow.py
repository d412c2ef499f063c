"""Stage "jaxpr": structured control flow — `kiln.for_loop`, `kiln.while_loop`, `kiln.cond`.

In: Python functions for loop bodies, loop conditions and branches, called
on tracers inside a `@kiln.qjit` trace (or plainly in Python outside one).
Out: one `for_loop` / `while_loop` / `cond` equation whose bodies are nested
jaxprs traced once each in a child `Builder`; outer values they use become
captured constants (see `kiln.tracing.Builder.lift`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from kiln import tree
from kiln.core import (
    INDEX_DTYPE,
    DShapedArray,
    Jaxpr,
    KilnTypeError,
    KilnValueError,
    Literal,
    is_static_dim,
    same_dim,
)
from kiln.branch_aliases import branch_recipes, track_results
from kiln.carried_dims import unify_carried_dims
from kiln.loop_in_place import (
    check_in_place_slots,
    found_aliases,
    mark_aliased_slots,
    mark_loop_aliases,
    mark_zero_d_arrays,
    outer_arrays,
    same_array_slots,
    unchanged_results,
    with_in_place,
)
from kiln.primitives.control_flow import cond_p, for_loop_p, while_loop_p
from kiln.swapped_buffers import check_read_by_other_names, mark_swapped, swapped_slots
from kiln.tracing import Builder, Tracer, as_operand, bind, current_builder, is_tracing, literal, new_scope, scope
from kiln.unset_values import fill, placeholder_maker

# --------------------------------------------------------------------------
# Helpers shared by the loops


def _describe(aval: DShapedArray, names: dict) -> str:
    """`f64[3,d0]`: dynamic dims named by identity, so two shapes compare."""
    dims = []
    for d in aval.shape:
        if is_static_dim(d):
            dims.append(str(d))
        else:
            dims.append(names.setdefault(id(d), f"d{len(names)}"))
    return f"{aval.dtype}[{','.join(dims)}]"


def _index_operand(name: str, what: str, x: Any) -> Any:
    """A loop bound as an i64 scalar operand of the current scope."""
    from kiln.numpy._base import convert

    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer, Tracer)):
        raise KilnTypeError(f"{name}: {what} must be an integer (a Python int or a traced integer scalar), "
                            f"got {type(x).__name__}")
    if isinstance(x, Tracer):
        if x.aval.shape != () or x.aval.dtype.kind not in "iu":
            raise KilnTypeError(f"{name}: {what} must be an integer scalar, got a traced {x.aval.str_short()}")
        return convert(x, INDEX_DTYPE)
    return literal(int(x), INDEX_DTYPE)


class _Carry:
    """The flat carried values of a loop, as operands of the enclosing scope."""

    def __init__(self, name: str, init: tuple):
        self.name = name
        self.values = tuple(init)
        leaves, self.tree = tree.flatten(tuple(init))
        self.count = len(init)
        self.inits = []
        for k, x in enumerate(leaves):
            try:
                self.inits.append(as_operand(x))
            except KilnTypeError:
                raise KilnTypeError(f"{name}: initial value {k} is a {type(x).__name__}; carried values must be "
                                    "arrays or scalars") from None

    def fill_unset(self, out: tuple, body: Builder, outer: Builder) -> bool:
        """Initial values that are UNSET where the body returns a value become
        placeholders of its type (kiln.unset_values); False when none do."""
        with scope(outer):
            values = fill(self.values, [out], placeholder_maker([body]))
            if tree.flatten(values)[1] == self.tree:
                return False
            self.__init__(self.name, values)
        return True

    def unflatten(self, leaves: list) -> Any:
        values = tree.unflatten(self.tree, leaves)
        if self.count == 0:
            return None
        return values[0] if self.count == 1 else values


class _Body:
    """One traced loop body (or loop condition) in its own child Builder."""

    def __init__(self, builder: Builder, implicit: list, index: Tracer | None, carried: list):
        self.builder = builder
        self.implicit = implicit
        self.index = index
        self.carried = carried


def _open_body(carried_avals: list, resizing: bool, with_index: bool) -> tuple[scope, _Body]:
    """A child scope whose arguments are the loop's implicit dims, index and carried values."""
    ctx = new_scope()
    b = ctx.builder
    implicit: list = []
    shapes = []
    for aval in carried_avals:
        if resizing:
            dims = [b.new_arg(DShapedArray((), INDEX_DTYPE), explicit=False) for _ in aval.shape]
            implicit.extend(dims)
            shapes.append(tuple(dims))
        else:
            shapes.append(tuple(d if is_static_dim(d) else b.lift(d) for d in aval.shape))
    index = b.new_arg(DShapedArray((), INDEX_DTYPE, weak_type=True)) if with_index else None
    carried = [b.new_arg(aval.update(shape=shape)) for aval, shape in zip(carried_avals, shapes)]
    return ctx, _Body(b, implicit, index, carried)


def _implicit_inits(carried_inits: list) -> list:
    """Resizing mode: each dim of each carried value, as an i64 operand."""
    dims = []
    for x in carried_inits:
        for d in x.aval.shape:
            dims.append(literal(int(d), INDEX_DTYPE) if is_static_dim(d) else d)
    return dims


# `allow_array_resizing=INFER` (what autograph passes): keep the carried dims
# when the body keeps them, unify a dim the body replaces by another dim of
# the enclosing scope (equal at run time, else NumPy would fail on the next
# iteration) with a run-time check, and let the arrays resize otherwise.
INFER = "infer"


def _trace_body(carry: _Carry, fn: Callable, resizing: bool | str,
                with_index: bool) -> tuple[Jaxpr, list, list, bool, dict, dict]:
    """Trace `fn` on the carried avals: again when a weakly typed initial
    value has to be promoted to the type the body returns, when the body
    returns a carried array unchanged (see `kiln.loop_in_place.same_array_slots`), or, with
    INFER, when the carried arrays turn out to resize.

    Returns the body jaxpr, its captured outer values, the carried initial
    values (possibly promoted), whether the loop resizes its arrays, and the
    slots the body uses in place: slot -> the outer array the body reads and
    writes directly (those slots are not carried: the loop's result for them
    is that array, as in NumPy), the outer arrays the body may return per
    slot, and the slots whose written arrays the body swaps (slot -> the
    array it starts from; `kiln.swapped_buffers`)."""
    from kiln.numpy._base import convert, keep_carried_dims, result_dtype

    name = carry.name
    inits = list(carry.inits)
    infer = resizing == INFER
    resizing = bool(resizing) and not infer
    in_place: dict[int, Any] = {}
    # Slot -> the outer arrays the body may return for it (so the next
    # iteration's carried value may be one of them).
    aliased: dict[int, list] = {}
    outer = current_builder()
    where = outer.user_line()
    for _attempt in range(5 + 2 * len(inits)):
        carried_slots = [k for k in range(len(inits)) if k not in in_place]
        ctx, body = _open_body([inits[k].aval for k in carried_slots], resizing, with_index)
        mark_zero_d_arrays(body, [inits[k] for k in carried_slots])
        with ctx:
            mark_aliased_slots(body, carried_slots, aliased, where)
            params = dict(in_place)
            params.update(zip(carried_slots, body.carried))
            args = tree.unflatten(carry.tree, [params[k] for k in range(len(inits))])
            out = fn(body.index, *args) if with_index else fn(*args)
            if carry.count == 1:
                out = (out,)
            elif carry.count == 0 and out is None:
                out = ()
            leaves, out_tree = tree.flatten(out if isinstance(out, tuple) else (out,))
            if out_tree != carry.tree and isinstance(out, tuple) and carry.fill_unset(out, body.builder, outer):
                inits, aliased = list(carry.inits), {}
                continue
            if out_tree != carry.tree or not isinstance(out, tuple):
                raise KilnTypeError(
                    f"{name}: the body must return the carried values with the structure of the initial "
                    f"values ({carry.count} value(s)), but it returned {_structure(out)}")
            check_in_place_slots(name, body.builder, in_place, leaves)
            outs = [as_operand(leaves[k]) for k in carried_slots]
            slot_inits = [inits[k] for k in carried_slots]
            promoted = []
            for k, o, init in zip(carried_slots, outs, slot_inits):
                if o.aval.dtype == init.aval.dtype:
                    continue
                dtype, weak = result_dtype(init, o)
                if dtype == init.aval.dtype and o.aval.weak_type:
                    continue
                if not init.aval.weak_type:
                    raise KilnTypeError(
                        f"{name}: carried value {k} enters the loop as {init.aval.dtype} but the body returns "
                        f"{o.aval.dtype}; a loop keeps the dtype of its carried values, so cast the result "
                        f"(.astype({init.aval.dtype})) or the initial value")
                promoted.append((k, dtype, weak))
            if not promoted:
                swapped = swapped_slots(body, carried_slots, outs, slot_inits, outer)
                same = same_array_slots(name, body, carried_slots, outs, slot_inits, swapped)
                if same:
                    in_place.update({k: inits[k] for k in same})
                    continue
                if found_aliases(body.builder, carried_slots, outs, aliased):
                    continue
                outs = [convert(o, init.aval.dtype, init.aval.weak_type) if o.aval.dtype != init.aval.dtype else o
                        for o, init in zip(outs, slot_inits)]
                if not resizing:
                    outs = keep_carried_dims(name, body.carried, outs)
                if infer and not resizing:
                    unified = unify_carried_dims(name, body, outs)
                    if unified is None:
                        resizing = True
                        continue
                    outs = unified
                _check_shapes(name, slot_inits, body.carried, outs, resizing, carried_slots)
                implicit_outs = []
                if resizing:
                    for o in outs:
                        implicit_outs.extend(literal(int(d), INDEX_DTYPE) if is_static_dim(d) else d
                                             for d in o.aval.shape)
                check_read_by_other_names(name, body, swapped)
                jaxpr = body.builder.build(implicit_outs + outs,
                                           [False] * len(implicit_outs) + [True] * len(outs))
                return jaxpr, list(body.builder.const_sources), slot_inits, resizing, in_place, aliased, swapped
        # Promote the weak initial values in the enclosing scope, then retrace.
        for k, dtype, weak in promoted:
            inits[k] = convert(inits[k], dtype, weak)
    raise KilnTypeError(f"{name}: the carried dtypes do not settle; give the initial values explicit dtypes")


def _structure(out: Any) -> str:
    if out is None:
        return "None"
    if isinstance(out, tuple):
        return f"a tuple of {len(out)}"
    return f"one {type(out).__name__}"


def _check_shapes(name: str, inits: list, carried: list, outs: list, resizing: bool, slots: list) -> None:
    for k, init, arg, out in zip(slots, inits, carried, outs):
        if out.aval.ndim != arg.aval.ndim:
            names: dict = {}
            raise KilnValueError(
                f"{name}: carried value {k} enters the loop with shape {_describe(init.aval, names)} but the "
                f"body returns shape {_describe(out.aval, names)}; a loop cannot change the rank of a "
                "carried array")
        if resizing:
            continue
        if not all(same_dim(a, b) for a, b in zip(arg.aval.shape, out.aval.shape)):
            names = {}
            entry = _describe(arg.aval, names)
            raise KilnValueError(
                f"{name}: carried value {k} enters the loop with shape {entry} but the body returns shape "
                f"{_describe(out.aval, names)}; a loop must keep the shapes of its carried arrays. Pass "
                "allow_array_resizing=True to let them change size between iterations.")


# --------------------------------------------------------------------------
# for_loop


def for_loop(lower: Any, upper: Any, step: Any, allow_array_resizing: bool = False) -> Callable:
    """A counted loop `for i in range(lower, upper, step)` carrying values.

    The decorated `body(i, *carried)` returns the next carried values; the
    resulting function takes the initial values and returns the final ones
    (one value when one is carried, a tuple otherwise).

    >>> @kiln.qjit
    ... def times(x, n):
    ...     @kiln.for_loop(0, n, 1)
    ...     def loop(i, acc):
    ...         return acc + x
    ...     return loop(knp.zeros_like(x))
    """

    def decorator(body: Callable) -> Callable:
        def loop(*init: Any) -> Any:
            if not is_tracing():
                return _eager_for(lower, upper, step, body, init)
            return _traced_for(lower, upper, step, allow_array_resizing, body, init)

        loop.__name__ = getattr(body, "__name__", "loop")
        loop.__doc__ = body.__doc__
        return loop

    return decorator


def _eager_for(lower, upper, step, body, init):
    if step == 0:
        raise KilnValueError("for_loop: step must not be zero")
    carried = tuple(init)
    for i in range(lower, upper, step):
        out = body(i, *carried)
        carried = (out,) if len(init) == 1 else (() if out is None else tuple(out))
    if not init:
        return None
    return carried[0] if len(init) == 1 else carried


def _traced_for(lower, upper, step, resizing, body, init):
    from kiln.numpy._base import check

    lower = _index_operand("for_loop", "lower", lower)
    upper = _index_operand("for_loop", "upper", upper)
    step = _index_operand("for_loop", "step", step)
    if isinstance(step, Literal):
        if step.val == 0:
            raise KilnValueError("for_loop: step must not be zero (it would loop forever)")
    else:
        from kiln.numpy._bindings import knp

        check(knp.not_equal(step, 0), "ValueError", "for_loop: step must not be zero (it would loop forever)")
    carry = _Carry("for_loop", init)
    jaxpr, consts, inits, resizing, in_place, aliased, swapped = _trace_body(carry, body, resizing, with_index=True)
    implicit = _implicit_inits(inits) if resizing else []
    outs = bind(for_loop_p, *consts, lower, upper, step, *implicit, *inits,
                body_jaxpr=jaxpr, body_nconsts=len(consts), num_implicit_inputs=len(implicit),
                num_implicit_outputs=len(implicit), preserve_dimensions=not resizing)
    results = with_in_place(outs[len(implicit):], in_place)
    mark_loop_aliases(results, aliased, current_builder().user_line())
    mark_swapped(current_builder(), swapped, current_builder().user_line())
    return carry.unflatten(results)


# --------------------------------------------------------------------------
# while_loop


def while_loop(cond_fn: Callable, allow_array_resizing: bool = False) -> Callable:
    """A loop that runs `body` while `cond_fn(*carried)` is true.

    >>> @kiln.while_loop(lambda x, n: n < 10)
    ... def loop(x, n):
    ...     return x * 2, n + 1
    >>> x, n = loop(x0, 0)
    """

    def decorator(body: Callable) -> Callable:
        def loop(*init: Any) -> Any:
            if not is_tracing():
                return _eager_while(cond_fn, body, init)
            return _traced_while(cond_fn, allow_array_resizing, body, init)

        loop.__name__ = getattr(body, "__name__", "loop")
        loop.__doc__ = body.__doc__
        return loop

    return decorator


def _eager_while(cond_fn, body, init):
    carried = tuple(init)
    while cond_fn(*carried):
        out = body(*carried)
        carried = (out,) if len(init) == 1 else (() if out is None else tuple(out))
    if not init:
        return None
    return carried[0] if len(init) == 1 else carried


def _traced_while(cond_fn, resizing, body, init):
    carry = _Carry("while_loop", init)
    body_jaxpr, body_consts, inits, resizing, in_place, aliased, swapped = _trace_body(carry, body, resizing, False)
    ctx, cond_body = _open_body([x.aval for x in inits], resizing, with_index=False)
    with ctx:
        pred = cond_fn(*tree.unflatten(carry.tree, with_in_place(cond_body.carried, in_place)))
        pred = _predicate("while_loop", "the condition", pred)
        cond_jaxpr = cond_body.builder.build([pred])
    cond_consts = list(cond_body.builder.const_sources)
    implicit = _implicit_inits(inits) if resizing else []
    outs = bind(while_loop_p, *cond_consts, *body_consts, *implicit, *inits,
                cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=len(cond_consts),
                body_nconsts=len(body_consts), num_implicit_inputs=len(implicit),
                num_implicit_outputs=len(implicit), preserve_dimensions=not resizing)
    results = with_in_place(outs[len(implicit):], in_place)
    mark_loop_aliases(results, aliased, current_builder().user_line())
    mark_swapped(current_builder(), swapped, current_builder().user_line())
    return carry.unflatten(results)


def _predicate(name: str, what: str, pred: Any) -> Any:
    """A bool scalar operand of the current scope, or a TypeError."""
    if isinstance(pred, (bool, np.bool_)) or (isinstance(pred, np.ndarray) and pred.shape == ()
                                              and pred.dtype == np.bool_):
        return literal(bool(pred), np.bool_)
    if isinstance(pred, Tracer) and pred.aval.shape == () and pred.aval.dtype == np.bool_:
        return as_operand(pred)
    got = pred.aval.str_short() if isinstance(pred, Tracer) else f"a {type(pred).__name__}"
    raise KilnTypeError(f"{name}: {what} must be a bool scalar, got {got}; compare values (x > 0) or "
                        "reduce arrays (knp.all) to get one")


# --------------------------------------------------------------------------
# cond


class _Cond:
    """The chain built by `cond(pred)`, `.else_if(pred)` and `.otherwise`."""

    def __init__(self, pred: Any, branch: Callable):
        self.preds = [pred]
        self.branches = [branch]
        self.default: Callable | None = None

    def else_if(self, pred: Any) -> Callable[[Callable], "_Cond"]:
        _check_pred_kind(pred)

        def decorator(branch: Callable) -> "_Cond":
            self.preds.append(pred)
            self.branches.append(branch)
            return self

        return decorator

    def otherwise(self, branch: Callable) -> "_Cond":
        self.default = branch
        return self

    def __call__(self) -> Any:
        if not is_tracing():
            for pred, branch in zip(self.preds, self.branches):
                if pred:
                    return branch()
            return self.default() if self.default is not None else None
        return _traced_cond(self.preds, self.branches + [self.default or (lambda: None)],
                            has_default=self.default is not None)


def _check_pred_kind(pred: Any) -> None:
    if isinstance(pred, (bool, np.bool_)):
        return
    if isinstance(pred, Tracer):
        if pred.aval.shape == () and pred.aval.dtype == np.bool_:
            return
        raise KilnTypeError(f"cond: the predicate must be a bool scalar, got a traced {pred.aval.str_short()}; "
                            "compare values (x > 0) or reduce arrays (knp.all) to get one")
    if isinstance(pred, np.ndarray) and pred.shape == () and pred.dtype == np.bool_:
        return
    raise KilnTypeError(f"cond: the predicate must be a bool scalar, got a {type(pred).__name__}; compare "
                        "values (x > 0) to get one")


def cond(pred: Any) -> Callable[[Callable], _Cond]:
    """If / else-if / else on traced predicates. Branches take no arguments
    (they capture what they use) and return matching values.

    >>> @kiln.cond(x > 0)
    ... def sign():
    ...     return 1.0
    ... @sign.else_if(x < 0)
    ... def _():
    ...     return -1.0
    ... @sign.otherwise
    ... def _():
    ...     return 0.0
    >>> s = sign()
    """
    _check_pred_kind(pred)

    def decorator(branch: Callable) -> _Cond:
        return _Cond(pred, branch)

    return decorator


def _traced_cond(preds: list, fns: list, has_default: bool, track_aliases: bool = True) -> Any:
    from kiln.numpy._base import convert, result_dtype

    where = current_builder().user_line()
    pred_ops = [_predicate("cond", "the predicate", p) for p in preds]
    traced, outs = [], []
    for fn in fns:
        with new_scope() as builder:
            outs.append((builder, fn()))
    for b, (builder, out) in enumerate(outs):
        with scope(builder):
            out = fill(out, [o for i, (_, o) in enumerate(outs) if i != b], placeholder_maker([o[0] for o in outs]))
            leaves, out_tree = tree.flatten(out)
            traced.append((builder, [as_operand(x) for x in leaves], out_tree))
    if not has_default and any(t[2] != ("none",) for t in traced):
        raise KilnTypeError("cond: branches of a cond without .otherwise must return nothing (None); add an "
                            ".otherwise branch to return values")
    first_tree = traced[0][2]
    for b, (_, outs, out_tree) in enumerate(traced[1:], start=1):
        if out_tree != first_tree:
            raise KilnTypeError(f"cond: branch {b} returns a different structure ({len(outs)} value(s), "
                                f"{out_tree}) than branch 0 ({len(traced[0][1])} value(s), {first_tree})")
    count = len(traced[0][1])
    for k in range(count):
        values = [t[1][k] for t in traced]
        ranks = {v.aval.ndim for v in values}
        if len(ranks) > 1:
            names: dict = {}
            shapes = ", ".join(f"branch {b}: {_describe(v.aval, names)}" for b, v in enumerate(values))
            raise KilnValueError(f"cond: result {k} has different ranks in different branches ({shapes}); "
                                 "branches must return arrays of the same rank")
        dtypes = {v.aval.dtype for v in values}
        if len(dtypes) == 1:
            continue
        dtype, weak = result_dtype(*values)
        for b, v in enumerate(values):
            if v.aval.dtype != dtype and not v.aval.weak_type:
                listing = ", ".join(f"branch {i}: {w.aval.dtype}" for i, w in enumerate(values))
                raise KilnTypeError(f"cond: result {k} has different dtypes in different branches ({listing}); "
                                    "cast the results to one dtype")
        for builder, outs, _ in traced:
            with scope(builder):
                outs[k] = convert(outs[k], dtype, weak)
    consts = _unify_consts([t[0] for t in traced])
    const_index = {id(c): i for i, c in enumerate(consts)}
    unchanged = unchanged_results(traced, count)
    results_of = [k for k in range(count) if k not in unchanged]
    traced = [(builder, [outs[k] for k in results_of], out_tree) for builder, outs, out_tree in traced]
    implicit_outs: list[list] = [[] for _ in traced]
    for k in range(len(results_of)):
        for axis in range(traced[0][1][k].aval.ndim):
            kinds = set()
            for b, (builder, outs, _) in enumerate(traced):
                kinds.add(_dim_kind(builder, outs[k].aval.shape[axis], const_index, b))
            if len(kinds) == 1 and next(iter(kinds))[0] != "internal":
                continue
            for b, (builder, outs, _) in enumerate(traced):
                d = outs[k].aval.shape[axis]
                implicit_outs[b].append(literal(int(d), INDEX_DTYPE) if is_static_dim(d) else d)
    roots = [[outer_arrays(builder, outs[k]) for builder, outs, _ in traced] for k in range(len(results_of))]
    recipes, extras = branch_recipes(traced, roots) if track_aliases else ([], [[] for _ in traced])
    branches = []
    for (builder, outs, _), implicit, extra in zip(traced, implicit_outs, extras):
        with scope(builder):
            branches.append(builder.build(implicit + outs + extra,
                                          [False] * len(implicit) + [True] * (len(outs) + len(extra))))
    num_implicit = len(implicit_outs[0])
    results = bind(cond_p, *pred_ops, *consts, branches=tuple(branches), num_implicit_inputs=0,
                   num_implicit_outputs=num_implicit, preserve_dimensions=num_implicit == 0)
    user_results = results[num_implicit:num_implicit + len(results_of)]
    if track_aliases:
        track_results(user_results, pred_ops, recipes, results[num_implicit + len(results_of):], roots, where,
                      functools.partial(_traced_cond, has_default=True, track_aliases=False))
    values = iter(user_results)
    return tree.unflatten(first_tree, [unchanged[k] if k in unchanged else next(values) for k in range(count)])


def _dim_kind(builder: Builder, d: Any, const_index: dict, branch: int) -> tuple:
    if is_static_dim(d):
        return ("static", int(d))
    for inner, source in zip(builder.constvars, builder.const_sources):
        if inner is d:
            return ("const", const_index[id(source)])
    return ("internal", branch)


def _unify_consts(builders: Sequence[Builder]) -> list:
    """Give every branch the same captured values, in one order (dims
    before the arrays that use them); returns the outer values."""
    union: list = []
    seen: set = set()
    for b in builders:
        for source in b.const_sources:
            if id(source) not in seen:
                seen.add(id(source))
                union.append(source)
    order = {id(s): i for i, s in enumerate(union)}
    for b in builders:
        for source in union:
            b.lift(source)
        pairs = sorted(zip(b.const_sources, b.constvars), key=lambda p: order[id(p[0])])
        b.const_sources = [s for s, _ in pairs]
        b.constvars = [c for _, c in pairs]
    return union
