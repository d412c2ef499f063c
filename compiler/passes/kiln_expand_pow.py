"""Pass `kiln-expand-pow` (stage "bufferized", after lowering to loops).

In: scalar `math.powf` on f32/f64 whose exponent is a constant c with 2c an
integer and |c| <= 16 (`r ** -1.5`, `x ** 3.0`, `x ** 0.5`, `d ** 2.0`).
Each would be one libm `pow` call per element (~40 cycles, and the loop
cannot vectorize: nbody spent 46 % of its time in glibc's pow).
Out: arith and math ops only (sqrt, fma, one division), which LLVM
vectorizes. c = 0 gives 1 and c = 1 gives x, as pow does; c = 0.5 gives
sqrt(x), as NumPy's power does (-0 and -inf give -0 and NaN there, where C's
pow gives +0 and +inf).

How |x|^c is computed (f64; f32 is computed in f64 and rounded once):
- x = m * 2^e from the exponent bits (a subnormal x is first scaled by
  2^64), m in [1, 2); for a half-integer c, e is made even (m in [1, 4)).
- m^c in double-double (hi + lo, ~2^-100 relative): m^n by binary
  exponentiation with fma-exact products; times sqrt(m) as the pair
  (s, (m - s*s) / 2s) when c is a half-integer; for c < 0 the reciprocal of
  the pair (q = 1/hi, corrected by fma(-q, hi, 1) - q*lo). m^c lies in
  [2^-33, 2^33], so nothing overflows here.
- RN(hi + lo) times 2^(e*c), applied as 2^(s>>1) * 2^(s - (s>>1)) with
  s = e*c clamped to +-1400: exact while the result is normal, one rounding
  into overflow or gradual underflow.
So the result is the correctly rounded |x|^c except where it lies within
~2^-45 ulp of a rounding boundary (and subnormal results, rounded twice).
glibc's pow (0.52 ulp) and NumPy's vector pow (SVML on AVX-512, ~1 ulp)
are not correctly rounded either: kiln's results differ from NumPy's by at
most one ulp, in about as many elements as glibc's did. Exact cases stay
exact: x ** 2.0 == x * x, x ** 0.5 == sqrt(x), x ** -1.0 == 1 / x for
normal results, which are NumPy's own answers there.

Special values follow C's pow: x = +-0 and +-inf give 0 or inf by the sign
of c (odd integer c keeps x's sign), NaN stays NaN, a negative x with a
half-integer c gives NaN (but pow(-inf, c) = pow(+inf, c) and
pow(-0, c) = pow(+0, c) there).
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir
from kiln.compiler.mlir import math as mlir_math
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops, constant_float
from kiln.compiler.passes.kiln_wide_vectors import MARK, MARKED_OPS

MAX_TWICE_EXPONENT = 32  # |2c| at most: m^c stays within [2^-33, 2^33]
_SCALE_CLAMP = 1400  # |e*c| beyond this gives 0 or inf whatever m^c is


def constant_exponent(op: ir.Operation) -> float | None:
    """The exponent of `math.powf` when it is an expandable constant."""
    c = constant_float(op.operands[1])
    if c is None:
        return None
    twice = 2.0 * c
    if twice != twice or twice != int(twice) or abs(twice) > MAX_TWICE_EXPONENT:
        return None
    return c


class _Builder:
    """f64 / i64 constants and double-double arithmetic at the insertion point."""

    def __init__(self):
        self.f64 = ir.F64Type.get()
        self.i64 = ir.IntegerType.get_signless(64)

    def f(self, v: float) -> ir.Value:
        return arith.constant(self.f64, v)

    def i(self, v: int) -> ir.Value:
        return arith.constant(self.i64, v)

    def pow2(self, e: ir.Value) -> ir.Value:
        """2^e for an i64 e in the normal exponent range."""
        return arith.bitcast(self.f64, arith.shli(arith.addi(e, self.i(1023)), self.i(52)))

    # Double-double values are pairs (hi, lo); lo None stands for 0.
    @staticmethod
    def mul_dd_d(hi, lo, b):
        p = arith.mulf(hi, b)
        err = mlir_math.fma(hi, b, arith.negf(p))
        return p, err if lo is None else arith.addf(err, arith.mulf(lo, b))

    @staticmethod
    def mul_dd_dd(hi, lo, bhi, blo):
        p = arith.mulf(hi, bhi)
        err = mlir_math.fma(hi, bhi, arith.negf(p))
        cross = [arith.mulf(a, b) for a, b in ((hi, blo), (lo, bhi)) if b is not None and a is not None]
        if cross:
            err = arith.addf(err, cross[0] if len(cross) == 1 else arith.addf(cross[0], cross[1]))
        return p, err


def _magnitude_power(b: _Builder, ax: ir.Value, twice: int) -> ir.Value:
    """|x|^c for ax = |x| finite and nonzero (c = twice / 2), as described above."""
    bits = arith.bitcast(b.i64, ax)
    subnormal = arith.cmpi(arith.CmpIPredicate.eq, arith.shrui(bits, b.i(52)), b.i(0))
    scaled = arith.select(subnormal, arith.mulf(ax, b.f(2.0 ** 64)), ax)
    bits = arith.bitcast(b.i64, scaled)
    e = arith.subi(arith.shrui(bits, b.i(52)), arith.select(subnormal, b.i(1023 + 64), b.i(1023)))
    m = arith.bitcast(b.f64, arith.ori(arith.andi(bits, b.i((1 << 52) - 1)), b.i(1023 << 52)))
    half = twice % 2 != 0
    if half:  # make e even: m in [1, 4)
        odd = arith.andi(e, b.i(1))
        m = arith.mulf(m, b.pow2(odd))
        e = arith.subi(e, odd)
    n = abs(twice) // 2
    hi, lo = None, None
    if n:
        hi = m
        for bit in bin(n)[3:]:
            hi, lo = b.mul_dd_dd(hi, lo, hi, lo)
            if bit == "1":
                hi, lo = b.mul_dd_d(hi, lo, m)
    if half:
        s = mlir_math.sqrt(m)
        residual = mlir_math.fma(arith.negf(s), s, m)  # exact: m - s*s
        s_lo = arith.divf(residual, arith.addf(s, s))
        hi, lo = (s, s_lo) if not n else b.mul_dd_dd(hi, lo, s, s_lo)
    if twice < 0:
        q = arith.divf(b.f(1.0), hi)
        err = mlir_math.fma(arith.negf(q), hi, b.f(1.0))
        if lo is not None:
            err = arith.subf(err, arith.mulf(q, lo))
        value = mlir_math.fma(q, err, q)
    else:
        value = hi if lo is None else arith.addf(hi, lo)
    scale = arith.shrsi(arith.muli(e, b.i(twice)), b.i(1))  # e*c, exact (e even when c is not an integer)
    scale = arith.maxsi(arith.minsi(scale, b.i(_SCALE_CLAMP)), b.i(-_SCALE_CLAMP))
    first = arith.shrsi(scale, b.i(1))
    return arith.mulf(arith.mulf(value, b.pow2(first)), b.pow2(arith.subi(scale, first)))


def _expand(x: ir.Value, c: float) -> ir.Value:
    """pow(x, c) for an f64 x."""
    b = _Builder()
    twice = int(2 * c)
    ax = mlir_math.absf(x)
    value = _magnitude_power(b, ax, twice)
    # 0, inf and NaN: |x| itself for c > 0 (0, inf, NaN), its reciprocal for c < 0.
    ax_bits = arith.bitcast(b.i64, ax)
    special = arith.ori(
        arith.cmpi(arith.CmpIPredicate.uge, ax_bits, b.i(0x7FF << 52)),
        arith.cmpf(arith.CmpFPredicate.OEQ, ax, b.f(0.0)))
    special_value = ax if twice > 0 else arith.divf(b.f(1.0), ax)
    result = arith.select(special, special_value, value)
    if twice % 2:
        negative = arith.andi(arith.cmpf(arith.CmpFPredicate.OLT, x, b.f(0.0)),
                              arith.cmpf(arith.CmpFPredicate.ONE, x, b.f(float("-inf"))))
        result = arith.select(negative, b.f(float("nan")), result)
    elif (twice // 2) % 2:
        result = mlir_math.copysign(result, x)
    return result


@register_pass
class KilnExpandPow(ModulePass):
    """Expand scalar f32/f64 math.powf by a constant (half-)integer exponent
    into vectorizable arith and math ops."""

    name = "kiln-expand-pow"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"math.powf"}):
            kind = str(op.result.type)
            if kind not in ("f32", "f64"):
                continue
            c = constant_exponent(op)
            if c is None:
                continue
            x = op.operands[0]
            with ir.InsertionPoint(op), op.location:
                if c == 0.0:
                    result = arith.constant(x.type, 1.0)
                elif c == 1.0:
                    result = x
                elif c == 0.5:  # NumPy's power: sqrt(-0) = -0, sqrt(-inf) = NaN, unlike C's pow
                    result = mlir_math.sqrt(x)
                else:
                    wide = x if kind == "f64" else arith.extf(ir.F64Type.get(), x)
                    result = _expand(wide, c)
                    if kind == "f32":
                        result = arith.truncf(x.type, result)
                    assert result.owner.name in MARKED_OPS
                    result.owner.attributes[MARK] = ir.UnitAttr.get()
            op.result.replace_all_uses_with(result)
            op.erase()
