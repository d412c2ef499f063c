"""Pass `kiln-wide-vectors` (stage "bufferized", last: after the bodies are outlined).

In: functions (`func.func`, and the `llvm.func` bodies kiln-parallelize and
kiln-outline-serial-loops outlined) holding vector math: the op that ends
each exp kiln-expand-exp built and each power kiln-expand-pow built carries
the discardable attribute `kiln.vector_math`.
Out: those functions ask LLVM for 512-bit vectors,

    passthrough = [["prefer-vector-width", "512"]]

(`llvm.passthrough` on a `func.func`, which convert-func-to-llvm carries
over), other functions are left alone.

Why: LLVM's tuning for the x86 CPUs with AVX-512 prefers 256-bit vectors
(wide vectors lower the clock on some of them and cost more in the loop's
remainder), so kiln's loops ran on ymm registers only. A loop that computes
exp, ~20 floating-point ops per element out of one load and one store, is
bound by arithmetic, and there 512 bits run it close to twice as fast:
softmax over 4096 x 1024 f32 rows went from 2.37 to 1.82 ms on a Sapphire
Rapids core. Asked of every function, the same width lost up to 1.65x on
loops bound by memory or by the cost of their remainders (syrk, gemm's
elementwise part, gramschmidt), hence one function at a time. On a CPU
without AVX-512 the attribute changes nothing: LLVM's widest legal vector
there is 256 bits. The attribute is a function's, so a function with one
such loop widens all of its loops: the loops of a parallel nest are one
function each, and kiln-outline-serial-loops gives large serial nests their
own.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import ancestors, collect_ops

MARK = "kiln.vector_math"
# The ops the expansions end with (and so carry MARK): exp's select; pow's
# select, copysign (odd integer exponents) or truncf (f32).
MARKED_OPS = frozenset({"arith.select", "math.copysign", "arith.truncf"})
_WIDTH_KEY = "prefer-vector-width"


def _with_width(old: ir.Attribute | None, width: int) -> ir.ArrayAttr:
    """`old` passthrough list with `prefer-vector-width` set to `width`."""
    entries = [entry for entry in (list(ir.ArrayAttr(old)) if old is not None else [])
               if not (isinstance(entry, ir.ArrayAttr) and len(entry) == 2 and
                       str(entry[0]) == f'"{_WIDTH_KEY}"')]
    entries.append(ir.ArrayAttr.get([ir.StringAttr.get(_WIDTH_KEY), ir.StringAttr.get(str(width))]))
    return ir.ArrayAttr.get(entries)


@register_pass
class KilnWideVectors(ModulePass):
    """Give the functions that compute exp or a power LLVM's 512-bit vectors."""

    name = "kiln-wide-vectors"
    width: int = option(512, "vector width in bits asked of LLVM for functions with vector math "
                             "(0: ask nothing)", minimum=0)

    def apply(self, module: ir.Module) -> None:
        if not self.width:
            return
        functions = {}
        for op in collect_ops(module, MARKED_OPS):
            if MARK in op.attributes:
                function = list(ancestors(op))[-2]  # (the module's child)
                functions[function] = None
        for function in functions:
            key = "llvm.passthrough" if function.name == "func.func" else "passthrough"
            attributes = function.attributes
            attributes[key] = _with_width(attributes[key] if key in attributes else None, self.width)
