"""Pass `memref-copy-to-linalg` (stage "bufferized").

In: `memref.copy %a, %b` left by bufferization.
Out: `linalg.copy ins(%a) outs(%b)`, which lowers to loops; the bindings'
wheel has no `memrefCopy` runtime function for `memref.copy` to call on
strided views. A copy between two contiguous (identity-layout) buffers
stays a `memref.copy`: finalize-memref-to-llvm lowers it to one
`llvm.intr.memcpy` (the C library's memcpy), where a loop would be one
more vectorized body for LLVM to compile (channel_flow had 85 of them,
whole-array copies, each outlined by kiln-parallelize). A copy
of a buffer onto itself (the same value, or two `memref.subview`s of one
buffer with the same offsets, sizes and strides, as bufferization leaves for a
slice computed in place by kiln-compute-into-destination) is dropped.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, linalg
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops


def _same_window(a: ir.Value, b: ir.Value) -> bool:
    """Whether `a` and `b` are the same memory: one value, or equal subviews of one."""
    if a == b:
        return True
    if isinstance(a.owner, ir.Block) or isinstance(b.owner, ir.Block):
        return False
    first, second = a.owner.operation, b.owner.operation
    if first.name != "memref.subview" or second.name != "memref.subview" or a.type != b.type:
        return False
    if {n: first.attributes[n] for n in first.attributes} != {n: second.attributes[n] for n in second.attributes}:
        return False
    rest_a, rest_b = list(first.operands), list(second.operands)
    return _same_window(rest_a[0], rest_b[0]) and rest_a[1:] == rest_b[1:]


def _contiguous(t: ir.Type) -> bool:
    """An identity-layout memref: finalize-memref-to-llvm copies it with one
    `llvm.intr.memcpy` (no runtime function needed)."""
    t = ir.MemRefType(t)
    return isinstance(t.layout, ir.AffineMapAttr) and ir.AffineMapAttr(t.layout).value == ir.AffineMap.get_identity(t.rank)


@register_pass
class MemrefCopyToLinalg(ModulePass):
    """Rewrite memref.copy into linalg.copy (lowered to loops later)."""

    name = "memref-copy-to-linalg"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"memref.copy"}):
            if _same_window(op.operands[0], op.operands[1]):
                op.erase()
                continue
            if _contiguous(op.operands[0].type) and _contiguous(op.operands[1].type):
                continue
            with ir.InsertionPoint(op), op.location:
                linalg.copy(op.operands[0], outs=[op.operands[1]])
            op.erase()
