"""Stage "mlir": lowering of elementwise primitives to StableHLO ops.

In: equations of `kiln.primitives.elementwise` (operands share a shape).
Out: one StableHLO elementwise op each (`stablehlo.add`, `compare`, ...);
log1p and expm1 become short compositions that stay accurate for tiny x.
"""

from __future__ import annotations

import numpy as np

from kiln.compiler.lowering import element_type, lowering, tensor_type
from kiln.dialects import stablehlo as hlo
from kiln.primitives import elementwise as ew

_UNARY_OPS = {
    "neg": "negate", "exp": "exponential", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
    "cbrt": "cbrt", "tanh": "tanh", "sin": "sine", "cos": "cosine", "tan": "tan",
    "logistic": "logistic", "abs": "abs", "sign": "sign", "floor": "floor", "ceil": "ceil",
    "round": "round_nearest_even", "log1p": "log_plus_one", "expm1": "exponential_minus_one",
    "not": "not", "is_finite": "is_finite",
}
_BINARY_OPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder",
    "pow": "power", "max": "maximum", "min": "minimum", "atan2": "atan2", "and": "and", "or": "or",
    "xor": "xor", "shift_left": "shift_left", "shift_right_arithmetic": "shift_right_arithmetic",
    "shift_right_logical": "shift_right_logical",
}
_DIRECTIONS = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}


def _unary(name):
    def rule(ctx, eqn, x):
        return [hlo.one(_UNARY_OPS[name], tensor_type(eqn.outvars[0].aval), x)]

    return rule


def _binary(name):
    def rule(ctx, eqn, x, y):
        return [hlo.one(_BINARY_OPS[name], tensor_type(eqn.outvars[0].aval), x, y)]

    return rule


def compare_type(dtype) -> str:
    if dtype.kind in "fc":
        return "FLOAT"
    if dtype.kind == "i":
        return "SIGNED"
    return "UNSIGNED"


def _compare(name):
    def rule(ctx, eqn, x, y):
        return [hlo.comparison(_DIRECTIONS[name], x, y, compare_type(eqn.invars[0].aval.dtype))]

    return rule


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


def _full_like(ctx, aval, value: float):
    """`value` in aval's dtype, broadcast to aval's (possibly dynamic) shape."""
    scalar = hlo.constant(np.array(value, dtype=aval.dtype))
    return ctx.broadcast(scalar, aval.update(shape=()), aval, ())


_PRECISE_UNARY = {"log1p": _log1p, "expm1": _expm1}

for _name, _prim in ew.unary.items():
    lowering(_prim)(_PRECISE_UNARY.get(_name) or _unary(_name))
for _name, _prim in ew.binary.items():
    lowering(_prim)(_binary(_name))
for _name, _prim in ew.compare.items():
    lowering(_prim)(_compare(_name))


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


@lowering(ew.real_p)
def _real(ctx, eqn, x):
    return [hlo.one("real", tensor_type(eqn.outvars[0].aval), x)]


@lowering(ew.imag_p)
def _imag(ctx, eqn, x):
    return [hlo.one("imag", tensor_type(eqn.outvars[0].aval), x)]
