"""Pass `kiln-check-alloc-sizes` (stage "bufferized", before kiln-refine-if-layouts; after kiln-expand-exp, and with `loops=true` after one-shot-bufferize).

In: `memref.alloc` ops, whose byte size `finalize-memref-to-llvm` computes
with wrapping 64-bit multiplications.
Out: before each alloc with dynamic sizes, `scf.if (a size < 0)
{ func.call @kiln_check_failed(-1, null, -2, 0) }` and `scf.if (byte size > 2**62)
{ ... (-1, null, -1, 0) }`; the runtime raises ValueError / MemoryError for them.
Without them a size product that wraps around (or a negative dim) allocates
a small buffer the code then overruns. The byte size is computed in f64,
which cannot wrap. A static alloc that is too large gets the call
unconditionally.

With `loops=true` (run right after one-shot-bufferize, before
buffer-loop-hoisting) only the allocs inside `scf.for` / `scf.while` bodies
are checked, in place, and their sizes then become 0 when a check fails:
buffer-loop-hoisting may move such an alloc before its loop, where it also
runs when the loop runs zero times (`for i in range(m): t = np.empty(m - 1)`
with m < 1 must not raise). The checks stay in the loop; the later run skips
the allocs marked `kiln.sizes_checked`.
"""

from __future__ import annotations

import math

from kiln.compiler.mlir import arith, ir, llvm, scf
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import ancestors, collect_ops, index_value
from kiln.compiler.passes.kiln_lower_checks import declare_failure_callee, report_failure

OUT_OF_MEMORY_CHECK_ID = -1  # runtime/support.c's KILN_OUT_OF_MEMORY
MAX_BYTES = 2.0 ** 62
# The first reported value tells the runtime which: MemoryError or ValueError.
TOO_LARGE, NEGATIVE_DIM = -1, -2
CHECKED = "kiln.sizes_checked"
SERIAL_LOOPS = frozenset({"scf.for", "scf.while"})


def _in_serial_loop(op: ir.Operation) -> bool:
    return any(parent.name in SERIAL_LOOPS for parent in ancestors(op))


def _element_bytes(memref_type: ir.MemRefType) -> int:
    """Bytes of one element (`f32`, `i1`, `index`, `complex<f64>`, ...)."""
    text = str(memref_type.element_type)
    factor = 1
    if text.startswith("complex<"):
        text, factor = text[len("complex<"):-1], 2
    if text == "index":
        return 8
    bits = int("".join(c for c in text if c.isdigit()) or 64)
    return factor * max(1, bits // 8)


def _report_failure(code: int) -> None:
    """The failure hook with no message (the runtime words these itself)."""
    no_message = llvm.ZeroOp(llvm.PointerType.get()).result
    report_failure(OUT_OF_MEMORY_CHECK_ID, no_message, [arith.constant(ir.IntegerType.get_signless(64), code)])


@register_pass
class KilnCheckAllocSizes(ModulePass):
    """Report allocations with a negative dim or more than 2**62 bytes instead of overrunning them."""

    name = "kiln-check-alloc-sizes"
    loops: bool = option(False, "check only the allocs of loop bodies, before buffer-loop-hoisting may move them")

    def apply(self, module: ir.Module) -> None:
        allocs = collect_ops(module, {"memref.alloc"})
        if self.loops:
            allocs = [op for op in allocs if _in_serial_loop(op)]
        else:
            allocs = [op for op in allocs if CHECKED not in op.attributes]
        if not allocs:
            return
        with module.context, ir.Location.unknown():
            declare_failure_callee(module)
        f64 = ir.F64Type.get()
        i64 = ir.IntegerType.get_signless(64)
        for op in allocs:
            memref_type = ir.MemRefType(op.results[0].type)
            static = [d for i, d in enumerate(memref_type.shape) if not memref_type.is_dynamic_dim(i)]
            static_bytes = float(math.prod(static)) * _element_bytes(memref_type)
            dynamic = list(op.operands)[: sum(memref_type.is_dynamic_dim(i) for i in range(memref_type.rank))]
            with ir.InsertionPoint(op), op.location:
                if not dynamic:
                    if static_bytes > MAX_BYTES:
                        _report_failure(TOO_LARGE)
                    continue
                total = arith.constant(f64, static_bytes)
                negative = None
                for size in dynamic:
                    as_i64 = arith.index_cast(i64, size)
                    below = arith.cmpi(arith.CmpIPredicate.slt, as_i64, arith.constant(i64, 0))
                    negative = below if negative is None else arith.ori(negative, below)
                    total = arith.mulf(total, arith.sitofp(f64, as_i64))
                too_large = arith.cmpf(arith.CmpFPredicate.OGT, total, arith.constant(f64, MAX_BYTES))
                for bad, code in ((negative, NEGATIVE_DIM), (too_large, TOO_LARGE)):
                    if_op = scf.IfOp(bad)
                    with ir.InsertionPoint(if_op.then_block):
                        _report_failure(code)
                        scf.YieldOp([])
                if self.loops:
                    # Past the checks the sizes are valid; where they are not,
                    # the alloc (wherever it moves) takes none.
                    invalid = arith.ori(negative, too_large)
                    zero = index_value(0)
                    for i, size in enumerate(dynamic):
                        op.operands[i] = arith.select(invalid, zero, size)
                    op.attributes[CHECKED] = ir.UnitAttr.get()
