"""Pass `kiln-outline-serial-loops` (stage "bufferized", after kiln-branchless-bit-selects).

In: a large function (at least `min-ops` ops) whose loop nests kiln-parallelize
left inline: serial `scf.for` loops (the combine loops after parallel
reductions, reductions into scalars), `scf.parallel` nests in a function that
calls BLAS, user loops that only compute.
Out: each outermost such nest whose body makes no call (but a check's failure
or warning, or an interrupt poll) and no allocation is outlined into a function

    llvm.func @<func>_serial<N>(%ctx: !llvm.ptr)

that runs the whole nest on the calling thread. Its inputs (buffers as
memref descriptors, sizes, scalars) are stored into a context buffer, its
results (scalars only) stored back and read after the call:

    (stores into the context)
    llvm.call @<func>_serial<N>(%ctx) {no_inline}
    (loads of the nest's results)

Constants, views and index arithmetic are recomputed in the body, as in
kiln-parallelize (LLVM still folds constant sizes and sees shared base
pointers). The context is one `llvm.alloca` in the function's entry block,
as large as the largest nest's fields: each call fills it just before it
runs, and serial bodies call no other body, so the nests share it (a glue
function compiled without the optimizer gets no stack colouring).

Why: LLVM compiles one function on one thread, at one optimization level.
An entry whose loops all hand their work to a body or a library is glue
and compiles fast without the optimizer (split_codegen.cold_functions); one
loop left inline kept a whole entry at O3 (channel_flow's four combine
loops, nbody's 165 inline nests in one function). Outlined, the nests are
bodies that split_codegen deals to the compile threads at O3, and
kiln-dedup-parallel-bodies merges the equal ones (a helper traced twice).
Small functions stay as they are: below `min-ops` the entry compiles in
well under a second at O3 and a call per nest would buy nothing.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, llvm
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._outlining import (CHECKING_SINKABLE_OPS, CapturedNest, cast_value, field_pointer,
                                              load_captures, storage_type)
from kiln.compiler.passes._util import remap_operands
from kiln.compiler.passes.kiln_lower_checks import FAILURE_CALLEE, WARNING_CALLEE
from kiln.compiler.passes.kiln_poll_interrupts import POLL_CALLEE

# Calls a serial body may make: a failed check and an interrupt unwind the
# calling thread to kiln_invoke, a warning is recorded for that thread; a
# serial body runs on the calling thread, under kiln_invoke, as the entry.
ALLOWED_CALLEES = frozenset({FAILURE_CALLEE, WARNING_CALLEE, POLL_CALLEE})
MIN_OPS = 1000
_LOOPS = ("scf.for", "scf.parallel", "scf.while")


def _slots(t: ir.Type) -> int:
    """8-byte words a field of storage type `t` takes at most (its size and padding)."""
    if isinstance(t, ir.IntegerType) or isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
        return 1
    text = str(t)  # a memref descriptor: two pointers, an offset, sizes and strides
    rank = int(text.split("array<")[1].split(" x")[0]) if "array<" in text else 0
    return 3 + 2 * rank


class _SerialNest:
    """A nest to outline: its captures (CapturedNest) and the struct of its
    context (captures, then results)."""

    def __init__(self, nest: CapturedNest):
        self.nest = nest
        self.fields = [storage_type(v.type) for v in nest.captures] + \
            [storage_type(r.type) for r in nest.op.results]
        self.struct_type = ir.Type.parse("!llvm.struct<(" + ", ".join(str(t) for t in self.fields) + ")>") \
            if self.fields else ir.Type.parse("!llvm.struct<(i64)>")
        self.slots = max(1, sum(_slots(t) for t in self.fields))


def _outlinable(op: ir.Operation) -> CapturedNest | None:
    for result in op.results:
        t = result.type
        if isinstance(t, ir.MemRefType) or storage_type(t) is None:
            return None
    nest = CapturedNest(op, chunked=False, allowed_callees=ALLOWED_CALLEES, sinkable=CHECKING_SINKABLE_OPS)
    return nest if nest.serial_reason is None else None


def serial_nests(function: ir.Operation) -> list[CapturedNest]:
    """The outermost loop nests of `function` that can be outlined, in
    program order; a loop that cannot (it calls a body, allocates) is
    searched for nests inside it."""
    found: list[CapturedNest] = []

    def search(block: ir.Block) -> None:
        for op in block.operations:
            if op.name in _LOOPS:
                nest = _outlinable(op)
                if nest is not None:
                    found.append(nest)
                    continue
            for region in op.regions:
                for inner in region.blocks:
                    search(inner)

    for region in function.regions:
        for block in region.blocks:
            search(block)
    return found


def _count_ops(function: ir.Operation) -> int:
    count = [0]

    def visit(_op):
        count[0] += 1
        return ir.WalkResult.ADVANCE

    function.walk(visit)
    return count[0]


def _outline(module: ir.Module, function: ir.Operation, serial: _SerialNest, ctx: ir.Value, name: str) -> None:
    nest, op = serial.nest, serial.nest.op
    index = ir.IndexType.get()
    i64 = ir.IntegerType.get_signless(64)
    body_fn = ir.Operation.parse(f"llvm.func @{name}(%ctx: !llvm.ptr) {{\n  llvm.return\n}}")
    ir.InsertionPoint(module.body).insert(body_fn)
    body_fn.move_after(function)
    ctx_arg = body_fn.regions[0].blocks[0].arguments[0]
    ret = body_fn.regions[0].blocks[0].operations[0]
    n_captures = len(nest.captures)

    # Caller: fill the context, call, read the results back.
    with ir.InsertionPoint(op), op.location:
        for i, value in enumerate(nest.captures):
            stored = value
            if isinstance(value.type, ir.MemRefType):
                stored = cast_value(value, serial.fields[i])
            elif isinstance(value.type, ir.IndexType):
                stored = arith.index_cast(i64, value)
            ir.Operation.create("llvm.store", operands=[stored, field_pointer(ctx, serial.struct_type, i)])
        llvm.CallOp(None, [ctx], [], [], callee=name, no_inline=True)
        for k, result in enumerate(op.results):
            loaded = ir.Operation.create("llvm.load", results=[serial.fields[n_captures + k]],
                                         operands=[field_pointer(ctx, serial.struct_type, n_captures + k)]).result
            if isinstance(result.type, ir.IndexType):
                loaded = arith.index_cast(index, loaded)
            result.replace_all_uses_with(loaded)

    # Body: reload the captures, recompute the sunk ops, run the nest, store its results.
    with ir.InsertionPoint(ret), op.location:
        replacements = load_captures(nest, ctx_arg, serial.struct_type, serial.fields, ret)
    remap_operands(op, replacements)
    op.move_before(ret)
    with ir.InsertionPoint(ret), op.location:
        for k, result in enumerate(op.results):
            stored = arith.index_cast(i64, result) if isinstance(result.type, ir.IndexType) else result
            ir.Operation.create("llvm.store",
                                operands=[stored, field_pointer(ctx_arg, serial.struct_type, n_captures + k)])


@register_pass
class KilnOutlineSerialLoops(ModulePass):
    """Outline the loop nests a large function still runs inline into bodies called serially."""

    name = "kiln-outline-serial-loops"
    min_ops: int = option(MIN_OPS, "functions with fewer ops (nested ones included) keep their loops inline",
                          minimum=0)

    def apply(self, module: ir.Module) -> None:
        functions = [op for op in module.body.operations
                     if op.operation.name == "func.func" and op.regions[0].blocks]
        with module.context, ir.Location.unknown():
            for function in functions:
                if _count_ops(function) >= self.min_ops:
                    _outline_function(module, function)


def _outline_function(module: ir.Module, function: ir.Operation) -> None:
    loops = [n.op for n in serial_nests(function)]
    if not loops:
        return
    base = ir.StringAttr(function.attributes["sym_name"]).value
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint.at_block_begin(function.regions[0].blocks[0]):
        one = ir.Operation.create("llvm.mlir.constant", results=[i64],
                                  attributes={"value": ir.IntegerAttr.get(i64, 1)}).result
        alloca = ir.Operation.create(
            "llvm.alloca", results=[ir.Type.parse("!llvm.ptr")], operands=[one],
            attributes={"elem_type": ir.TypeAttr.get(i64), "alignment": ir.IntegerAttr.get(i64, 16)})
    words = 1
    for k, loop in enumerate(loops):
        # Each nest's captures are found just before it is outlined: a nest
        # may read a result of one outlined before it (now a load).
        nest = CapturedNest(loop, chunked=False, allowed_callees=ALLOWED_CALLEES,
                            sinkable=CHECKING_SINKABLE_OPS)
        if nest.serial_reason is not None:
            continue
        serial = _SerialNest(nest)
        words = max(words, serial.slots)
        _outline(module, function.operation, serial, alloca.result, f"{base}_serial{k}")
    # As large as the largest nest's fields (known once all are outlined).
    alloca.attributes["elem_type"] = ir.TypeAttr.get(ir.Type.parse(f"!llvm.array<{words} x i64>"))
