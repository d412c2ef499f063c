"""Pass `kiln-version-small-dims` (stage "bufferized", before kiln-block-rows; `bodies=true` after kiln-parallelize).

In: an `scf.parallel` loop nest (from an elementwise linalg op) whose
innermost loop runs from 0 to a dynamic `memref.dim %m, q` that is likely
to be small: the body loads a 1-D buffer at the innermost index alone (a
per-channel vector such as `mean` in `(img - mean) * scale` on an
H x W x channels image). Nests without such a load are left alone, however
many loops they have: each version is a copy of the nest that LLVM
compiles, and versioning every 3+-loop nest gave NPBench's 4-D softmax
29 parallel bodies (1.9 s of compile) for extents that were 128. An
elementwise nest over contiguous buffers becomes one loop instead
(kiln-flatten-parallel-nests), which vectorizes whatever the extents.
Out: the nest behind `scf.if` versions for an innermost extent of 2, 3 and
4, the original nest as the fallback:

    %n = memref.dim %m, 2
    scf.if (%n == 2) { nest' } else { scf.if (%n == 3) { nest' } else { ... else { nest } } }

In a version the innermost bound is the constant, and the buffers whose
dim `q` is that extent (`%m` itself and buffers allocated with it as the
size) are viewed with a static size there, and views of them
(`memref.subview`) with their now static strides (`memref.reinterpret_cast`
of their own metadata; a `memref.cast` would be folded into the loads). With static
sizes and strides LLVM unrolls the channel loop and vectorizes the loop
around it with interleaved loads and stores; with a dynamic innermost
extent of 3 it runs scalar. One compile still serves every size.

With `bodies=true` (run after kiln-parallelize) the pass versions the
outlined parallel bodies instead: a body that reads columns of arrays
(`memref.subview`s with a static last size of rank >= 2 buffers whose last
dim is dynamic, such as `boxes[:, 2]` of an (N, 4) array; not slices with a
dynamic last size such as a stencil's `a[1:-1, 1:-1]`) gets versions for a last dim of 3 and 4
(all such buffers at once; BODY_VERSIONS), in which the columns' row stride is static
and LLVM loads a row's columns with one interleaved vector load. Only bodies
that compute (not those that only copy elements), and at most `body-budget`
of them per module, in program order: each version is a copy of the body
for LLVM to compile. A record decoder (bbox_decode) has one or two such
bodies; a stencil code with periodic boundaries (NPBench's channel_flow:
`u[1:-1, -1]`, `p[1:-1, 0]`) had 40.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, memref, scf
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import ancestors, collect_ops, constant_int, index_value

VERSIONS = (2, 3, 4)
# Column widths the outlined bodies are versioned for (each version is a
# copy of the whole body: LLVM's time grows with their number).
BODY_VERSIONS = (3, 4)




def _identity_layout(t: ir.MemRefType) -> bool:
    layout = t.layout
    return isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(t.rank)


def _candidate(op: ir.Operation) -> tuple[ir.Value, int, ir.Value] | None:
    """(buffer, axis, extent) of a nest to version, else None."""
    n = len(op.regions[0].blocks[0].arguments)
    if n < 2:
        return None
    operands = list(op.operands)
    lower, upper, step = operands[n - 1], operands[2 * n - 1], operands[3 * n - 1]
    if constant_int(lower) != 0 or constant_int(step) != 1 or constant_int(upper) is not None:
        return None
    owner = upper.owner
    if isinstance(owner, ir.Block) or owner.name != "memref.dim":
        return None
    buffer, axis = owner.operands[0], constant_int(owner.operands[1])
    if axis is None or not isinstance(buffer.type, ir.MemRefType) or not _identity_layout(buffer.type):
        return None
    iv = op.regions[0].blocks[0].arguments[n - 1]
    per_channel = []

    def visit(inner):
        if inner.name == "memref.load":
            indices = list(inner.operands)[1:]
            if len(indices) == 1 and indices[0] == iv:
                per_channel.append(inner)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not per_channel:
        return None
    return buffer, axis, upper


def _static_strides(t: ir.MemRefType) -> list[int]:
    """Row-major strides of an identity-layout type (dynamic where unknown)."""
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    strides, running = [], 1
    for d in reversed(t.shape):
        strides.append(running)
        running = running * d if (running != dynamic and d != ir.ShapedType.get_dynamic_size()) else dynamic
    return list(reversed(strides))


class _Specializer:
    """Values of a nest version with dim `axis` of the versioned buffers
    known to be `size`."""

    def __init__(self, buffers: list[tuple[ir.Value, int]], size: int, before: ir.Operation):
        self.buffers, self.size, self.before = buffers, size, before
        self.memo: list[tuple[ir.Value, ir.Value]] = []

    def _axis(self, value: ir.Value) -> int | None:
        """The versioned axis of `value`, or None if it is not a versioned buffer."""
        return next((axis for b, axis in self.buffers if value == b), None)

    def _versioned(self, value: ir.Value) -> bool:
        return self._axis(value) is not None

    def _static_type(self, t: ir.MemRefType, axis: int) -> ir.MemRefType:
        shape = list(t.shape)
        shape[axis] = self.size
        return ir.MemRefType.get(shape, t.element_type, memory_space=t.memory_space)

    def __call__(self, value: ir.Value) -> ir.Value:
        """A value the nest uses: buffers become static casts, index
        arithmetic is recomputed with the size known."""
        for old, new in self.memo:
            if old == value:
                return new
        result = self._compute(value)
        self.memo.append((value, result))
        return result

    def _compute(self, value: ir.Value) -> ir.Value:
        with ir.InsertionPoint(self.before), self.before.location:
            axis = self._axis(value)
            if axis is not None:
                static = self._static_type(ir.MemRefType(value.type), axis)
                return _static_view(value, list(static.shape), _static_strides(static))
            owner = value.owner
            if isinstance(owner, ir.Block):
                return value
            if owner.name == "memref.subview" and self._versioned(owner.operands[0]):
                return self._strided_view(owner, value)
            if isinstance(value.type, (ir.IndexType, ir.IntegerType)):
                return self._index(value)
        return value

    def _index(self, value: ir.Value) -> ir.Value:
        """An index/integer value with `memref.dim` of the versioned dim
        replaced by the size (pure arithmetic over it cloned)."""
        for old, new in self.memo:
            if old == value:
                return new
        result = value
        owner = value.owner
        if not isinstance(owner, ir.Block):
            if owner.name == "memref.dim" and self._versioned(owner.operands[0]) \
                    and constant_int(owner.operands[1]) == self._axis(owner.operands[0]):
                result = index_value(self.size)
            elif owner.name.startswith("arith.") and not owner.regions and owner.name != "arith.constant":
                result = self._rebuild(owner, value, range(len(owner.operands)))
        self.memo.append((value, result))
        return result

    def _rebuild(self, owner: ir.Operation, value: ir.Value, positions) -> ir.Value:
        """`owner` cloned with the operands at `positions` specialized (or
        `value` itself when none changes)."""
        operands = list(owner.operands)
        new = list(operands)
        for i in positions:
            if isinstance(operands[i].type, (ir.IndexType, ir.IntegerType)):
                new[i] = self._index(operands[i])
        if all(a == b for a, b in zip(new, operands)):
            return value
        clone = owner.clone(ip=ir.InsertionPoint(self.before))
        for i, v in enumerate(new):
            clone.operands[i] = v
        return clone.results[next(i for i, r in enumerate(owner.results) if r == value)]

    def _strided_view(self, subview: ir.Operation, value: ir.Value) -> ir.Value:
        """A unit-step subview of a versioned buffer, its offsets and sizes
        recomputed with the size known, cast to its static strides."""
        value = self._rebuild(subview, value, range(1, len(subview.operands)))
        subview = value.owner
        source_type = ir.MemRefType(subview.operands[0].type)
        strides = _static_strides(self._static_type(source_type, self._axis(subview.operands[0])))
        static_strides = list(ir.DenseI64ArrayAttr(subview.attributes["static_strides"]))
        if any(s != 1 for s in static_strides):
            return value
        result_type = ir.MemRefType(value.type)
        kept = list(range(source_type.rank))
        if result_type.rank != source_type.rank:
            # Rank-reducing: drop the unit sizes (this pass keeps it simple).
            sizes = list(ir.DenseI64ArrayAttr(subview.attributes["static_sizes"]))
            kept = [d for d in kept if sizes[d] != 1]
            if len(kept) != result_type.rank:
                return value
        old_strides, _ = result_type.get_strides_and_offset()
        new_strides = [strides[d] if strides[d] != ir.ShapedType.get_dynamic_stride_or_offset() else old
                       for d, old in zip(kept, old_strides)]
        if new_strides == list(old_strides):
            return value
        return _static_view(value, list(result_type.shape), new_strides)


def _static_view(value: ir.Value, shape: list[int], strides: list[int]) -> ir.Value:
    """`value` as a memref with the given static sizes/strides (dynamic
    entries read from its metadata). A `memref.reinterpret_cast`, not a
    `memref.cast`: loads and stores fold casts away, and with them the static
    strides LLVM needs to see."""
    t = ir.MemRefType(value.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    dynamic_stride = ir.ShapedType.get_dynamic_stride_or_offset()
    meta = memref.ExtractStridedMetadataOp(value)
    results = list(meta.results)
    offset_value, sizes_values, strides_values = results[1], results[2:2 + t.rank], results[2 + t.rank:]
    _, offset = t.get_strides_and_offset()
    sizes = [v for v, d in zip(sizes_values, shape) if d == dynamic]
    stride_operands = [v for v, st in zip(strides_values, strides) if st == dynamic_stride]
    offsets = [offset_value] if offset == dynamic_stride else []
    layout = ir.StridedLayoutAttr.get(offset, strides)
    result = ir.MemRefType.get(shape, t.element_type, layout, t.memory_space)
    return memref.reinterpret_cast(result, value, offsets, sizes, stride_operands, [offset], shape, strides)


def _same_dim(a: ir.Value, b: ir.Value) -> bool:
    """The same value, or `memref.dim` of the same buffer and axis."""
    if a == b:
        return True
    oa, ob = a.owner, b.owner
    if isinstance(oa, ir.Block) or isinstance(ob, ir.Block) or oa.name != "memref.dim" or ob.name != "memref.dim":
        return False
    axis = constant_int(oa.operands[1])
    return oa.operands[0] == ob.operands[0] and axis is not None and axis == constant_int(ob.operands[1])


def _buffers_with_extent(op: ir.Operation, buffer: ir.Value, axis: int, extent: ir.Value) -> list[ir.Value]:
    """`buffer` and the identity-layout buffers the nest uses that were
    allocated with `extent` as the size of dim `axis`."""
    found = [buffer]

    def consider(value):
        if any(value == f for f in found):
            return
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.name != "memref.alloc":
            return
        t = ir.MemRefType(value.type)
        if t.rank <= axis or not t.is_dynamic_dim(axis) or not _identity_layout(t):
            return
        dynamic_before = sum(1 for d in range(axis) if t.is_dynamic_dim(d))
        if _same_dim(list(owner.operands)[dynamic_before], extent):
            found.append(value)

    def visit(inner):
        for value in inner.operands:
            if isinstance(value.type, ir.MemRefType):
                consider(value)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _inside(value: ir.Value, op: ir.Operation) -> bool:
    owner = value.owner
    node = owner.owner if isinstance(owner, ir.Block) else owner
    target = op.operation
    while node is not None:
        if node.operation == target:
            return True
        node = node.parent
    return False


def _specialized_clone(op: ir.Operation, buffers: list[tuple[ir.Value, int]], size: int) -> ir.Operation:
    """Clone `op` at the current insertion point; the values it uses from
    outside are specialized for the versioned dims being `size`."""
    clone = op.clone(ip=ir.InsertionPoint.current)
    specialize = _Specializer(buffers, size, clone)
    inner = []

    def visit(o):
        inner.append(o)
        return ir.WalkResult.ADVANCE

    clone.walk(visit, ir.WalkOrder.PRE_ORDER)
    for o in inner:
        for i, operand in enumerate(list(o.operands)):
            if not _inside(operand, clone):
                new = specialize(operand)
                if new != operand:
                    o.operands[i] = new
    return clone


def _versions(loop: ir.Operation, dims: list[ir.Value], buffers: list[tuple[ir.Value, int]], sizes: tuple) -> None:
    """`scf.if (every dim == sizes[0]) {specialized clone} else {...}`, ending
    with `loop` itself. In a nest version the bound is `memref.dim` of a
    versioned buffer, so it specializes to the constant with the rest."""
    condition = None
    for dim in dims:
        equal = arith.cmpi(arith.CmpIPredicate.eq, dim, index_value(sizes[0]))
        condition = equal if condition is None else arith.andi(condition, equal)
    if_op = scf.IfOp(condition, [], has_else=True)
    with ir.InsertionPoint(if_op.then_block):
        _specialized_clone(loop, buffers, sizes[0])
        scf.YieldOp([])
    with ir.InsertionPoint(if_op.else_block):
        if len(sizes) > 1:
            _versions(loop, dims, buffers, sizes[1:])
            scf.YieldOp([])
        else:
            loop.move_before(scf.YieldOp([]))


def _column_view(op: ir.Operation) -> bool:
    """A `memref.subview` taking a fixed number of columns (a static size
    along the last dim, such as `boxes[:, 2]`): its rows are the array's
    rows, read at a row stride that is static in a version. A view with a
    dynamic last size (a stencil's `a[1:-1, 1:-1]`) reads contiguous runs
    that LLVM vectorizes as they are; versioning it would only copy the body."""
    if op.name != "memref.subview":
        return False
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
    return bool(sizes) and sizes[-1] != ir.ShapedType.get_dynamic_size()


def version_parallel_bodies(module: ir.Module, budget: int) -> None:
    """Bodies outlined by kiln-parallelize that read columns of arrays
    (subviews of rank >= 2 buffers whose last dim is dynamic): versions for
    a last dim in BODY_VERSIONS, where the columns' row stride is static.
    Each version copies the whole body: bbox_decode's first call compiles in
    0.9 s with two versions, 1.35 s with three (2, 3, 4), 0.3 s with none."""
    for fn in list(module.body.operations):
        if fn.operation.name != "llvm.func" or "_parallel" not in ir.StringAttr(fn.attributes["sym_name"]).value:
            continue
        entry = fn.regions[0].blocks[0]
        ops = list(entry.operations)
        loops = [o for o in ops if o.name in ("scf.for", "scf.parallel")]
        if len(loops) != 1 or not _computes(loops[0]):
            continue
        buffers = []
        for o in ops:
            if o.name != "builtin.unrealized_conversion_cast" or not isinstance(o.results[0].type, ir.MemRefType):
                continue
            value = o.results[0]
            t = ir.MemRefType(value.type)
            if t.rank < 2 or not _identity_layout(t) or not t.is_dynamic_dim(t.rank - 1):
                continue
            if any(_column_view(use.owner.operation) for use in value.uses):
                buffers.append((value, t.rank - 1))
        if not buffers:
            continue
        if budget == 0:
            return
        budget -= 1
        loop = loops[0]
        with ir.InsertionPoint(loop), loop.location:
            dims = [memref.dim(b, index_value(axis)) for b, axis in buffers]
            _versions(loop, dims, buffers, BODY_VERSIONS)


def _computes(loop: ir.Operation) -> bool:
    """Whether the loop computes values (arith/math on data, not only index
    arithmetic): a body that only moves elements (a column copied into a
    temporary) is bound by memory, and a version would only copy it."""
    found = []

    def visit(op):
        name = op.name
        if (name.startswith("arith.") or name.startswith("math.")) and name not in ("arith.constant", "arith.index_cast") \
                and any(not isinstance(r.type, ir.IndexType) for r in op.results):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    loop.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(found)


@register_pass
class KilnVersionSmallDims(ModulePass):
    """Version loop nests on a small innermost extent (2, 3, 4) so sizes and strides become static."""

    name = "kiln-version-small-dims"
    bodies: bool = option(False, "version the bodies outlined by kiln-parallelize (run after it) instead of loop nests")
    body_budget: int = option(4, "with bodies=true: bodies versioned per module at most, in program order", minimum=0)

    def apply(self, module: ir.Module) -> None:
        if self.bodies:
            version_parallel_bodies(module, self.body_budget)
            return
        for op in collect_ops(module, {"scf.parallel"}):
            if any(parent.operation.name in ("scf.parallel", "llvm.func") for parent in ancestors(op)):
                continue
            if len(op.results):
                continue
            found = _candidate(op)
            if found is None:
                continue
            buffer, axis, extent = found
            buffers = _buffers_with_extent(op, buffer, axis, extent)
            with ir.InsertionPoint(op), op.location:
                _versions(op, [extent], [(b, axis) for b in buffers], VERSIONS)

