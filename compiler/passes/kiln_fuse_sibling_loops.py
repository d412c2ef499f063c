"""Pass `kiln-fuse-sibling-loops` (stage "linalg", after kiln-fuse-into-element-loops).

In: two `scf.for` loops in one block with the same bounds and step whose
bodies only compute on tensors (arith, math, tensor, linalg ops: no call, no
memref), the second not reading what the first computes: the scatter loops
of two histograms of the same data (`np.histogram(r, n)` and
`np.histogram(r, n, weights=w)`), each with the binning fused into it.
Out: one loop carrying both loops' values, its body the first body then the
second; cse after it computes the shared part (the bin of each value) once.
Ops between the loops that read the first loop's results (its slice of the
histogram) move after the fused loop; a loop that something between them
needs (the second loop's operands) is not fused. Each iteration computes
what both did, in the same order per loop, so the results are the same.
One pass over each block.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, scf
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import clone_ops, collect_ops

_PURE_DIALECTS = {"arith", "math", "tensor", "linalg"}


def _pure_body(loop: ir.Operation) -> bool:
    ok = True

    def visit(op):
        nonlocal ok
        if op.name == "scf.yield" or op.name in ("scf.for", "scf.if") or op == loop:
            return ir.WalkResult.ADVANCE
        if op.name.split(".")[0] not in _PURE_DIALECTS:
            ok = False
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    loop.walk(visit)
    return ok


def _same_bounds(a: ir.Operation, b: ir.Operation) -> bool:
    return all(a.operands[i] == b.operands[i] for i in range(3))


def _uses_any(op: ir.Operation, values: set) -> bool:
    found = False

    def visit(inner):
        nonlocal found
        if any(v in values for v in inner.operands):
            found = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def _between(first: ir.Operation, second: ir.Operation, ops: list, position: dict, tainted: set) -> list | None:
    """The ops between the loops that read the first loop's results (to move
    after the fused loop), or None when the second loop needs one of them or
    one of them has effects. `tainted` starts with what already reads the
    first loop (ops moved after it by an earlier fusion)."""
    tainted = tainted | set(first.results)
    moved = []
    for op in ops[position[first] + 1:position[second]]:
        if _uses_any(op, tainted):
            if op.regions or op.name.split(".")[0] not in _PURE_DIALECTS:
                return None
            moved.append(op)
            tainted.update(op.results)
    if _uses_any(second, tainted):
        return None
    return moved


def _fuse(first: ir.Operation, second: ir.Operation, moved: list) -> ir.Operation:
    a, b = first.opview, second.opview
    count_a = len(first.results)
    with ir.InsertionPoint(second), second.location:
        loop = scf.ForOp(first.operands[0], first.operands[1], first.operands[2],
                         list(a.initArgs) + list(b.initArgs))
        with ir.InsertionPoint(loop.body):
            carried = list(loop.inner_iter_args)
            yielded = []
            for old, own in ((a, carried[:count_a]), (b, carried[count_a:])):
                body = old.body
                mapping = {old.induction_variable: loop.induction_variable}
                mapping.update(zip(list(old.inner_iter_args), own))
                operations = list(body.operations)
                clone_ops(operations[:-1], mapping)
                yielded += [mapping.get(v, v) for v in operations[-1].operands]
            scf.YieldOp(yielded)
    results = list(loop.results)
    for r, new in zip(list(first.results) + list(second.results), results):
        r.replace_all_uses_with(new)
    after = loop.operation
    for op in moved:
        op.move_after(after)
        after = op
    first.erase()
    second.erase()
    return loop.operation


@register_pass
class KilnFuseSiblingLoops(ModulePass):
    """Fuse two scf.for loops over the same range whose bodies are pure tensor code into one."""

    name = "kiln-fuse-sibling-loops"

    def apply(self, module: ir.Module) -> None:
        by_block: dict = {}
        for loop in collect_ops(module, {"scf.for"}):
            if _pure_body(loop):
                by_block.setdefault(loop.block, []).append(loop)
        for block, loops in by_block.items():
            if len(loops) < 2:
                continue
            # Positions taken once: a fused loop takes the second loop's
            # place, and the ops moved after it are carried as `tainted`
            # (they read it), so each op between loops is scanned once.
            ops = list(block.operations)
            position = {op: i for i, op in enumerate(ops)}
            current, carried = loops[0], []
            for loop in loops[1:]:
                tainted = {r for op in carried for r in op.results}
                moved = _between(current, loop, ops, position, tainted) if _same_bounds(current, loop) else None
                if moved is None:
                    current, carried = loop, []
                    continue
                place = position[loop]
                # the readers moved after an earlier fusion follow the new loop too
                carried = carried + moved
                current = _fuse(current, loop, carried)
                position[current] = place
