"""Pass `kiln-element-access` (stage "linalg", after kiln-scalarize-rank0).

In: element reads and writes as the StableHLO legalization leaves them: a
`tensor.extract_slice` of sizes all 1, reshaped to 0-d and `tensor.extract`ed
(`A[i, j]` on the right); a one-element tensor (`tensor.from_elements`)
written by a `tensor.insert_slice` of sizes all 1 (`A[i, j] = x`).
Out: `tensor.extract %A[i, j]` and `tensor.insert %x into %A[i, j]`, which
bufferize to one `memref.load` / `memref.store` on the array itself: no
one-element buffer, subview or copy per access.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops, index_value

_RESHAPES = {"tensor.collapse_shape", "tensor.expand_shape"}


def _all_ones(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and t.has_static_shape and all(d == 1 for d in t.shape)


def _one_element_slice(value: ir.Value) -> ir.Operation | None:
    """The `tensor.extract_slice` of sizes all 1 that `value` is (through reshapes of one element)."""
    while _all_ones(value.type) and not isinstance(value.owner, ir.Block):
        op = value.owner
        if op.name == "tensor.extract_slice":
            return op if all(s == 1 for s in op.opview.static_sizes) else None
        if op.name not in _RESHAPES:
            return None
        value = op.operands[0]
    return None


def _offsets(op: ir.Operation) -> list[ir.Value]:
    """The slice's offsets as index values (static ones become constants)."""
    dynamic = iter(op.opview.offsets)
    return [next(dynamic) if offset == ir.ShapedType.get_dynamic_stride_or_offset() else index_value(offset)
            for offset in op.opview.static_offsets]


def _element(value: ir.Value) -> ir.Value:
    """The single element of a one-element tensor: the operand of its
    `tensor.from_elements` (through reshapes), else a `tensor.extract` of it."""
    source = value
    while not isinstance(source.owner, ir.Block) and source.owner.name in _RESHAPES:
        source = source.owner.operands[0]
    if not isinstance(source.owner, ir.Block) and source.owner.name == "tensor.from_elements":
        return source.owner.operands[0]
    rank = ir.RankedTensorType(value.type).rank
    return tensor.extract(value, [index_value(0)] * rank)


def _rewrite_read(op: ir.Operation) -> None:
    source = _one_element_slice(op.operands[0])
    if source is None:
        return
    with ir.InsertionPoint(op), op.location:
        element = tensor.extract(source.opview.source, _offsets(source))
    op.result.replace_all_uses_with(element)
    op.erase()


def _rewrite_write(op: ir.Operation) -> None:
    view = op.opview
    if not _all_ones(view.source.type) or not all(s == 1 for s in view.static_sizes):
        return
    with ir.InsertionPoint(op), op.location:
        written = tensor.insert(_element(view.source), view.dest, _offsets(op))
    op.result.replace_all_uses_with(written)
    op.erase()


@register_pass
class KilnElementAccess(ModulePass):
    """Turn one-element slice reads and writes into tensor.extract and tensor.insert."""

    name = "kiln-element-access"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"tensor.extract"}):
            _rewrite_read(op)
        for op in collect_ops(module, {"tensor.insert_slice"}):
            _rewrite_write(op)
