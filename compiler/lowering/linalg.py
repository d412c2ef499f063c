"""Stage "mlir": dot_general -> `stablehlo.dot_general`."""

from __future__ import annotations

from kiln.compiler.lowering import lowering
from kiln.dialects.stablehlo import tensor_type
from kiln.compiler.mlir import ir
from kiln.dialects import stablehlo as hlo
from kiln.primitives import linalg


@lowering(linalg.dot_general_p)
def _dot_general(ctx, eqn, lhs, rhs):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]

    def lst(v):
        return "[" + ", ".join(str(i) for i in v) + "]"

    dims = ir.Attribute.parse(
        f"#stablehlo.dot<lhs_batching_dimensions = {lst(lb)}, rhs_batching_dimensions = {lst(rb)}, "
        f"lhs_contracting_dimensions = {lst(lc)}, rhs_contracting_dimensions = {lst(rc)}>"
    )
    return [hlo.one("dot_general", tensor_type(eqn.outvars[0].aval), lhs, rhs, dot_dimension_numbers=dims)]
