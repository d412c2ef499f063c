"""Pass `immut-to-stablehlo` (stage "stablehlo").

In: pure `immut` Access/Assign ops left by functionalization.
Out: StableHLO only:
- `slice` -> `real_dynamic_slice` (limits = starts + max(sizes*strides - strides + 1, 0));
- `slice_rev` -> `dynamic_update_slice` for unit strides; with strides, the
  first strided axis is read with a gather, the rest written recursively,
  and the rows put back with a scatter;
- `reshape` / `reshape_rev` -> `dynamic_reshape` (shape of the base from
  `get_dimension_size`); `transpose` / `_rev` -> `transpose` (inverse
  permutation); `reverse` / `_rev` -> `reverse`;
- `gather` / `scatter` -> `dynamic_gather` / `scatter` along one axis
  (scatter replaces: the last write of a duplicated index wins);
- `assign` -> `convert` + `dynamic_broadcast_in_dim` to the target's shape.
First, a write through a transposed view, `transpose_rev(B, slice_rev(
transpose(B), V, ...))`, becomes a write of the permuted box of B itself,
`slice_rev(B, transpose(V), ...)`: no transposed copy of B.
"""

from __future__ import annotations

import numpy as np

from kiln.compiler.mlir import GatherDimensionNumbers, ScatterDimensionNumbers, dynamic_size, ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._tensorssa import as_operation
from kiln.compiler.passes._util import collect_ops
from kiln.dialects import stablehlo as hlo


def _i64_vector(values: list[int]) -> ir.Value:
    return hlo.constant(np.array(values, dtype=np.int64))


def _dim(value: ir.Value, axis: int) -> ir.Value:
    """`tensor<i64>` size of `value` along `axis` (a constant when static)."""
    t = hlo.ranked(value)
    if not t.is_dynamic_dim(axis):
        return hlo.scalar_i64(t.shape[axis])
    size = hlo.one("get_dimension_size", ir.RankedTensorType.get([], ir.IntegerType.get_signless(32)), value,
                   dimension=ir.IntegerAttr.get(hlo.i64(), axis))
    return hlo.convert(size, hlo.i64())


def _shape_of(value: ir.Value) -> ir.Value:
    t = hlo.ranked(value)
    return hlo.shape_tensor([t.shape[i] if not t.is_dynamic_dim(i) else _dim(value, i) for i in range(t.rank)])


def _element(vector: ir.Value, i: int) -> ir.Value:
    """Entry `i` of a `tensor<Nxi64>` as a `tensor<i64>`."""
    one = hlo.one("slice", ir.RankedTensorType.get([1], hlo.i64()), vector,
                  start_indices=hlo.dense_i64_array([i]), limit_indices=hlo.dense_i64_array([i + 1]),
                  strides=hlo.dense_i64_array([1]))
    return hlo.reshape_static(one, [])


def _strides(op: ir.Operation) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes["strides"]))


def _slice(base: ir.Value, starts: ir.Value, sizes: ir.Value, strides: list[int], result_type: ir.Type) -> ir.Value:
    vec = ir.RankedTensorType.get([len(strides)], hlo.i64())
    stride_v = _i64_vector(strides)
    if all(s == 1 for s in strides):
        return hlo.one("real_dynamic_slice", result_type, base, starts, hlo.one("add", vec, starts, sizes), stride_v)
    span = hlo.one("subtract", vec, hlo.one("multiply", vec, sizes, stride_v), _i64_vector([s - 1 for s in strides]))
    limits = hlo.one("add", vec, starts, hlo.one("maximum", vec, span, _i64_vector([0] * len(strides))))
    return hlo.one("real_dynamic_slice", result_type, base, starts, limits, stride_v)


def _iota_indices(start: ir.Value, size: ir.Value, stride: int) -> ir.Value:
    """start + stride * [0, size) as `tensor<?xi64>`."""
    t = ir.RankedTensorType.get([dynamic_size()], hlo.i64())
    iota = hlo.one("dynamic_iota", t, hlo.reshape_static(size, [1]), iota_dimension=ir.IntegerAttr.get(hlo.i64(), 0))
    shape = hlo.reshape_static(size, [1])
    stride_v = hlo.one("dynamic_broadcast_in_dim", t, hlo.scalar_i64(stride), shape,
                       broadcast_dimensions=hlo.dense_i64_array([]))
    start_v = hlo.one("dynamic_broadcast_in_dim", t, start, shape, broadcast_dimensions=hlo.dense_i64_array([]))
    return hlo.one("add", t, start_v, hlo.one("multiply", t, iota, stride_v))


def gather(base: ir.Value, indices: ir.Value, axis: int) -> ir.Value:
    """`take(base, indices, axis)` for `tensor<?xi64>`-like indices of rank k."""
    bt, it = hlo.ranked(base), hlo.ranked(indices)
    k = it.rank
    out_shape = list(bt.shape[:axis]) + list(it.shape) + list(bt.shape[axis + 1:])
    offset_dims = list(range(axis)) + list(range(axis + k, bt.rank - 1 + k))
    dnums = GatherDimensionNumbers.get(offset_dims, [axis], [], [], [axis], k)
    sizes = hlo.shape_tensor([1 if i == axis else (bt.shape[i] if not bt.is_dynamic_dim(i) else _dim(base, i))
                              for i in range(bt.rank)])
    return hlo.one("dynamic_gather", ir.RankedTensorType.get(out_shape, bt.element_type), base, indices, sizes,
                   dimension_numbers=dnums)


def _flatten_indices(indices: ir.Value, updates: ir.Value, axis: int) -> tuple[ir.Value, ir.Value]:
    """Indices of any rank as 1-D, and the updates with their index dims
    merged into one (C order, so the last write still wins)."""
    it, ut = hlo.ranked(indices), hlo.ranked(updates)
    k = it.rank
    if k == 1:
        return indices, updates
    count = 1
    static = it.has_static_shape
    for i in range(k):
        count = count * it.shape[i] if static else None
    if static:
        count_value = count
    else:
        count_value = _dim(indices, 0) if k else hlo.scalar_i64(1)
        for i in range(1, k):
            count_value = hlo.one("multiply", ir.RankedTensorType.get([], hlo.i64()), count_value, _dim(indices, i))
    flat_t = ir.RankedTensorType.get([count if static else dynamic_size()], it.element_type)
    flat_indices = _reshape(indices, hlo.shape_tensor([count_value]), flat_t)
    dims = [ut.shape[i] if not ut.is_dynamic_dim(i) else _dim(updates, i) for i in range(ut.rank)]
    new_dims = dims[:axis] + [count_value] + dims[axis + k:]
    static_dims = [d if isinstance(d, int) else dynamic_size() for d in new_dims]
    flat_updates = _reshape(updates, hlo.shape_tensor(new_dims),
                            ir.RankedTensorType.get(static_dims, ut.element_type))
    return flat_indices, flat_updates


def scatter(base: ir.Value, indices: ir.Value, updates: ir.Value, axis: int) -> ir.Value:
    """`base[..., indices, ...] = updates` along `axis` (replace; last write wins)."""
    indices, updates = _flatten_indices(indices, updates, axis)
    bt, it = hlo.ranked(base), hlo.ranked(indices)
    k = it.rank
    window = list(range(axis)) + list(range(axis + k, bt.rank - 1 + k))
    dnums = ScatterDimensionNumbers.get(window, [axis], [], [], [axis], k)
    op = ir.Operation.create("stablehlo.scatter", results=[bt], operands=[base, indices, updates],
                             attributes={"scatter_dimension_numbers": dnums}, regions=1)
    scalar = ir.RankedTensorType.get([], bt.element_type)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.op("return", [], [block.arguments[1]])
    return op.result


def _slice_rev(base, value, starts, sizes, strides, result_type) -> ir.Value:
    strided = [i for i, s in enumerate(strides) if s != 1]
    if not strided:
        start_scalars = [_element(starts, i) for i in range(len(strides))]
        return hlo.one("dynamic_update_slice", result_type, base, value, *start_scalars)
    axis = strided[0]
    indices = _iota_indices(_element(starts, axis), _element(sizes, axis), strides[axis])
    rows = gather(base, indices, axis)
    zero_start = _replace_entry(starts, axis, hlo.scalar_i64(0), len(strides))
    inner_strides = [1 if i == axis else s for i, s in enumerate(strides)]
    rows_new = _slice_rev(rows, value, zero_start, sizes, inner_strides, rows.type)
    return scatter(base, indices, rows_new, axis)


def _replace_entry(vector: ir.Value, i: int, value: ir.Value, n: int) -> ir.Value:
    parts = [_element(vector, j) if j != i else value for j in range(n)]
    return hlo.shape_tensor(parts)


def _inverse(permutation: list[int]) -> list[int]:
    inverse = [0] * len(permutation)
    for i, p in enumerate(permutation):
        inverse[p] = i
    return inverse


def _reshape(value: ir.Value, shape: ir.Value, result_type: ir.Type) -> ir.Value:
    if ir.RankedTensorType(result_type).has_static_shape and hlo.ranked(value).has_static_shape:
        return hlo.one("reshape", result_type, value)
    return hlo.one("dynamic_reshape", result_type, value, shape)


def _assign(source: ir.Value, like: ir.Value) -> ir.Value:
    lt = hlo.ranked(like)
    value = hlo.convert(source, lt.element_type)
    if value.type == like.type:
        return value
    st = hlo.ranked(value)
    return hlo.dynamic_broadcast(lt, value, _shape_of(like), list(range(lt.rank - st.rank, lt.rank)))


def _lower(op: ir.Operation) -> ir.Value:
    name = op.name.split(".", 1)[1]
    operands = list(op.operands)
    result_type = op.results[0].type
    if name == "slice":
        return _slice(operands[0], operands[1], operands[2], _strides(op), result_type)
    if name == "slice_rev":
        return _slice_rev(operands[0], operands[1], operands[2], operands[3], _strides(op), result_type)
    if name == "reshape":
        return _reshape(operands[0], operands[1], result_type)
    if name == "reshape_rev":
        return _reshape(operands[1], _shape_of(operands[0]), result_type)
    if name in ("transpose", "transpose_rev"):
        perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
        value = operands[0] if name == "transpose" else operands[1]
        return hlo.one("transpose", result_type, value,
                       permutation=hlo.dense_i64_array(perm if name == "transpose" else _inverse(perm)))
    if name in ("reverse", "reverse_rev"):
        value = operands[0] if name == "reverse" else operands[1]
        return hlo.one("reverse", result_type, value, dimensions=op.attributes["dimensions"])
    if name == "gather":
        return gather(operands[0], operands[1], ir.IntegerAttr(op.attributes["axis"]).value)
    if name == "scatter":
        return scatter(operands[0], operands[1], operands[2], ir.IntegerAttr(op.attributes["axis"]).value)
    if name == "assign":
        return _assign(operands[0], operands[1])
    raise ValueError(f"immut-to-stablehlo: unknown op {op.name}")


def _permuted_vector(vector: ir.Value, order: list[int]) -> ir.Value:
    """`[vector[order[0]], vector[order[1]], ...]` as a `tensor<Nxi64>`."""
    return hlo.shape_tensor([_element(vector, i) for i in order])


def _write_through_transpose(op: ir.Operation) -> ir.Value | None:
    """`transpose_rev(B, slice_rev(transpose(B), V, starts, sizes))` (one
    permutation, the same B): a write to a box of a transposed view is a
    write to the permuted box of B itself, of V transposed back —
    `slice_rev(B, transpose(V), starts', sizes')` — so that the update
    touches the box only (`X.T[0] = v` writes one column of X, not a
    transposed copy of all of X). None when `op` is not of that form."""
    update = op.operands[1].owner
    if isinstance(update, ir.Block) or update.name != "immut.slice_rev":
        return None
    view = update.operands[0].owner
    if isinstance(view, ir.Block) or view.name != "immut.transpose" or view.operands[0] != op.operands[0]:
        return None
    perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    if perm != list(ir.DenseI64ArrayAttr(view.attributes["permutation"])):
        return None
    inverse = _inverse(perm)
    value = update.operands[1]
    value_type = hlo.ranked(value)
    dims = [value_type.shape[i] for i in inverse]
    back = ir.Operation.create("immut.transpose", results=[ir.RankedTensorType.get(dims, value_type.element_type)],
                               operands=[value], attributes={"permutation": hlo.dense_i64_array(inverse)}).result
    strides = _strides(update)
    return ir.Operation.create(
        "immut.slice_rev", results=[op.results[0].type],
        operands=[op.operands[0], back, _permuted_vector(update.operands[2], inverse),
                  _permuted_vector(update.operands[3], inverse)],
        attributes={"strides": hlo.dense_i64_array([strides[i] for i in inverse])}).result


def _fold_writes_through_transposes(module: ir.Module) -> None:
    for op in collect_ops(module, {"immut.transpose_rev"}):
        op = as_operation(op)
        with ir.InsertionPoint(op), op.location:
            new = _write_through_transpose(op)
        if new is None:
            continue
        update = op.operands[1].owner
        view = update.operands[0].owner
        op.results[0].replace_all_uses_with(new)
        op.erase()
        for dead in (update, view):  # the old write and the transposed view, unless still read
            if list(dead.results[0].uses):
                break
            dead.erase()


class _ImmutOps:
    def __contains__(self, name: str) -> bool:
        return name.startswith("immut.")


@register_pass
class ImmutToStablehlo(ModulePass):
    """Lower immut Access/Assign ops to StableHLO."""

    name = "immut-to-stablehlo"

    def apply(self, module: ir.Module) -> None:
        _fold_writes_through_transposes(module)
        for op in collect_ops(module, _ImmutOps()):
            op = as_operation(op)
            with ir.InsertionPoint(op), op.location:
                new = _lower(op)
            op.results[0].replace_all_uses_with(new)
            op.erase()
