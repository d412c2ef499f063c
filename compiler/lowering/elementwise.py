"""Stage "mlir": lowering of elementwise primitives to StableHLO ops.

In: equations of `kiln.primitives.elementwise` (operands share a shape).
Out: one StableHLO elementwise op each (`stablehlo.add`, `compare`, ...);
log1p and expm1 become short compositions that stay accurate for tiny x;
erf and erfc, which StableHLO lacks, become `kiln.elementwise`.
"""

from __future__ import annotations

import numpy as np

from kiln.compiler.lowering import lowering
from kiln.dialects.stablehlo import element_type, tensor_type
from kiln.dialects import kiln as kiln_dialect
from kiln.dialects import stablehlo as hlo
from kiln.primitives import elementwise as ew

# Primitives that are one StableHLO op of the same name on every dtype.
_UNARY_OPS = (
    (ew.neg_p, "negate"), (ew.exp_p, "exponential"), (ew.log_p, "log"), (ew.sqrt_p, "sqrt"),
    (ew.rsqrt_p, "rsqrt"), (ew.cbrt_p, "cbrt"), (ew.tanh_p, "tanh"), (ew.sin_p, "sine"), (ew.cos_p, "cosine"),
    (ew.tan_p, "tan"), (ew.logistic_p, "logistic"), (ew.abs_p, "abs"), (ew.sign_p, "sign"),
    (ew.floor_p, "floor"), (ew.ceil_p, "ceil"), (ew.round_p, "round_nearest_even"), (ew.not_p, "not"),
    (ew.is_finite_p, "is_finite"),
)
_BINARY_OPS = (
    (ew.add_p, "add"), (ew.sub_p, "subtract"), (ew.mul_p, "multiply"), (ew.div_p, "divide"),
    (ew.rem_p, "remainder"), (ew.pow_p, "power"), (ew.max_p, "maximum"), (ew.min_p, "minimum"),
    (ew.atan2_p, "atan2"), (ew.and_p, "and"), (ew.or_p, "or"), (ew.xor_p, "xor"),
    (ew.shift_left_p, "shift_left"), (ew.shift_right_arithmetic_p, "shift_right_arithmetic"),
    (ew.shift_right_logical_p, "shift_right_logical"),
)
_DIRECTIONS = ((ew.eq_p, "EQ"), (ew.ne_p, "NE"), (ew.lt_p, "LT"), (ew.le_p, "LE"), (ew.gt_p, "GT"), (ew.ge_p, "GE"))


def _unary(op_name):
    def rule(ctx, eqn, x):
        return [hlo.one(op_name, tensor_type(eqn.outvars[0].aval), x)]

    return rule


def _binary(op_name):
    def rule(ctx, eqn, x, y):
        return [hlo.one(op_name, tensor_type(eqn.outvars[0].aval), x, y)]

    return rule


def compare_type(dtype) -> str:
    if dtype.kind in "fc":
        return "FLOAT"
    if dtype.kind == "i":
        return "SIGNED"
    return "UNSIGNED"


def _compare(direction):
    def rule(ctx, eqn, x, y):
        return [hlo.comparison(direction, x, y, compare_type(eqn.invars[0].aval.dtype))]

    return rule


@lowering(ew.log1p_p)
def _log1p(ctx, eqn, x):
    """log(1 + x) without cancellation for small x (Goldberg): with u = 1 + x
    rounded, log(u) * x / (u - 1) is exact to a few ulps. (MLIR's LLVM
    lowering of math.log1p computes log(1 + x) directly.)"""
    aval = eqn.invars[0].aval
    t = tensor_type(aval)
    one, inf = _full_like(ctx, aval, 1.0), _full_like(ctx, aval, np.inf)
    u = hlo.one("add", t, one, x)
    d = hlo.one("subtract", t, u, one)
    general = hlo.one("multiply", t, hlo.one("log", t, u), hlo.one("divide", t, x, d))
    exact = hlo.comparison("EQ", d, _full_like(ctx, aval, 0.0), "FLOAT")
    result = hlo.one("select", t, exact, x, general)
    return [hlo.one("select", t, hlo.comparison("EQ", u, inf, "FLOAT"), u, result)]


@lowering(ew.expm1_p)
def _expm1(ctx, eqn, x):
    """exp(x) - 1 without cancellation for small x (Kahan): with u = exp(x),
    (u - 1) * x / log(u) corrects the rounding of u."""
    aval = eqn.invars[0].aval
    t = tensor_type(aval)
    one, inf = _full_like(ctx, aval, 1.0), _full_like(ctx, aval, np.inf)
    u = hlo.one("exponential", t, x)
    um1 = hlo.one("subtract", t, u, one)
    general = hlo.one("divide", t, hlo.one("multiply", t, um1, x), hlo.one("log", t, u))
    minus_one = _full_like(ctx, aval, -1.0)
    result = hlo.one("select", t, hlo.comparison("EQ", um1, minus_one, "FLOAT"), minus_one, general)
    result = hlo.one("select", t, hlo.comparison("EQ", u, one, "FLOAT"), x, result)
    return [hlo.one("select", t, hlo.comparison("EQ", u, inf, "FLOAT"), u, result)]


@lowering(ew.erf_p)
def _erf(ctx, eqn, x):
    """`kiln.elementwise {fn = "erf"}`: StableHLO has no erf (CHLO's is not used)."""
    return [kiln_dialect.elementwise(x, "erf")]


@lowering(ew.erfc_p)
def _erfc(ctx, eqn, x):
    return [kiln_dialect.elementwise(x, "erfc")]


def _full_like(ctx, aval, value: float):
    """`value` in aval's dtype, broadcast to aval's (possibly dynamic) shape."""
    scalar = hlo.constant(np.array(value, dtype=aval.dtype))
    return ctx.broadcast(scalar, aval.update(shape=()), aval, ())


for _prim, _op_name in _UNARY_OPS:
    lowering(_prim)(_unary(_op_name))
for _prim, _op_name in _BINARY_OPS:
    lowering(_prim)(_binary(_op_name))
for _prim, _direction in _DIRECTIONS:
    lowering(_prim)(_compare(_direction))


@lowering(ew.select_p)
def _select(ctx, eqn, pred, on_true, on_false):
    return [hlo.one("select", tensor_type(eqn.outvars[0].aval), pred, on_true, on_false)]


@lowering(ew.convert_element_type_p)
def _convert(ctx, eqn, x):
    src = eqn.invars[0].aval.dtype
    dst = eqn.outvars[0].aval.dtype
    if dst.kind == "b" and src.kind != "b":
        # NumPy's bool(x) is x != 0; StableHLO's convert would truncate.
        zeros = ctx.broadcast(hlo.constant(np.zeros((), src)), eqn.invars[0].aval.update(shape=()),
                              eqn.invars[0].aval, ())
        return [hlo.comparison("NE", x, zeros, compare_type(src))]
    return [hlo.convert(x, element_type(dst))]


@lowering(ew.bitcast_convert_p)
def _bitcast_convert(ctx, eqn, x):
    return [hlo.one("bitcast_convert", tensor_type(eqn.outvars[0].aval), x)]


@lowering(ew.real_p)
def _real(ctx, eqn, x):
    return [hlo.one("real", tensor_type(eqn.outvars[0].aval), x)]


@lowering(ew.imag_p)
def _imag(ctx, eqn, x):
    return [hlo.one("imag", tensor_type(eqn.outvars[0].aval), x)]
