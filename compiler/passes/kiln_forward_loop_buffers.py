"""Pass `kiln-forward-loop-buffers` (stage "bufferized", right after one-shot-bufferize).

In: `scf.while` loops whose "before" region hands a buffer to the body
through a copy that one-shot-bufferize made:

    scf.while (%a = %init) {
      %fresh = memref.alloc(...)
      memref.copy %a, %fresh
      scf.condition(%go) %fresh
    } do {
    ^bb0(%b):  (reads %b: loads, views, dims, copies out of it)
      scf.yield %next
    }

Out: the same loop with `scf.condition(%go) %a`, the alloc and the copy
gone. (buffer-deallocation-pipeline then passes the buffer's ownership
along with it.)

When: the copy keeps the body's buffer apart from the one the before
region holds, which matters only if the body writes to it. So the body
must only read `%b`: every use of it, of its views, and of what a branch
yields of them, is a load, a dim, a view, the source of a copy, an input of
a linalg op or an operand of the loop's own yield. And no buffer `%b` may
be is written in the loop: `%init` (the first iteration's) and what the
body yields for the next iteration must each be a buffer the body
allocates anew, `%b` itself, or a buffer from outside that nothing in the
loop uses but that yield (np.intersect1d's search loop writes a buffer from
outside and yields it: its copy stays). The copy must be the last op before
the condition (nothing may write `%a` after it); the condition's other
values are left as they are.

Why: a loop that rebinds an array it also reads after writing part of it
(`pn = p.copy(); p[1:-1, 1:-1] = f(pn); p[:, -1] = g(pn)`, channel_flow's
pressure iterations) yields a new buffer each iteration, and
one-shot-bufferize then copied the whole array once more per iteration
just to pass it from the condition to the body: channel_flow's 4,910
pressure iterations and 982 time steps per call each copied their arrays
twice instead of once.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import VIEW_OPS, ancestors, collect_ops

_READS = frozenset({"memref.load", "memref.dim", "memref.rank"})


def _only_read(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether every use of `value`, of its views and of the results of the
    branches that yield them, only reads (see the module docstring)."""
    seen, work = {value}, [value]
    while work:
        for use in work.pop().uses:
            user = use.owner
            name = user.operation.name
            if name in _READS:
                continue
            if name in VIEW_OPS:
                results = list(user.results)
            elif name == "memref.copy":
                if use.operand_number != 0:
                    return False
                continue
            elif name.startswith("linalg."):
                inputs = ir.DenseI32ArrayAttr(user.attributes["operandSegmentSizes"])[0] \
                    if "operandSegmentSizes" in user.attributes else -1
                if use.operand_number >= inputs:
                    return False
                continue
            elif name == "scf.yield":
                parent = user.operation.parent
                if parent == loop:
                    continue
                if parent.operation.name != "scf.if":
                    return False
                results = [parent.results[use.operand_number]]
            else:
                return False
            for r in results:
                if r not in seen:
                    seen.add(r)
                    work.append(r)
    return True


def _inside(op: ir.Operation, loop: ir.Operation) -> bool:
    return any(parent == loop for parent in ancestors(op.operation))


def _apart(buffer: ir.Value, loop: ir.Operation, after: ir.Block, position: int) -> bool:
    """Whether `buffer`, one the condition may hand to the body (the loop's
    initial value or what the body yields for the next iteration), is not
    written while the body reads it: a buffer from outside the loop that
    nothing in the loop uses (but the yield that passes it on), a buffer the
    body allocates in each iteration, or the body's own argument passed on."""
    if buffer == after.arguments[position]:
        return True
    owner = buffer.owner
    definer = owner.owner if isinstance(owner, ir.Block) else owner
    if definer.operation.name == "memref.alloc" and definer.operation.block == after:
        return True
    if definer == loop or _inside(definer, loop):
        return False
    yield_op = after.operations[len(after.operations) - 1]
    work = [buffer]
    while work:
        for use in work.pop().uses:
            if use.owner == yield_op:
                continue
            if _inside(use.owner, loop):
                return False
            if use.owner.operation.name in VIEW_OPS:
                work.extend(use.owner.results)
    return True


def _forward(loop: ir.Operation) -> None:
    before, after = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
    condition = before.operations[len(before.operations) - 1]
    for position, value in enumerate(list(condition.operands)[1:]):
        ops = list(before.operations)
        last = ops[-2] if len(ops) > 1 else None
        fresh = value.owner
        if isinstance(fresh, ir.Block) or fresh.operation.name != "memref.alloc":
            continue
        # The copy into `fresh` must be its only other use and the last op before the condition.
        if last is None or last.operation.name != "memref.copy" or last.operands[1] != value or \
                len(list(value.uses)) != 2:
            continue
        source = last.operands[0]
        if not isinstance(source.owner, ir.Block) or source.owner != before or source.type != value.type:
            continue
        slot = ir.BlockArgument(source).arg_number
        yielded = after.operations[len(after.operations) - 1].operands[slot]
        if not (_apart(loop.operands[slot], loop, after, position) and _apart(yielded, loop, after, position)
                and _only_read(after.arguments[position], loop)):
            continue
        condition.operands[position + 1] = source
        last.erase()
        fresh.erase()


@register_pass
class KilnForwardLoopBuffers(ModulePass):
    """Pass a while loop's buffer from its condition to its body without a copy when the body only reads it."""

    name = "kiln-forward-loop-buffers"

    def apply(self, module: ir.Module) -> None:
        for loop in collect_ops(module, {"scf.while"}):
            _forward(loop)
