"""Helpers shared by kiln's Python passes: collecting ops, index values."""

from __future__ import annotations

from typing import Container

from kiln.compiler.mlir import arith, ir, tensor


def collect_ops(module: ir.Module, names: Container[str]) -> list[ir.Operation]:
    """All ops named in `names`, in pre-order (collected before any rewrite)."""
    found: list[ir.Operation] = []

    def visit(op):
        if op.name in names:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def all_parallel(op: ir.Operation) -> bool:
    """Whether every loop of a linalg op is parallel."""
    return all("parallel" in str(t) for t in op.attributes["iterator_types"])


def constant_int(value: ir.Value) -> int | None:
    """The integer of an `arith.constant` value, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def ancestors(op: ir.Operation):
    """The operations enclosing `op`, innermost first."""
    parent = op.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def index_value(i: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), i)


def dynamic_sizes_from_shape_tensor(shape: ir.Value, result_type: ir.RankedTensorType) -> list:
    """Sizes for `tensor.empty`: static ints, or index values read from `shape`."""
    sizes = []
    for i in range(result_type.rank):
        if not result_type.is_dynamic_dim(i):
            sizes.append(result_type.shape[i])
            continue
        v = tensor.extract(shape, [index_value(i)])
        # StableHLO shape operands hold integers or indices.
        sizes.append(v if isinstance(v.type, ir.IndexType) else arith.index_cast(ir.IndexType.get(), v))
    return sizes


def axes_attribute(op: ir.Operation, name: str) -> set[int]:
    """The axes listed in a `DenseI64ArrayAttr` attribute (empty when absent)."""
    return set(ir.DenseI64ArrayAttr(op.attributes[name])) if name in op.attributes else set()


def maybe_expanding_axes(op: ir.Operation) -> list[int]:
    """Operand axes of a `stablehlo.dynamic_broadcast_in_dim` that may be 1
    at run time while the result dim is larger: dynamic and in neither of
    its `known_*expanding_dimensions` lists (StableHLO's meaning)."""
    operand_type = ir.RankedTensorType(op.operands[0].type)
    known = (axes_attribute(op, "known_nonexpanding_dimensions")
             | axes_attribute(op, "known_expanding_dimensions"))
    return [j for j in range(operand_type.rank) if operand_type.is_dynamic_dim(j) and j not in known]
