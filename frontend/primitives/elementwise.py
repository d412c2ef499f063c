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
