"""Pass `tensorssa-block-propagation` (stage "functionalized", after tensorssa-rewrite-mutation).

In: `tensorssa.update(new, old)` markers, some inside the regions of
`stablehlo.while` / `stablehlo.if` / `stablehlo.case` for an `old` defined
outside that op (a write in a loop body or a branch to an outer array).
Out: the new version leaves the op as a result, so every update's `old` is
defined in the same region as the update:
- while: `old` becomes an extra loop-carried value (new operand, block
  arguments in both regions, returned by the body; uses inside the loop read
  the block argument);
- if / case: every branch also returns `old` (its own latest version once
  renamed), as an extra result.
After the op, `tensorssa.update(extra_result, old)`. Repeats outward until
every update is local (nested loops and branches).
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._tensorssa import CONTROL_OPS, as_operation, defined_inside, is_nested_in
from kiln.compiler.passes._util import collect_ops
from kiln.core import KilnInternalError


PROPAGATED = "kiln.propagated"


def _rebuild(op: ir.Operation, extra_operands: list, extra_results: list) -> ir.Operation:
    """A copy of `op` with more operands/results; its regions' blocks move over."""
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(op.name, results=[r.type for r in op.results] + extra_results,
                                  operands=list(op.operands) + extra_operands,
                                  attributes={name: op.attributes[name] for name in op.attributes},
                                  regions=len(op.regions))
    for old_region, new_region in zip(op.regions, new.regions):
        for old_block in old_region.blocks:
            new_block = new_region.blocks.append(*[a.type for a in old_block.arguments])
            for old_arg, new_arg in zip(old_block.arguments, new_block.arguments):
                old_arg.replace_all_uses_with(new_arg)
            insert_point = ir.InsertionPoint(new_block)
            for inner in list(old_block.operations):
                inner = as_operation(inner)
                inner.detach_from_parent()
                insert_point.insert(inner)
    for old_result, new_result in zip(op.results, new.results):
        old_result.replace_all_uses_with(new_result)
    op.erase()
    return new


def _terminator(block: ir.Block) -> ir.Operation:
    return as_operation(list(block.operations)[-1])


def _append_operand(term: ir.Operation, value: ir.Value) -> None:
    """Replace a region terminator by one with an extra operand."""
    with ir.InsertionPoint(term), term.location:
        ir.Operation.create(term.name, results=[], operands=list(term.operands) + [value],
                            attributes={name: term.attributes[name] for name in term.attributes})
    term.erase()


def _propagate(control: ir.Operation, old: ir.Value) -> ir.Operation:
    if control.name == "stablehlo.while":
        args = []
        for region in control.regions:
            block = region.blocks[0]
            args.append(block.add_argument(old.type, control.location))
        # Uses inside the loop read the carried version.
        for use in list(old.uses):
            owner = as_operation(use.owner)
            if is_nested_in(owner, control):
                owner.operands[use.operand_number] = args[_region_of(owner, control)]
        body_arg = args[1]
        _append_operand(_terminator(control.regions[1].blocks[0]), body_arg)
        new = _rebuild(control, [old], [old.type])
    else:
        # Branches keep reading `old` itself: mark their updates of it as
        # handled so they are not propagated again.
        for use in list(old.uses):
            owner = as_operation(use.owner)
            if owner.name == "tensorssa.update" and use.operand_number == 1 and is_nested_in(owner, control):
                owner.attributes[PROPAGATED] = ir.UnitAttr.get()
        for region in control.regions:
            _append_operand(_terminator(region.blocks[0]), old)
        new = _rebuild(control, [], [old.type])
    with ir.InsertionPoint.after(new), new.location:
        ir.Operation.create("tensorssa.update", results=[], operands=[new.results[-1], old])
    return new


def _region_of(op: ir.Operation, container: ir.Operation) -> int:
    """Index of the region of `container` that holds `op`."""
    while True:
        parent = as_operation(op.parent)
        if parent == container:
            for i, region in enumerate(container.regions):
                if op.block.region == region:
                    return i
            raise KilnInternalError("op not found in its parent's regions")
        op = parent


@register_pass
class TensorssaBlockPropagation(ModulePass):
    """Make writes inside loops and branches to outer arrays results of those ops."""

    name = "tensorssa-block-propagation"

    def apply(self, module: ir.Module) -> None:
        while True:
            pending, pending_depth = None, -1
            for update in collect_ops(module, {"tensorssa.update"}):
                update = as_operation(update)
                parent = as_operation(update.parent)
                old = update.operands[1]
                if parent.name == "func.func" or defined_inside(old, parent) or PROPAGATED in update.attributes:
                    continue
                if parent.name not in CONTROL_OPS:
                    raise KilnInternalError(
                        f"tensorssa-block-propagation: a write inside {parent.name} is not supported")
                # Innermost first: a write in a loop inside a branch must leave the loop
                # before the branch returns the array (the branch marks every update of
                # it in its regions as handled, the loop's too).
                depth = _depth(update)
                if depth > pending_depth:
                    pending, pending_depth = (parent, old), depth
            if pending is None:
                return
            _propagate(*pending)


def _depth(op: ir.Operation) -> int:
    depth = 0
    while op.parent is not None:
        op = as_operation(op.parent)
        depth += 1
    return depth
