"""Stage "jaxpr": structured control flow primitives (for_loop, while_loop, cond).

In: captured constants, loop bounds or predicates, implicit dim values and
carried values as operands; the bodies as nested jaxprs in the params.
Out: the implicit dims of the results first, then the carried/branch results.

Operand layouts (the nested jaxprs' binders follow the same order):

    for_loop   consts[body_nconsts] lower upper step implicit[n] carried[m]
               body_jaxpr binders: consts ; implicit i carried -> implicit' carried'
    while_loop cond_consts body_consts implicit[n] carried[m]
               cond_jaxpr binders: consts ; implicit carried -> bool[]
               body_jaxpr binders: consts ; implicit carried -> implicit' carried'
    cond       preds[len(branches)-1] consts
               each branch: consts ; . -> implicit_outs outs

With `preserve_dimensions=True` (no array resizing) the loop has no implicit
values: the carried arrays' dims are captured constants, so the results have
exactly the dims of the initial values. Otherwise every dim of a carried
array is a loop-carried i64 value, and the results' dims are the loop's
implicit outputs (`OutDBIdx`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kiln.core import (
    INDEX_DTYPE,
    DShapedArray,
    Jaxpr,
    KilnInternalError,
    OutDBIdx,
    Primitive,
    is_static_dim,
    same_dim,
)

for_loop_p = Primitive("for_loop", multiple_results=True)
while_loop_p = Primitive("while_loop", multiple_results=True)
cond_p = Primitive("cond", multiple_results=True)


def _require_index_scalar(name: str, x: Any, what: str) -> None:
    if x.aval.shape != () or x.aval.dtype.kind not in "iu":
        raise KilnInternalError(f"{name}: {what} must be an integer scalar, got {x.aval.str_short()}")


def _loop_result_avals(name: str, jaxpr: Jaxpr, nconsts: int, consts: Sequence[Any], first_carried: int,
                       num_implicit: int, inits: Sequence[Any], preserve_dimensions: bool) -> list:
    """The result avals of a loop from its body's binder types.

    `first_carried` is the position of the first carried value among the
    body's invars (after the implicit dims and, for for_loop, the index).
    """
    in_type = jaxpr.in_type
    if len(jaxpr.constvars) != nconsts:
        raise KilnInternalError(f"{name}: body has {len(jaxpr.constvars)} constvars, nconsts={nconsts}")
    carried_types = [aval for aval, _ in in_type[nconsts + first_carried:]]
    implicit_inits, carried_inits = inits[:num_implicit], inits[num_implicit:]
    if len(carried_types) != len(carried_inits):
        raise KilnInternalError(f"{name}: body takes {len(carried_types)} carried values, got {len(carried_inits)}")
    for init in implicit_inits:
        _require_index_scalar(name, init, "an implicit dim")
    out_avals: list = [DShapedArray((), INDEX_DTYPE) for _ in range(num_implicit)]
    for k, (aval, init) in enumerate(zip(carried_types, carried_inits)):
        shape = []
        for axis, d in enumerate(aval.shape):
            if is_static_dim(d):
                shape.append(d)
                continue
            binder = d.val
            if binder < nconsts:
                if not preserve_dimensions:
                    raise KilnInternalError(f"{name}: carried value {k} has a captured dim in resizing mode")
                shape.append(consts[binder])
            else:
                j = binder - nconsts
                if preserve_dimensions or j >= num_implicit:
                    raise KilnInternalError(f"{name}: carried value {k} axis {axis} has dim {d}")
                shape.append(OutDBIdx(j))
        if init.aval.dtype != aval.dtype or init.aval.ndim != aval.ndim:
            raise KilnInternalError(f"{name}: initial value {k} is {init.aval.str_short()}, body takes "
                                    f"{aval.str_short()}")
        if preserve_dimensions and not all(same_dim(a, b) for a, b in zip(init.aval.shape, shape)):
            raise KilnInternalError(f"{name}: initial value {k} dims {init.aval.shape} differ from {shape}")
        out_avals.append(DShapedArray(shape, aval.dtype, aval.weak_type))
    _check_body_outputs(name, jaxpr, first_carried, num_implicit, carried_types, preserve_dimensions)
    return out_avals


def _check_body_outputs(name: str, jaxpr: Jaxpr, first_carried: int, num_implicit: int,
                        carried_types: list, preserve_dimensions: bool) -> None:
    # Dims are compared as the body's own vars: an out_type would name a dim
    # that is also returned (a captured size carried as a value) as OutDBIdx.
    outvars = jaxpr.outvars
    if len(outvars) != num_implicit + len(carried_types):
        raise KilnInternalError(f"{name}: body returns {len(outvars)} values, expected "
                                f"{num_implicit + len(carried_types)}")
    for v in outvars[:num_implicit]:
        if v.aval.shape != () or v.aval.dtype != INDEX_DTYPE:
            raise KilnInternalError(f"{name}: implicit body output {v.aval.str_short()} is not an i64 scalar")
    carried_vars = list(jaxpr.invars)[first_carried:]
    for k, (out, arg) in enumerate(zip(outvars[num_implicit:], carried_vars)):
        if out.aval.dtype != arg.aval.dtype or out.aval.ndim != arg.aval.ndim:
            raise KilnInternalError(f"{name}: body result {k} is {out.aval.str_short()}, carried "
                                    f"{arg.aval.str_short()}")
        if preserve_dimensions and not all(same_dim(a, b) for a, b in zip(out.aval.shape, arg.aval.shape)):
            raise KilnInternalError(f"{name}: body result {k} {out.aval.str_short()} changes the carried dims "
                                    f"{arg.aval.str_short()}")


@for_loop_p.def_abstract_eval
def _for_loop_rule(*operands, body_jaxpr, body_nconsts, num_implicit_inputs, num_implicit_outputs,
                   preserve_dimensions):
    consts = operands[:body_nconsts]
    lower, upper, step = operands[body_nconsts:body_nconsts + 3]
    for what, x in (("lower", lower), ("upper", upper), ("step", step)):
        _require_index_scalar("for_loop", x, what)
    if num_implicit_inputs != num_implicit_outputs:
        raise KilnInternalError("for_loop: implicit inputs and outputs must pair up")
    index_type = body_jaxpr.invars[num_implicit_inputs].aval
    if index_type.shape != () or index_type.dtype != INDEX_DTYPE:
        raise KilnInternalError(f"for_loop: the body's index is {index_type.str_short()}, not i64[]")
    inits = operands[body_nconsts + 3:]
    return _loop_result_avals("for_loop", body_jaxpr, body_nconsts, consts, num_implicit_inputs + 1,
                              num_implicit_inputs, inits, preserve_dimensions)


@while_loop_p.def_abstract_eval
def _while_loop_rule(*operands, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, num_implicit_inputs,
                     num_implicit_outputs, preserve_dimensions):
    if num_implicit_inputs != num_implicit_outputs:
        raise KilnInternalError("while_loop: implicit inputs and outputs must pair up")
    cond_out = cond_jaxpr.out_type
    if len(cond_out) != 1 or cond_out[0][0].shape != () or cond_out[0][0].dtype != np.bool_:
        raise KilnInternalError("while_loop: the condition must return one bool scalar")
    if len(cond_jaxpr.invars) != len(body_jaxpr.invars):
        raise KilnInternalError("while_loop: condition and body take different values")
    body_consts = operands[cond_nconsts:cond_nconsts + body_nconsts]
    inits = operands[cond_nconsts + body_nconsts:]
    return _loop_result_avals("while_loop", body_jaxpr, body_nconsts, body_consts, num_implicit_inputs,
                              num_implicit_inputs, inits, preserve_dimensions)


def cond_result_dims(branches: Sequence[Jaxpr], num_implicit_outputs: int) -> list[list]:
    """For each explicit result, its dims: a static int, ("const", k) for
    captured constant k when every branch agrees, or OutDBIdx(j) for the
    next implicit output when branches differ. The frontend builds branch
    outputs with the same rule, so this is the cond's result type."""
    outs = [list(b.outvars)[num_implicit_outputs:] for b in branches]
    const_positions = [{id(c): k for k, c in enumerate(b.constvars)} for b in branches]
    result = []
    next_implicit = 0
    for position in range(len(outs[0])):
        dims = []
        for axis in range(outs[0][position].aval.ndim):
            seen = set()
            for b, branch_outs in enumerate(outs):
                d = branch_outs[position].aval.shape[axis]
                if is_static_dim(d):
                    seen.add(("static", int(d)))
                elif id(d) in const_positions[b]:
                    seen.add(("const", const_positions[b][id(d)]))
                else:
                    seen.add(("internal", b))
            if len(seen) == 1 and next(iter(seen))[0] != "internal":
                kind, value = next(iter(seen))
                dims.append(value if kind == "static" else ("const", value))
            else:
                dims.append(OutDBIdx(next_implicit))
                next_implicit += 1
        result.append(dims)
    if next_implicit != num_implicit_outputs:
        raise KilnInternalError(f"cond: branches need {next_implicit} implicit outputs, "
                                f"num_implicit_outputs={num_implicit_outputs}")
    return result


@cond_p.def_abstract_eval
def _cond_rule(*operands, branches, num_implicit_inputs, num_implicit_outputs, preserve_dimensions):
    num_preds = len(branches) - 1
    preds, consts = operands[:num_preds], operands[num_preds:]
    for p in preds:
        if p.aval.shape != () or p.aval.dtype != np.bool_:
            raise KilnInternalError(f"cond: predicate must be a bool scalar, got {p.aval.str_short()}")
    if num_implicit_inputs != 0:
        raise KilnInternalError("cond: branches take no implicit inputs")
    for b in branches:
        if len(b.constvars) != len(consts) or b.invars:
            raise KilnInternalError("cond: every branch takes the cond's constants and nothing else")
    first = [v.aval for v in branches[0].outvars[num_implicit_outputs:]]
    for b in branches[1:]:
        other = [v.aval for v in b.outvars[num_implicit_outputs:]]
        if len(other) != len(first) or any(x.dtype != y.dtype or x.ndim != y.ndim for x, y in zip(first, other)):
            raise KilnInternalError("cond: branches return different types")
    out_avals: list = [DShapedArray((), INDEX_DTYPE) for _ in range(num_implicit_outputs)]
    for k, (aval, dims) in enumerate(zip(first, cond_result_dims(branches, num_implicit_outputs))):
        shape = [consts[d[1]] if isinstance(d, tuple) and not isinstance(d, OutDBIdx) else d for d in dims]
        weak = all(b.outvars[num_implicit_outputs + k].aval.weak_type for b in branches)
        out_avals.append(DShapedArray(shape, aval.dtype, weak))
    return out_avals


PRIMITIVES = [for_loop_p, while_loop_p, cond_p]


# --------------------------------------------------------------------------
# Interpreter rules (kiln.interpreter): Python loops over the nested jaxprs.
# The bodies read and write the captured arrays themselves; a carried value
# never aliases a captured one (the loop carries values, as compiled code does).

from kiln.interpreter import detach, eval_jaxpr, interpret_rule  # noqa: E402


def _carried(values, consts):
    return [detach(v, consts) for v in values]


@interpret_rule(for_loop_p)
def _for_loop_value(*operands, body_jaxpr, body_nconsts, num_implicit_inputs, num_implicit_outputs,
                    preserve_dimensions):
    consts = operands[:body_nconsts]
    lower, upper, step = (int(v) for v in operands[body_nconsts:body_nconsts + 3])
    state = _carried(operands[body_nconsts + 3:], consts)
    implicit = num_implicit_inputs
    i = lower
    while (i < upper) if step > 0 else (i > upper):
        index = np.asarray(i, dtype=INDEX_DTYPE)
        state = _carried(eval_jaxpr(body_jaxpr, consts, *state[:implicit], index, *state[implicit:]), consts)
        i += step
    return state


@interpret_rule(while_loop_p)
def _while_loop_value(*operands, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, num_implicit_inputs,
                      num_implicit_outputs, preserve_dimensions):
    cond_consts = operands[:cond_nconsts]
    body_consts = operands[cond_nconsts:cond_nconsts + body_nconsts]
    captured = list(cond_consts) + list(body_consts)
    state = _carried(operands[cond_nconsts + body_nconsts:], captured)
    while eval_jaxpr(cond_jaxpr, cond_consts, *state)[0]:
        state = _carried(eval_jaxpr(body_jaxpr, body_consts, *state), captured)
    return state


@interpret_rule(cond_p)
def _cond_value(*operands, branches, num_implicit_inputs, num_implicit_outputs, preserve_dimensions):
    num_preds = len(branches) - 1
    preds, consts = operands[:num_preds], operands[num_preds:]
    # The first true predicate picks its branch; none picks the last.
    taken = next((k for k, p in enumerate(preds) if p), num_preds)
    return eval_jaxpr(branches[taken], consts)
