"""Pass `kiln-legalize-control-flow` (stage "linalg", before stablehlo-legalize-to-linalg).

In: `stablehlo.while`, `stablehlo.if`, `stablehlo.case` (which
stablehlo-legalize-to-linalg leaves alone).
Out: `scf.while`, `scf.if`, `scf.index_switch` whose regions are the old
blocks, moved: their StableHLO bodies are legalized by the passes that
follow. `stablehlo.return` becomes `scf.condition` / `scf.yield`; the
predicate or branch index is read out of its 0-d tensor with `tensor.extract`.
"""

from __future__ import annotations

from typing import Sequence

from kiln.compiler.mlir import arith, ir, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops

_CONTROL_FLOW = {"stablehlo.while", "stablehlo.if", "stablehlo.case"}


def _cast_all(values: Sequence[ir.Value], types: Sequence[ir.Type]) -> list:
    return [v if v.type == t else tensor.cast(t, v) for v, t in zip(values, types)]


def _move_block(old: ir.Region, new: ir.Region) -> ir.Block:
    block = old.blocks[0]
    block.append_to(new)
    return block


def _replace_terminator(block: ir.Block, build) -> None:
    """Swap the block's `stablehlo.return` for the op `build(operands)` makes."""
    terminator = block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(terminator), terminator.location:
        build(list(terminator.operands))
    terminator.erase()


def _yield(types: Sequence[ir.Type]):
    def build(values):
        ir.Operation.create("scf.yield", operands=_cast_all(values, types))

    return build


def _while(op: ir.Operation) -> ir.Operation:
    types = [r.type for r in op.results]
    new = ir.Operation.create("scf.while", results=types, operands=list(op.operands), regions=2)
    before = _move_block(op.regions[0], new.regions[0])
    after = _move_block(op.regions[1], new.regions[1])

    def condition(values):
        (pred,) = values
        ir.Operation.create("scf.condition", operands=[tensor.extract(pred, []), *before.arguments])

    _replace_terminator(before, condition)
    _replace_terminator(after, _yield(types))
    return new


def _if(op: ir.Operation) -> ir.Operation:
    types = [r.type for r in op.results]
    pred = tensor.extract(op.operands[0], [])
    new = ir.Operation.create("scf.if", results=types, operands=[pred], regions=2)
    for region in range(2):
        _replace_terminator(_move_block(op.regions[region], new.regions[region]), _yield(types))
    return new


def _case(op: ir.Operation) -> ir.Operation:
    """Branch `k` of `stablehlo.case` runs for index k; an index out of
    range runs the last branch, which becomes the switch's default."""
    types = [r.type for r in op.results]
    index = arith.index_cast(ir.IndexType.get(), tensor.extract(op.operands[0], []))
    num_cases = len(op.regions) - 1
    new = ir.Operation.create("scf.index_switch", results=types, operands=[index],
                              attributes={"cases": ir.DenseI64ArrayAttr.get(list(range(num_cases)))},
                              regions=num_cases + 1)
    _replace_terminator(_move_block(op.regions[num_cases], new.regions[0]), _yield(types))
    for k in range(num_cases):
        _replace_terminator(_move_block(op.regions[k], new.regions[k + 1]), _yield(types))
    return new


_RULES = {"stablehlo.while": _while, "stablehlo.if": _if, "stablehlo.case": _case}


@register_pass
class KilnLegalizeControlFlow(ModulePass):
    """Rewrite StableHLO while/if/case into scf.while/scf.if/scf.index_switch."""

    name = "kiln-legalize-control-flow"

    def apply(self, module: ir.Module) -> None:
        # Innermost first, so each op is rewritten while its own block still holds it.
        for op in reversed(collect_ops(module, _CONTROL_FLOW)):
            with ir.InsertionPoint(op), op.location:
                new = _RULES[op.name](op)
            for old_result, new_result in zip(op.results, new.results):
                old_result.replace_all_uses_with(new_result)
            op.erase()
