"""Pass `kiln-refine-if-layouts` (stage "bufferized", after kiln-check-alloc-sizes).

In: `scf.if` ops yielding memrefs. One-shot bufferization gives a result
whose branches yield buffers of different layouts (a versioned broadcast:
a subview `strided<[1], offset: ?>` in one branch, a fresh allocation in the
other) the fully dynamic layout `strided<[?], offset: ?>`, and the loops
reading it then see an unknown innermost stride.
Out: the result typed with every stride and offset both branches agree on
(`strided<[1], offset: ?>`: each branch casts to it), and a `memref.cast`
back to the old type for its users, which canonicalize folds into the loads.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, memref
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops


def _yielded(if_op: ir.Operation, index: int) -> list[ir.Value]:
    """The value each branch yields at `index`, seen through a `memref.cast`."""
    values = []
    for region in if_op.regions:
        operations = region.blocks[0].operations
        value = operations[len(operations) - 1].operands[index]
        owner = value.owner
        if not isinstance(owner, ir.Block) and owner.name == "memref.cast":
            value = owner.operands[0]
        values.append(value)
    return values


def _joined_layout(types: list[ir.MemRefType]) -> ir.Attribute:
    """Per stride and for the offset: the value every type has, else dynamic."""
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    layouts = [t.get_strides_and_offset() for t in types]
    strides = [s if all(other[0][k] == s for other in layouts) else dynamic for k, s in enumerate(layouts[0][0])]
    offset = layouts[0][1] if all(other[1] == layouts[0][1] for other in layouts) else dynamic
    return ir.StridedLayoutAttr.get(offset, strides)


def refine_if_layouts(module: ir.Module) -> None:
    for if_op in collect_ops(module, {"scf.if"}):
        if len(if_op.regions) != 2 or not len(if_op.regions[1].blocks):
            continue
        for index, result in enumerate(if_op.results):
            if not isinstance(result.type, ir.MemRefType):
                continue
            old = ir.MemRefType(result.type)
            sources = _yielded(if_op, index)
            if not all(isinstance(v.type, ir.MemRefType) for v in sources):
                continue
            layout = _joined_layout([ir.MemRefType(v.type) for v in sources])
            new = ir.MemRefType.get(old.shape, old.element_type, layout, old.memory_space)
            if new == old or layout == old.layout:
                continue
            for region, source in zip(if_op.regions, sources):
                operations = region.blocks[0].operations
                terminator = operations[len(operations) - 1]
                with ir.InsertionPoint(terminator), terminator.location:
                    terminator.operands[index] = source if source.type == new else memref.cast(new, source)
            uses = [(use.owner, use.operand_number) for use in result.uses]
            result.set_type(new)
            with ir.InsertionPoint.after(if_op), if_op.location:
                back = memref.cast(old, result)
            for owner, number in uses:
                owner.operands[number] = back


@register_pass
class KilnRefineIfLayouts(ModulePass):
    """Give scf.if memref results the most static layout both branches agree on."""

    name = "kiln-refine-if-layouts"

    def apply(self, module: ir.Module) -> None:
        refine_if_layouts(module)
