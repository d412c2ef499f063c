"""Stage "jaxpr": cond results that are an outer array (or a view of one) on
some run-time path, kept current after writes to that array.

In: the traced branches of a cond and their results. Out: for each result,
per branch, a *recipe*: how the branch made its result from the arrays of
the enclosing scope (views of a captured array, through nested conds too;
scalars computed inside the branch become extra results of the cond). After
a write to such an array, the next read of the result (or of a view of it)
reads a *refresh*: a cond on the same predicates that remakes the view from
the array as it is now, or keeps the result in the branches that made a new
array (kiln.aliasing.Aliases.current_values; docs/mutation.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from kiln.aliasing import refreshing
from kiln.core import Literal
from kiln.loop_in_place import mark_run_time_alias
from kiln.primitives.shape import broadcast_in_dim_p
from kiln.tracing import Builder, Tracer, bind, current_builder, scope

# A recipe is an expression over the enclosing scope: a Literal, `Outer`,
# `Extra`, `View`, `Select`, or `RESULT` (the cond's own result, in a branch
# that made a new array).
RESULT = "result"


@dataclass(frozen=True)
class Outer:
    value: Tracer


@dataclass(frozen=True)
class Extra:
    index: int


@dataclass(frozen=True)
class View:
    prim: Any
    params: dict
    base: Any
    operands: tuple


@dataclass(frozen=True)
class Select:
    preds: tuple
    branches: tuple


class _Untranslatable(Exception):
    """The branch made its result in a way a refresh cannot remake."""


def _producer(builder: Builder, x: Tracer):
    return next(e for e in reversed(builder.eqns) if any(o is x for o in e.outvars))


class _Translator:
    """Expressions of one branch's values over the enclosing scope."""

    def __init__(self, builder: Builder, exported: list, branch: int):
        self.builder = builder
        self.exported = exported  # (branch, value) of each Extra
        self.branch = branch

    def export(self, value: Tracer) -> Extra:
        self.exported.append((self.branch, value))
        return Extra(len(self.exported) - 1)

    def value(self, x: Any) -> Any:
        if isinstance(x, Literal):
            return x
        source = self.builder.outer_source(x)
        if source is not None:
            return Outer(source)
        if id(x) in self.builder.aliases.view_steps:
            eqn = _producer(self.builder, x)
            return View(eqn.primitive, eqn.params, self.value(eqn.invars[0]),
                        tuple(self.value(o) for o in eqn.invars[1:]))
        if x.aval.ndim == 0:
            return self.export(x)
        raise _Untranslatable

    def result(self, out: Any, roots: list) -> Any:
        """The recipe of a branch result: RESULT when it aliases no outer array."""
        if not roots:
            return RESULT
        refresh = self.builder.aliases.refreshers.get(id(out))
        if refresh is not None:
            # A cond nested in this branch: its recipe, over this branch's values.
            return self._nested(refresh)
        return self.value(out)

    def _nested(self, inner: "Refresh") -> Select:
        def over(expr: Any) -> Any:
            if expr is RESULT:
                return RESULT
            if isinstance(expr, Outer):
                return self.value(expr.value)
            if isinstance(expr, Extra):
                return self.value(inner.extras[expr.index])
            if isinstance(expr, View):
                return View(expr.prim, expr.params, over(expr.base), tuple(over(o) for o in expr.operands))
            if isinstance(expr, Select):
                return Select(tuple(over(p) for p in expr.preds), tuple(over(b) for b in expr.branches))
            return expr

        return Select(tuple(self.value(p) for p in inner.preds), tuple(over(r) for r in inner.recipes))


def branch_recipes(traced: list, roots: list) -> tuple[list, list]:
    """Per result: the branches' recipes, or None when some branch returns
    an outer array in a way kiln cannot remake (`roots[k][b]`: the outer
    arrays result k of branch b may be). Also, per branch, the extra results
    the recipes read (a zero placeholder in the other branches)."""
    exported: list = []
    recipes: list = []
    for k, per_branch in enumerate(roots):
        if not any(per_branch):
            recipes.append(None)
            continue
        try:
            recipes.append([_Translator(builder, exported, b).result(outs[k], per_branch[b])
                            for b, (builder, outs, _) in enumerate(traced)])
        except _Untranslatable:
            recipes.append(None)
    extras: list = [[] for _ in traced]
    for b, (builder, _, _) in enumerate(traced):
        for owner, value in exported:
            if owner == b:
                extras[b].append(value)
                continue
            zero = Literal(np.zeros((), value.aval.dtype).item(), value.aval)
            with scope(builder):
                extras[b].append(bind(broadcast_in_dim_p, zero, shape=(), broadcast_dimensions=()))
    return recipes, extras


class Refresh:
    """The current value of a cond result `result` after writes: a cond on
    `preds` whose branches remake their views (`recipes`, reading `extras`,
    the cond's extra results) or keep the result."""

    def __init__(self, result: Tracer, preds: list, recipes: list, extras: list,
                 build_cond: Callable[[list, list], Tracer]):
        self.result, self.preds, self.recipes, self.extras = result, preds, recipes, extras
        self.build_cond = build_cond

    def _evaluate(self, expr: Any) -> Any:
        if expr is RESULT:
            return self.result
        if isinstance(expr, Outer):
            return expr.value
        if isinstance(expr, Extra):
            return self.extras[expr.index]
        if isinstance(expr, View):
            return bind(expr.prim, self._evaluate(expr.base), *(self._evaluate(o) for o in expr.operands),
                        **expr.params)
        if isinstance(expr, Select):
            return self.build_cond([_predicate(self._evaluate(p)) for p in expr.preds],
                                   [self._branch(b, shaped=False) for b in expr.branches])
        return expr

    def _branch(self, expr: Any, shaped: bool) -> Callable[[], Any]:
        from kiln.numpy._base import match_dims

        def run() -> Any:
            value = self._evaluate(expr)
            # The remade view has the result's sizes whenever this branch runs.
            return match_dims(value, self.result.aval.shape) if shaped else value

        return run

    def current_result(self) -> Tracer:
        with refreshing():
            return self.build_cond([_predicate(p) for p in self.preds],
                                   [self._branch(r, shaped=True) for r in self.recipes])

    def __call__(self, x: Tracer) -> Tracer:
        """The current value of `x`: the result, or a view of it (made in this
        scope or an enclosing one), read after a write."""
        steps = _views_from(current_builder(), x, self.result)
        value = self.current_result()
        for prim, params, operands in steps:
            value = bind(prim, value, *operands, **params)
        return value


def track_results(results: list, preds: list, recipes: list, extras: list, roots: list, where: str,
                  build_cond: Callable[[list, list], Tracer]) -> None:
    """Mark each cond result that may be an outer array (`roots[k][b]`, per
    branch) as such, with its refresh when every branch has a recipe."""
    for k, result in enumerate(results):
        refresh = Refresh(result, preds, recipes[k], extras, build_cond) if recipes[k] else None
        mark_run_time_alias(current_builder(), result, [r for rs in roots[k] for r in rs], where, refresh)


def _predicate(p: Any) -> Any:
    """A cond's predicate operand as `kiln.cond` takes it again."""
    return bool(p.val) if isinstance(p, Literal) else p


def _views_from(builder: Builder, x: Tracer, base: Tracer) -> list:
    """The view equations from `base` to `x` (through captures into nested
    scopes), outermost first, as (primitive, params, other operands)."""
    steps: list = []
    while x is not base and builder.lifted.get(id(base)) is not x:
        if id(x) in builder.aliases.view_steps:
            eqn = _producer(builder, x)
            steps.append((eqn.primitive, eqn.params, list(eqn.invars[1:])))
            x = eqn.invars[0]
            continue
        x, builder = builder.outer_source(x), builder.parent
    return steps[::-1]
