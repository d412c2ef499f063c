"""Stage "jaxpr": elementwise primitives (unary, binary, compare, select, convert).

In: operands of one shape (the numpy layer broadcasts and promotes first).
Out: one value of that shape; compare gives bool, convert the new dtype.
"""

from __future__ import annotations

import math

import numpy as np

from kiln.core import DShapedArray, KilnInternalError, Primitive
from kiln.primitives._rules import all_weak, require_same_dtypes, require_same_shapes

neg_p = Primitive("neg")
exp_p = Primitive("exp")
log_p = Primitive("log")
sqrt_p = Primitive("sqrt")
rsqrt_p = Primitive("rsqrt")
cbrt_p = Primitive("cbrt")
tanh_p = Primitive("tanh")
sin_p = Primitive("sin")
cos_p = Primitive("cos")
tan_p = Primitive("tan")
logistic_p = Primitive("logistic")
abs_p = Primitive("abs")
sign_p = Primitive("sign")
floor_p = Primitive("floor")
ceil_p = Primitive("ceil")
round_p = Primitive("round")
log1p_p = Primitive("log1p")
expm1_p = Primitive("expm1")
not_p = Primitive("not")
is_finite_p = Primitive("is_finite")
UNARY = (neg_p, exp_p, log_p, sqrt_p, rsqrt_p, cbrt_p, tanh_p, sin_p, cos_p, tan_p, logistic_p, abs_p, sign_p,
         floor_p, ceil_p, round_p, log1p_p, expm1_p, not_p, is_finite_p)

add_p = Primitive("add")
sub_p = Primitive("sub")
mul_p = Primitive("mul")
div_p = Primitive("div")
rem_p = Primitive("rem")
pow_p = Primitive("pow")
max_p = Primitive("max")
min_p = Primitive("min")
atan2_p = Primitive("atan2")
and_p = Primitive("and")
or_p = Primitive("or")
xor_p = Primitive("xor")
shift_left_p = Primitive("shift_left")
shift_right_arithmetic_p = Primitive("shift_right_arithmetic")
shift_right_logical_p = Primitive("shift_right_logical")
BINARY = (add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p, atan2_p, and_p, or_p, xor_p, shift_left_p,
          shift_right_arithmetic_p, shift_right_logical_p)

eq_p = Primitive("eq")
ne_p = Primitive("ne")
lt_p = Primitive("lt")
le_p = Primitive("le")
gt_p = Primitive("gt")
ge_p = Primitive("ge")
COMPARE = (eq_p, ne_p, lt_p, le_p, gt_p, ge_p)

select_p = Primitive("select")
convert_element_type_p = Primitive("convert_element_type")


def _same_type_rule(x):
    return x.aval


@abs_p.def_abstract_eval
def _abs_rule(x):
    if x.aval.dtype.kind == "c":
        # |a + bi| is real: complex64 -> float32, complex128 -> float64.
        return x.aval.update(dtype=np.dtype(f"f{x.aval.dtype.itemsize // 2}"))
    return x.aval


@is_finite_p.def_abstract_eval
def _is_finite_rule(x):
    return DShapedArray(x.aval.shape, np.bool_)


def _binary_rule(name):
    def rule(x, y):
        avals = [x.aval, y.aval]
        shape = require_same_shapes(name, avals)
        dtype = require_same_dtypes(name, avals)
        return DShapedArray(shape, dtype, weak_type=all_weak(avals))

    return rule


def _compare_rule(name):
    def rule(x, y):
        avals = [x.aval, y.aval]
        shape = require_same_shapes(name, avals)
        require_same_dtypes(name, avals)
        return DShapedArray(shape, np.bool_)

    return rule


for _p in UNARY:
    if _p.abstract_eval is None:
        _p.def_abstract_eval(_same_type_rule)
for _p in BINARY:
    _p.def_abstract_eval(_binary_rule(_p.name))
for _p in COMPARE:
    _p.def_abstract_eval(_compare_rule(_p.name))


@select_p.def_abstract_eval
def _select_rule(pred, on_true, on_false):
    if pred.aval.dtype != np.bool_:
        raise KilnInternalError(f"select: predicate must be bool, got {pred.aval}")
    avals = [pred.aval, on_true.aval, on_false.aval]
    shape = require_same_shapes("select", avals)
    dtype = require_same_dtypes("select", avals[1:])
    return DShapedArray(shape, dtype, weak_type=all_weak(avals[1:]))


@convert_element_type_p.def_abstract_eval
def _convert_rule(x, *, new_dtype, weak_type=False):
    return DShapedArray(x.aval.shape, new_dtype, weak_type=weak_type)


# The real and imaginary parts of a complex value (complex64 -> float32,
# complex128 -> float64).
real_p = Primitive("real")
imag_p = Primitive("imag")


def _part_rule(x):
    if x.aval.dtype.kind != "c":
        raise KilnInternalError(f"real/imag of a non-complex {x.aval.str_short()}")
    return x.aval.update(dtype=np.dtype(f"f{x.aval.dtype.itemsize // 2}"), weak_type=False)


real_p.def_abstract_eval(_part_rule)
imag_p.def_abstract_eval(_part_rule)

# The same bits read as another dtype of the same width (float64 <-> int64,
# ...): `x.view(dtype)`, and the sign and exponent bits of floats.
bitcast_convert_p = Primitive("bitcast_convert")


@bitcast_convert_p.def_abstract_eval
def _bitcast_rule(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    if new_dtype.itemsize != x.aval.dtype.itemsize or "b" in (new_dtype.kind, x.aval.dtype.kind):
        raise KilnInternalError(f"bitcast_convert: {x.aval.dtype} and {new_dtype} differ in width or are bool")
    return DShapedArray(x.aval.shape, new_dtype)



# The error function and its complement (float32/float64; the numpy layer
# promotes other dtypes). StableHLO has no op for them: they lower to
# `kiln.elementwise`, which calls the C library's erf/erfc as Python's
# `math.erf` does.
erf_p = Primitive("erf")
erfc_p = Primitive("erfc")


def _float_only_rule(name):
    def rule(x):
        if x.aval.dtype not in (np.float32, np.float64):
            raise KilnInternalError(f"{name}: expected float32 or float64, got {x.aval.str_short()}")
        return x.aval

    return rule


erf_p.def_abstract_eval(_float_only_rule("erf"))
erfc_p.def_abstract_eval(_float_only_rule("erfc"))

PRIMITIVES = [*UNARY, *BINARY, *COMPARE, select_p, convert_element_type_p, real_p, imag_p, bitcast_convert_p, erf_p,
              erfc_p]



# --------------------------------------------------------------------------
# Interpreter rules (kiln.interpreter): StableHLO's semantics on NumPy
# values; the numpy layer builds NumPy's semantics from these.

from kiln.interpreter import interpret_rule  # noqa: E402


def _shift_amount_in_range(x, y):
    bits = 8 * x.dtype.itemsize
    return (y >= 0) & (y < bits), np.clip(y, 0, bits - 1).astype(x.dtype)


def _shift_left(x, y):
    ok, amount = _shift_amount_in_range(x, y)
    return np.where(ok, np.left_shift(x, amount), np.zeros_like(x))


def _shift_right_arithmetic(x, y):
    ok, amount = _shift_amount_in_range(x, y)
    # A shift by the width or more leaves only copies of the sign bit.
    return np.where(ok, np.right_shift(x, amount), np.right_shift(x, 8 * x.dtype.itemsize - 1))


def _shift_right_logical(x, y):
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    ok, amount = _shift_amount_in_range(x, y)
    shifted = np.right_shift(x.astype(unsigned), amount.astype(unsigned))
    return np.where(ok, shifted.astype(x.dtype), np.zeros_like(x))


def _divide(x, y):
    if x.dtype.kind not in "iu":
        return np.true_divide(x, y)
    # Integer division truncates toward zero (C, StableHLO), not floor.
    q = np.floor_divide(x, y)
    inexact = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
    return np.where(inexact, q + 1, q)


def _power(x, y):
    if x.dtype.kind not in "iu":
        return np.power(x, y)
    # Integer powers with a negative exponent: 1, +-1 for x = +-1, else 0.
    result = np.power(x, np.maximum(y, 0))
    if x.dtype.kind == "u":
        return result
    negative_power = np.where(x == 1, 1, np.where(x == -1, np.where(y % 2 == 0, 1, -1), 0)).astype(x.dtype)
    return np.where(y < 0, negative_power, result)


def _logistic(x):
    return np.exp(-np.logaddexp(0, -x)) if x.dtype.kind == "f" else 1 / (1 + np.exp(-x))


def _math_rule(fn):
    """A `math` function of one float on each element, in the array's dtype."""
    each = np.frompyfunc(fn, 1, 1)

    def rule(x):
        return np.asarray(each(x), dtype=np.float64).astype(x.dtype)

    return rule


_VALUE_RULES = {
    neg_p: np.negative, exp_p: np.exp, log_p: np.log, sqrt_p: np.sqrt, rsqrt_p: lambda x: 1 / np.sqrt(x),
    cbrt_p: np.cbrt, tanh_p: np.tanh, sin_p: np.sin, cos_p: np.cos, tan_p: np.tan, logistic_p: _logistic,
    abs_p: np.abs, sign_p: np.sign, floor_p: np.floor, ceil_p: np.ceil, round_p: np.rint, log1p_p: np.log1p,
    expm1_p: np.expm1, not_p: np.invert, is_finite_p: np.isfinite,
    add_p: np.add, sub_p: np.subtract, mul_p: np.multiply, div_p: _divide, rem_p: np.fmod, pow_p: _power,
    max_p: np.maximum, min_p: np.minimum, atan2_p: np.arctan2, and_p: np.bitwise_and, or_p: np.bitwise_or,
    xor_p: np.bitwise_xor, shift_left_p: _shift_left, shift_right_arithmetic_p: _shift_right_arithmetic,
    shift_right_logical_p: _shift_right_logical,
    eq_p: np.equal, ne_p: np.not_equal, lt_p: np.less, le_p: np.less_equal, gt_p: np.greater,
    ge_p: np.greater_equal,
    real_p: np.real, imag_p: np.imag, erf_p: _math_rule(math.erf), erfc_p: _math_rule(math.erfc),
}
for _prim, _rule in _VALUE_RULES.items():
    interpret_rule(_prim)(_rule)


@interpret_rule(select_p)
def _select_value(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


@interpret_rule(bitcast_convert_p)
def _bitcast_value(x, *, new_dtype):
    return np.ascontiguousarray(x).view(new_dtype)


@interpret_rule(convert_element_type_p)
def _convert_value(x, *, new_dtype, weak_type=False):
    if x.dtype.kind == "c" and np.dtype(new_dtype).kind != "c":
        x = x.real  # StableHLO's convert keeps the real part
    return x.astype(new_dtype)

