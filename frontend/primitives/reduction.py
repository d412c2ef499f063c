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
