"""Stage "mlir": lowering of copies, writes and — in functions that write —
views with reference semantics.

In: `copy`, `assign`, `scatter` equations and the view primitives.
Out: in a function without writes, views lower to plain StableHLO (their
value rules in shape.py / indexing.py). In a function with writes
(`ctx.reference_semantics`), views become `tensorssa.slice/reshape/
transpose/reverse`, `assign` becomes `tensorssa.copy`, `scatter`
`tensorssa.scatter`, and `copy` an `immut.assign` (a new value that no
later write can reach). The tensorssa-* passes functionalize them.
"""

from __future__ import annotations

# indexing and shape register the views' value rules, which are wrapped below.
from kiln.compiler.lowering import indexing, shape  # noqa: F401
from kiln.compiler.lowering import LOWERINGS, lowering, tensor_type
from kiln.compiler.mlir import ir
from kiln.dialects import stablehlo as hlo
from kiln.dialects import tensorssa
from kiln.primitives import indexing as ip
from kiln.primitives import mutation
from kiln.primitives import shape as sp


def fresh_value(x: ir.Value) -> ir.Value:
    """A value equal to `x` that is not an alias of it."""
    return ir.Operation.create("immut.assign", results=[x.type], operands=[x, x]).result


@lowering(mutation.copy_p)
def _copy(ctx, eqn, x):
    return [fresh_value(x) if ctx.reference_semantics else x]


@lowering(mutation.assign_p)
def _assign(ctx, eqn, target, value):
    tensorssa.effect("copy", target, value)
    return []


@lowering(mutation.scatter_p)
def _scatter(ctx, eqn, target, indices, updates):
    indices = hlo.convert(indices, hlo.i64())
    tensorssa.effect("scatter", target, indices, updates,
                     axis=ir.IntegerAttr.get(hlo.i64(), eqn.params["axis"]))
    return []


def _slice_view(ctx, eqn, x, *dyn):
    starts_p, strides = eqn.params["starts"], eqn.params["strides"]
    n_dyn_starts = sum(s is None for s in starts_p)
    dyn_starts = iter(eqn.invars[1:1 + n_dyn_starts])
    starts = [s if s is not None else next(dyn_starts) for s in starts_p]
    out = eqn.outvars[0].aval
    return tensorssa.view("slice", tensor_type(out), x, hlo.shape_tensor([ctx.dim(s) for s in starts]),
                          ctx.shape_of(out), strides=hlo.dense_i64_array(strides))


def _reshape_view(ctx, eqn, x, *dyn):
    out = eqn.outvars[0].aval
    return tensorssa.view("reshape", tensor_type(out), x, ctx.shape_of(out))


def _transpose_view(ctx, eqn, x):
    return tensorssa.view("transpose", tensor_type(eqn.outvars[0].aval), x,
                          permutation=hlo.dense_i64_array(eqn.params["permutation"]))


def _reverse_view(ctx, eqn, x):
    return tensorssa.view("reverse", tensor_type(eqn.outvars[0].aval), x,
                          dimensions=hlo.dense_i64_array(eqn.params["dimensions"]))


def _with_reference_semantics(value_rule, view_rule):
    def rule(ctx, eqn, *operands):
        if ctx.reference_semantics:
            return [view_rule(ctx, eqn, *operands)]
        return value_rule(ctx, eqn, *operands)

    return rule


for _prim, _view_rule in ((ip.slice_p, _slice_view), (sp.reshape_p, _reshape_view),
                          (sp.transpose_p, _transpose_view), (sp.reverse_p, _reverse_view)):
    LOWERINGS[_prim] = _with_reference_semantics(LOWERINGS[_prim], _view_rule)
