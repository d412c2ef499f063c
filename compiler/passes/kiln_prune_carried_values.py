"""Pass `kiln-prune-carried-values` (stage "stablehlo", after immut-to-stablehlo).

In: StableHLO whose `stablehlo.while` loops carry values that nothing
needs: tensorssa-block-propagation makes every version of a view written in
a loop (`p[1:-1, 1:-1]`, `p[1:-1, -1]`, its row and column reshapes, ...) a
loop-carried value, and after renaming many of them are only passed along:
recomputed from the array at the end of each iteration, yielded, read by no
op of the loop and used after it only by another loop that does the same.
Out: the same function without those values (their operands, block
arguments, results and the ops that computed them), and without the unused
results of `stablehlo.if` / `stablehlo.case`.

A value is needed when an op with an effect reads it (`func.return`,
`kiln.check`, every op other than StableHLO's pure ones), when a needed
op reads it, when it decides a loop's trip count or picks a branch, or, for
the values of a loop-carried slot (init, block arguments, result, yielded
value), when any one of them is needed. One marking pass over the function
(each value marked once: linear in its size) finds them, across nested
loops whose slots feed each other (channel_flow's pressure loop inside its
time loop carried 22 and 103 values; each carried buffer was copied at
every iteration after bufferization).
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass

WHILE = "stablehlo.while"
BRANCHES = frozenset({"stablehlo.if", "stablehlo.case"})
# StableHLO ops with an effect (kiln emits none of them; listed so that a
# module from elsewhere keeps them).
EFFECTFUL = frozenset(f"stablehlo.{name}" for name in (
    "custom_call", "rng", "rng_bit_generator", "send", "recv", "infeed", "outfeed", "all_reduce", "all_gather",
    "all_to_all", "collective_permute", "collective_broadcast", "reduce_scatter", "after_all", "optimization_barrier",
))


def _pure(op: ir.Operation) -> bool:
    """A StableHLO op without regions or effects: removable when unused."""
    return op.name.startswith("stablehlo.") and op.name not in EFFECTFUL and op.name != "stablehlo.return" \
        and not len(op.regions)


def _terminator(region: ir.Region) -> ir.Operation:
    return region.blocks[0].operations[len(region.blocks[0].operations) - 1]


class _Liveness:
    """The needed values of one function (see the module docstring)."""

    def __init__(self, function: ir.Operation):
        self.live: set = set()
        self.work: list = []
        self.ops: list = []           # pure and control ops, pre-order
        function.walk(self._root, ir.WalkOrder.PRE_ORDER)
        while self.work:
            self._propagate(self.work.pop())

    def mark(self, value: ir.Value) -> None:
        if value not in self.live:
            self.live.add(value)
            self.work.append(value)

    def _root(self, op: ir.Operation) -> ir.WalkResult:
        name = op.name
        if name == WHILE:
            self.ops.append(op)
            self.mark(_terminator(op.regions[0]).operands[0])
        elif name in BRANCHES:
            self.ops.append(op)
            self.mark(op.operands[0])
        elif _pure(op):
            self.ops.append(op)
        elif name == "stablehlo.return" or name == "func.func":
            pass
        else:
            for value in op.operands:
                self.mark(value)
            if len(op.regions):
                # An op with regions of its own (reduce, sort, ...): everything
                # inside it that reads a value reads it for the op.
                op.walk(self._mark_all_operands, ir.WalkOrder.PRE_ORDER)
                return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    def _mark_all_operands(self, op: ir.Operation) -> ir.WalkResult:
        for value in op.operands:
            self.mark(value)
        return ir.WalkResult.ADVANCE

    def _mark_slot(self, loop: ir.Operation, i: int) -> None:
        self.mark(loop.results[i])
        self.mark(loop.operands[i])
        for region in loop.regions:
            self.mark(region.blocks[0].arguments[i])
        self.mark(_terminator(loop.regions[1]).operands[i])

    def _propagate(self, value: ir.Value) -> None:
        owner = value.owner
        if isinstance(owner, ir.Block):
            parent = owner.owner
            if parent.name == WHILE:
                self._mark_slot(parent, ir.BlockArgument(value).arg_number)
            return
        result = ir.OpResult(value).result_number
        if owner.name == WHILE:
            self._mark_slot(owner, result)
        elif owner.name in BRANCHES:
            for region in owner.regions:
                self.mark(_terminator(region).operands[result])
        elif _pure(owner):
            for operand in owner.operands:
                self.mark(operand)


def _keep_operands(term: ir.Operation, keep: list[int]) -> None:
    """Replace the terminator by one with only the operands at `keep`."""
    with ir.InsertionPoint(term), term.location:
        ir.Operation.create(term.name, results=[], operands=[term.operands[i] for i in keep],
                            attributes={named.name: named.attr for named in term.attributes})
    term.erase()


def _rebuild(op: ir.Operation, keep: list[int], is_loop: bool) -> ir.Operation:
    """A copy of `op` with only the results at `keep` (and, for a loop, only
    those operands) takes its place: its regions' blocks move over whole
    (block arguments and all) and the kept results' uses go to the copy.
    `op` itself stays, empty, until its dead results lose their last users."""
    operands = [op.operands[i] for i in keep] if is_loop else list(op.operands)
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(op.name, results=[op.results[i].type for i in keep], operands=operands,
                                  attributes={named.name: named.attr for named in op.attributes},
                                  regions=len(op.regions))
    for old_region, new_region in zip(op.regions, new.regions):
        for block in list(old_region.blocks):
            block.append_to(new_region)
    for new_index, old_index in enumerate(keep):
        op.results[old_index].replace_all_uses_with(new.results[new_index])
    return new


def prune_function(function: ir.Operation) -> int:
    """Remove the values of `function` that nothing needs; the number of
    loop-carried slots and branch results removed."""
    liveness = _Liveness(function)
    live = liveness.live
    plans = {}                       # position in liveness.ops -> results kept
    doomed = []                      # positions of the ops to erase
    for position, op in enumerate(liveness.ops):
        needed = [i for i, result in enumerate(op.results) if result in live]
        if op.name == WHILE or op.name in BRANCHES:
            if len(needed) < len(op.results):
                plans[position] = needed
                doomed.append(position)
        elif not needed:
            doomed.append(position)
    if not doomed:
        return 0
    # The returns stop yielding the dead values; each control op with dead
    # results gets a copy without them (blocks moved whole); then, users
    # before the values they read (reverse pre-order: a loop's body before
    # the loop, a later loop before an earlier one), the dead ops and the
    # emptied control ops go; last the dead block arguments, now unread.
    rebuilt = []
    for position, keep in plans.items():
        op = liveness.ops[position]
        if op.name == WHILE:
            _keep_operands(_terminator(op.regions[1]), keep)
        else:
            for region in op.regions:
                _keep_operands(_terminator(region), keep)
    for position in sorted(plans, reverse=True):
        op, keep = liveness.ops[position], plans[position]
        new = _rebuild(op, keep, op.name == WHILE)
        if op.name == WHILE:
            rebuilt.append((new, [i for i in range(len(op.results)) if i not in set(keep)]))
    removed = sum(len(liveness.ops[p].results) - len(keep) for p, keep in plans.items())
    for position in reversed(doomed):
        liveness.ops[position].erase()
    for loop, dead in rebuilt:
        for region in loop.regions:
            for i in reversed(dead):
                region.blocks[0].erase_argument(i)
    return removed


@register_pass
class KilnPruneCarriedValues(ModulePass):
    """Remove loop-carried values and branch results that nothing needs."""

    name = "kiln-prune-carried-values"

    def apply(self, module: ir.Module) -> None:
        for op in module.body.operations:
            if op.operation.name == "func.func":
                prune_function(op.operation)
