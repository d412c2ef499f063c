"""Pass `memref-copy-to-linalg` (stage "bufferized").

In: `memref.copy %a, %b` left by bufferization.
Out: `linalg.copy ins(%a) outs(%b)`, which lowers to loops; the bindings'
wheel has no `memrefCopy` runtime function for `memref.copy` to call.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, linalg
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops


@register_pass
class MemrefCopyToLinalg(ModulePass):
    """Rewrite memref.copy into linalg.copy (lowered to loops later)."""

    name = "memref-copy-to-linalg"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"memref.copy"}):
            with ir.InsertionPoint(op), op.location:
                linalg.copy(op.operands[0], outs=[op.operands[1]])
            op.erase()
