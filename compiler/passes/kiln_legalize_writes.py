"""Pass `kiln-legalize-writes` (stage "linalg", before stablehlo-legalize-to-linalg).

In: the StableHLO that `immut-to-stablehlo` emits for writes and that
`stablehlo-legalize-to-linalg` leaves behind: `dynamic_update_slice` with
a dynamic operand or update, `scatter` along one axis with a replacing update
computation (the form kiln emits for writes) or, on 1-D tensors, an adding
one (`scatter_add`), `get_dimension_size`.
Out: `tensor.insert_slice` for the update slice; an `scf.for` over the
scattered indices that moves one row (`tensor.extract_slice` of the updates,
`tensor.insert_slice` into the carried result) per index, in order, so the
last write of a duplicated index wins, or adds one element to the element
at its index (duplicates accumulate); `tensor.dim` for dimension sizes.
"""

from __future__ import annotations

from kiln.compiler.mlir import ScatterDimensionNumbers, arith, dynamic_size, ir, scf, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._tensorssa import as_operation
from kiln.compiler.passes._util import collect_ops, index_value

_DYNAMIC_OFFSET = -9223372036854775808


def _index(v: ir.Value) -> ir.Value:
    """A `tensor<iN>` scalar as an `index`."""
    return arith.index_cast(ir.IndexType.get(), tensor.extract(v, []))


def _sizes(value: ir.Value) -> list:
    t = ir.RankedTensorType(value.type)
    return [tensor.dim(value, index_value(i)) if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank)]


def _split(values: list, dynamic_marker: int) -> tuple[list, list]:
    dynamic = [v for v in values if isinstance(v, ir.Value)]
    static = [dynamic_marker if isinstance(v, ir.Value) else v for v in values]
    return dynamic, static


def _insert(source: ir.Value, dest: ir.Value, offsets: list) -> ir.Value:
    sizes = _sizes(source)
    dyn_off, st_off = _split(offsets, _DYNAMIC_OFFSET)
    dyn_sz, st_sz = _split(sizes, dynamic_size())
    return tensor.insert_slice(source, dest, dyn_off, dyn_sz, [], st_off, st_sz, [1] * len(offsets))


def _update_slice(op: ir.Operation) -> ir.Value:
    base, value, *starts = list(op.operands)
    return _insert(value, base, [_index(s) for s in starts])


def _scatter(op: ir.Operation) -> ir.Value:
    if _combiner(op) == "add":
        return _scatter_add(op)
    base, indices, updates = list(op.operands)
    axis = ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"]).inserted_window_dims[0]
    ut = ir.RankedTensorType(updates.type)
    it = ir.RankedTensorType(indices.type)
    if it.rank != 1:
        raise ValueError("kiln-legalize-writes: scatter indices must be 1-D (immut-to-stablehlo flattens them)")
    count = tensor.dim(indices, index_value(0))
    loop = scf.ForOp(index_value(0), count, index_value(1), [base])
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        acc = loop.inner_iter_args[0]
        target = arith.index_cast(ir.IndexType.get(), tensor.extract(indices, [k]))
        update_sizes = _sizes(updates)
        row_sizes = [1 if i == axis else s for i, s in enumerate(update_sizes)]
        row_offsets = [k if i == axis else 0 for i in range(ut.rank)]
        row_type = ir.RankedTensorType.get(
            [1 if i == axis else (ut.shape[i] if not ut.is_dynamic_dim(i) else dynamic_size()) for i in range(ut.rank)],
            ut.element_type)
        dyn_off, st_off = _split(row_offsets, _DYNAMIC_OFFSET)
        dyn_sz, st_sz = _split(row_sizes, dynamic_size())
        row = tensor.extract_slice(row_type, updates, dyn_off, dyn_sz, [], st_off, st_sz, [1] * ut.rank)
        dest_offsets = [target if i == axis else 0 for i in range(ut.rank)]
        scf.YieldOp([_insert(row, acc, dest_offsets)])
    return loop.results[0]


def _scatter_add(op: ir.Operation) -> ir.Value:
    """1-D: `acc[indices[k]] += updates[k]` for each k in order."""
    base, indices, updates = list(op.operands)
    element = ir.RankedTensorType(base.type).element_type
    add = arith.AddIOp if isinstance(element, ir.IntegerType) else arith.AddFOp
    loop = scf.ForOp(index_value(0), tensor.dim(indices, index_value(0)), index_value(1), [base])
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        acc = loop.inner_iter_args[0]
        target = arith.index_cast(ir.IndexType.get(), tensor.extract(indices, [k]))
        total = add(tensor.extract(acc, [target]), tensor.extract(updates, [k])).result
        scf.YieldOp([tensor.insert(total, acc, [target])])
    return loop.results[0]


def _dimension_size(op: ir.Operation) -> ir.Value:
    axis = ir.IntegerAttr(op.attributes["dimension"]).value
    size = tensor.dim(op.operands[0], index_value(axis))
    i32 = ir.IntegerType.get_signless(32)
    return tensor.from_elements(op.results[0].type, [arith.index_cast(i32, size)])


def _combiner(op: ir.Operation) -> str | None:
    """"replace" when the update region returns the update, "add" when it
    returns `current + update`; None for any other computation."""
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    current, update = block.arguments[0], block.arguments[1]
    if len(body) == 1 and len(body[0].operands) == 1 and body[0].operands[0] == update:
        return "replace"
    if (len(body) == 2 and body[0].name == "stablehlo.add" and list(body[0].operands) == [current, update]
            and len(body[1].operands) == 1 and body[1].operands[0] == body[0].results[0]):
        return "add"
    return None


def _is_kiln_scatter(op: ir.Operation) -> bool:
    """One index per update row, inserted along one axis, the update region
    returning the new value (what kiln emits for writes) or, on 1-D tensors,
    adding it (scatter_add); others are not replaced."""
    dnums = ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    combiner = _combiner(op)
    if combiner is None or combiner == "add" and ir.RankedTensorType(op.operands[0].type).rank != 1:
        return False
    return (len(dnums.inserted_window_dims) == 1 and list(dnums.scattered_dims_to_operand_dims)
            == list(dnums.inserted_window_dims) and ir.RankedTensorType(op.operands[1].type).rank == 1)


_RULES = {
    "stablehlo.dynamic_update_slice": _update_slice,
    "stablehlo.scatter": _scatter,
    "stablehlo.get_dimension_size": _dimension_size,
}


@register_pass
class KilnLegalizeWrites(ModulePass):
    """Lower dynamic_update_slice, one-axis scatter (replacing, or adding on 1-D) and get_dimension_size to tensor/scf."""

    name = "kiln-legalize-writes"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, _RULES):
            op = as_operation(op)
            if op.name == "stablehlo.scatter" and not _is_kiln_scatter(op):
                continue
            if op.name == "stablehlo.dynamic_update_slice" and all(
                    ir.RankedTensorType(v.type).has_static_shape for v in (op.results[0], op.operands[1])):
                continue
            with ir.InsertionPoint(op), op.location:
                new = _RULES[op.name](op)
            op.results[0].replace_all_uses_with(new)
            op.erase()

