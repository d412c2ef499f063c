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

