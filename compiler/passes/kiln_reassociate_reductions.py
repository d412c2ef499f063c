"""Pass `kiln-reassociate-reductions` (stage "linalg", after fusion).

In: `linalg.generic` ops with a reduction iterator whose combiner is a
floating-point `arith.addf` / `arith.mulf` of the output block argument.
Out: the same ops with `fastmath<reassoc, contract>` on the combiner, which
lets LLVM's loop vectorizer split the reduction into vector lanes (a strict
left-to-right float sum cannot be vectorized). The result changes within
rounding, as NumPy's own pairwise summation differs from a sequential sum.
Max/min reductions need nothing: they are exact in any order.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops

COMBINERS = {"arith.addf", "arith.mulf"}
FASTMATH = "#arith.fastmath<reassoc,contract>"


def _has_reduction(op: ir.Operation) -> bool:
    return any("reduction" in str(t) for t in op.attributes["iterator_types"])


@register_pass
class KilnReassociateReductions(ModulePass):
    """Mark float add/mul reduction combiners reassociable so reductions vectorize."""

    name = "kiln-reassociate-reductions"

    def apply(self, module: ir.Module) -> None:
        flags = ir.Attribute.parse(FASTMATH)
        for op in collect_ops(module, {"linalg.generic"}):
            if not _has_reduction(op):
                continue
            block = op.regions[0].blocks[0]
            num_inputs = len(block.arguments) - len(op.results)
            outputs = list(block.arguments)[num_inputs:]
            for inner in block.operations:
                inner = inner.operation
                if inner.name in COMBINERS and any(v == out for v in inner.operands for out in outputs):
                    inner.attributes["fastmath"] = flags
