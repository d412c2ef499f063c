"""Pass `kiln-sink-into-broadcast-versions` (stage "linalg", before linalg-fuse-elementwise-ops).

In: the `scf.if` that kiln-legalize-dynamic makes of a broadcast whose
operand dims may be 1 at run time (marked `kiln.broadcast_version`): its
then branch is the common case, a `linalg.generic` that reads the operand
with a map (no copy once fused), its else branch one call of
runtime/broadcast.c into a fresh buffer. The `scf.if` result goes to one
`linalg.generic` after it, the reader (`x[:, i:i+K, j:j+K, :, None] * w`
summed over the window: the window is broadcast along w's last axis).
Elementwise fusion does not reach across the `scf.if`, so the then branch
materialized the broadcast: in NPBench's resnet a 5-d copy of every window,
~20 % of the kernel's time at preset S.
Out: the reader (with the pure ops between the `scf.if` and it that it
needs: its `tensor.empty`, `linalg.fill`, `tensor.dim`s, index arithmetic)
is cloned into both branches, each reading that branch's broadcast, and the
`scf.if` yields the reader's results (and the broadcast, which
canonicalize drops from it when nothing else reads it). In the then branch
linalg-fuse-elementwise-ops then fuses the broadcast into the reader; the
else branch computes what it computed before. A reader that has a single
`linalg.generic` reader in turn is sunk too, up to `depth` readers per
`scf.if` (each sink copies the reader's code once more).
"""

from __future__ import annotations

import functools

from kiln.compiler.mlir import ir, scf
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import clone_ops, collect_ops
from kiln.compiler.passes.kiln_legalize_dynamic import BROADCAST_VERSION as MARK

# Ops that may be copied into both branches: no side effects, no regions
# but a linalg op's body.
_PURE_PREFIXES = ("arith.", "affine.apply", "index.")
_PURE = frozenset({"tensor.empty", "tensor.dim", "tensor.extract", "tensor.from_elements", "tensor.expand_shape",
                   "tensor.collapse_shape", "tensor.extract_slice", "tensor.cast", "linalg.fill", "linalg.generic"})


def _pure(op: ir.Operation) -> bool:
    return op.name in _PURE or op.name.startswith(_PURE_PREFIXES)


def _yielded_by_generic(if_op: ir.Operation, index: int) -> bool:
    """Whether the then branch yields, at `index`, a generic it computes."""
    yielded = list(if_op.regions[0].blocks[0].operations)[-1].operands[index]
    owner = yielded.owner
    return not isinstance(owner, ir.Block) and owner.operation.name == "linalg.generic" and \
        owner.operation.parent == if_op


def _values_used(op: ir.Operation) -> list[ir.Value]:
    """The operands of `op` and of every op nested in it."""
    found: list[ir.Value] = []

    def visit(inner):
        found.extend(inner.operands)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def _sinkable(if_op: ir.Operation) -> tuple[ir.Operation, list[ir.Operation]] | None:
    """The reader to sink and the ops between `if_op` and it that it needs
    (in block order), found from the reader backwards: the cost is the
    slice's, not the block's (channel_flow has ~180 versions in one block)."""
    block = if_op.block
    for index, result in enumerate(if_op.results):
        readers = [use.owner.operation for use in result.uses]
        generics = [r for r in readers if r.name == "linalg.generic"]
        if len(generics) != 1 or not _yielded_by_generic(if_op, index) or generics[0].block != block:
            continue
        reader = generics[0]
        slice_ops: list[ir.Operation] = []
        seen: set[ir.Operation] = set()
        stack = _values_used(reader)
        while stack:
            owner = stack.pop().owner
            if isinstance(owner, ir.Block):
                continue
            op = owner.operation
            if op in seen or op == if_op or op.block != block or op.is_before_in_block(if_op):
                continue
            seen.add(op)
            slice_ops.append(op)
            stack.extend(_values_used(op))
        if not all(_pure(op) for op in slice_ops):
            continue
        # Only when nothing else reads the broadcast: else it stays materialized and the copies gain nothing.
        inside = seen | {reader}
        if any(use.owner.operation not in inside for use in result.uses):
            continue
        slice_ops.sort(key=functools.cmp_to_key(lambda a, b: -1 if a.is_before_in_block(b) else 1))
        return reader, slice_ops
    return None


def _sink(if_op: ir.Operation, reader: ir.Operation, slice_ops: list[ir.Operation]) -> ir.Operation:
    """A new `scf.if` in place of `if_op` whose branches end with a clone of
    the ops of `slice_ops` that read its results (directly or not) or make
    tensors, and of `reader`; the other ops of `slice_ops` (scalars: sizes,
    index arithmetic) move before it. Returns it (`if_op` and `reader` are
    erased)."""
    reached = set(if_op.results)  # values the copies compute (an op reading one is copied)
    copied = []
    for op in slice_ops:
        # A tensor the reader reads is copied too, so that fusion reaches it;
        # index arithmetic on values from before the scf.if is computed once.
        if any(v in reached for v in _values_used(op)) or \
                any(isinstance(r.type, ir.RankedTensorType) for r in op.results):
            copied.append(op)
            reached.update(op.results)
        else:
            op.move_before(if_op)
    slice_ops = copied
    reader_types = [r.type for r in reader.results]
    with ir.InsertionPoint(if_op), if_op.location:
        new = scf.IfOp(if_op.operands[0], reader_types + [r.type for r in if_op.results], has_else=True)
    new.operation.attributes[MARK] = ir.UnitAttr.get()
    for old_block, new_block in zip((b for r in if_op.regions for b in r.blocks), (new.then_block, new.else_block)):
        operations = [op.operation for op in old_block.operations]
        body, terminator = operations[:-1], operations[-1]
        mapping: dict = {}
        with ir.InsertionPoint(new_block), if_op.location:
            clone_ops(body, mapping)
            yielded = [mapping.get(v, v) for v in terminator.operands]
            mapping.update(zip(if_op.results, yielded))
            clone_ops(slice_ops + [reader], mapping)
            scf.YieldOp([mapping[r] for r in reader.results] + yielded)
    count = len(reader_types)
    for old, value in zip(reader.results, list(new.results)[:count]):
        old.replace_all_uses_with(value)
    for old, value in zip(if_op.results, list(new.results)[count:]):
        old.replace_all_uses_with(value)
    reader.erase()
    for op in reversed(slice_ops):
        if all(not list(r.uses) for r in op.results):
            op.erase()
    if_op.erase()
    return new.operation


@register_pass
class KilnSinkIntoBroadcastVersions(ModulePass):
    """Copy the reader of a versioned broadcast into both versions, so elementwise fusion reaches the broadcast."""

    name = "kiln-sink-into-broadcast-versions"
    depth: int = option(3, "readers sunk into one scf.if at most", minimum=0)

    def apply(self, module: ir.Module) -> None:
        for if_op in collect_ops(module, {"scf.if"}):
            if MARK not in if_op.attributes or len(if_op.regions[1].blocks) == 0:
                continue
            for _ in range(self.depth):
                found = _sinkable(if_op)
                if found is None:
                    break
                if_op = _sink(if_op, *found)
