"""Stage "mlir": strided slices -> `stablehlo.slice` (static) or
`stablehlo.real_dynamic_slice` (dynamic starts or sizes), or in a function
that writes (`ctx.reference_semantics`) the view `tensorssa.slice`; gather
along one axis -> `stablehlo.gather` (static slice sizes) or
`stablehlo.dynamic_gather`; the positions of a mask's true elements ->
`kiln.flatnonzero` (lowered by kiln-legalize-dynamic); scatter_add ->
`stablehlo.scatter` whose update computation adds (kiln-legalize-writes
lowers it to a loop).
"""

from __future__ import annotations

import numpy as np

from kiln.compiler.lowering import lowering
from kiln.dialects.stablehlo import tensor_type
from kiln.compiler.mlir import GatherDimensionNumbers, ScatterDimensionNumbers, ir
from kiln.core import is_static_dim
from kiln.dialects import kiln as kiln_dialect
from kiln.dialects import stablehlo as hlo
from kiln.dialects import tensorssa
from kiln.primitives import indexing as ip


@lowering(ip.slice_p)
def _slice(ctx, eqn, x, *dyn):
    starts_p, strides = eqn.params["starts"], eqn.params["strides"]
    out = eqn.outvars[0].aval
    n_dyn_starts = sum(s is None for s in starts_p)
    dyn_starts = iter(eqn.invars[1 : 1 + n_dyn_starts])
    starts = [s if s is not None else next(dyn_starts) for s in starts_p]
    if ctx.reference_semantics:
        return [tensorssa.view("slice", tensor_type(out), x, hlo.shape_tensor([ctx.dim(s) for s in starts]),
                               ctx.shape_of(out), strides=hlo.dense_i64_array(strides))]
    if out.is_static and 0 in out.shape:
        # An empty result is a constant: MLIR's extract_slice verifier
        # refuses any offset into a dim of static size 0 (`x[0:0][::2]`).
        return [hlo.constant(np.zeros(out.shape, dtype=out.dtype))]
    if all(is_static_dim(s) for s in starts) and out.is_static:
        # An empty axis starts at 0: linalg's extract_slice refuses an offset equal to the dim size.
        starts = [s if n else 0 for s, n in zip(starts, out.shape)]
        limits = [s + (n - 1) * st + 1 if n else s for s, n, st in zip(starts, out.shape, strides)]
        return [hlo.one("slice", tensor_type(out), x, start_indices=hlo.dense_i64_array(starts),
                        limit_indices=hlo.dense_i64_array(limits), strides=hlo.dense_i64_array(strides))]
    start_vals = [ctx.dim(s) for s in starts]
    size_vals = [ctx.dim(d) for d in out.shape]
    limit_vals = [_limit(s, n, st) for s, n, st in zip(start_vals, size_vals, strides)]
    return [hlo.one("real_dynamic_slice", tensor_type(out), x, hlo.shape_tensor(start_vals),
                    hlo.shape_tensor(limit_vals), hlo.shape_tensor(list(strides)))]


def _limit(start, size, stride):
    """start + (size - 1) * stride + 1, or start when size is 0."""
    if isinstance(start, int) and isinstance(size, int):
        return start + (size - 1) * stride + 1 if size else start
    scalar = hlo.ranked(hlo.scalar_i64(0))
    s = hlo.scalar_i64(start) if isinstance(start, int) else start
    n = hlo.scalar_i64(size) if isinstance(size, int) else size
    zero = hlo.scalar_i64(0)
    span = hlo.one("multiply", scalar, hlo.one("subtract", scalar, n, hlo.scalar_i64(1)), hlo.scalar_i64(stride))
    limit = hlo.one("add", scalar, s, hlo.one("add", scalar, span, hlo.scalar_i64(1)))
    empty = hlo.comparison("EQ", n, zero, "SIGNED")
    return hlo.one("select", scalar, empty, s, limit)


@lowering(ip.gather_p)
def _gather(ctx, eqn, x, indices):
    """`take(x, indices, axis)`: each index picks a full slice of the other
    dims; `index_vector_dim` = rank of indices means one index per entry."""
    x_aval, idx_aval = eqn.invars[0].aval, eqn.invars[1].aval
    axis, k = eqn.params["axis"], idx_aval.ndim
    offset_dims = list(range(axis)) + list(range(axis + k, x_aval.ndim - 1 + k))
    dnums = GatherDimensionNumbers.get(offset_dims, [axis], [], [], [axis], k)
    slice_sizes = [1 if i == axis else d for i, d in enumerate(x_aval.shape)]
    out_type = tensor_type(eqn.outvars[0].aval)
    indices = hlo.convert(indices, hlo.i64())
    if all(is_static_dim(d) for d in slice_sizes):
        return [hlo.one("gather", out_type, x, indices, dimension_numbers=dnums,
                        slice_sizes=hlo.dense_i64_array(slice_sizes))]
    sizes = hlo.shape_tensor([ctx.dim(d) for d in slice_sizes])
    return [hlo.one("dynamic_gather", out_type, x, indices, sizes, dimension_numbers=dnums)]


@lowering(ip.scatter_add_p)
def _scatter_add(ctx, eqn, base, indices, updates):
    """One index per update element (`index_vector_dim` 1 past the 1-D
    indices); the update computation returns `current + update`."""
    dnums = ScatterDimensionNumbers.get([], [0], [], [], [0], 1)
    result_type = tensor_type(eqn.outvars[0].aval)
    op = ir.Operation.create("stablehlo.scatter", results=[result_type],
                             operands=[base, hlo.convert(indices, hlo.i64()), updates],
                             attributes={"scatter_dimension_numbers": dnums}, regions=1)
    scalar = ir.RankedTensorType.get([], result_type.element_type)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.op("return", [], [hlo.one("add", scalar, block.arguments[0], block.arguments[1])])
    return [op.result]


@lowering(ip.flatnonzero_p)
def _flatnonzero(ctx, eqn, mask):
    """`kiln.flatnonzero` (StableHLO has no op whose result size is data)."""
    return list(kiln_dialect.flatnonzero(mask))
