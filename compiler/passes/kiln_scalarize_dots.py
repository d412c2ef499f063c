"""Pass `kiln-scalarize-dots` (stage "linalg", after kiln-element-access).

In: a `linalg.matmul` whose result has one element (1xK @ Kx1, as
`L[i, :i] @ x[:i]` lowers) or a `linalg.dot`, on float or integer tensors.
Out: an `scf.for` over K carrying the sum as a scalar (float adds marked
`fastmath<reassoc, contract>`, so LLVM vectorizes the loop), reading the
operands with `tensor.extract`; the result rebuilt with `tensor.from_elements`.
In a loop this replaces a BLAS call on a 1x1 output and the 1x1 buffer it
needs at every iteration by a register accumulator.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, scf, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops, index_value

FASTMATH = "#arith.fastmath<reassoc,contract>"
MATMUL_MAPS = ("[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
               "affine_map<(d0, d1, d2) -> (d0, d1)>]")


def _one_element(t: ir.Type) -> bool:
    t = ir.RankedTensorType(t)
    return t.has_static_shape and all(d == 1 for d in t.shape)


def _dot_operands(op: ir.Operation) -> tuple[ir.Value, ir.Value, ir.Value] | None:
    """(lhs, rhs, init) of a dot-shaped op with one element type, else None."""
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    if op.name == "linalg.matmul" and str(op.attributes["indexing_maps"]) != MATMUL_MAPS:
        return None  # a transposed or broadcast matmul: its operands are not 1xK / Kx1
    lhs, rhs, init = op.operands
    if not all(isinstance(v.type, ir.RankedTensorType) for v in (lhs, rhs, init)):
        return None
    element = ir.RankedTensorType(init.type).element_type
    if any(ir.RankedTensorType(v.type).element_type != element for v in (lhs, rhs)):
        return None
    if not (isinstance(element, (ir.F32Type, ir.F64Type, ir.F16Type, ir.BF16Type))
            or isinstance(element, ir.IntegerType)):
        return None
    ranks = [ir.RankedTensorType(v.type).rank for v in (lhs, rhs, init)]
    if op.name == "linalg.matmul" and ranks == [2, 2, 2] and _one_element(init.type):
        return lhs, rhs, init
    if op.name == "linalg.dot" and ranks == [1, 1, 0]:
        return lhs, rhs, init
    return None


def _scalarize(op: ir.Operation, lhs: ir.Value, rhs: ir.Value, init: ir.Value) -> None:
    element = ir.RankedTensorType(init.type).element_type
    is_float = not isinstance(element, ir.IntegerType)
    matmul = op.name == "linalg.matmul"
    with ir.InsertionPoint(op), op.location:
        zero, one = index_value(0), index_value(1)
        start = tensor.extract(init, [zero] * ir.RankedTensorType(init.type).rank)
        length = tensor.dim(lhs, one if matmul else zero)
        loop = scf.ForOp(zero, length, one, [start])
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            a = tensor.extract(lhs, [zero, k] if matmul else [k])
            b = tensor.extract(rhs, [k, zero] if matmul else [k])
            if is_float:
                product = arith.mulf(a, b)
                total = arith.addf(loop.inner_iter_args[0], product)
                flags = ir.Attribute.parse(FASTMATH)
                product.owner.attributes["fastmath"] = flags
                total.owner.attributes["fastmath"] = flags
            elif ir.IntegerType(element).width == 1:
                # A bool dot is `any(a & b)`, as linalg's own i1 arithmetic: or of ands.
                total = arith.ori(loop.inner_iter_args[0], arith.andi(a, b))
            else:
                total = arith.addi(loop.inner_iter_args[0], arith.muli(a, b))
            scf.YieldOp([total])
        result = tensor.from_elements(init.type, [loop.results[0]])
    op.results[0].replace_all_uses_with(result)
    op.erase()


@register_pass
class KilnScalarizeDots(ModulePass):
    """Compute one-element matmuls and dots in a scalar loop instead of a buffer."""

    name = "kiln-scalarize-dots"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"linalg.matmul", "linalg.dot"}):
            operands = _dot_operands(op)
            if operands is not None:
                _scalarize(op, *operands)
