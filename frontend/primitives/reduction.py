"""Stage "jaxpr": reductions and scans along axes.

In: one operand and static `axes` (or `axis`).
Out: the operand's shape without the reduced axes (argmax/argmin give
`index_dtype`; cumulative ops keep the shape).
"""

from __future__ import annotations

from kiln.core import DShapedArray, KilnInternalError, Primitive

reduce_sum_p = Primitive("reduce_sum")
reduce_prod_p = Primitive("reduce_prod")
reduce_max_p = Primitive("reduce_max")
reduce_min_p = Primitive("reduce_min")
reduce_and_p = Primitive("reduce_and")
reduce_or_p = Primitive("reduce_or")
REDUCE = (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p)
argmax_p = Primitive("argmax")
argmin_p = Primitive("argmin")
cumsum_p = Primitive("cumsum")
cumprod_p = Primitive("cumprod")
cummax_p = Primitive("cummax")
cummin_p = Primitive("cummin")
CUMULATIVE = (cumsum_p, cumprod_p, cummax_p, cummin_p)


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


for _p in REDUCE:
    _p.def_abstract_eval(_reduce_rule(_p.name))
argmax_p.def_abstract_eval(_arg_rule("argmax"))
argmin_p.def_abstract_eval(_arg_rule("argmin"))
for _p in CUMULATIVE:
    _p.def_abstract_eval(_cumulative_rule(_p.name))

PRIMITIVES = [*REDUCE, argmax_p, argmin_p, *CUMULATIVE]


# --------------------------------------------------------------------------
# Interpreter rules (kiln.interpreter): NumPy reductions in the operand's
# dtype, starting from the same values as the compiled reductions (so an
# empty reduction gives them too).

import numpy as np  # noqa: E402

from kiln.interpreter import interpret_rule  # noqa: E402

_REDUCE_UFUNCS = {reduce_sum_p: np.add, reduce_prod_p: np.multiply, reduce_max_p: np.maximum,
                  reduce_min_p: np.minimum, reduce_and_p: np.bitwise_and, reduce_or_p: np.bitwise_or}


def _reduce_initial(prim, dtype):
    if prim in (reduce_sum_p, reduce_or_p):
        return dtype.type(0)
    if prim in (reduce_prod_p, reduce_and_p):
        return dtype.type(1)
    if dtype.kind == "f":
        return dtype.type(-np.inf if prim is reduce_max_p else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if prim is reduce_max_p else info.max)


def _reduce_value(prim):
    ufunc = _REDUCE_UFUNCS[prim]

    def rule(x, *, axes):
        if not axes:
            return x.copy()
        return ufunc.reduce(x, axis=tuple(axes), dtype=x.dtype, initial=_reduce_initial(prim, x.dtype))

    return rule


def _arg_value(is_max):
    def rule(x, *, axis, index_dtype):
        if x.shape[axis] == 0:
            shape = x.shape[:axis] + x.shape[axis + 1:]
            return np.full(shape, np.iinfo(index_dtype).max, dtype=index_dtype)
        return (np.argmax if is_max else np.argmin)(x, axis=axis).astype(index_dtype)

    return rule


_SCANS = {
    cumsum_p: lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype),
    cumprod_p: lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype),
    cummax_p: lambda x, axis: np.maximum.accumulate(x, axis=axis),
    cummin_p: lambda x, axis: np.minimum.accumulate(x, axis=axis),
}


def _cumulative_value(prim):
    scan = _SCANS[prim]

    def rule(x, *, axis, reverse=False):
        if not reverse:
            return scan(x, axis)
        return np.flip(scan(np.flip(x, axis), axis), axis)

    return rule


for _p in REDUCE:
    interpret_rule(_p)(_reduce_value(_p))
interpret_rule(argmax_p)(_arg_value(True))
interpret_rule(argmin_p)(_arg_value(False))
for _p in CUMULATIVE:
    interpret_rule(_p)(_cumulative_value(_p))
