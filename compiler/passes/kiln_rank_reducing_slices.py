"""Pass `kiln-rank-reducing-slices` (stage "linalg", after the kiln-simplify-shapes that follows elementwise fusion).

In: a column or any other slice that drops unit dims, as the lowering
leaves it: `tensor.collapse_shape (tensor.extract_slice %a[0, j] [n, 1])`
(`a[:, j]`), and a write of one, `tensor.insert_slice (tensor.expand_shape
%v) into %a[0, j] [n, 1]` (`a[:, j] = v`). One-shot bufferization cannot
prove a strided `?x1` view collapsible, so it copies the column into a
fresh buffer before collapsing it (and the write goes through an expanded
temporary): deriche's column recursions gathered four columns and
scattered one per step.
Out: the rank-reducing `tensor.extract_slice %a[0, j] [n, 1] [1, 1] :
tensor<?x?xf64> to tensor<?xf64>` and `tensor.insert_slice %v into %a[0, j]
[n, 1] [1, 1]`, which bufferize to strided subviews: the loop reads and
writes the columns in place. Applies when each reshape group holds exactly
one dim that is not a static 1 in the slice's sizes and the reduced slice
is a vector: a strided plane read by several loops is cheaper gathered
once into a contiguous buffer (vadv).
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops


def _groups(op: ir.Operation) -> list[list[int]]:
    return [[ir.IntegerAttr(d).value for d in group] for group in ir.ArrayAttr(op.attributes["reassociation"])]


def _drops_only_unit_dims(groups: list[list[int]], sizes: list[int]) -> bool:
    """Whether each group of slice dims has exactly one dim that is not a
    static 1. (A group of 1s only would leave a 1 in the reduced type, and
    which of the slice's 1s it keeps decides the view's stride: MLIR's
    choice and the reshape's can differ.)"""
    return all(sum(1 for d in group if sizes[d] != 1) == 1 for group in groups)


def _one_dimensional(value: ir.Value) -> bool:
    """Whether the reduced slice is a vector. A plane (`c[:, :, k]` of vadv)
    stays a copy: a strided plane read by several loops costs more than one
    gather into a contiguous buffer (vadv S 6.7 -> 19.9 ms as a view)."""
    return ir.RankedTensorType(value.type).rank == 1


def _defining(value: ir.Value, name: str) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != name:
        return None
    return owner.operation


def _slice_attributes(op: ir.Operation) -> dict:
    return {name: op.attributes[name] for name in ["static_offsets", "static_sizes", "static_strides",
                                                   "operandSegmentSizes"] if name in op.attributes}


def _foldable(reshape: ir.Operation, slice_op: ir.Operation, vector: ir.Value) -> bool:
    """Whether `reshape` only drops or adds unit dims of `slice_op`'s sizes and `vector` is 1-d."""
    sizes = list(ir.DenseI64ArrayAttr(slice_op.attributes["static_sizes"]))
    return _drops_only_unit_dims(_groups(reshape), sizes) and _one_dimensional(vector)


def _replace(op: ir.Operation, name: str, operands: list, attributes: dict, producer: ir.Operation) -> None:
    """`op` becomes a `name` op of its result type; `producer` (the reshape
    or slice folded in) goes when nothing else reads it."""
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(name, results=[op.results[0].type], operands=operands, attributes=attributes)
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()
    if not list(producer.results[0].uses):
        producer.erase()


def _fold_extract(collapse: ir.Operation) -> bool:
    extract = _defining(collapse.operands[0], "tensor.extract_slice")
    if extract is None:
        return False
    if not _foldable(collapse, extract, collapse.results[0]):
        return False
    _replace(collapse, "tensor.extract_slice", list(extract.operands), _slice_attributes(extract), extract)
    return True


def _fold_insert(insert: ir.Operation) -> bool:
    expand = _defining(insert.operands[0], "tensor.expand_shape")
    if expand is None:
        return False
    source = expand.operands[0]
    if not _foldable(expand, insert, source) or ir.RankedTensorType(source.type).rank != len(_groups(expand)):
        return False
    _replace(insert, "tensor.insert_slice", [source] + list(insert.operands)[1:], _slice_attributes(insert), expand)
    return True


@register_pass
class KilnRankReducingSlices(ModulePass):
    """Fold unit-dim reshapes of slices into rank-reducing slices, which bufferize to views."""

    name = "kiln-rank-reducing-slices"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"tensor.collapse_shape", "tensor.insert_slice"}):
            if op.name == "tensor.collapse_shape":
                _fold_extract(op)
            else:
                _fold_insert(op)
