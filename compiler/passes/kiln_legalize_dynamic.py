"""Pass `kiln-legalize-dynamic` (stage "linalg", before stablehlo-legalize-to-linalg).

In: StableHLO with the dynamic-shape ops that `stablehlo-legalize-to-linalg`
leaves behind: `dynamic_broadcast_in_dim` with a dynamic result,
`dynamic_reshape`, `reverse` on dynamic dims.
Out: the same computation in `tensor` / `linalg` / `arith` ops:
`tensor.empty` sized from the shape operand plus a `linalg.generic` whose
input map drops broadcast dims; `tensor.reshape`; a `linalg.generic` that
reads the reversed position with `tensor.extract`.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, linalg, tensor
from kiln.compiler.passes import register_pass
from kiln.compiler.passes._util import collect_ops, dynamic_sizes_from_shape_tensor, index_value


def _is_dynamic(t: ir.Type) -> bool:
    return not ir.RankedTensorType(t).has_static_shape


def _broadcast(op: ir.Operation) -> ir.Value:
    """`dynamic_broadcast_in_dim` as tensor.empty + linalg.generic."""
    operand, shape = op.operands[0], op.operands[1]
    result_type = ir.RankedTensorType(op.results[0].type)
    operand_type = ir.RankedTensorType(operand.type)
    bdims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
    sizes = dynamic_sizes_from_shape_tensor(shape, result_type)
    init = tensor.empty(sizes, result_type.element_type)
    rank = result_type.rank
    exprs = []
    for j, d in enumerate(bdims):
        src = operand_type.shape[j]
        dst = result_type.shape[d]
        # A static-1 operand dim stretched to a larger result dim reads index 0.
        exprs.append(ir.AffineConstantExpr.get(0) if src == 1 and dst != 1 else ir.AffineDimExpr.get(d))
    in_map = ir.AffineMap.get(rank, 0, exprs)
    out_map = ir.AffineMap.get_identity(rank)
    generic = linalg.GenericOp(
        [result_type], [operand], [init], ir.ArrayAttr.get([ir.AffineMapAttr.get(in_map), ir.AffineMapAttr.get(out_map)]),
        ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank),
    )
    block = generic.regions[0].blocks.append(operand_type.element_type, result_type.element_type)
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])
    return generic.result


def _reshape(op: ir.Operation) -> ir.Value:
    operand, shape = op.operands[0], op.operands[1]
    return tensor.reshape(op.results[0].type, operand, shape)


def _reverse(op: ir.Operation) -> ir.Value:
    """Reverse by reading `x[..., n-1-i, ...]` for each output position."""
    operand = op.operands[0]
    result_type = ir.RankedTensorType(op.results[0].type)
    dims = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    rank = result_type.rank
    sizes = [tensor.dim(operand, index_value(i)) if result_type.is_dynamic_dim(i) else result_type.shape[i]
             for i in range(rank)]
    init = tensor.empty(sizes, result_type.element_type)
    out_map = ir.AffineMap.get_identity(rank)
    generic = linalg.GenericOp(
        [result_type], [], [init], ir.ArrayAttr.get([ir.AffineMapAttr.get(out_map)]),
        ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank),
    )
    block = generic.regions[0].blocks.append(result_type.element_type)
    with ir.InsertionPoint(block):
        indices = []
        one = index_value(1)
        for i in range(rank):
            idx = linalg.IndexOp(i).result
            if i in dims:
                n = sizes[i] if isinstance(sizes[i], ir.Value) else index_value(sizes[i])
                idx = arith.subi(arith.subi(n, one), idx)
            indices.append(idx)
        linalg.YieldOp([tensor.extract(operand, indices)])
    return generic.result


_RULES = {
    "stablehlo.dynamic_broadcast_in_dim": _broadcast,
    "stablehlo.dynamic_reshape": _reshape,
    "stablehlo.reverse": _reverse,
}


def _needs_rewrite(op: ir.Operation) -> bool:
    if op.name == "stablehlo.dynamic_broadcast_in_dim":
        return _is_dynamic(op.results[0].type)
    if op.name == "stablehlo.reverse":
        return _is_dynamic(op.results[0].type)
    return op.name in _RULES


@register_pass("kiln-legalize-dynamic")
def legalize_dynamic(module: ir.Module, options: dict) -> None:
    """Lower the dynamic-shape StableHLO ops that stablehlo-legalize-to-linalg leaves."""
    for op in collect_ops(module, _RULES):
        if not _needs_rewrite(op):
            continue
        with ir.InsertionPoint(op), op.location:
            new = _RULES[op.name](op)
        op.results[0].replace_all_uses_with(new)
        op.erase()
