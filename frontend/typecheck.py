"""Stage "jaxpr": the typechecker every traced jaxpr goes through, and
dead-code elimination before it.

In: a `Jaxpr`.
Out: nothing, or `KilnInternalError` naming the equation whose types are
wrong: a var used before it is bound, a dim var not in scope, or outvar
types that disagree with the primitive's abstract-evaluation rule.
"""

from __future__ import annotations

import dataclasses

from kiln.core import Jaxpr, JaxprEqn, KilnInternalError, Literal, OutDBIdx, Var, is_static_dim, same_dim


def typecheck_jaxpr(jaxpr: Jaxpr) -> None:
    env: set[int] = set()

    def check_type(v: Var, where: str, also_ok: set[int] = frozenset()) -> None:
        for d in v.aval.shape:
            if is_static_dim(d):
                continue
            if not isinstance(d, Var) or (id(d) not in env and id(d) not in also_ok):
                raise KilnInternalError(f"{where}: dim {d!r} of {v!r} is not in scope")
            if d.aval.shape != () or d.aval.dtype.kind not in "iu":
                raise KilnInternalError(f"{where}: dim {d!r} of {v!r} is not an integer scalar")

    def bind(v: Var, where: str) -> None:
        if id(v) in env:
            raise KilnInternalError(f"{where}: {v!r} is bound twice")
        env.add(id(v))

    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        check_type(v, "binders")
        bind(v, "binders")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i} ({eqn.primitive.name})"
        for x in eqn.invars:
            if not isinstance(x, Literal) and id(x) not in env:
                raise KilnInternalError(f"{where}: operand {x!r} is not in scope")
        for value in eqn.params.values():
            for sub in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(sub, Jaxpr):
                    typecheck_jaxpr(sub)
        expected = eqn.primitive.abstract_eval(*eqn.invars, **eqn.params)
        if not eqn.primitive.multiple_results:
            expected = [expected]
        if len(expected) != len(eqn.outvars):
            raise KilnInternalError(f"{where}: rule gives {len(expected)} results, equation has {len(eqn.outvars)}")
        own = {id(v) for v in eqn.outvars}
        for v, aval in zip(eqn.outvars, expected):
            check_type(v, where, own)
            shape = tuple(eqn.outvars[d.val] if isinstance(d, OutDBIdx) else d for d in aval.shape)
            if v.aval.dtype != aval.dtype or len(shape) != v.aval.ndim or not all(
                    same_dim(a, b) for a, b in zip(shape, v.aval.shape)):
                raise KilnInternalError(
                    f"{where}: result {v!r} does not match the rule's type {aval.update(shape=shape)!r}")
        for v in eqn.outvars:
            bind(v, where)
    for v in jaxpr.outvars:
        if not isinstance(v, Literal) and id(v) not in env:
            raise KilnInternalError(f"output {v!r} is not in scope")


def has_effects(eqn) -> bool:
    """An effectful primitive, or one whose nested jaxprs have effects (a
    loop body that writes to an outer array)."""
    if eqn.primitive.effectful:
        return True
    for value in eqn.params.values():
        for sub in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(sub, Jaxpr) and any(has_effects(e) for e in sub.eqns):
                return True
    return False


def _without_unused_cond_results(eqn: JaxprEqn, live: set) -> JaxprEqn:
    """A cond whose explicit results are partly unused (values a refresh
    would read after a write that never came, kiln.branch_aliases) without
    them, in the equation and in every branch."""
    # With implicit dim results, each names the dims of an explicit one: keep all.
    if eqn.primitive.name != "cond" or eqn.params["num_implicit_outputs"]:
        return eqn
    keep = [i for i, v in enumerate(eqn.outvars) if id(v) in live]
    if len(keep) == len(eqn.outvars):
        return eqn
    branches = tuple(dataclasses.replace(b, outvars=[b.outvars[i] for i in keep],
                                         out_explicit=tuple(b.out_explicit[i] for i in keep) if b.out_explicit else ())
                     for b in eqn.params["branches"])
    return JaxprEqn(eqn.primitive, eqn.invars, [eqn.outvars[i] for i in keep], {**eqn.params, "branches": branches},
                    eqn.source_info)


def dead_code_elimination(jaxpr: Jaxpr) -> Jaxpr:
    """Drop equations whose results are unused and that have no effect."""
    live: set[int] = {id(v) for v in jaxpr.outvars if isinstance(v, Var)}
    for v in list(jaxpr.constvars) + list(jaxpr.invars) + list(jaxpr.outvars):
        live.update(id(d) for d in v.aval.shape if isinstance(d, Var))
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if has_effects(eqn) or any(id(v) in live for v in eqn.outvars):
            eqn = _without_unused_cond_results(eqn, live)
            kept.append(eqn)
            for x in eqn.invars:
                if isinstance(x, Var):
                    live.add(id(x))
                    live.update(id(d) for d in x.aval.shape if isinstance(d, Var))
            for v in eqn.outvars:
                live.update(id(d) for d in v.aval.shape if isinstance(d, Var))
            for value in eqn.params.values():
                for sub in value if isinstance(value, (list, tuple)) else (value,):
                    if isinstance(sub, Jaxpr):
                        dead_code_elimination(sub)
    jaxpr.eqns = list(reversed(kept))
    return jaxpr
