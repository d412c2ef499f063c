"""Stage "mlir": lowering of shape primitives (broadcast, reshape, transpose, iota,
concatenate, reverse). Static shapes use the static StableHLO ops; dynamic
ones the `dynamic_*` forms fed by shape tensors built from dim values. In a
function that writes (`ctx.reference_semantics`), the views reshape,
transpose and reverse lower to `tensorssa` views instead.
"""

from __future__ import annotations

from kiln.compiler.lowering import lowering
from kiln.dialects.stablehlo import tensor_type
from kiln.dialects import stablehlo as hlo
from kiln.dialects import tensorssa
from kiln.compiler.mlir import ir
from kiln.primitives import shape as sp


@lowering(sp.broadcast_in_dim_p)
def _broadcast_in_dim(ctx, eqn, x, *dyn):
    return [ctx.broadcast(x, eqn.invars[0].aval, eqn.outvars[0].aval, eqn.params["broadcast_dimensions"],
                          eqn.params.get("expanding", ()))]


@lowering(sp.reshape_p)
def _reshape(ctx, eqn, x, *dyn):
    out = eqn.outvars[0].aval
    if ctx.reference_semantics:
        return [tensorssa.view("reshape", tensor_type(out), x, ctx.shape_of(out))]
    if out.is_static and eqn.invars[0].aval.is_static:
        return [hlo.one("reshape", tensor_type(out), x)]
    return [hlo.one("dynamic_reshape", tensor_type(out), x, ctx.shape_of(out))]


def _view_or_op(ctx, eqn, name: str, x: ir.Value, **attributes) -> list:
    """A view lowered as `tensorssa.view` under reference semantics, else
    as the StableHLO op of the same name (`transpose`, `reverse`)."""
    result = tensor_type(eqn.outvars[0].aval)
    if ctx.reference_semantics:
        return [tensorssa.view(name, result, x, **attributes)]
    return [hlo.one(name, result, x, **attributes)]


@lowering(sp.transpose_p)
def _transpose(ctx, eqn, x):
    return _view_or_op(ctx, eqn, "transpose", x, permutation=hlo.dense_i64_array(eqn.params["permutation"]))


@lowering(sp.iota_p)
def _iota(ctx, eqn, *dyn):
    out = eqn.outvars[0].aval
    dim = ir.IntegerAttr.get(hlo.i64(), eqn.params["dimension"])
    if out.is_static:
        return [hlo.one("iota", tensor_type(out), iota_dimension=dim)]
    return [hlo.one("dynamic_iota", tensor_type(out), ctx.shape_of(out), iota_dimension=dim)]


@lowering(sp.concatenate_p)
def _concatenate(ctx, eqn, *operands):
    arrays = operands if eqn.params["size"] is not None else operands[:-1]
    return [hlo.one("concatenate", tensor_type(eqn.outvars[0].aval), *arrays,
                    dimension=ir.IntegerAttr.get(hlo.i64(), eqn.params["dimension"]))]


@lowering(sp.reverse_p)
def _reverse(ctx, eqn, x):
    return _view_or_op(ctx, eqn, "reverse", x, dimensions=hlo.dense_i64_array(eqn.params["dimensions"]))


@lowering(sp.match_dims_p)
def _match_dims(ctx, eqn, x, *dyn):
    # `?` dims carry no identity, so the MLIR type changes only when a dim
    # becomes static. That is stated with a slice from 0, not a cast: a
    # `tensor.cast` is folded backwards into the producer of `x`, whose
    # buffer then gets the static size while its loops still run to the
    # dynamic one — a heap overflow before the check that the sizes agree
    # has run (`t += 1; x[idx] *= t` with mismatched lengths).
    out = eqn.outvars[0].aval
    out_type = tensor_type(out)
    if out_type == x.type:
        return [x]
    rank = len(out.shape)
    return [hlo.one("real_dynamic_slice", out_type, x, hlo.shape_tensor([0] * rank), ctx.shape_of(out),
                    hlo.shape_tensor([1] * rank))]
