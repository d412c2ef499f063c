"""Helpers shared by the passes that outline loop nests into `llvm.func`
bodies reading their inputs through a context pointer (stage "bufferized":
kiln-parallelize, kiln-outline-serial-loops): which outside values a nest
uses, how each is stored in the context struct, and the struct's fields."""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir

# Pure ops whose results the body recomputes instead of receiving them.
SINKABLE_OPS = ("arith.constant", "memref.subview", "memref.collapse_shape", "memref.expand_shape",
                "memref.cast", "memref.dim", "memref.extract_strided_metadata", "memref.reinterpret_cast",
                "arith.index_cast",
                "arith.addi", "arith.subi", "arith.muli", "arith.minsi", "arith.maxsi")
# A body that may fail a check also recomputes the address of the check's
# message (a global) and LLVM constants.
CHECKING_SINKABLE_OPS = SINKABLE_OPS + ("llvm.mlir.addressof", "llvm.mlir.constant", "llvm.mlir.zero")
# A branch that rarely runs (kiln-divide-by-reciprocal's redo of a block):
# CapturedNest.iterations leaves it out of a nest's work.
RARELY_TAKEN = "kiln.rarely_taken"
# Ops that keep a nest from being outlined into a parallel body (kiln-parallelize's docstring).
SERIAL_OPS = ("func.call", "func.call_indirect", "llvm.call", "memref.alloc", "memref.realloc",
              "memref.dealloc", "memref.alloca")


def descriptor_type(memref_type: ir.MemRefType) -> ir.Type:
    """The LLVM struct `finalize-memref-to-llvm` lowers this memref type to."""
    rank = memref_type.rank
    if rank == 0:
        return ir.Type.parse("!llvm.struct<(ptr, ptr, i64)>")
    return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64, array<{rank} x i64>, array<{rank} x i64>)>")


def storage_type(t: ir.Type) -> ir.Type | None:
    """How a captured value is stored in the context struct, or None when
    this pass does not know how (the loop then stays serial)."""
    if isinstance(t, ir.MemRefType):
        memref_type = ir.MemRefType(t)
        if memref_type.memory_space is not None:
            return None
        return descriptor_type(memref_type)
    if isinstance(t, ir.IndexType):
        return ir.IntegerType.get_signless(64)
    if isinstance(t, ir.IntegerType) or isinstance(t, ir.F32Type) or isinstance(t, ir.F64Type) \
            or isinstance(t, ir.F16Type) or isinstance(t, ir.BF16Type):
        return t
    return None


def cast_value(value: ir.Value, to: ir.Type) -> ir.Value:
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[to], operands=[value]).result


def field_pointer(ctx: ir.Value, struct_type: ir.Type, index: int) -> ir.Value:
    ptr = ir.Type.parse("!llvm.ptr")
    return ir.Operation.create(
        "llvm.getelementptr", results=[ptr], operands=[ctx],
        attributes={"rawConstantIndices": ir.DenseI32ArrayAttr.get([0, index]),
                    "elem_type": ir.TypeAttr.get(struct_type)}).result


def load_captures(nest: "CapturedNest", ctx_arg: ir.Value, struct_type: ir.Type, fields: list,
                  ret: ir.Operation) -> dict:
    """A body's prologue, inserted before its `ret` (in a location context):
    each of `nest`'s captures loaded from its context field (a memref's
    descriptor cast back, an index from i64), then the sunk ops recomputed
    on them. Returns the replacements (outside value -> body value) for
    `remap_operands` on the nest."""
    from kiln.compiler.passes._util import remap_operands

    index = ir.IndexType.get()
    replacements: dict = {}
    for i, value in enumerate(nest.captures):
        loaded = ir.Operation.create("llvm.load", results=[fields[i]],
                                     operands=[field_pointer(ctx_arg, struct_type, i)]).result
        if isinstance(value.type, ir.MemRefType):
            loaded = cast_value(loaded, value.type)
        elif isinstance(value.type, ir.IndexType):
            loaded = arith.index_cast(index, loaded)
        replacements[value] = loaded
    for sunk in nest.sunk:
        clone = sunk.clone(ip=ir.InsertionPoint(ret))
        remap_operands(clone, replacements)
        replacements.update(zip(sunk.results, clone.results))
    return replacements


class CapturedNest:
    """A loop nest run as one outlined body, and the outside values it uses.
    `chunked`: an `scf.parallel` whose first dim's bounds the body receives
    as arguments (kiln-parallelize); else the body runs the whole loop.
    `allowed_callees`: calls that may stay in the body (a check's failure,
    an interrupt poll: they unwind the calling thread); any other op of
    SERIAL_OPS keeps the nest where it is (`serial_reason`). `sinkable`:
    the ops recomputed in the body instead of captured."""

    def __init__(self, op: ir.Operation, chunked: bool = True, allowed_callees: frozenset = frozenset(),
                 sinkable: tuple = SINKABLE_OPS):
        self.op = op
        self.chunked = chunked
        self.allowed_callees = allowed_callees
        self.sinkable = sinkable
        self.inner: set = set()
        self.serial_reason: str | None = None
        op.walk(self._visit_inner, ir.WalkOrder.PRE_ORDER)
        self.captures: list[ir.Value] = []
        # Ops recomputed in the body (constants, views, index arithmetic), operands first.
        self.sunk: list[ir.Operation] = []
        # The captures and the results of `sunk`, for constant-time lookups.
        self.known: set = set()
        if self.serial_reason is None:
            op.walk(self._visit_operands, ir.WalkOrder.PRE_ORDER)

    def _visit_inner(self, op):
        self.inner.add(op.operation)
        if op.name in SERIAL_OPS and op != self.op and not (
                op.name in ("func.call", "llvm.call") and "callee" in op.attributes
                and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in self.allowed_callees):
            self.serial_reason = op.name
        return ir.WalkResult.ADVANCE

    def _defined_inside(self, value: ir.Value) -> bool:
        owner = value.owner
        if isinstance(owner, ir.Block):
            owner = owner.owner
        return owner.operation in self.inner

    def _visit_operands(self, op):
        operands = list(op.operands)
        if op == self.op and self.chunked:
            # The first dim's bounds become the chunk bounds [lo, hi).
            n_dims = len(op.regions[0].blocks[0].arguments)
            operands = [v for i, v in enumerate(operands) if i not in (0, n_dims)]
        for value in operands:
            self._capture(value)
        return ir.WalkResult.ADVANCE

    def _capture(self, value: ir.Value) -> None:
        if self._defined_inside(value) or value in self.known:
            return
        owner = value.owner
        if not isinstance(owner, ir.Block) and owner.name in self.sinkable:
            # Recompute in the body: constants fold there, and views keep
            # their base pointer visible to LLVM (interleaved accesses).
            for operand in owner.operands:
                self._capture(operand)
            if value not in self.known:
                self.sunk.append(owner)
                self.known.update(owner.results)
        elif storage_type(value.type) is None:
            self.serial_reason = f"a captured value of type {value.type}"
        else:
            self.captures.append(value)
            self.known.add(value)

    def trip_count(self, lower: ir.Value, upper: ir.Value) -> ir.Value | None:
        """`upper - lower` when both come from outside; for a block
        `[s, min(s + k, n))` with `k` (and `n`) from outside, `k` (`min(k,
        n)`); else None (unknown). Emits at the current insertion point
        (before the nest)."""
        if not self._defined_inside(lower) and not self._defined_inside(upper):
            return arith.subi(upper, lower)
        clamp = upper.owner
        if isinstance(clamp, ir.Block) or clamp.name != "arith.minsi":
            return None
        for position, operand in enumerate(clamp.operands):
            end = operand.owner
            if isinstance(end, ir.Block) or end.name != "arith.addi" or end.operands[0] != lower:
                continue
            size = end.operands[1]
            if self._defined_inside(size):
                continue
            bound = clamp.operands[1 - position]
            return size if self._defined_inside(bound) else arith.minsi(size, bound)
        return None

    def iterations(self, block: ir.Block) -> ir.Value | None:
        """Innermost iterations of the loops in `block` (None: no loop in
        it): each `scf.parallel` / `scf.for` counts the product of its trip
        counts times the iterations of its own body (at least 1), and
        sibling loops add up. A loop whose trip count this cannot tell
        (bounds from inside, not a block) counts as one iteration of its
        body: a loop over zero blocks of 4096 (kiln-block-sums on a short
        row) counts nothing, not 4096 per row."""
        total = None
        for op in block.operations:
            if op.name == "scf.if" and RARELY_TAKEN in op.attributes:
                continue
            if op.name in ("scf.parallel", "scf.for"):
                dims = len(op.regions[0].blocks[0].arguments) if op.name == "scf.parallel" else 1
                count = None
                for d in range(dims):
                    trip = self.trip_count(op.operands[d], op.operands[dims + d])
                    if trip is not None:
                        count = trip if count is None else arith.muli(count, trip)
                body = self.iterations(op.regions[0].blocks[0])
                if body is not None:
                    body = arith.maxsi(body, arith.constant(ir.IndexType.get(), 1))
                    count = body if count is None else arith.muli(count, body)
                if count is None:
                    count = arith.constant(ir.IndexType.get(), 1)
            else:
                count = None
                for region in op.regions:
                    for inner in region.blocks:
                        found = self.iterations(inner)
                        if found is not None:
                            count = found if count is None else arith.addi(count, found)
                if count is None:
                    continue
            total = count if total is None else arith.addi(total, count)
        return total
