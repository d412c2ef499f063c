"""Pass `kiln-interchange-reductions` (stage "linalg", after kiln-block-sums).

In: `linalg.generic` ops whose innermost loop is a reduction while the
contiguous (last) axis of an input is indexed by a parallel loop and no
input's last axis is indexed by the innermost loop: column sums, max / min
and argmax / argmin along a leading axis (`np.sum(x, axis=0)`), sums over
middle axes (`np.sum(x, axis=1)` of a 3-d array), the window sums of a
convolution written with NumPy (`np.sum(x[:, i:i+K, j:j+K, :, None] * w,
axis=(1, 2, 3))`).
Out: the same op with its loops reordered: the reduction loops move inside
the parallel loops that every input indexes ahead of the reduced axes (the
leading "outer" parallel loops: the batch `n` of a convolution, the `a` of
`x[a, b, c]` summed over `b`) and outside the other parallel loops (each
group keeping its order). The inner loop then runs along the contiguous
axis, updating a row of accumulators elementwise, which LLVM vectorizes;
before, each output element was a strided walk down a column. The outer
parallel loops stay outermost: the input is read in its memory order, the
row of accumulators stays in cache while it is reduced, and kiln-parallelize
splits those loops across threads (with the reductions outermost it could
only split the inner loops, one dispatch per reduction step: ~6,000 calls
of 64 multiply-adds in NPBench's resnet at S). Each output element still
combines its inputs in the same order, so results are bit-identical.
`linalg.index` ops in the body are renumbered.
"""

from __future__ import annotations

import re

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops


def _kinds(op: ir.Operation) -> list[str]:
    return ["reduction" if "reduction" in str(t) else "parallel" for t in op.attributes["iterator_types"]]


def _last_dim(m: ir.AffineMap) -> int | None:
    """The loop indexing the last axis of an operand, when it is a bare loop dim."""
    if not m.results:
        return None
    text = str(m.results[len(m.results) - 1])
    return int(text[1:]) if text.startswith("d") and text[1:].isdigit() else None


def _order(op: ir.Operation) -> list[int] | None:
    """The new loop order (old dims, outermost first), or None to keep the op."""
    kinds = _kinds(op)
    rank = len(kinds)
    if rank < 2 or kinds[-1] != "reduction" or "parallel" not in kinds:
        return None
    num_inputs = len(op.operands) - len(op.results)
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]][:num_inputs]
    lasts = [_last_dim(m) for m in maps]
    if rank - 1 in lasts or not any(d is not None and kinds[d] == "parallel" for d in lasts):
        return None
    outer = _outer_parallel(kinds, maps, lasts)
    return (outer + [d for d in range(rank) if kinds[d] == "reduction"]
            + [d for d in range(rank) if kinds[d] == "parallel" and d not in outer])


def _first_positions(m: ir.AffineMap) -> dict[int, int]:
    """Each loop dim the map uses -> the first result (axis) that uses it."""
    first: dict[int, int] = {}
    for position, expr in enumerate(m.results):
        for used in re.findall(r"\bd(\d+)\b", str(expr)):
            first.setdefault(int(used), position)
    return first


def _outer_parallel(kinds: list[str], maps: list[ir.AffineMap], lasts: list[int | None]) -> list[int]:
    """The parallel loops that stay outside the reductions: each indexes no
    input's last axis, appears in some input with a reduced axis, and in
    every such input comes before all its reduced axes."""
    # Per input reading a reduced axis: its dims' first axes and its first reduced axis.
    reading = []
    for m in maps:
        first = _first_positions(m)
        reduced = [position for dim, position in first.items() if kinds[dim] == "reduction"]
        if reduced:
            reading.append((first, min(reduced)))
    return [d for d, kind in enumerate(kinds)
            if kind == "parallel" and d not in lasts and any(d in first for first, _ in reading)
            and all(first[d] < reduced for first, reduced in reading if d in first)]


def _interchange(op: ir.Operation, order: list[int]) -> None:
    rank = len(order)
    position = {old: new for new, old in enumerate(order)}
    # Old dim d, seen from the new loops, is new dim position[d].
    to_new = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(position[d]) for d in range(rank)])
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    new_maps = [ir.AffineMap.get(rank, m.n_symbols, [e.compose(to_new) for e in m.results]) for m in maps]
    op.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
    iterators = list(op.attributes["iterator_types"])
    op.attributes["iterator_types"] = ir.ArrayAttr.get([iterators[d] for d in order])
    for inner in op.regions[0].blocks[0].operations:
        inner = inner.operation
        if inner.name == "linalg.index":
            dim = ir.IntegerAttr(inner.attributes["dim"]).value
            inner.attributes["dim"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), position[dim])


@register_pass
class KilnInterchangeReductions(ModulePass):
    """Put the reduction loops of a column reduction inside its outer parallel loops, outside the contiguous ones."""

    name = "kiln-interchange-reductions"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"linalg.generic"}):
            order = _order(op)
            if order is not None:
                _interchange(op, order)
