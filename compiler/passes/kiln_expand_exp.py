"""Pass `kiln-expand-exp` (stage "bufferized", after lowering to loops).

In: scalar `math.exp` on f32/f64, which LLVM would turn into one libm call
per element (no vector math library is available to the JIT).
Out: the same function built from arith ops only, so LLVM's loop vectorizer
can vectorize loops that call it: exp(x) = 2^n * p(r) with
n = round(x / ln 2), r = x - n ln 2 (ln 2 split in two for exactness) and p
the Taylor polynomial of degree 7 (f32) / 13 (f64), whose truncation error
on |r| <= ln(2)/2 is below half an ulp. 2^n is applied as 2^(n>>1) *
2^(n - (n>>1)) so that overflow to inf and gradual underflow come out of
the multiplications; NaN passes through.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kiln.compiler.mlir import arith, ir
from kiln.compiler.mlir import math as mlir_math
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops
from kiln.compiler.passes.kiln_wide_vectors import MARK


@dataclass(frozen=True)
class _Format:
    width: int  # bits
    mantissa: int  # explicit mantissa bits
    bias: int
    degree: int  # Taylor degree
    ln2_hi: float  # ln 2 rounded so that n * ln2_hi is exact for the n in range
    ln2_lo: float
    lowest: float  # exp(x) == 0 below (after rounding)
    highest: float  # exp(x) == inf above


FORMATS = {
    "f32": _Format(32, 23, 127, 7, 0.693359375, -2.12194440e-4, -104.0, 89.0),
    "f64": _Format(64, 52, 1023, 13, 0.693147180369123816490, 1.90821492927058770002e-10, -746.0, 710.0),
}
_CONTRACT = "#arith.fastmath<contract>"


def _expand(op: ir.Operation, fmt: _Format) -> ir.Value:
    x = op.operands[0]
    ft = x.type
    it = ir.IntegerType.get_signless(fmt.width)
    contract = ir.Attribute.parse(_CONTRACT)

    def const(v: float) -> ir.Value:
        return arith.constant(ft, v)

    def iconst(v: int) -> ir.Value:
        return arith.constant(it, v)

    # Clamp (maxnum/minnum map NaN to a finite bound; NaN is restored below).
    clamped = arith.maxnumf(arith.minnumf(x, const(fmt.highest)), const(fmt.lowest))
    n_float = mlir_math.floor(arith.addf(arith.mulf(clamped, const(1.0 / math.log(2.0))), const(0.5)))
    r = arith.subf(clamped, arith.mulf(n_float, const(fmt.ln2_hi)))
    r = arith.subf(r, arith.mulf(n_float, const(fmt.ln2_lo)))
    # Horner: p(r) = sum r^k / k!
    p = const(1.0 / math.factorial(fmt.degree))
    for k in range(fmt.degree - 1, -1, -1):
        p = arith.addf(arith.mulf(p, r, fastmath=contract), const(1.0 / math.factorial(k)), fastmath=contract)
    n = arith.fptosi(it, n_float)
    half = arith.shrsi(n, iconst(1))
    rest = arith.subi(n, half)

    def pow2(e: ir.Value) -> ir.Value:
        return arith.bitcast(ft, arith.shli(arith.addi(e, iconst(fmt.bias)), iconst(fmt.mantissa)))

    value = arith.mulf(arith.mulf(p, pow2(half)), pow2(rest))
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
    result = arith.select(is_nan, x, value)
    # (kiln-wide-vectors widens the vectors of the functions holding it.)
    result.owner.attributes[MARK] = ir.UnitAttr.get()
    return result


@register_pass
class KilnExpandExp(ModulePass):
    """Expand scalar f32/f64 math.exp into vectorizable arith ops."""

    name = "kiln-expand-exp"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"math.exp"}):
            fmt = FORMATS.get(str(op.result.type))
            if fmt is None:
                continue
            with ir.InsertionPoint(op), op.location:
                value = _expand(op, fmt)
            op.result.replace_all_uses_with(value)
            op.erase()
