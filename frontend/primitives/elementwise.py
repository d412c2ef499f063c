"""Stage "jaxpr": elementwise primitives (unary, binary, compare, select, convert).

In: operands of one shape (the numpy layer broadcasts and promotes first).
Out: one value of that shape; compare gives bool, convert the new dtype.
"""

from __future__ import annotations

import numpy as np

from kiln.core import DShapedArray, KilnInternalError, Primitive
from kiln.primitives._rules import all_weak, require_same_dtypes, require_same_shapes

UNARY_NAMES = (
    "neg", "exp", "log", "sqrt", "rsqrt", "cbrt", "tanh", "sin", "cos", "tan", "logistic",
    "abs", "sign", "floor", "ceil", "round", "log1p", "expm1", "not", "is_finite",
)
BINARY_NAMES = (
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2",
    "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical",
)
COMPARE_NAMES = ("eq", "ne", "lt", "le", "gt", "ge")

unary = {name: Primitive(name) for name in UNARY_NAMES}
binary = {name: Primitive(name) for name in BINARY_NAMES}
compare = {name: Primitive(name) for name in COMPARE_NAMES}
select_p = Primitive("select")
convert_element_type_p = Primitive("convert_element_type")


def _unary_rule(name):
    def rule(x):
        if name == "is_finite":
            return DShapedArray(x.aval.shape, np.bool_)
        if name == "abs" and x.aval.dtype.kind == "c":
            # |a + bi| is real: complex64 -> float32, complex128 -> float64.
            return x.aval.update(dtype=np.dtype(f"f{x.aval.dtype.itemsize // 2}"))
        return x.aval

    return rule


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


for _name, _p in unary.items():
    _p.def_abstract_eval(_unary_rule(_name))
for _name, _p in binary.items():
    _p.def_abstract_eval(_binary_rule(_name))
for _name, _p in compare.items():
    _p.def_abstract_eval(_compare_rule(_name))


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

PRIMITIVES = [*unary.values(), *binary.values(), *compare.values(), select_p, convert_element_type_p, real_p,
              imag_p]


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


_UNARY_RULES = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "cbrt": np.cbrt, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "logistic": _logistic,
    "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil, "round": np.rint, "log1p": np.log1p,
    "expm1": np.expm1, "not": np.invert, "is_finite": np.isfinite,
}
_BINARY_RULES = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _divide, "rem": np.fmod, "pow": _power,
    "max": np.maximum, "min": np.minimum, "atan2": np.arctan2, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor, "shift_left": _shift_left, "shift_right_arithmetic": _shift_right_arithmetic,
    "shift_right_logical": _shift_right_logical,
}
_COMPARE_RULES = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                  "ge": np.greater_equal}

for _rules, _prims in ((_UNARY_RULES, unary), (_BINARY_RULES, binary), (_COMPARE_RULES, compare)):
    for _name, _rule in _rules.items():
        interpret_rule(_prims[_name])(_rule)


@interpret_rule(select_p)
def _select_value(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


@interpret_rule(convert_element_type_p)
def _convert_value(x, *, new_dtype, weak_type=False):
    if x.dtype.kind == "c" and np.dtype(new_dtype).kind != "c":
        x = x.real  # StableHLO's convert keeps the real part
    return x.astype(new_dtype)


interpret_rule(real_p)(np.real)
interpret_rule(imag_p)(np.imag)
