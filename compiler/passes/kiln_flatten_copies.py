"""Pass `kiln-flatten-copies` (stage "bufferized", before memref-copy-to-linalg).

In: `memref.copy %src, %dst` of rank >= 2 where both memrefs are
contiguous (identity layout), e.g. `img.copy()` of an (H, W, 3) image.
Out: the same copy of the two buffers collapsed to one dimension, so it
lowers to a single loop over all elements instead of a loop nest whose
innermost loop may run over a handful of elements (3 channels) and does
not vectorize.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, memref
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collapsed_1d, collect_ops


def _contiguous(t: ir.Type) -> bool:
    """A memref of rank >= 2 with the identity (row-major, offset 0) layout."""
    t = ir.MemRefType(t)
    if t.rank < 2 or not isinstance(t.layout, ir.AffineMapAttr):
        return False
    return ir.AffineMapAttr(t.layout).value == ir.AffineMap.get_identity(t.rank)


@register_pass
class KilnFlattenCopies(ModulePass):
    """Collapse copies between contiguous multi-dimensional buffers to one dimension."""

    name = "kiln-flatten-copies"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"memref.copy"}):
            src, dst = op.operands
            if not (_contiguous(src.type) and _contiguous(dst.type)):
                continue
            with ir.InsertionPoint(op), op.location:
                memref.copy(collapsed_1d(src), collapsed_1d(dst))
            op.erase()
