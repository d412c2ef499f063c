"""Pass `kiln-parallelize` (stage "bufferized", after kiln-block-rows).

In: `scf.parallel` loop nests (from `convert-linalg-to-parallel-loops`) on
memrefs.
Out: each outermost `scf.parallel` that has no results and whose body makes
no calls and no allocations is outlined into a function

    llvm.func @<func>_parallel<N>(%ctx: !llvm.ptr, %lo: i64, %hi: i64)

that runs the loop nest for iterations [lo, hi) of its first dimension.
Every value the nest uses from outside (buffers, sizes, scalars) is stored
in a struct on the caller's stack (`llvm.alloca` in the entry block, so a
loop around the call does not grow the stack); a buffer is stored as its
LLVM memref descriptor (an `unrealized_conversion_cast` that
`reconcile-unrealized-casts` removes once memrefs are lowered). Constants,
views (`memref.subview`, reshapes, casts) and index arithmetic are cloned
into the body instead, so LLVM sees that two views share a base pointer
(and forms interleaved loads) and folds constant sizes. The loop is replaced by

    (stores into the context)
    func.call @kiln_parallel_for(@body, %ctx, lb0, ub0, work)

and, for a nest inside an scf.for / scf.while, by

    (stores into the context)
    scf.if (work >= %min_work) {
      func.call @kiln_parallel_for(@body, %ctx, lb0, ub0, work)
    } else {
      llvm.call @body(%ctx, lb0, ub0)
    }

where `%min_work = func.call @kiln_parallel_min_work()` is read once, at
the function's entry (so a nest whose work does not change in the loop
takes a loop-invariant decision: one per loop, not one call per statement
and iteration), and `work` estimates the innermost iterations: the product
of the parallel dims times the iterations of the body, where each inner
loop counts its trip count times its own body's iterations and sibling
loops add up.
`runtime/support.c` splits [lb0, ub0) over a thread pool, or runs the
body in the calling thread for small work (below `KILN_PARALLEL_MIN_WORK`,
default 32768; everything with `KILN_NUM_THREADS=1`). In a loop, small work
calls the body directly (`noinline`: LLVM would otherwise inline small
bodies back, re-creating the copy): no dispatch, no thread pool started. The nest
exists once, in the body: an inline serial copy beside it doubled what
LLVM compiles for every statement of a time loop (channel_flow's first
call, docs/benchmarks.md).

Loops stay serial (inline) when their bounds are constants with fewer than
`min-work` (default 4096) iterations, and in functions that call BLAS or
LAPACK (kiln-lower-lapack's kernels): OpenBLAS's own threads keep spinning
on the cores after a call returns, and kiln's idle workers, spinning ~1 ms
after each loop, take a core from the next call's threads
(contour_integral at NPBench's preset M, 32 complex solves between small
loops: 128-152 ms in parallel, 125-127 serial; NumPy 130).
Nests inside the outlined one (kiln-block-rows's blocks of sibling nests)
run serially in the body; their iterations count in `work` (a dim from
`%s` to `min(%s + %k, %n)` counts min(%k, %n)).

Bodies with calls are left serial: a run-time check in them would unwind
(longjmp) on a worker thread; so are bodies that allocate (an allocation
failure unwinds the same way).
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, func, ir, llvm, scf
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._outlining import CapturedNest, cast_value, field_pointer, load_captures, storage_type
from kiln.compiler.passes._util import ancestors, collect_ops, constant_int, remap_operands
from kiln.compiler.passes.kiln_lower_lapack import CALLEE_PREFIX as LAPACK_PREFIX

RUNTIME_CALLEE = "kiln_parallel_for"
# Work below this many iterations (KILN_PARALLEL_MIN_WORK; no limit with
# one thread) runs inline.
MIN_WORK_CALLEE = "kiln_parallel_min_work"
# Nests whose bounds are constants and whose iteration count is below this
# stay inline (shape computations over a few elements; LLVM folds them).
SERIAL_WORK = 4096
def _declare_runtime(module: ir.Module) -> None:
    declared = {ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations
                if op.operation.name == "func.func"}
    ptr = ir.Type.parse("!llvm.ptr")
    i64 = ir.IntegerType.get_signless(64)
    signatures = {RUNTIME_CALLEE: ([ptr, ptr, i64, i64, i64], []), MIN_WORK_CALLEE: ([], [i64])}
    for name, (inputs, outputs) in signatures.items():
        if name in declared:
            continue
        with ir.InsertionPoint.at_block_begin(module.body):
            decl = func.FuncOp(name, ir.FunctionType.get(inputs, outputs))
            decl.attributes["sym_visibility"] = ir.StringAttr.get("private")


def _enclosing_function(op: ir.Operation) -> ir.Operation:
    for parent in ancestors(op):
        if parent.operation.name in ("func.func", "llvm.func"):
            return parent
    raise ValueError("scf.parallel outside a function")


def _min_work(function: ir.Operation, min_works: dict) -> ir.Value:
    """The threshold, read once per call of `function` at its entry (it does
    not change during a call), so the serial-or-parallel decision of a nest
    whose work does not change in a loop is loop-invariant as well."""
    key = ir.StringAttr(function.attributes["sym_name"]).value
    if key not in min_works:
        i64 = ir.IntegerType.get_signless(64)
        entry = function.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(entry):
            min_works[key] = func.CallOp([i64], ir.FlatSymbolRefAttr.get(MIN_WORK_CALLEE), []).results[0]
    return min_works[key]


def _outline(module: ir.Module, nest: CapturedNest, name: str, min_works: dict) -> None:
    op = nest.op
    index = ir.IndexType.get()
    i64 = ir.IntegerType.get_signless(64)
    ptr = ir.Type.parse("!llvm.ptr")
    fields = [storage_type(v.type) for v in nest.captures]
    struct_type = ir.Type.parse("!llvm.struct<(" + ", ".join(str(t) for t in fields) + ")>") if fields \
        else ir.Type.parse("!llvm.struct<(i64)>")
    n_dims = len(op.regions[0].blocks[0].arguments)
    lower0, upper0 = op.operands[0], op.operands[n_dims]

    # The body function, after the enclosing function.
    body_fn = ir.Operation.parse(
        f"llvm.func @{name}(%ctx: !llvm.ptr, %lo: i64, %hi: i64) {{\n  llvm.return\n}}")
    enclosing = _enclosing_function(op)
    ir.InsertionPoint(module.body).insert(body_fn)
    body_fn.move_after(enclosing)
    entry = body_fn.regions[0].blocks[0]
    ctx_arg, lo_arg, hi_arg = entry.arguments
    ret = entry.operations[0]

    # Caller: the context struct lives in the function's entry block.
    caller_entry = enclosing.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(caller_entry), op.location:
        one = ir.Operation.create("llvm.mlir.constant", results=[i64],
                                  attributes={"value": ir.IntegerAttr.get(i64, 1)}).result
        ctx = ir.Operation.create("llvm.alloca", results=[ptr], operands=[one],
                                  attributes={"elem_type": ir.TypeAttr.get(struct_type),
                                              "alignment": ir.IntegerAttr.get(i64, 16)}).result
    with ir.InsertionPoint(op), op.location:
        # work = rows * (iterations per row: the other dims, nested nests).
        rows = arith.subi(upper0, lower0)
        per_row = None
        for d in range(1, n_dims):
            count = arith.subi(op.operands[n_dims + d], op.operands[d])
            per_row = count if per_row is None else arith.muli(per_row, count)
        inner = nest.iterations(op.regions[0].blocks[0])
        if inner is not None:
            inner = arith.maxsi(inner, arith.constant(index, 1))
            per_row = inner if per_row is None else arith.muli(per_row, inner)
        work = arith.index_cast(i64, rows if per_row is None else arith.muli(rows, per_row))
        # Inside a loop, small work calls the body directly over the whole
        # range (no dispatch, no thread-pool start); the threshold is read
        # once, at the function's entry. One body per nest: an inline serial
        # copy of the nest doubled LLVM's work (docs/benchmarks.md).
        # Elsewhere kiln_parallel_for runs small work serially itself.
        for i, value in enumerate(nest.captures):
            stored = value
            if isinstance(value.type, ir.MemRefType):
                stored = cast_value(value, fields[i])
            elif isinstance(value.type, ir.IndexType):
                stored = arith.index_cast(i64, value)
            ir.Operation.create("llvm.store", operands=[stored, field_pointer(ctx, struct_type, i)])
        lo0 = arith.index_cast(i64, lower0)
        hi0 = arith.index_cast(i64, upper0)
        in_loop = any(parent.operation.name in ("scf.for", "scf.while") for parent in ancestors(op))
        if in_loop:
            min_work = _min_work(enclosing, min_works)
            branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.sge, work, min_work), [], has_else=True)
    if in_loop:
        with ir.InsertionPoint(branch.else_block), op.location:
            llvm.CallOp(None, [ctx, lo0, hi0], [], [], callee=name, no_inline=True)
            scf.YieldOp([])
    with ir.InsertionPoint(branch.then_block if in_loop else op), op.location:
        fn_ptr = ir.Operation.create("llvm.mlir.addressof", results=[ptr],
                                     attributes={"global_name": ir.FlatSymbolRefAttr.get(name)}).result
        func.CallOp([], ir.FlatSymbolRefAttr.get(RUNTIME_CALLEE), [fn_ptr, ctx, lo0, hi0, work])
        if in_loop:
            scf.YieldOp([])

    # Body: reload the captures, run the nest over [lo, hi).
    with ir.InsertionPoint(ret), op.location:
        replacements = load_captures(nest, ctx_arg, struct_type, fields, ret)
        lo = arith.index_cast(index, lo_arg)
        hi = arith.index_cast(index, hi_arg)
    # The nest's own operands, not the uses of each replaced value: a
    # constant or an argument has uses all over the function, and walking
    # them for each of channel_flow's 132 nests took 1.6 s.
    remap_operands(op, replacements)
    op.operands[0] = lo
    op.operands[n_dims] = hi
    op.move_before(ret)


def _static_work(op: ir.Operation) -> int | None:
    """The iteration count of a loop nest whose bounds are all constants."""
    n_dims = len(op.regions[0].blocks[0].arguments)
    total = 1
    for d in range(n_dims):
        lower, upper = constant_int(op.operands[d]), constant_int(op.operands[n_dims + d])
        if lower is None or upper is None:
            return None
        total *= max(0, upper - lower)
    return total


def _calls_blas(function: ir.Operation) -> bool:
    """Whether `function` calls OpenBLAS: a CBLAS routine, or a LAPACK
    kernel of runtime/lapack.c (kiln-lower-lapack)."""
    found = []

    def visit(op):
        if op.name == "func.call" and (
                "cblas" in (callee := ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
                or callee.startswith(LAPACK_PREFIX)):
            found.append(op)
        return ir.WalkResult.ADVANCE

    function.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(found)


def parallel_candidates(module: ir.Module, min_work: int) -> list[ir.Operation]:
    """The outermost scf.parallel nests this pass outlines, in program
    order (kiln-block-rows groups the same nests)."""
    candidates = []
    blas_users: dict = {}
    for op in collect_ops(module, {"scf.parallel"}):
        if any(parent.name in ("scf.parallel", "llvm.func") for parent in ancestors(op)):
            continue
        if len(op.results):
            continue
        static = _static_work(op)
        if static is not None and static < min_work:
            continue
        function = _enclosing_function(op)
        if function not in blas_users:
            blas_users[function] = _calls_blas(function)
        if blas_users[function]:
            continue
        if CapturedNest(op).serial_reason is None:
            candidates.append(op)
    return candidates


@register_pass
class KilnParallelize(ModulePass):
    """Run outermost parallel loops on a thread pool (runtime/support.c's kiln_parallel_for)."""

    name = "kiln-parallelize"
    min_work: int = option(SERIAL_WORK, "nests with constant bounds and fewer iterations stay inline", minimum=0)

    def apply(self, module: ir.Module) -> None:
        nests = [CapturedNest(op) for op in parallel_candidates(module, self.min_work)]
        if not nests:
            return
        with module.context, ir.Location.unknown():
            _declare_runtime(module)
        counters: dict[str, int] = {}
        min_works: dict[str, ir.Value] = {}
        for nest in nests:
            owner = _enclosing_function(nest.op)
            base = ir.StringAttr(owner.attributes["sym_name"]).value
            counters[base] = counters.get(base, -1) + 1
            with module.context, ir.Location.unknown():
                _outline(module, nest, f"{base}_parallel{counters[base]}", min_works)
