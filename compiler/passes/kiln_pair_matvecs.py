"""Pass `kiln-pair-matvecs` (stage "linalg", after kiln-collapse-batch-matmul).

In: two matrix-vector products of the same f32/f64 matrix from its two
sides, in one block, neither depending on the other: `A @ x` (a
`linalg.matmul` of `A` and an `(n, 1)` column) and `u @ A` (a
`linalg.matmul` of a `(1, m)` row and `A`), each accumulating into a zero
fill (`x1 += A @ y1; x2 += y2 @ A`, a BiCG step, a matrix and its
transpose applied in one iteration).
Out: one `func.call @kiln_matvec_pair_<f32|f64>` at the first product, on
the operands' own buffers (`bufferization.to_buffer read_only`, no copy)
and two fresh buffers for the results, which become the products' tensors
(`bufferization.to_tensor restrict writable`). runtime/matvec.c reads each
row of `A` once for both products; two BLAS gemv calls (what
kiln-linalg-to-blas makes of the products, and what NumPy runs) read all of
`A` twice, and for a matrix larger than the caches both are bound by memory
bandwidth.

The pure ops that compute the second product's vector (a reshape of an
argument, a slice) move up before the first product; a vector computed by
anything else (a loop, a call, an op reading the first product) leaves the
pair alone, with one exception: the chain `(A @ x) @ A` (NPBench's atax),
whose row vector is the column product itself, reshaped (or written
`A.T @ (A @ x)`: a column product of A's transposing copy, which is the
row product `(A @ x) @ A` laid out as a column). It becomes one
`func.call @kiln_matvec_chain_<f32|f64>(A, x, y, v)`: v needs all of y but
only row i of A with y[i], so the runtime reads each row of a row-major A
from memory once, for its dot product with x and then, from cache, for its
multiple added into v. The second product's shape check still runs at its place: the
runtime writes zeros instead of reading out of bounds when the shapes
disagree, and the check then raises NumPy's error.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, func, ir, memref, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops, copies_transposed, declare_private_function, zero_fill

CALLEE_PREFIX = "kiln_matvec_pair_"
CHAIN_CALLEE_PREFIX = "kiln_matvec_chain_"
# Ops that only reshape a tensor (its elements in the same order).
_RESHAPES = {"tensor.expand_shape", "tensor.collapse_shape", "tensor.reshape", "tensor.cast"}
_SUFFIX = {"f32": "f32", "f64": "f64"}
# Ops without memory effects or regions that may compute the second
# product's vector (moved up before the first product).
_MOVABLE_PREFIXES = ("arith.",)
_MOVABLE = {"tensor.expand_shape", "tensor.collapse_shape", "tensor.reshape", "tensor.from_elements",
            "tensor.extract_slice", "tensor.cast", "tensor.dim",
            "tensor.empty", "affine.apply"}


def _classify(op: ir.Operation):
    """('column', A, x) for `A @ x`, ('row', A, u) for `u @ A`, else None."""
    if len(op.operands) != 3 or len(op.results) != 1 or "cast" in op.attributes:
        return None
    left, right, init = op.operands
    types = [v.type for v in (left, right, init)]
    if not all(isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).rank == 2 for t in types):
        return None
    left_t, right_t, init_t = (ir.RankedTensorType(t) for t in types)
    element = str(init_t.element_type)
    if element not in _SUFFIX or str(left_t.element_type) != element or str(right_t.element_type) != element:
        return None
    if zero_fill(init) is None:
        return None
    column = right_t.shape[1] == 1 and left_t.shape[0] != 1
    row = left_t.shape[0] == 1 and right_t.shape[1] != 1
    if column == row:
        return None
    return ("column", left, right) if column else ("row", right, left)


def _hoistable_slice(vector: ir.Value, first: ir.Operation) -> list[ir.Operation] | None:
    """The ops after `first` (in its block) that `vector` is computed from, in
    block order, when all are movable and none reads `first`; else None."""
    block = first.block
    found, stack = [], [vector]
    while stack:
        value = stack.pop()
        owner = value.owner
        if isinstance(owner, ir.Block):
            continue
        op = owner.operation
        if op == first:
            return None
        if op.block != block or op.is_before_in_block(first) or any(op == f for f in found):
            # Defined before `first` or in an enclosing block: dominates it already.
            continue
        if not (op.name in _MOVABLE or op.name.startswith(_MOVABLE_PREFIXES)) or len(op.regions):
            return None
        found.append(op)
        stack.extend(op.operands)
    ordered = []
    for op in found:
        at = next((i for i, other in enumerate(ordered) if op.is_before_in_block(other)), len(ordered))
        ordered.insert(at, op)
    return ordered


def _reshaped_from(vector: ir.Value, product: ir.Operation) -> bool:
    """Whether `vector` is `product`'s result through reshapes only."""
    while True:
        owner = vector.owner
        if isinstance(owner, ir.Block):
            return False
        op = owner.operation
        if op == product:
            return True
        if op.name not in _RESHAPES:
            return False
        vector = op.operands[0]


def _transpose_source(value: ir.Value) -> ir.Value | None:
    """`A` when `value` is `A`'s transposing copy on tensors, else None."""
    op = value.owner
    if isinstance(op, ir.Block) or not copies_transposed(op.operation) or len(op.operation.results) != 1:
        return None
    return op.operation.operands[0]


def _any_strides(t: ir.RankedTensorType) -> ir.MemRefType:
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    layout = ir.StridedLayoutAttr.get(dynamic, [dynamic, dynamic])
    size = ir.ShapedType.get_dynamic_size()
    return ir.MemRefType.get([size, size], t.element_type, layout)


def _fuse(module: ir.Module, first: ir.Operation, column: ir.Operation, row: ir.Operation,
          moved: list[ir.Operation], serial: int, chain: bool = False) -> int:
    """One call at `first` for both products (`chain`: the row product's
    vector is the column product, reshaped; the call does not read it)."""
    for op in moved:
        op.move_before(first)
    _, matrix, x = _classify(column)
    u = None if chain else _classify(row)[2]
    operands = (matrix, x) if chain else (matrix, x, u)
    # v's own shape (1, n); the transposed spelling's result is (n, 1), the same elements.
    element_type = ir.RankedTensorType(matrix.type).element_type
    second = ir.RankedTensorType(row.results[0].type)
    row_type = second if second.shape[0] == 1 else ir.RankedTensorType.get([1, second.shape[0]], element_type)
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint(first), first.location:
        allocations = []
        for product, t in ((column, ir.RankedTensorType(column.results[0].type)), (row, row_type)):
            sizes = []
            for axis, extent in enumerate(t.shape):
                if extent == ir.ShapedType.get_dynamic_size():
                    # The column's rows are A's rows, the row's columns A's columns.
                    sizes.append(tensor.dim(matrix, arith.constant(ir.IndexType.get(), axis)))
            allocations.append(memref.alloc(ir.MemRefType.get(t.shape, t.element_type), sizes, []))
        arguments, types = [], []
        for operand in operands:
            t = ir.RankedTensorType(operand.type)
            generic = _any_strides(t)
            own = ir.MemRefType.get(t.shape, t.element_type, generic.layout)
            # The operand's own buffer, read only, directly before the call
            # (nothing writes it in between); numbered so that cse keeps the
            # `to_buffer`s of different calls apart (see kiln-lower-lapack).
            buffer = ir.Operation.create(
                "bufferization.to_buffer", results=[own], operands=[operand],
                attributes={"read_only": ir.UnitAttr.get(), "kiln.matvec_operand": ir.IntegerAttr.get(i64, serial)}
            ).result
            serial += 1
            arguments.append(buffer if own == generic else memref.cast(generic, buffer))
            types.append(generic)
        for alloc in allocations:
            generic = _any_strides(ir.RankedTensorType(column.results[0].type))
            arguments.append(memref.cast(generic, alloc))
            types.append(generic)
        element = str(ir.RankedTensorType(matrix.type).element_type)
        callee = (CHAIN_CALLEE_PREFIX if chain else CALLEE_PREFIX) + _SUFFIX[element]
        declare_private_function(module, callee, types, nounwind=True)
        func.CallOp([], ir.FlatSymbolRefAttr.get(callee), arguments)
        for product, alloc, t in zip((column, row), allocations, (column.results[0].type, row_type)):
            value = ir.Operation.create("bufferization.to_tensor", results=[t], operands=[alloc],
                                        attributes={"restrict": ir.UnitAttr.get(),
                                                    "writable": ir.UnitAttr.get()}).result
            wanted = product.results[0].type
            if value.type != wanted:  # (1, n) -> (n, 1): the same n elements
                extent = second.shape[0]
                flat = tensor.collapse_shape(ir.RankedTensorType.get([extent], element_type), value, [[0, 1]])
                sizes = ([tensor.dim(matrix, arith.constant(ir.IndexType.get(), 1))]
                         if extent == ir.ShapedType.get_dynamic_size() else [])
                value = tensor.expand_shape(wanted, flat, [[0, 1]], sizes, [extent, 1])
            product.results[0].replace_all_uses_with(value)
    column.erase()
    row.erase()
    return serial


@register_pass
class KilnPairMatvecs(ModulePass):
    """Compute `A @ x` and `u @ A` (or `(A @ x) @ A`) of one matrix in one pass over it."""

    name = "kiln-pair-matvecs"

    def apply(self, module: ir.Module) -> None:
        matmuls = collect_ops(module, {"linalg.matmul"})
        # Per matrix, the products in block order (a pair is in one block).
        groups: dict = {}
        for op in matmuls:
            kind = _classify(op)
            if kind is not None:
                groups.setdefault(kind[1], []).append((kind[0], op.operation))
                source = _transpose_source(kind[1]) if kind[0] == "column" else None
                if source is not None:
                    # `A.T @ y`: the row product `y @ A`, as a column; only as a chain's second product.
                    groups.setdefault(source, []).append(("transposed", op.operation))
        serial = 0
        for members in groups.values():
            columns = [op for kind, op in members if kind == "column"]
            rows = [(op, kind == "transposed") for kind, op in members if kind in ("row", "transposed")]
            used = []
            for column in columns:
                for row, transposed in rows:
                    if any(row == other for other in used) or row.block != column.block:
                        continue
                    first, second = (column, row) if column.is_before_in_block(row) else (row, column)
                    chain = first == column and _reshaped_from(_classify(row)[2], column)
                    if transposed and not chain:
                        continue
                    moved = [] if chain else _hoistable_slice(_classify(second)[2], first)
                    if moved is None:
                        continue
                    used.append(row)
                    serial = _fuse(module, first, column, row, moved, serial, chain=chain)
                    break
