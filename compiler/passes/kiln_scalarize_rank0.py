"""Pass `kiln-scalarize-rank0` (stage "linalg", after elementwise fusion).

In: 0-d tensors used as scalars: `linalg.generic` ops all of whose operands
are 0-d tensors, 0-d tensors carried by `scf.while` (a loop's induction
variable, scalar accumulators) and yielded by `scf.if` (a traced `if` on
scalars).
Out: the generic's body inlined on `tensor.extract`ed scalars with the
result rebuilt by `tensor.from_elements`; `scf.while` carrying and `scf.if`
yielding the element type instead; every read of a 0-d tensor moved to just
after the tensor's definition (out of loops and branches). `canonicalize` then folds extract(from_elements(x)) to x, so
scalar loop state lives in registers instead of one heap buffer per value
per iteration.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops


def _is_rank0(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and t.rank == 0


def _element(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType(t).element_type


def _scalarize_generic(op: ir.Operation) -> None:
    """Inline a 0-d linalg.generic: its block arguments become extracted scalars."""
    block = op.regions[0].blocks[0]
    with ir.InsertionPoint(op), op.location:
        for value, arg in zip(op.operands, block.arguments):
            arg.replace_all_uses_with(tensor.extract(value, []))
        for inner in list(block.operations)[:-1]:
            inner.move_before(op)
        terminator = list(block.operations)[-1]
        results = [tensor.from_elements(r.type, [v]) for r, v in zip(op.results, terminator.operands)]
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()


def _move_ops(old: ir.Block, new: ir.Block) -> None:
    end_of_new = ir.InsertionPoint(new)
    for inner in list(old.operations):
        inner.detach_from_parent()
        end_of_new.insert(inner)


def _extract_rank0(values: list, rank0: list) -> list:
    return [tensor.extract(v, []) if r else v for v, r in zip(values, rank0)]


def _replace_terminator(block: ir.Block, name: str, leading: int, rank0: list) -> None:
    """Rebuild the block's terminator with its 0-d tensor operands extracted
    (`leading` operands, such as scf.condition's predicate, stay as they are)."""
    terminator = list(block.operations)[-1]
    operands = list(terminator.operands)
    with ir.InsertionPoint(terminator), terminator.location:
        values = operands[:leading] + _extract_rank0(operands[leading:], rank0)
        ir.Operation.create(name, operands=values)
    terminator.erase()


def _scalarize_while(op: ir.Operation) -> None:
    types = [v.type for v in op.operands]
    rank0 = [_is_rank0(t) for t in types]
    if not any(rank0):
        return
    # Only loops whose state has one type throughout (as kiln-legalize-control-flow makes them).
    for region in range(2):
        if [a.type for a in op.regions[region].blocks[0].arguments] != types:
            return
    if [r.type for r in op.results] != types:
        return
    scalar_types = [_element(t) if r else t for t, r in zip(types, rank0)]
    with ir.InsertionPoint(op), op.location:
        inits = _extract_rank0(list(op.operands), rank0)
        new = ir.Operation.create("scf.while", results=scalar_types, operands=inits, regions=2)
    for region in range(2):
        old_block = op.regions[region].blocks[0]
        new_block = new.regions[region].blocks.append(*scalar_types)
        with ir.InsertionPoint(new_block), op.location:
            for r, old_arg, new_arg in zip(rank0, old_block.arguments, new_block.arguments):
                old_arg.replace_all_uses_with(tensor.from_elements(old_arg.type, [new_arg]) if r else new_arg)
        _move_ops(old_block, new_block)
    _replace_terminator(new.regions[0].blocks[0], "scf.condition", 1, rank0)
    _replace_terminator(new.regions[1].blocks[0], "scf.yield", 0, rank0)
    with ir.InsertionPoint.after(new), op.location:
        results = [tensor.from_elements(t, [v]) if r else v for t, r, v in zip(types, rank0, new.results)]
    for old, value in zip(op.results, results):
        old.replace_all_uses_with(value)
    op.erase()


def _scalarize_if(op: ir.Operation) -> None:
    """An scf.if yielding 0-d tensors yields their elements instead."""
    types = [r.type for r in op.results]
    rank0 = [_is_rank0(t) for t in types]
    if not any(rank0):
        return
    scalar_types = [_element(t) if r else t for t, r in zip(types, rank0)]
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("scf.if", results=scalar_types, operands=list(op.operands), regions=2)
    for region in range(2):
        new_block = new.regions[region].blocks.append()
        _move_ops(op.regions[region].blocks[0], new_block)
        _replace_terminator(new_block, "scf.yield", 0, rank0)
    with ir.InsertionPoint.after(new), op.location:
        results = [tensor.from_elements(t, [v]) if r else v for t, r, v in zip(types, rank0, new.results)]
    for old, value in zip(op.results, results):
        old.replace_all_uses_with(value)
    op.erase()


def _hoist_read(op: ir.Operation) -> None:
    """Move a read of a 0-d tensor to just after the tensor's definition: it
    cannot fail and the tensor's value never changes, so the read is made once
    instead of per loop iteration, and the scalar stays in a register (a
    branch then reads no memory and can become a select)."""
    source = op.operands[0]
    owner = source.owner
    if isinstance(owner, ir.Block):
        # The block's first op (listing every op of a function's block per read was quadratic).
        op.move_before(owner.operations[0])
    else:
        op.move_after(owner)


def _is_rank0_generic(op: ir.Operation) -> bool:
    return all(_is_rank0(v.type) for v in op.operands) and all(_is_rank0(r.type) for r in op.results)


@register_pass
class KilnScalarizeRank0(ModulePass):
    """Turn 0-d tensor computations and 0-d scf.while state into scalars."""

    name = "kiln-scalarize-rank0"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"linalg.generic"}):
            if _is_rank0_generic(op):
                _scalarize_generic(op)
        for op in reversed(collect_ops(module, {"scf.while"})):
            _scalarize_while(op)
        for op in reversed(collect_ops(module, {"scf.if"})):
            _scalarize_if(op)
        for op in collect_ops(module, {"tensor.extract"}):
            if _is_rank0(op.operands[0].type):
                _hoist_read(op)
