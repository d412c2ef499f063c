"""Stage "jaxpr": reductions and scans along axes.

In: one operand and static `axes` (or `axis`).
Out: the operand's shape without the reduced axes (argmax/argmin give
`index_dtype`; cumulative ops keep the shape).
"""

from __future__ import annotations


from kiln.core import DShapedArray, KilnInternalError, Primitive

REDUCE_NAMES = ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or")
reduce = {name: Primitive(name) for name in REDUCE_NAMES}
argmax_p = Primitive("argmax")
argmin_p = Primitive("argmin")
CUMULATIVE_NAMES = ("cumsum", "cumprod", "cummax", "cummin")
cumulative = {name: Primitive(name) for name in CUMULATIVE_NAMES}


def _check_axes(name, aval, axes):
    if len(set(axes)) != len(axes) or any(not 0 <= a < aval.ndim for a in axes):
        raise KilnInternalError(f"{name}: bad axes {axes} for {aval.str_short()}")


def _reduce_rule(name):
    def rule(x, *, axes):
        _check_axes(name, x.aval, axes)
        shape = tuple(d for i, d in enumerate(x.aval.shape) if i not in axes)
        return DShapedArray(shape, x.aval.dtype, x.aval.weak_type)

    return rule


def _arg_rule(name):
    def rule(x, *, axis, index_dtype):
        _check_axes(name, x.aval, (axis,))
        shape = tuple(d for i, d in enumerate(x.aval.shape) if i != axis)
        return DShapedArray(shape, index_dtype)

    return rule


def _cumulative_rule(name):
    def rule(x, *, axis, reverse=False):
        _check_axes(name, x.aval, (axis,))
        return x.aval

    return rule


for _name, _p in reduce.items():
    _p.def_abstract_eval(_reduce_rule(_name))
argmax_p.def_abstract_eval(_arg_rule("argmax"))
argmin_p.def_abstract_eval(_arg_rule("argmin"))
for _name, _p in cumulative.items():
    _p.def_abstract_eval(_cumulative_rule(_name))

PRIMITIVES = [*reduce.values(), argmax_p, argmin_p, *cumulative.values()]



# --------------------------------------------------------------------------
# Interpreter rules (kiln.interpreter): NumPy reductions in the operand's
# dtype, starting from the same values as the compiled reductions (so an
# empty reduction gives them too).

import numpy as np  # noqa: E402

from kiln.interpreter import interpret_rule  # noqa: E402

_REDUCE_UFUNCS = {"reduce_sum": np.add, "reduce_prod": np.multiply, "reduce_max": np.maximum,
                  "reduce_min": np.minimum, "reduce_and": np.bitwise_and, "reduce_or": np.bitwise_or}


def _reduce_initial(name, dtype):
    if name in ("reduce_sum", "reduce_or"):
        return dtype.type(0)
    if name in ("reduce_prod", "reduce_and"):
        return dtype.type(1)
    if dtype.kind == "f":
        return dtype.type(-np.inf if name == "reduce_max" else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if name == "reduce_max" else info.max)


def _reduce_value(name):
    ufunc = _REDUCE_UFUNCS[name]

    def rule(x, *, axes):
        if not axes:
            return x.copy()
        return ufunc.reduce(x, axis=tuple(axes), dtype=x.dtype, initial=_reduce_initial(name, x.dtype))

    return rule


def _arg_value(is_max):
    def rule(x, *, axis, index_dtype):
        if x.shape[axis] == 0:
            shape = x.shape[:axis] + x.shape[axis + 1:]
            return np.full(shape, np.iinfo(index_dtype).max, dtype=index_dtype)
        return (np.argmax if is_max else np.argmin)(x, axis=axis).astype(index_dtype)

    return rule


def _cumulative_value(name):
    def scan(x, axis):
        if name == "cumsum":
            return np.cumsum(x, axis=axis, dtype=x.dtype)
        if name == "cumprod":
            return np.cumprod(x, axis=axis, dtype=x.dtype)
        return (np.maximum if name == "cummax" else np.minimum).accumulate(x, axis=axis)

    def rule(x, *, axis, reverse=False):
        if not reverse:
            return scan(x, axis)
        return np.flip(scan(np.flip(x, axis), axis), axis)

    return rule


for _name, _p in reduce.items():
    interpret_rule(_p)(_reduce_value(_name))
interpret_rule(argmax_p)(_arg_value(True))
interpret_rule(argmin_p)(_arg_value(False))
for _name, _p in cumulative.items():
    interpret_rule(_p)(_cumulative_value(_name))
