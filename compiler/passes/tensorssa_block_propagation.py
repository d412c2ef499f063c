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

Linear in the size of the function (for a bounded nesting depth): one walk
finds the updates and the ops they sit in; the ops are then handled
innermost level first (a write in a loop inside a branch leaves the loop
before the branch returns the array), each op once with all the versions
that leave it, its blocks moved whole into the rebuilt op; the uses of each
carried version are scanned once per level, not once per loop.

The Python bindings hand out a fresh wrapper per lookup, compared and
hashed by the op's address, and a wrapper of an erased op is not told: its
address is soon reused by a new op. So nothing here keys a table on an op
or keeps one across a rebuild: each control op carries its walk position as
an attribute (copied by the rebuild, removed at the end), the tables are
keyed by it, and a version that is the result of a control op is kept as
(position, result number) and looked up in the op's latest rebuild.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._tensorssa import CONTROL_OPS, as_operation, defined_inside
from kiln.compiler.passes._util import collect_ops
from kiln.core import KilnInternalError


ORDER = "kiln.block_propagation_order"


def _rebuild(op: ir.Operation, extra_operands: list, extra_results: list) -> ir.Operation:
    """A copy of `op` with more operands/results; its regions' blocks move over whole."""
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(op.name, results=[r.type for r in op.results] + extra_results,
                                  operands=list(op.operands) + extra_operands,
                                  attributes={name: op.attributes[name] for name in op.attributes},
                                  regions=len(op.regions))
    for old_region, new_region in zip(op.regions, new.regions):
        for block in list(old_region.blocks):
            block.append_to(new_region)
    for old_result, new_result in zip(op.results, new.results):
        old_result.replace_all_uses_with(new_result)
    op.erase()
    return new


def _append_operands(block: ir.Block, values: list) -> None:
    """Replace the block's terminator by one with extra operands."""
    term = as_operation(block.operations[-1])
    with ir.InsertionPoint(term), term.location:
        ir.Operation.create(term.name, results=[], operands=list(term.operands) + values,
                            attributes={name: term.attributes[name] for name in term.attributes})
    term.erase()


def _order(op: ir.Operation) -> int | None:
    """The walk position of a control op (None for any other op)."""
    attr = op.attributes[ORDER] if ORDER in op.attributes else None
    return None if attr is None else ir.IntegerAttr(attr).value


def _carrying_loop(op: ir.Operation, loops: dict) -> tuple[int, int] | None:
    """The loop of `loops` (by order) that `op` sits in (at any depth), and the index of its region holding `op`."""
    child, parent = op, op.parent
    while parent is not None:
        parent = as_operation(parent)
        if parent.name == "stablehlo.while":
            order = _order(parent)
            if order in loops:
                region = child.block.region
                return order, next(i for i, r in enumerate(parent.regions) if r == region)
        child, parent = parent, parent.parent
    return None


def _depth(op: ir.Operation) -> int:
    depth = 0
    while op.parent is not None:
        op = as_operation(op.parent)
        depth += 1
    return depth


class _Propagation:
    """The updates still to leave their ops, by op, and the ops by nesting depth."""

    def __init__(self, controls: dict):
        # Control ops by walk position (their ORDER attribute), each the latest
        # rebuild. Program order: an update made after an op sorts right after
        # it (after everything inside it, before what follows it).
        self.controls = controls
        self.leaving: dict = {}   # control order -> [(position, version key)]
        self.levels: dict = {}    # depth -> {control order: None}, in program order

    def key(self, value: ir.Value) -> tuple:
        """A key for a version that outlives rebuilds of the op defining it."""
        owner = value.owner
        if not isinstance(owner, ir.Block):
            order = _order(as_operation(owner))
            if order is not None:
                return ("result", order, ir.OpResult(value).result_number)
        return ("value", value)

    def value(self, key: tuple) -> ir.Value:
        if key[0] == "result":
            return self.controls[key[1]].results[key[2]]
        return key[1]

    def note(self, position: tuple, update: ir.Operation, old: ir.Value) -> None:
        parent = as_operation(update.parent)
        if parent.name == "func.func" or defined_inside(old, parent):
            return
        if parent.name not in CONTROL_OPS:
            raise KilnInternalError(f"tensorssa-block-propagation: a write inside {parent.name} is not supported")
        order = _order(parent)
        if order not in self.leaving:
            self.leaving[order] = []
            self.levels.setdefault(_depth(parent), {})[order] = None
        self.leaving[order].append((position, self.key(old)))

    def run_level(self, orders: list) -> None:
        # Each op's versions in the order their first update appears in it.
        plan = {}
        for order in orders:
            olds: dict = {}
            for _, old in sorted(self.leaving.pop(order), key=lambda entry: entry[0]):
                olds.setdefault(old, None)
            plan[order] = list(olds)
        # A while carries each version: block arguments in both regions, and
        # every use inside the loop reads them (one scan of each version's uses).
        carried: dict = {}
        for order, olds in plan.items():
            control = self.controls[order]
            if control.name == "stablehlo.while":
                for old in olds:
                    value_type = self.value(old).type
                    carried.setdefault(old, {})[order] = [region.blocks[0].add_argument(value_type, control.location)
                                                          for region in control.regions]
        for old, loops in carried.items():
            for use in list(self.value(old).uses):
                owner = as_operation(use.owner)
                found = _carrying_loop(owner, loops)
                if found is not None:
                    loop, region = found
                    owner.operands[use.operand_number] = loops[loop][region]
        for order, olds in plan.items():
            control = self.controls[order]
            # Looked up now: an op rebuilt earlier in this level may define them.
            values = [self.value(old) for old in olds]
            if control.name == "stablehlo.while":
                # The body returns the carried version (tensorssa-rename makes it the latest).
                _append_operands(control.regions[1].blocks[0], [carried[old][order][1] for old in olds])
                new = _rebuild(control, values, [v.type for v in values])
            else:
                # Every branch returns the outer version (renamed later to its own).
                for region in control.regions:
                    _append_operands(region.blocks[0], values)
                new = _rebuild(control, [], [v.type for v in values])
            self.controls[order] = new
            first = len(new.results) - len(values)
            # The updates after the op, last version first (the order of one rebuild per version,
            # each update placed right after the op).
            with ir.InsertionPoint.after(new), new.location:
                for k in reversed(range(len(values))):
                    update = ir.Operation.create("tensorssa.update", results=[],
                                                 operands=[new.results[first + k], values[k]])
                    self.note((order, 1, -k), update, values[k])


@register_pass
class TensorssaBlockPropagation(ModulePass):
    """Make writes inside loops and branches to outer arrays results of those ops."""

    name = "tensorssa-block-propagation"

    def apply(self, module: ir.Module) -> None:
        found = [as_operation(op) for op in collect_ops(module, {"tensorssa.update", *CONTROL_OPS})]
        i64 = ir.IntegerType.get_signless(64)
        controls = {}
        for position, op in enumerate(found):
            if op.name in CONTROL_OPS:
                op.attributes[ORDER] = ir.IntegerAttr.get(i64, position)
                controls[position] = op
        work = _Propagation(controls)
        for position, op in enumerate(found):
            if op.name == "tensorssa.update":
                work.note((position, 0, 0), op, op.operands[1])
        del found
        while work.levels:
            deepest = max(work.levels)
            work.run_level(list(work.levels.pop(deepest)))
        for op in work.controls.values():
            del op.attributes[ORDER]
