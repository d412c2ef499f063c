"""Stage "jaxpr": elementwise primitives (unary, binary, compare, select, convert).

In: operands of one shape (the numpy layer broadcasts and promotes first).
Out: one value of that shape; compare gives bool, convert the new dtype.
"""

from __future__ import annotations

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

PRIMITIVES = [*UNARY, *BINARY, *COMPARE, select_p, convert_element_type_p, real_p, imag_p]
