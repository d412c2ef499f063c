"""Stage "jaxpr": the floating-point ufuncs that work on a float's bits or
parts (signbit, copysign, nextafter, spacing, ldexp, frexp, modf) and
logaddexp2, heaviside.

In: operands already in the ufunc's loop dtypes (`@ufunc`), or for the
two-output ufuncs frexp / modf, any array. Out: tracers; the sign and
exponent come from the float's bits (`bitcast_convert`), so NaNs keep
their sign and subnormals are exact, as in C.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.core import KilnTypeError
from kiln.numpy._base import convert, materialize, operand
from kiln.numpy._bindings import knp, numpy_function
from kiln.numpy._ufunc import apply_ufunc, ufunc
from kiln.numpy.mutation import write_out
from kiln.primitives import elementwise as ew
from kiln.tracing import Tracer, bind


def _bits(x: Tracer) -> Tracer:
    """The float's bits as a signed int of its width."""
    return bind(ew.bitcast_convert_p, x, new_dtype=np.dtype(f"i{x.aval.dtype.itemsize}"))


def _from_bits(bits: Tracer, dtype: np.dtype) -> Tracer:
    return bind(ew.bitcast_convert_p, bits, new_dtype=dtype)


def _float_layout(dtype: np.dtype) -> tuple[int, int]:
    """(mantissa bits, exponent bias)."""
    info = np.finfo(dtype)
    return int(info.nmant), int(info.maxexp) - 1


@ufunc("signbit")
def _signbit(x):
    return knp.less(_bits(x), 0)


def _copysign_impl(x: Tracer, negative: Tracer) -> Tracer:
    magnitude = knp.abs(x)
    return knp.where(negative, knp.negative(magnitude), magnitude)


@ufunc("copysign")
def _copysign(x, y):
    return _copysign_impl(x, _signbit(y))


def _nextafter_impl(x: Tracer, y: Tracer) -> Tracer:
    """One step of the float grid from x toward y (C's nextafter): the bits
    as an integer move by one (two's-complement steps move the magnitude)."""
    bits = _bits(x)
    away = knp.equal(knp.less(x, y), knp.greater(x, 0))
    stepped = _from_bits(knp.where(away, bits + 1, bits - 1), x.aval.dtype)
    smallest = _from_bits(knp.ones_like(bits), x.aval.dtype)
    from_zero = _copysign_impl(smallest, _signbit(y))
    result = knp.where(knp.equal(x, 0), from_zero, stepped)
    result = knp.where(knp.equal(x, y), y, result)
    return knp.where(knp.logical_or(knp.isnan(x), knp.isnan(y)), knp.add(x, y), result)


@ufunc("nextafter")
def _nextafter(x, y):
    return _nextafter_impl(x, y)


@ufunc("spacing")
def _spacing(x):
    """The distance to the next float away from zero (the smallest subnormal at 0; NaN at inf)."""
    toward = _copysign_impl(knp.full_like(x, np.inf), _signbit(x))
    gap = knp.subtract(_nextafter_impl(x, toward), x)
    smallest = _from_bits(knp.ones_like(_bits(x)), x.aval.dtype)
    return knp.where(knp.equal(x, 0), smallest, gap)


def _power_of_two(k: Tracer, dtype: np.dtype) -> Tracer:
    """2**k exactly, for k in the normal exponent range of `dtype`."""
    mant, bias = _float_layout(dtype)
    int_dtype = np.dtype(f"i{dtype.itemsize}")
    return _from_bits(knp.left_shift(convert(k + bias, int_dtype), mant), dtype)


@ufunc("ldexp")
def _ldexp(x, i):
    """x * 2**i in three exact steps of at most the normal exponent range
    (so 2**i itself never overflows where the product does not)."""
    mant, bias = _float_layout(x.aval.dtype)
    limit = bias - 1
    i = knp.clip(i.astype(np.int64), -3 * limit, 3 * limit)
    steps = []
    for _ in range(3):
        step = knp.clip(i, -limit, limit)
        steps.append(step)
        i = i - step
    result = x
    for step in steps:
        result = knp.multiply(result, _power_of_two(step, x.aval.dtype))
    return result


@ufunc("logaddexp2")
def _logaddexp2(x, y):
    """log2(2**x + 2**y) without overflow: the larger plus log2(1 + 2**-|x - y|)."""
    larger = knp.maximum(x, y)
    gap = knp.negative(knp.abs(knp.subtract(x, y)))
    result = knp.add(larger, knp.divide(knp.log1p(knp.exp2(gap)), np.log(2.0)))
    # Equal infinities (inf - inf is NaN) give that infinity, as NumPy's x + 1.
    return knp.where(knp.equal(x, y), knp.add(x, 1.0), result)


@ufunc("heaviside")
def _heaviside(x, h0):
    """0 below zero, `h0` at zero, 1 above; NaN stays NaN."""
    step = knp.where(knp.less(x, 0), knp.zeros_like(x), knp.ones_like(x))
    step = knp.where(knp.equal(x, 0), h0, step)
    return knp.where(knp.isnan(x), x, step)


def _unary_float(x: Any, name: str) -> Tracer:
    """`x` in the loop dtype NumPy picks for a float ufunc of one operand."""
    x = operand(x)
    in_dtype = getattr(np, name).resolve_dtypes((x.aval.dtype if not x.aval.weak_type else float,
                                                  None, None))[0]
    return materialize(convert(x, in_dtype))


def _two_outputs(name: str, results: tuple, out: Any) -> tuple:
    if out is None:
        return results
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != 2:
        raise KilnTypeError(f"np.{name}: out= must hold two arrays (one per output)")
    return tuple(write_out(f"np.{name}", r, o) if o is not None else r for r, o in zip(results, outs))


@numpy_function("frexp")
def frexp(x: Any, out: Any = None) -> tuple:
    """(mantissa in [0.5, 1) with x's sign, int32 exponent): x = m * 2**e;
    0, inf and NaN give (x, 0); subnormals are scaled to normal first."""
    x = _unary_float(x, "frexp")
    dtype = x.aval.dtype
    mant, bias = _float_layout(dtype)
    int_dtype = np.dtype(f"i{dtype.itemsize}")
    subnormal = knp.logical_and(knp.less(knp.abs(x), float(np.finfo(dtype).tiny)), knp.not_equal(x, 0))
    scale = mant + 2
    scaled = knp.where(subnormal, knp.multiply(x, _power_of_two(knp.full_like(_bits(x), scale), dtype)), x)
    bits = _bits(scaled)
    exponent_field = knp.bitwise_and(knp.right_shift(bits, mant), (1 << (8 * dtype.itemsize - 1 - mant)) - 1)
    exponent = exponent_field - (bias - 1) - knp.where(subnormal, scale, 0).astype(int_dtype)
    keep = ~(((1 << (8 * dtype.itemsize - 1 - mant)) - 1) << mant)
    mantissa_bits = knp.bitwise_or(knp.bitwise_and(bits, convert(operand(keep), int_dtype)),
                                   convert(operand((bias - 1) << mant), int_dtype))
    mantissa = _from_bits(mantissa_bits, dtype)
    special = knp.logical_or(knp.equal(x, 0), knp.logical_not(knp.isfinite(x)))
    mantissa = knp.where(special, x, mantissa)
    exponent = knp.where(special, 0, exponent).astype(np.int32)
    return _two_outputs("frexp", (mantissa, exponent), out)


@numpy_function("modf")
def modf(x: Any, out: Any = None) -> tuple:
    """(fractional part, integral part), both with x's sign: modf(-2.0) is
    (-0.0, -2.0), modf(inf) is (0.0, inf)."""
    x = _unary_float(x, "modf")
    whole = apply_ufunc("trunc", x)
    fraction = knp.where(knp.isinf(x), knp.zeros_like(x), knp.subtract(x, whole))
    return _two_outputs("modf", (_copysign_impl(fraction, _signbit(x)), whole), out)
