"""Pass `kiln-fuse-insert-slices` (stage "linalg", before kiln-elementwise-in-place).

In: an all-parallel `linalg.generic` reading, through an identity map, a
tensor `X = tensor.insert_slice %S into %B[offsets][sizes][1, ...]` that
nothing else reads. This is what NumPy-style code that writes into a copy
and then computes on it lowers to, e.g.

    dup = img.copy(); dup[..., 0] = img[..., 2]; dup[..., 2] = img[..., 0]
    out = (dup - mean) * scale

Out: the generic reads `%B` instead and, in its body, picks the element of
`%S` where the position lies inside the slice:

    %v = scf.if (offset <= i < offset + size, per dim) { tensor.extract %S[i - offset] } else { %b }

repeated down a chain of insert_slices (the outermost, last write wins).
Bounds that always hold (offset 0 and a size equal to the dim of the base
array) are left out. The inserted tensors are then never materialized:
after bufferization `%S` is read in place (a view of the source) and the
generic makes one pass instead of a copy, one copy per slice, and the
elementwise pass. With a static trailing dim (or after
kiln-version-small-dims) LLVM unrolls that dim, the conditions become
constants and the loop vectorizes.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, linalg, scf, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import all_parallel, collect_ops, index_value, mixed_slice_values
from kiln.compiler.passes.kiln_simplify_shapes import _resolve_dim, _same_dim_value


def _readers(value: ir.Value) -> list:
    return [use for use in value.uses if use.owner.operation.name != "tensor.dim"]


def _slice_geometry(insert: ir.Operation):
    """(source, dest, offsets, sizes) of a rank-preserving, unit-stride
    insert_slice; None otherwise. Sizes come from the source's own shape."""
    source, dest = list(insert.operands)[:2]
    src_type, dest_type = ir.RankedTensorType(source.type), ir.RankedTensorType(dest.type)
    if src_type.rank != dest_type.rank:
        return None
    offsets, k = mixed_slice_values(insert, "static_offsets", 2)
    sizes, k = mixed_slice_values(insert, "static_sizes", k)
    strides, _ = mixed_slice_values(insert, "static_strides", k)
    if any(s != 1 for s in strides):
        return None
    return source, dest, offsets, sizes


def _size_is_whole_dim(source: ir.Value, dest: ir.Value, axis: int) -> bool:
    """Whether the inserted tensor's size along `axis` is provably the destination's."""
    return _same_dim_value(_resolve_dim(source, axis), _resolve_dim(dest, axis))


def _as_value(v) -> ir.Value:
    return index_value(v) if isinstance(v, int) else v


def _fuse_one(generic: ir.Operation, position: int) -> bool:
    """Fuse the insert_slice feeding input `position`, if it qualifies."""
    x = generic.operands[position]
    insert = x.owner
    if isinstance(insert, ir.Block) or insert.operation.name != "tensor.insert_slice":
        return False
    if len(_readers(x)) != 1:
        return False
    geometry = _slice_geometry(insert.operation)
    if geometry is None:
        return False
    source, dest, offsets, _ = geometry
    block = generic.regions[0].blocks[0]
    arg = block.arguments[position]
    uses = [(use.owner, use.operand_number) for use in arg.uses]
    rank = ir.RankedTensorType(x.type).rank
    element = ir.RankedTensorType(x.type).element_type
    with ir.InsertionPoint.at_block_begin(block), generic.location:
        indices = [linalg.IndexOp(d).result for d in range(rank)]
        condition = None
        for d in range(rank):
            offset = offsets[d]
            if offset == 0 and _size_is_whole_dim(source, dest, d):
                continue
            size = (ir.RankedTensorType(source.type).shape[d] if not ir.RankedTensorType(source.type).is_dynamic_dim(d)
                    else tensor.dim(source, index_value(d)))
            start = _as_value(offset)
            end = arith.addi(start, _as_value(size))
            inside = arith.andi(arith.cmpi(arith.CmpIPredicate.uge, indices[d], start),
                                arith.cmpi(arith.CmpIPredicate.ult, indices[d], end))
            condition = inside if condition is None else arith.andi(condition, inside)
        if condition is None:
            # The slice covers the whole tensor: read the source everywhere.
            value = tensor.extract(source, indices)
        else:
            if_op = scf.IfOp(condition, [element], has_else=True)
            with ir.InsertionPoint(if_op.then_block):
                local = [idx if off == 0 else arith.subi(idx, _as_value(off)) for idx, off in zip(indices, offsets)]
                scf.YieldOp([tensor.extract(source, local)])
            with ir.InsertionPoint(if_op.else_block):
                scf.YieldOp([arg])
            value = if_op.results[0]
    for owner, number in uses:
        owner.operands[number] = value
    generic.operands[position] = dest
    if not list(x.uses):
        insert.operation.erase()
    return True


@register_pass
class KilnFuseInsertSlices(ModulePass):
    """Read insert_slice chains element by element inside elementwise consumers instead of materializing them."""

    name = "kiln-fuse-insert-slices"

    def apply(self, module: ir.Module) -> None:
        for generic in collect_ops(module, {"linalg.generic"}):
            if not all_parallel(generic):
                continue
            n_inputs = len(list(generic.operands)) - len(generic.results)
            maps = list(ir.ArrayAttr(generic.attributes["indexing_maps"]))
            for i in range(n_inputs):
                m = ir.AffineMapAttr(maps[i]).value
                if m != ir.AffineMap.get_identity(m.n_dims) or m.n_dims == 0:
                    continue
                while _fuse_one(generic, i):
                    pass
