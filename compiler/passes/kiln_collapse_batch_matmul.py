"""Pass `kiln-collapse-batch-matmul` (stage "linalg", before kiln-reassociate-reductions).

In: a matmul with leading batch dims on its left operand only,
`Y[b..., m, n] += X[b..., m, k] * W[k, n]`: a `linalg.generic` (4-d and
higher `x @ w` with a 2-d `w`: doitgen's `reshape(A, (NR, NQ, 1, NP)) @ C4`)
or a `linalg.batch_matmul` whose right operand is `w` broadcast along the
batch (3-d `x @ w`).
Out: `X` and `Y` collapsed to 2-d (batch dims and rows together), one
`linalg.matmul`, and the result expanded back: kiln-linalg-to-blas then
makes it one BLAS gemm over all batches instead of a naive loop nest. The
collapse is a view when `X` is contiguous (bufferization copies otherwise).
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, linalg, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops, index_value

BATCH_MATMUL_MAPS = ("[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
                     "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]")
_FLOAT_PAIRS = {("arith.mulf", "arith.addf")}
_INT_PAIRS = {("arith.muli", "arith.addi")}


def _dims(affine_map: ir.AffineMap) -> list[int] | None:
    """The loop positions a projected-permutation map reads, else None."""
    positions = []
    for expr in affine_map.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        positions.append(expr.position)
    return positions


def _is_multiply_accumulate(op: ir.Operation) -> bool:
    """The body is `yield out + in0 * in1` (float or integer)."""
    block = op.regions[0].blocks[0]
    body = [inner.operation for inner in block.operations]
    if len(body) != 3:
        return False
    multiply, add, yielded = body
    if (multiply.name, add.name) not in _FLOAT_PAIRS | _INT_PAIRS or yielded.name != "linalg.yield":
        return False
    in0, in1, out = block.arguments
    if set(multiply.operands) != {in0, in1} or in0 == in1:
        return False
    return set(add.operands) == {out, multiply.result} and list(yielded.operands) == [add.result]


def _batch_rank(op: ir.Operation) -> int | None:
    """The number of parallel loops p (>= 3) when the generic is a batched-left
    matmul: maps X (0..p-2, p), W (p, p-1), Y (0..p-1); else None."""
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    iterators = [str(t) for t in op.attributes["iterator_types"]]
    p = len(iterators) - 1
    if p < 3 or any("parallel" not in t for t in iterators[:p]) or "reduction" not in iterators[p]:
        return None
    maps = [_dims(ir.AffineMapAttr(m).value) for m in op.attributes["indexing_maps"]]
    if maps != [list(range(p - 1)) + [p], [p, p - 1], list(range(p))]:
        return None
    if not all(isinstance(v.type, ir.RankedTensorType) for v in op.operands):
        return None
    return p if _is_multiply_accumulate(op) else None


def _broadcast_source(value: ir.Value) -> ir.Value | None:
    """The 2-d `w` that `value` (a 3-d tensor) broadcasts along dim 0, if it does."""
    op = value.owner
    if isinstance(op, ir.Block) or op.name != "linalg.generic" or len(op.operands) != 2:
        return None
    maps = [_dims(ir.AffineMapAttr(m).value) for m in op.attributes["indexing_maps"]]
    block = op.regions[0].blocks[0]
    body = [inner.operation for inner in block.operations]
    if maps != [[1, 2], [0, 1, 2]] or len(body) != 1 or list(body[0].operands) != [block.arguments[0]]:
        return None
    return op.operands[0]


def _reassociation(rank: int) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    rows = [ir.IntegerAttr.get(i64, d) for d in range(rank - 1)]
    return ir.ArrayAttr.get([ir.ArrayAttr.get(rows), ir.ArrayAttr.get([ir.IntegerAttr.get(i64, rank - 1)])])


def _collapsed_type(t: ir.RankedTensorType) -> ir.RankedTensorType:
    dynamic = ir.ShapedType.get_dynamic_size()
    rows = 1
    for d in t.shape[:-1]:
        rows = dynamic if d == dynamic or rows == dynamic else rows * d
    return ir.RankedTensorType.get([rows, t.shape[-1]], t.element_type)


def _collapse(value: ir.Value) -> ir.Value:
    t = ir.RankedTensorType(value.type)
    return tensor.collapse_shape(_collapsed_type(t), value, _reassociation(t.rank))


def _rewrite(op: ir.Operation, x: ir.Value, w: ir.Value, init: ir.Value, p: int) -> None:
    result_type = ir.RankedTensorType(op.results[0].type)
    with ir.InsertionPoint(op), op.location:
        product = linalg.matmul(_collapse(x), w, outs=[_collapse(init)])
        sizes = [tensor.dim(init, index_value(d)) for d in range(p) if result_type.is_dynamic_dim(d)]
        result = tensor.expand_shape(result_type, product, _reassociation(p), sizes, result_type.shape)
    op.results[0].replace_all_uses_with(result)
    op.erase()


@register_pass
class KilnCollapseBatchMatmul(ModulePass):
    """Turn a matmul batched on its left operand only into one 2-d linalg.matmul."""

    name = "kiln-collapse-batch-matmul"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"linalg.generic", "linalg.batch_matmul"}):
            if op.name == "linalg.batch_matmul":
                x, broadcast, init = op.operands
                w = _broadcast_source(broadcast)
                if w is not None and str(op.attributes["indexing_maps"]) == BATCH_MATMUL_MAPS:
                    _rewrite(op, x, w, init, 3)
                continue
            p = _batch_rank(op)
            if p is not None:
                _rewrite(op, *op.operands, p)
