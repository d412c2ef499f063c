"""Pass `kiln-merge-sibling-reductions` (stage "linalg", after kiln-fuse-sibling-loops).

In: `linalg.generic` min / max reductions of 1-D inputs to 0-d results in
one block over the same inputs (`a.min()` and `a.max()`: the
range of `np.histogram`, `np.ptp`, a normalization), each a separate pass
over the data. A reduction counts when every value it yields is an
`arith.minimumf` / `maximumf` / `minnumf` / `maxnumf` / `minsi` / `maxsi` /
`minui` / `maxui` of its output element (float sums stay alone: kiln-block-sums
splits them for accuracy).
Out: one `scf.for` over the elements, at the place of the first, carrying
every accumulator as a scalar; its body the bodies one after the other, so
the data is read once for all of them. (Not a generic with several outputs:
after bufferization its accumulators are loaded and stored in 0-d buffers
at every element, and that loop measured 4.0 ms on 1e6 float64 against
0.78 ms for the two separate reductions; the loop of scalars 0.26 ms.)
Each result is computed with the same operations in the same order, so it is
the same to the bit. An init defined after the first reduction (the
`linalg.fill` of the second one's initial value) moves before it when it is a
fill, an empty tensor or a constant; a reduction whose operands cannot be
moved there is left alone. One pass over each block.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, scf, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import clone_ops, collect_ops, index_value

_MIN_MAX = {"arith.minimumf", "arith.maximumf", "arith.minnumf", "arith.maxnumf",
            "arith.minsi", "arith.maxsi", "arith.minui", "arith.maxui"}
_IDENTITY = "affine_map<(d0) -> (d0)>"
_SCALAR = "affine_map<(d0) -> ()>"
_MOVABLE = {"linalg.fill", "tensor.empty", "arith.constant"}


def _inputs(op: ir.Operation) -> int:
    return len(op.operands) - len(op.results)


def _is_min_max_reduction(op: ir.Operation) -> bool:
    if "reduction" not in str(op.attributes["iterator_types"]) or len(op.regions[0].blocks) != 1:
        return False
    body = op.regions[0].blocks[0]
    operations = list(body.operations)
    outs = list(body.arguments)[_inputs(op):]
    if any(o.name == "linalg.index" or o.regions for o in operations):
        return False
    for out, value in zip(outs, operations[-1].operands):
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.name not in _MIN_MAX or out not in list(owner.operands):
            return False
    return True


def _key(op: ir.Operation) -> tuple:
    inputs = _inputs(op)
    maps = [str(m) for m in op.attributes["indexing_maps"]]
    return (tuple(op.operands[i] for i in range(inputs)), tuple(maps[:inputs]), tuple(sorted(set(maps[inputs:]))),
            str(op.attributes["iterator_types"]))


class _Block:
    """The positions of a block's operations, and moves of operand definitions
    before a given operation."""

    def __init__(self, block: ir.Block):
        self.position = {o: i for i, o in enumerate(block.operations)}

    def _before(self, value: ir.Value, first: ir.Operation, moves: list) -> bool:
        owner = value.owner
        if isinstance(owner, ir.Block):
            return True  # an argument of this block or of one around it
        owner = owner.operation
        where = self.position.get(owner)
        if where is None or where < self.position[first]:
            return True  # defined outside the block (so before it) or earlier in it
        if owner.name not in _MOVABLE or owner in moves:
            return owner in moves
        if not all(self._before(v, first, moves) for v in owner.operands):
            return False
        moves.append(owner)
        return True

    def movable(self, op: ir.Operation, first: ir.Operation) -> list | None:
        """The definitions to move before `first` so that `op`'s operands
        are defined there (in order), or None."""
        moves: list = []
        ok = all(self._before(v, first, moves) for v in op.operands)
        return moves if ok else None


def _full_1d(op: ir.Operation) -> bool:
    """A reduction of 1-D inputs (all read at the loop index) to 0-d outputs."""
    inputs = _inputs(op)
    maps = [str(m) for m in op.attributes["indexing_maps"]]
    return (inputs > 0 and all(m == _IDENTITY for m in maps[:inputs]) and all(m == _SCALAR for m in maps[inputs:])
            and all(ir.RankedTensorType(op.operands[i].type).rank == 1 for i in range(inputs)))


def _merge(group: list) -> ir.Operation:
    """One `scf.for` over the elements carrying every accumulator as a
    scalar (LLVM vectorizes a loop of several min / max reductions of
    scalars; a multi-result generic keeps each accumulator in its own 0-d
    buffer, whose stores it cannot prove apart, and stays scalar)."""
    first = group[0]
    inputs = _inputs(first)
    data = list(first.operands)[:inputs]
    with ir.InsertionPoint(first), first.location:
        initial = [tensor.extract(v, []) for op in group for v in list(op.operands)[inputs:]]
        loop = scf.ForOp(index_value(0), tensor.dim(data[0], index_value(0)), index_value(1), initial)
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            elements = [tensor.extract(v, [k]) for v in data]
            carried = list(loop.inner_iter_args)
            yielded = []
            for op in group:
                body = op.regions[0].blocks[0]
                own = list(body.arguments)
                count = len(op.results)
                mapping = dict(zip(own[:inputs], elements))
                mapping.update(zip(own[inputs:], carried[:count]))
                carried = carried[count:]
                operations = list(body.operations)
                clone_ops(operations[:-1], mapping)
                yielded += [mapping.get(v, v) for v in operations[-1].operands]
            scf.YieldOp(yielded)
        results = [tensor.from_elements(r.type, [v]) for op in group for r, v in
                   zip(op.results, list(loop.results)[sum(len(g.results) for g in group[:group.index(op)]):])]
    for op in group:
        for r in op.results:
            r.replace_all_uses_with(results.pop(0))
        op.erase()
    return loop.operation


def _merge_block(block: ir.Block, reductions: list) -> None:
    groups: dict = {}
    for op in reductions:
        groups.setdefault(_key(op), []).append(op)
    index = _Block(block)
    for group in groups.values():
        if len(group) < 2:
            continue
        first, kept = group[0], [group[0]]
        for op in group[1:]:
            moves = index.movable(op, first)
            if moves is None:
                continue
            for m in moves:
                m.move_before(first)
                # just before `first`: after every op that was before it
                index.position[m] = index.position[first] - 0.5
            kept.append(op)
        if len(kept) > 1:
            index.position[_merge(kept)] = index.position[first]


@register_pass
class KilnMergeSiblingReductions(ModulePass):
    """Compute min / max reductions of the same inputs in one generic (one pass over the data)."""

    name = "kiln-merge-sibling-reductions"

    def apply(self, module: ir.Module) -> None:
        blocks: dict = {}
        order = []
        for op in collect_ops(module, {"linalg.generic"}):
            if _is_min_max_reduction(op) and _full_1d(op):
                block = op.block
                if block not in blocks:
                    blocks[block] = []
                    order.append(block)
                blocks[block].append(op)
        for block in order:
            _merge_block(block, blocks[block])
