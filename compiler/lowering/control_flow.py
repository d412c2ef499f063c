"""Stage "mlir": lowering of for_loop / while_loop / cond to StableHLO control flow.

In: `for_loop`, `while_loop` and `cond` equations with nested jaxprs.
Out: `stablehlo.while` (for_loop carries its induction variable as a
`tensor<i64>` first and compares it with `upper` by the sign of `step`),
`stablehlo.if` (two branches) or `stablehlo.case` on a `tensor<i32>` branch
index (more). Regions read captured values from the enclosing region
directly; a region result more static than the op's type is `tensor.cast`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from kiln.compiler.lowering import lowering
from kiln.dialects.stablehlo import tensor_type
from kiln.compiler.mlir import ir, tensor
from kiln.core import Literal
from kiln.dialects import stablehlo as hlo
from kiln.primitives.control_flow import cond_p, for_loop_p, while_loop_p


def _cast(value: ir.Value, to: ir.Type) -> ir.Value:
    return value if value.type == to else tensor.cast(to, value)


def _region_return(values: Sequence[ir.Value], types: Sequence[ir.Type]) -> None:
    hlo.op("return", [], [_cast(v, t) for v, t in zip(values, types)])


def _new_region_block(op: ir.Operation, region: int, types: Sequence[ir.Type]) -> ir.Block:
    return op.regions[region].blocks.append(*types)


def _while(types: Sequence[ir.Type], inits: Sequence[ir.Value]) -> ir.Operation:
    return ir.Operation.create("stablehlo.while", results=list(types),
                               operands=[_cast(v, t) for v, t in zip(inits, types)], regions=2)


@lowering(for_loop_p)
def _for_loop(ctx, eqn, *operands):
    p = eqn.params
    body = p["body_jaxpr"]
    nconsts, nimplicit = p["body_nconsts"], p["num_implicit_inputs"]
    consts = list(operands[:nconsts])
    lower, upper, step = operands[nconsts:nconsts + 3]
    inits = list(operands[nconsts + 3:])
    step_var = eqn.invars[nconsts + 2]
    # Loop state: index, implicit dims, carried values (the body's binder types).
    index_type = tensor_type(body.invars[nimplicit].aval)
    state_types = [index_type] + [tensor_type(v.aval) for v in body.invars[:nimplicit]] + \
        [tensor_type(v.aval) for v in body.invars[nimplicit + 1:]]
    step_positive = None if isinstance(step_var, Literal) else \
        hlo.comparison("GT", step, hlo.scalar_i64(0), "SIGNED")
    loop = _while(state_types, [lower, *inits])

    cond_block = _new_region_block(loop, 0, state_types)
    with ir.InsertionPoint(cond_block):
        i = cond_block.arguments[0]
        if step_positive is None:
            direction = "LT" if step_var.val > 0 else "GT"
            keep_going = hlo.comparison(direction, i, upper, "SIGNED")
        else:
            below = hlo.comparison("LT", i, upper, "SIGNED")
            above = hlo.comparison("GT", i, upper, "SIGNED")
            keep_going = hlo.one("select", below.type, step_positive, below, above)
        hlo.op("return", [], [keep_going])

    body_block = _new_region_block(loop, 1, state_types)
    with ir.InsertionPoint(body_block):
        args = list(body_block.arguments)
        i, implicit, carried = args[0], args[1:1 + nimplicit], args[1 + nimplicit:]
        outs = ctx.lower_jaxpr_body(body, consts + implicit + [i] + carried)
        next_i = hlo.one("add", index_type, i, step)
        _region_return([next_i, *outs], state_types)
    return list(loop.results)[1:]


@lowering(while_loop_p)
def _while_loop(ctx, eqn, *operands):
    p = eqn.params
    ncond, nbody = p["cond_nconsts"], p["body_nconsts"]
    cond_consts = list(operands[:ncond])
    body_consts = list(operands[ncond:ncond + nbody])
    inits = list(operands[ncond + nbody:])
    state_types = [tensor_type(v.aval) for v in p["body_jaxpr"].invars]
    loop = _while(state_types, inits)

    cond_block = _new_region_block(loop, 0, state_types)
    with ir.InsertionPoint(cond_block):
        (pred,) = ctx.lower_jaxpr_body(p["cond_jaxpr"], cond_consts + list(cond_block.arguments))
        hlo.op("return", [], [pred])

    body_block = _new_region_block(loop, 1, state_types)
    with ir.InsertionPoint(body_block):
        outs = ctx.lower_jaxpr_body(p["body_jaxpr"], body_consts + list(body_block.arguments))
        _region_return(outs, state_types)
    return list(loop.results)


def _branch_index(preds: Sequence[ir.Value]) -> ir.Value:
    """`tensor<i32>`: the first true predicate's position, else len(preds)."""
    i32 = ir.IntegerType.get_signless(32)
    index = hlo.constant(np.array(len(preds), dtype=np.int32))
    for position in reversed(range(len(preds))):
        candidate = hlo.constant(np.array(position, dtype=np.int32))
        index = hlo.one("select", ir.RankedTensorType.get([], i32), preds[position], candidate, index)
    return index


@lowering(cond_p)
def _cond(ctx, eqn, *operands):
    branches = eqn.params["branches"]
    num_preds = len(branches) - 1
    preds, consts = list(operands[:num_preds]), list(operands[num_preds:])
    result_types = [tensor_type(v.aval) for v in eqn.outvars]
    if num_preds == 1:
        op = ir.Operation.create("stablehlo.if", results=result_types, operands=preds, regions=2)
    else:
        op = ir.Operation.create("stablehlo.case", results=result_types, operands=[_branch_index(preds)],
                                 regions=len(branches))
    for region, branch in enumerate(branches):
        block = _new_region_block(op, region, [])
        with ir.InsertionPoint(block):
            outs = ctx.lower_jaxpr_body(branch, consts)
            _region_return(outs, result_types)
    return list(op.results)
