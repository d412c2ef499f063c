"""Pass `kiln-legalize-dynamic` (stage "linalg", before stablehlo-legalize-to-linalg).

In: StableHLO with the dynamic-shape ops that `stablehlo-legalize-to-linalg`
leaves behind: `dynamic_broadcast_in_dim` with a dynamic result,
`dynamic_reshape`, `reverse` on dynamic dims, `dynamic_gather` (and `gather`
with a dynamic result), `kiln.scan`, `kiln.flatnonzero` and `kiln.elementwise`.
Out: the same computation in `tensor` / `linalg` / `arith` / `scf` ops:
`tensor.empty` sized from the shape operand plus a `linalg.generic` whose
input map drops broadcast dims (versioned with `scf.if` when an operand dim
may be 1 at run time: the common case keeps that map, or is the operand
itself; the other is one call of `kiln_broadcast_copy_<rank>d`
(runtime/broadcast.c) from the operand's buffer, read with stride 0 along
the dims that are 1, into a fresh buffer; `cse` runs just before this pass,
so a value broadcast several times in one expression is versioned once:
cse after it cannot merge the calls); `tensor.reshape`; `linalg.generic`s that
read the reversed or gathered position with `tensor.extract`; an `scf.for`
along the scanned axis carrying the running slice (along the last axis: one
scalar scan per row); for flatnonzero one
`scf.for` counting the true elements and one filling a tensor of that size;
for kiln.elementwise a `linalg.generic` around the `math` op.
"""

from __future__ import annotations

import functools

from kiln.compiler.mlir import GatherDimensionNumbers, arith, func, ir, linalg, math, memref, scf, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import (
    axes_attribute,
    collect_ops,
    dynamic_sizes_from_shape_tensor,
    index_value,
    maybe_expanding_axes,
)


def _is_dynamic(t: ir.Type) -> bool:
    return not ir.RankedTensorType(t).has_static_shape


def _parallel_maps(rank: int, in_exprs: list | None) -> tuple:
    maps = [ir.AffineMap.get(rank, 0, in_exprs)] if in_exprs is not None else []
    maps.append(ir.AffineMap.get_identity(rank))
    return (ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank))


def _broadcast_by_maps(op: ir.Operation, sizes: list, ones: frozenset = frozenset()) -> ir.Value:
    """The broadcast as one `linalg.generic` whose input map reads index 0
    along the expanding dims (static 1s, known-expanding dims and the
    operand axes `ones`, known to be 1 here) and drops the new ones; every
    other operand dim is the result dim."""
    operand = op.operands[0]
    result_type = ir.RankedTensorType(op.results[0].type)
    operand_type = ir.RankedTensorType(operand.type)
    bdims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
    expanding = axes_attribute(op, "known_expanding_dimensions") | ones
    exprs = []
    for j, d in enumerate(bdims):
        stretched = (operand_type.shape[j] == 1 and result_type.shape[d] != 1) or j in expanding
        exprs.append(ir.AffineConstantExpr.get(0) if stretched else ir.AffineDimExpr.get(d))
    maps, iterators = _parallel_maps(result_type.rank, exprs)
    generic = linalg.GenericOp([result_type], [operand], [tensor.empty(sizes, result_type.element_type)],
                               maps, iterators)
    block = generic.regions[0].blocks.append(operand_type.element_type, result_type.element_type)
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])
    return generic.result


# The run-time routine of the size-1 path (runtime/broadcast.c), one entry
# per rank up to this one; a higher rank keeps a loop nest.
COPY_CALLEE = "kiln_broadcast_copy_{rank}d"
# The mark of the scf.if of a versioned broadcast.
BROADCAST_VERSION = "kiln.broadcast_version"
COPY_MAX_RANK = 8


def _element_bytes(t: ir.Type) -> int:
    """Bytes per element of a buffer of `t` (an i1 is stored in a byte)."""
    if isinstance(t, ir.ComplexType):
        return 2 * _element_bytes(t.element_type)
    if isinstance(t, ir.IndexType):
        return 8
    width = ir.IntegerType(t).width if isinstance(t, ir.IntegerType) else ir.FloatType(t).width
    return max(1, (width + 7) // 8)


def _broadcast_by_call(op: ir.Operation, sizes: list, is_one: dict) -> ir.Value:
    """The general broadcast, by one call of runtime/broadcast.c: the
    operand's buffer (`bufferization.to_buffer read_only`, read by the call
    alone, right here) is read with stride 0 along each result dim it does
    not have or has as 1 (static, known-expanding, or a maybe-expanding dim
    found to be 1 when the program runs), into a fresh `memref.alloc` of the
    result's sizes that becomes the result (`to_tensor restrict writable`).

    Only the size-1 fallback of a versioned broadcast uses it: it runs when
    a dim is 1 at run time, and a call costs LLVM next to nothing where a
    loop nest per operand cost most of a stencil kernel's compile time."""
    operand = op.operands[0]
    result_type = ir.RankedTensorType(op.results[0].type)
    operand_type = ir.RankedTensorType(operand.type)
    bdims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
    expanding = axes_attribute(op, "known_expanding_dimensions")
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    layout = ir.StridedLayoutAttr.get(dynamic, [dynamic] * operand_type.rank)
    source = ir.Operation.create(
        "bufferization.to_buffer", results=[ir.MemRefType.get(operand_type.shape, operand_type.element_type, layout)],
        operands=[operand], attributes={"read_only": ir.UnitAttr.get()}).result
    metadata = memref.ExtractStridedMetadataOp(source)
    offset, strides = metadata.offset, list(metadata.strides)
    zero = index_value(0)
    result_strides = [zero] * result_type.rank
    for j, d in enumerate(bdims):
        if operand_type.shape[j] == 1 or j in expanding:
            continue
        result_strides[d] = arith.select(is_one[j], zero, strides[j]) if j in is_one else strides[j]
    dynamic_sizes = [n for n, static in zip(sizes, result_type.shape) if static == ir.ShapedType.get_dynamic_size()]
    buffer = memref.alloc(ir.MemRefType.get(result_type.shape, result_type.element_type), dynamic_sizes, [])
    callee = COPY_CALLEE.format(rank=result_type.rank)
    arguments = [index_value(_element_bytes(result_type.element_type)),
                 memref.extract_aligned_pointer_as_index(source), offset,
                 memref.extract_aligned_pointer_as_index(buffer), *[_as_index(n) for n in sizes], *result_strides]
    func.CallOp([], ir.FlatSymbolRefAttr.get(callee), arguments)
    return ir.Operation.create("bufferization.to_tensor", results=[result_type], operands=[buffer],
                               attributes={"restrict": ir.UnitAttr.get(), "writable": ir.UnitAttr.get()}).result


def _declare_copies(module: ir.Module, ranks: set[int]) -> None:
    """Declare the callee of each rank used (private, `index` arguments)."""
    index = ir.IndexType.get()
    table = ir.SymbolTable(module.operation)
    with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
        for rank in sorted(ranks):
            name = COPY_CALLEE.format(rank=rank)
            if name in table:
                continue
            decl = func.FuncOp(name, ir.FunctionType.get([index] * (4 + 2 * rank), []), visibility="private")
            decl.attributes["llvm.nounwind"] = ir.UnitAttr.get()


def _broadcast_by_reads(op: ir.Operation, sizes: list, maybe: list[int], is_one: dict) -> ir.Value:
    """The general broadcast: each result element reads the operand with
    `tensor.extract`, at index 0 along an operand dim that is 1 (static, or
    a maybe-expanding dim found to be 1 when the program runs).

    Only the size-1 fallback of a versioned broadcast uses it, which runs
    when a dim is 1 at run time: serial `scf.for` loops filling the result
    with `tensor.insert`, not a parallel `linalg.generic`, so it is neither
    outlined by kiln-parallelize nor versioned (LLVM compiles one plain
    nest per operand instead of an outlined and an inline vectorized one)."""
    operand = op.operands[0]
    result_type = ir.RankedTensorType(op.results[0].type)
    operand_type = ir.RankedTensorType(operand.type)
    bdims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
    expanding = axes_attribute(op, "known_expanding_dimensions")
    zero, one = index_value(0), index_value(1)
    bounds = [_as_index(n) for n in sizes]

    def fill(depth: int, ivs: list, result: ir.Value) -> ir.Value:
        if depth == result_type.rank:
            indices = []
            for j, d in enumerate(bdims):
                if operand_type.shape[j] == 1 or j in expanding:
                    indices.append(zero)
                elif j in maybe:
                    indices.append(arith.select(is_one[j], zero, ivs[d]))
                else:
                    indices.append(ivs[d])
            return tensor.insert(tensor.extract(operand, indices), result, ivs)
        loop = scf.ForOp(zero, bounds[depth], one, [result])
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([fill(depth + 1, ivs + [loop.induction_variable], loop.inner_iter_args[0])])
        return loop.results[0]

    return fill(0, [], tensor.empty(sizes, result_type.element_type))


def _unchanged(operand: ir.Value, result_type: ir.RankedTensorType, sizes: list) -> ir.Value:
    """The operand as the result (same rank, every dim kept): itself, or a
    slice from 0 when the result type states static sizes (not a
    `tensor.cast`, which would be folded into the operand's producer)."""
    if operand.type == result_type:
        return operand
    rank = result_type.rank
    dynamic = ir.ShapedType.get_dynamic_size()
    static_sizes = [dynamic if isinstance(n, ir.Value) else n for n in sizes]
    return tensor.extract_slice(result_type, operand, [], [n for n in sizes if isinstance(n, ir.Value)], [],
                                [0] * rank, static_sizes, [1] * rank)


def _broadcast(op: ir.Operation, copies: set[int]) -> ir.Value:
    """`dynamic_broadcast_in_dim` as tensor.empty + linalg.generic. With
    operand dims that may expand at run time, versioned:

        scf.if (each such dim == its result dim) { broadcast by maps (or
        the operand itself) } else { one call of runtime/broadcast.c }

    so the common case is today's code and the size-1 case is still NumPy's.
    The rank of each call is added to `copies` (the callees to declare).
    Above COPY_MAX_RANK the else branch is a loop nest: a broadcast by maps
    with one such dim (it differs from its result dim, so it is 1), else a
    broadcast by reads."""
    operand, shape = op.operands[0], op.operands[1]
    result_type = ir.RankedTensorType(op.results[0].type)
    sizes = dynamic_sizes_from_shape_tensor(shape, result_type)
    maybe = maybe_expanding_axes(op)
    if not maybe:
        return _broadcast_by_maps(op, sizes)
    bdims = list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"]))
    kept, is_one = None, {}
    for j in maybe:
        size = tensor.dim(operand, index_value(j))
        is_one[j] = arith.cmpi(arith.CmpIPredicate.eq, size, index_value(1))
        equal = arith.cmpi(arith.CmpIPredicate.eq, size, _as_index(sizes[bdims[j]]))
        kept = equal if kept is None else arith.andi(kept, equal)
    identity = bdims == list(range(result_type.rank)) and not axes_attribute(op, "known_expanding_dimensions") and all(
        n != 1 or r == 1 for n, r in zip(ir.RankedTensorType(operand.type).shape, result_type.shape))
    if_op = scf.IfOp(kept, [result_type], has_else=True)
    # (kiln-sink-into-broadcast-versions copies the broadcast's reader into both branches.)
    if_op.operation.attributes[BROADCAST_VERSION] = ir.UnitAttr.get()
    with ir.InsertionPoint(if_op.then_block):
        scf.YieldOp([_unchanged(operand, result_type, sizes) if identity else _broadcast_by_maps(op, sizes)])
    with ir.InsertionPoint(if_op.else_block):
        if result_type.rank <= COPY_MAX_RANK:
            fallback = _broadcast_by_call(op, sizes, is_one)
            copies.add(result_type.rank)
        elif len(maybe) == 1:
            # That dim differs from its result dim, so it is 1 (StableHLO's
            # rule, checked by kiln): a plain broadcast by maps.
            fallback = _broadcast_by_maps(op, sizes, frozenset(maybe))
        else:
            fallback = _broadcast_by_reads(op, sizes, maybe, is_one)
        scf.YieldOp([fallback])
    return if_op.result


def _reshape(op: ir.Operation) -> ir.Value:
    operand, shape = op.operands[0], op.operands[1]
    return tensor.reshape(op.results[0].type, operand, shape)


def _reverse(op: ir.Operation) -> ir.Value:
    """Reverse by reading `x[..., n-1-i, ...]` for each output position."""
    operand = op.operands[0]
    result_type = ir.RankedTensorType(op.results[0].type)
    dims = set(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    rank = result_type.rank
    sizes = [tensor.dim(operand, index_value(i)) if result_type.is_dynamic_dim(i) else result_type.shape[i]
             for i in range(rank)]
    init = tensor.empty(sizes, result_type.element_type)
    out_map = ir.AffineMap.get_identity(rank)
    generic = linalg.GenericOp(
        [result_type], [], [init], ir.ArrayAttr.get([ir.AffineMapAttr.get(out_map)]),
        ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank),
    )
    block = generic.regions[0].blocks.append(result_type.element_type)
    with ir.InsertionPoint(block):
        indices = []
        one = index_value(1)
        for i in range(rank):
            idx = linalg.IndexOp(i).result
            if i in dims:
                n = sizes[i] if isinstance(sizes[i], ir.Value) else index_value(sizes[i])
                idx = arith.subi(arith.subi(n, one), idx)
            indices.append(idx)
        linalg.YieldOp([tensor.extract(operand, indices)])
    return generic.result


def _sizes_of(value: ir.Value) -> list:
    """Each dim of `value` as an int (static) or an index value (`tensor.dim`)."""
    t = ir.RankedTensorType(value.type)
    return [tensor.dim(value, index_value(i)) if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank)]


def _as_index(v: ir.Value | int) -> ir.Value:
    return v if isinstance(v, ir.Value) else index_value(v)


def _to_index(v: ir.Value) -> ir.Value:
    """An integer scalar read from a StableHLO operand, as an index."""
    return v if isinstance(v.type, ir.IndexType) else arith.index_cast(ir.IndexType.get(), v)


def _parallel_generic(result_type: ir.RankedTensorType, sizes: list) -> tuple[linalg.GenericOp, ir.Block]:
    """A `linalg.generic` with no inputs over a fresh result of `sizes`; the
    caller fills its body (the block's one argument is the output element)."""
    rank = result_type.rank
    init = tensor.empty(sizes, result_type.element_type)
    generic = linalg.GenericOp(
        [result_type], [], [init], ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))]),
        ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank),
    )
    return generic, generic.regions[0].blocks.append(result_type.element_type)


def _gather(op: ir.Operation) -> ir.Value:
    """StableHLO gather semantics, one result element at a time: the batch
    dims of the result pick a start-index vector, which is clamped so the
    slice fits, and the offset dims step inside the slice."""
    operand, indices = op.operands[0], op.operands[1]
    result_type = ir.RankedTensorType(op.results[0].type)
    indices_rank = ir.RankedTensorType(indices.type).rank
    dnums = GatherDimensionNumbers(op.attributes["dimension_numbers"])
    offset_dims, collapsed = list(dnums.offset_dims), list(dnums.collapsed_slice_dims)
    start_map, index_vector_dim = list(dnums.start_index_map), dnums.index_vector_dim
    operand_sizes = _sizes_of(operand)
    if op.name == "stablehlo.dynamic_gather":
        slice_sizes = [_to_index(tensor.extract(op.operands[2], [index_value(i)])) for i in range(len(operand_sizes))]
    else:
        slice_sizes = list(ir.DenseI64ArrayAttr(op.attributes["slice_sizes"]))
    window_dims = [d for d in range(len(operand_sizes)) if d not in collapsed]
    batch_dims = [d for d in range(result_type.rank) if d not in offset_dims]
    # Result dims: offset dims have the slice sizes of the window dims; batch
    # dims those of `indices` (skipping the index vector dim).
    indices_sizes = _sizes_of(indices)
    indices_batch = [d for d in range(indices_rank) if d != index_vector_dim]
    sizes = []
    for d in range(result_type.rank):
        if result_type.is_dynamic_dim(d):
            src = slice_sizes[window_dims[offset_dims.index(d)]] if d in offset_dims \
                else indices_sizes[indices_batch[batch_dims.index(d)]]
            sizes.append(_as_index(src))
        else:
            sizes.append(result_type.shape[d])
    # Largest valid start of each mapped dim: operand size - slice size.
    max_starts = {od: arith.subi(_as_index(operand_sizes[od]), _as_index(slice_sizes[od])) for od in start_map}
    generic, block = _parallel_generic(result_type, sizes)
    with ir.InsertionPoint(block):
        position = [linalg.IndexOp(d).result for d in range(result_type.rank)]
        batch = [position[d] for d in batch_dims]
        zero = index_value(0)
        full = [zero] * len(operand_sizes)
        for k, od in enumerate(start_map):
            where = list(batch)
            if index_vector_dim < indices_rank:
                where.insert(index_vector_dim, index_value(k))
            start = _to_index(tensor.extract(indices, where))
            full[od] = arith.maxsi(arith.minsi(start, max_starts[od]), zero)
        for j, od in enumerate(window_dims):
            full[od] = arith.addi(full[od], position[offset_dims[j]])
        linalg.YieldOp([tensor.extract(operand, full)])
    return generic.result


def _is_float(t: ir.Type) -> bool:
    return isinstance(t, (ir.F16Type, ir.F32Type, ir.F64Type))


def _scan_step(combiner: str, acc: ir.Value, x: ir.Value) -> ir.Value:
    float_op, int_op = {
        "add": (arith.addf, arith.addi), "mul": (arith.mulf, arith.muli),
        "max": (arith.maximumf, arith.maxsi), "min": (arith.minimumf, arith.minsi),
    }[combiner]
    return (float_op if _is_float(acc.type) else int_op)(acc, x)


def _scan_identity(combiner: str, element: ir.Type) -> ir.Value:
    """The value a scan starts from (signless ints: the lowering maps unsigned
    scans onto signed ones)."""
    if _is_float(element):
        value = {"add": 0.0, "mul": 1.0, "max": float("-inf"), "min": float("inf")}[combiner]
        return arith.constant(element, value)
    width = ir.IntegerType(element).width
    value = {"add": 0, "mul": 1, "max": -(1 << (width - 1)), "min": (1 << (width - 1)) - 1}[combiner]
    return arith.constant(element, value)


def _scan_vector(x: ir.Value, size, combiner: str, reverse: bool, prefix: tuple = (),
                 into: ir.Value | None = None) -> ir.Value:
    """A scan of a 1-D tensor (or of the row `x[prefix..., :]`, written into
    the same row of `into`): an `scf.for` carrying the running value as a
    scalar (a 0-d tensor there would be a buffer allocated per element once
    bufferized) and the result, element by element."""
    element = ir.RankedTensorType(x.type).element_type
    n = _as_index(size)
    one = index_value(1)
    identity = _scan_identity(combiner, element)
    if into is None:
        into = tensor.empty([size], element)
    loop = scf.ForOp(index_value(0), n, one, [identity, into])
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        position = arith.subi(arith.subi(n, one), i) if reverse else i
        running, partial = loop.inner_iter_args
        value = _scan_step(combiner, running, tensor.extract(x, [*prefix, position]))
        scf.YieldOp([value, tensor.insert(value, partial, [*prefix, position])])
    return loop.results[1]


def _scan_rows(x: ir.Value, sizes: list, combiner: str, reverse: bool) -> ir.Value:
    """A scan along the last axis: one scalar scan per row (nested `scf.for`
    over the leading axes carrying the result), so each row is read and
    written contiguously; carrying the running column instead would stride
    across rows at every step."""
    element = ir.RankedTensorType(x.type).element_type
    result = tensor.empty(sizes, element)
    zero, one = index_value(0), index_value(1)

    def nest(depth: int, prefix: tuple, into: ir.Value) -> ir.Value:
        if depth == len(sizes) - 1:
            return _scan_vector(x, sizes[-1], combiner, reverse, prefix, into)
        loop = scf.ForOp(zero, _as_index(sizes[depth]), one, [into])
        with ir.InsertionPoint(loop.body):
            scf.YieldOp([nest(depth + 1, (*prefix, loop.induction_variable), loop.inner_iter_args[0])])
        return loop.results[0]

    return nest(0, (), result)


def _scan(op: ir.Operation) -> ir.Value:
    """`kiln.scan` as an `scf.for` along the axis carrying (running slice,
    result): step i combines slice i of the input into the running slice and
    inserts it."""
    combiner = ir.StringAttr(op.attributes["combiner"]).value
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = ir.BoolAttr(op.attributes["reverse"]).value
    x = op.operands[0]
    x_type = ir.RankedTensorType(x.type)
    element, rank = x_type.element_type, x_type.rank
    sizes = _sizes_of(x)
    if rank == 1:
        return _scan_vector(x, sizes[0], combiner, reverse)
    if axis == rank - 1:
        return _scan_rows(x, sizes, combiner, reverse)
    others = [i for i in range(rank) if i != axis]
    acc_type = ir.RankedTensorType.get([x_type.shape[i] for i in others], element)
    acc = linalg.fill(_scan_identity(combiner, element), outs=[tensor.empty([sizes[i] for i in others], element)])
    result = tensor.empty(sizes, element)
    n = _as_index(sizes[axis])
    one = index_value(1)
    loop = scf.ForOp(index_value(0), n, one, [acc, result])
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        position = arith.subi(arith.subi(n, one), i) if reverse else i
        dynamic = ir.ShapedType.get_dynamic_size()
        dyn_offset = ir.ShapedType.get_dynamic_stride_or_offset()
        static_offsets = [dyn_offset if d == axis else 0 for d in range(rank)]
        static_sizes = [1 if d == axis else (sizes[d] if isinstance(sizes[d], int) else dynamic) for d in range(rank)]
        dyn_sizes = [sizes[d] for d in others if not isinstance(sizes[d], int)]
        running, partial = loop.inner_iter_args
        current = tensor.extract_slice(acc_type, x, [position], dyn_sizes, [], static_offsets, static_sizes,
                                       [1] * rank)
        identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank - 1))
        step = linalg.GenericOp(
            [acc_type], [current], [running], ir.ArrayAttr.get([identity, identity]),
            ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * (rank - 1)),
        )
        body = step.regions[0].blocks.append(element, element)
        with ir.InsertionPoint(body):
            linalg.YieldOp([_scan_step(combiner, body.arguments[1], body.arguments[0])])
        updated = tensor.insert_slice(step.result, partial, [position], dyn_sizes, [], static_offsets,
                                      static_sizes, [1] * rank)
        scf.YieldOp([step.result, updated])
    return loop.results[1]


def _flatnonzero(op: ir.Operation) -> tuple[ir.Value, ir.Value]:
    """`kiln.flatnonzero`: the mask viewed flat, one loop counting its true
    elements, then one storing the position of each at the next free slot
    of a tensor of exactly that size."""
    mask = op.operands[0]
    mask_type = ir.RankedTensorType(mask.type)
    i64, index = ir.IntegerType.get_signless(64), ir.IndexType.get()
    if mask_type.rank > 1:
        flat_type = ir.RankedTensorType.get([_flat_size(mask_type)], mask_type.element_type)
        mask = tensor.collapse_shape(flat_type, mask, [list(range(mask_type.rank))])
    n = _as_index(_sizes_of(mask)[0])
    zero, one = index_value(0), index_value(1)
    counting = scf.ForOp(zero, n, one, [zero])
    with ir.InsertionPoint(counting.body):
        bit = tensor.extract(mask, [counting.induction_variable])
        increment = arith.index_cast(index, arith.extui(i64, bit))
        scf.YieldOp([arith.addi(counting.inner_iter_args[0], increment)])
    count = counting.results[0]
    positions = tensor.empty([count], i64)
    filling = scf.ForOp(zero, n, one, [zero, positions])
    with ir.InsertionPoint(filling.body):
        i = filling.induction_variable
        slot, partial = filling.inner_iter_args
        branch = scf.IfOp(tensor.extract(mask, [i]), [index, positions.type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            stored = tensor.insert(arith.index_cast(i64, i), partial, [slot])
            scf.YieldOp([arith.addi(slot, one), stored])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([slot, partial])
        scf.YieldOp(list(branch.results))
    count_tensor = tensor.from_elements(ir.RankedTensorType.get([], i64), [arith.index_cast(i64, count)])
    return count_tensor, filling.results[1]


_MATH_OPS = {"erf": "ErfOp", "erfc": "ErfcOp"}


def _elementwise(op: ir.Operation) -> ir.Value:
    """`kiln.elementwise {fn}`: a `linalg.generic` applying `math.<fn>` to
    each element (fused with its neighbours by linalg-fuse-elementwise-ops)."""
    fn = ir.StringAttr(op.attributes["fn"]).value
    x = op.operands[0]
    x_type = ir.RankedTensorType(x.type)
    maps, iterators = _parallel_maps(x_type.rank, [ir.AffineDimExpr.get(d) for d in range(x_type.rank)])
    generic = linalg.GenericOp([x_type], [x], [tensor.empty(_sizes_of(x), x_type.element_type)], maps, iterators)
    block = generic.regions[0].blocks.append(x_type.element_type, x_type.element_type)
    with ir.InsertionPoint(block):
        linalg.YieldOp([getattr(math, _MATH_OPS[fn])(block.arguments[0]).result])
    return generic.result


def _flat_size(t: ir.RankedTensorType) -> int:
    """The static number of elements of `t`, or the dynamic-size marker."""
    if not t.has_static_shape:
        return ir.ShapedType.get_dynamic_size()
    total = 1
    for d in t.shape:
        total *= d
    return total


_RULES = {
    "stablehlo.dynamic_broadcast_in_dim": _broadcast,
    "stablehlo.dynamic_reshape": _reshape,
    "stablehlo.reverse": _reverse,
    "stablehlo.dynamic_gather": _gather,
    "stablehlo.gather": _gather,
    "kiln.scan": _scan,
    "kiln.flatnonzero": _flatnonzero,
    "kiln.elementwise": _elementwise,
}


def _needs_rewrite(op: ir.Operation) -> bool:
    if op.name in ("stablehlo.gather", "stablehlo.dynamic_gather"):
        # Batching dims (which kiln never emits) are left to upstream.
        dnums = GatherDimensionNumbers(op.attributes["dimension_numbers"])
        if list(dnums.operand_batching_dims):
            return False
        return op.name == "stablehlo.dynamic_gather" or _is_dynamic(op.results[0].type)
    if op.name == "stablehlo.dynamic_broadcast_in_dim":
        return _is_dynamic(op.results[0].type) or bool(maybe_expanding_axes(op))
    if op.name == "stablehlo.reverse":
        return _is_dynamic(op.results[0].type)
    return op.name in _RULES


def legalize_dynamic(module: ir.Module) -> None:
    """Lower the dynamic-shape StableHLO ops that stablehlo-legalize-to-linalg leaves, `kiln.scan`,
    `kiln.flatnonzero` and `kiln.elementwise`."""
    copies: set[int] = set()
    rules = {**_RULES, "stablehlo.dynamic_broadcast_in_dim": functools.partial(_broadcast, copies=copies)}
    for op in collect_ops(module, _RULES):
        if not _needs_rewrite(op):
            continue
        with ir.InsertionPoint(op), op.location:
            new = rules[op.name](op)
        for old, value in zip(op.results, new if isinstance(new, tuple) else (new,)):
            old.replace_all_uses_with(value)
        op.erase()
    _declare_copies(module, copies)


@register_pass
class KilnLegalizeDynamic(ModulePass):
    """Lower the dynamic-shape StableHLO ops that stablehlo-legalize-to-linalg leaves, `kiln.scan`,
    `kiln.flatnonzero` and `kiln.elementwise`."""

    name = "kiln-legalize-dynamic"

    def apply(self, module: ir.Module) -> None:
        legalize_dynamic(module)
