"""Thin builders for StableHLO ops (the bindings ship no Python op classes).

In: MLIR values and attributes, at the caller's insertion point and location.
Out: the op's result value(s). Result types are given or derived from the
operand, as StableHLO's own type rules would.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator, Sequence

import numpy as np

from kiln.compiler.mlir import dynamic_size, ir
from kiln.errors import KilnInternalError


def op(name: str, result_types: Sequence[ir.Type], operands: Sequence[ir.Value], **attributes) -> ir.Operation:
    attrs = {k: (v if isinstance(v, ir.Attribute) else ir.Attribute.parse(v)) for k, v in attributes.items()}
    return ir.Operation.create(f"stablehlo.{name}", results=list(result_types), operands=list(operands),
                               attributes=attrs)


def one(name: str, result_type: ir.Type, *operands: ir.Value, **attributes) -> ir.Value:
    return op(name, [result_type], operands, **attributes).result


def ranked(value: ir.Value) -> ir.RankedTensorType:
    return ir.RankedTensorType(value.type)


def with_element(t: ir.RankedTensorType, element: ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(t.shape), element)


def with_shape(t: ir.RankedTensorType, shape: Sequence[int]) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), t.element_type)


def i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def i1() -> ir.Type:
    return ir.IntegerType.get_signless(1)


def element_type(dtype: np.dtype) -> ir.Type:
    """The MLIR element type of a NumPy dtype (unsigned ints stay unsigned until
    `stablehlo-convert-to-signless`)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return ir.IntegerType.get_signless(1)
    if dtype.kind == "i":
        return ir.IntegerType.get_signless(8 * dtype.itemsize)
    if dtype.kind == "u":
        return ir.IntegerType.get_unsigned(8 * dtype.itemsize)
    if dtype == np.float16:
        return ir.F16Type.get()
    if dtype == np.float32:
        return ir.F32Type.get()
    if dtype == np.float64:
        return ir.F64Type.get()
    if dtype == np.complex64:
        return ir.ComplexType.get(ir.F32Type.get())
    if dtype == np.complex128:
        return ir.ComplexType.get(ir.F64Type.get())
    raise KilnInternalError(f"no MLIR element type for {dtype}")


def tensor_type(aval) -> ir.RankedTensorType:
    """The tensor type of an aval (a `DShapedArray`): `?` for each dim that is a value."""
    shape = [int(d) if isinstance(d, (int, np.integer)) and not isinstance(d, bool) else dynamic_size() for d in aval.shape]
    return ir.RankedTensorType.get(shape, element_type(aval.dtype))


def constant(value: np.ndarray) -> ir.Value:
    """A dense constant of `value`'s shape and dtype."""
    value = np.asarray(value)
    t = ir.RankedTensorType.get(list(value.shape), element_type(value.dtype))
    # Bools splat too: DenseElementsAttr.get reads a 0-d bool array as tensor<1xi1>.
    if value.size and value.dtype.kind != "c" and np.all(value == value.ravel()[0]):
        attr = ir.DenseElementsAttr.get_splat(t, _scalar_attr(value.ravel()[0], value.dtype, t.element_type))
    elif value.dtype == np.bool_:
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(value))
    else:
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(value), type=t)
    return op("constant", [t], [], value=attr).result


def _scalar_attr(v, dtype: np.dtype, element: ir.Type) -> ir.Attribute:
    if dtype.kind == "f":
        return ir.FloatAttr.get(element, float(v))
    # IntegerAttr.get takes an int64: pass uint64 values above it by their bits.
    return ir.IntegerAttr.get(element, int(np.asarray(v).astype(np.int64)) if dtype == np.uint64 else int(v))


def scalar_i64(v: int) -> ir.Value:
    return constant(np.array(v, dtype=np.int64))


def dense_i64_array(values: Sequence[int]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def convert(x: ir.Value, element: ir.Type) -> ir.Value:
    t = ranked(x)
    if t.element_type == element:
        return x
    return one("convert", with_element(t, element), x)


def reshape_static(x: ir.Value, shape: Sequence[int]) -> ir.Value:
    return one("reshape", with_shape(ranked(x), shape), x)


# Inside `reusing_shape_tensors()`: (block, dims) -> the shape tensor made
# for those dims at the end of that block. Per thread: functions may be
# compiled on several threads at once (e.g. first calls in Dask tasks).
_reuse = threading.local()


@contextlib.contextmanager
def reusing_shape_tensors() -> Iterator[None]:
    """Within it, `shape_tensor` appended at the end of a block returns the
    tensor an earlier call made there for the same dims (it dominates the
    new use): the Jaxpr lowering built one per broadcast and slice, ~2,300
    of channel_flow's 7,640 `mlir`-stage ops, which every pass up to `cse`
    walked. Only for the lowering, which appends and never erases; a shape
    tensor is an operand of shape ops, never written."""
    saved = getattr(_reuse, "shape_tensors", None)
    _reuse.shape_tensors = {}
    try:
        yield
    finally:
        _reuse.shape_tensors = saved


def shape_tensor(dims: Sequence[ir.Value | int]) -> ir.Value:
    """A `tensor<Nxi64>` from static ints and `tensor<i64>` dim values."""
    made = getattr(_reuse, "shape_tensors", None)
    key = None
    if made is not None:
        point = ir.InsertionPoint.current
        if point.ref_operation is None:
            key = (point.block, tuple(dims))
            if key in made:
                return made[key]
    value = _new_shape_tensor(dims)
    if key is not None:
        made[key] = value
    return value


def _new_shape_tensor(dims: Sequence[ir.Value | int]) -> ir.Value:
    if all(isinstance(d, int) for d in dims):
        return constant(np.array(dims, dtype=np.int64))
    parts = []
    for d in dims:
        v = scalar_i64(d) if isinstance(d, int) else convert(d, i64())
        parts.append(reshape_static(v, [1]))
    if len(parts) == 1:
        return parts[0]
    t = ir.RankedTensorType.get([len(parts)], i64())
    return op("concatenate", [t], parts, dimension=ir.IntegerAttr.get(i64(), 0)).result


def comparison(direction: str, x: ir.Value, y: ir.Value, compare_type: str | None = None) -> ir.Value:
    t = with_element(ranked(x), i1())
    attrs = {"comparison_direction": f"#stablehlo<comparison_direction {direction}>"}
    if compare_type:
        attrs["compare_type"] = f"#stablehlo<comparison_type {compare_type}>"
    return one("compare", t, x, y, **attrs)


def dynamic_broadcast(result_type: ir.Type, x: ir.Value, shape: ir.Value, broadcast_dimensions: Sequence[int],
                      expanding: Sequence[int] = ()) -> ir.Value:
    """`dynamic_broadcast_in_dim` stating which operand dims keep their size:
    every dynamic one except `expanding` (dims that may be 1 at run time and
    then broadcast; StableHLO leaves unlisted dims free to expand)."""
    operand_shape = ranked(x).shape
    known = [axis for axis, size in enumerate(operand_shape) if size != 1 and axis not in expanding]
    attrs = {"broadcast_dimensions": dense_i64_array(broadcast_dimensions)}
    if known:
        attrs["known_nonexpanding_dimensions"] = dense_i64_array(known)
    return one("dynamic_broadcast_in_dim", result_type, x, shape, **attrs)
