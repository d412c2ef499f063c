"""Pass `kiln-parallelize` (stage "bufferized", last).

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

    scf.if (work >= func.call @kiln_parallel_min_work()) {
      (the same)
    } else {
      (the original nest, inline)
    }

where `work` estimates the innermost iterations (the product of the
parallel dims times the trip counts of inner loops with outer bounds).
`runtime/support.c` splits [lb0, ub0) over a thread pool, or runs the
body in the calling thread for small work (below `KILN_PARALLEL_MIN_WORK`,
default 32768; everything with `KILN_NUM_THREADS=1`). In a loop, small work
takes the inline copy instead: no call per iteration, and the nest stays
visible to LLVM. Outside loops the copy is left out (it would only add to
LLVM's compile time).

Loops stay serial (inline) when their bounds are constants with fewer than
`min-work` (default 4096) iterations, and in functions that call BLAS:
OpenBLAS's own threads keep spinning on the cores after a call returns.
Consecutive nests of one block over the same rows (row 0 to the same
count), with nothing between them that reads or writes buffers, whose
written buffers are allocations accessed only at the nest's own row, become
one body: for each block of rows (about ROW_BLOCK_ELEMENTS elements per
nest), every nest in turn. Softmax's max, exp, sum and divide then make one
pass over memory instead of four.

Bodies with calls are left serial: a run-time check in them would unwind
(longjmp) on a worker thread; so are bodies that allocate (an allocation
failure unwinds the same way).
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, func, ir, scf
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import ancestors, collect_ops, constant_int

RUNTIME_CALLEE = "kiln_parallel_for"
# Work below this many iterations (KILN_PARALLEL_MIN_WORK; no limit with
# one thread) runs inline.
MIN_WORK_CALLEE = "kiln_parallel_min_work"
# Sibling nests over the same rows run in blocks of rows of about this many
# elements per nest (a few tens of KiB: the rows stay in L1/L2 between nests).
ROW_BLOCK_ELEMENTS = 8192
# Nests whose bounds are constants and whose iteration count is below this
# stay inline (shape computations over a few elements; LLVM folds them).
SERIAL_WORK = 4096
# Pure ops whose results the body recomputes instead of receiving them.
_SINKABLE_OPS = ("arith.constant", "memref.subview", "memref.collapse_shape", "memref.expand_shape",
                 "memref.cast", "memref.dim", "memref.extract_strided_metadata", "memref.reinterpret_cast",
                 "arith.index_cast",
                 "arith.addi", "arith.subi", "arith.muli", "arith.minsi", "arith.maxsi")
# Ops that keep a loop nest serial (see the module docstring).
_SERIAL_OPS = ("func.call", "func.call_indirect", "llvm.call", "memref.alloc", "memref.realloc",
               "memref.dealloc", "memref.alloca", "scf.parallel")



def _descriptor_type(memref_type: ir.MemRefType) -> ir.Type:
    """The LLVM struct `finalize-memref-to-llvm` lowers this memref type to."""
    rank = memref_type.rank
    if rank == 0:
        return ir.Type.parse("!llvm.struct<(ptr, ptr, i64)>")
    return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64, array<{rank} x i64>, array<{rank} x i64>)>")


def _storage_type(t: ir.Type) -> ir.Type | None:
    """How a captured value is stored in the context struct, or None when
    this pass does not know how (the loop then stays serial)."""
    if isinstance(t, ir.MemRefType):
        memref_type = ir.MemRefType(t)
        if memref_type.memory_space is not None:
            return None
        return _descriptor_type(memref_type)
    if isinstance(t, ir.IndexType):
        return ir.IntegerType.get_signless(64)
    if isinstance(t, ir.IntegerType) or isinstance(t, ir.F32Type) or isinstance(t, ir.F64Type) \
            or isinstance(t, ir.F16Type) or isinstance(t, ir.BF16Type):
        return t
    return None


def _cast(value: ir.Value, to: ir.Type) -> ir.Value:
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[to], operands=[value]).result


def _load_field(ctx: ir.Value, struct_type: ir.Type, index: int, t: ir.Type) -> ir.Value:
    return ir.Operation.create("llvm.load", results=[t], operands=[_field_pointer(ctx, struct_type, index)]).result


def _field_pointer(ctx: ir.Value, struct_type: ir.Type, index: int) -> ir.Value:
    ptr = ir.Type.parse("!llvm.ptr")
    return ir.Operation.create(
        "llvm.getelementptr", results=[ptr], operands=[ctx],
        attributes={"rawConstantIndices": ir.DenseI32ArrayAttr.get([0, index]),
                    "elem_type": ir.TypeAttr.get(struct_type)}).result


class _Nest:
    """Outermost scf.parallel nests run as one body (one, or several
    sibling nests over the same rows, see `_row_local`) and the outside
    values they use."""

    def __init__(self, ops: list[ir.Operation]):
        self.ops = ops
        self.op = ops[-1]
        self.inner: set = set()
        self.serial_reason: str | None = None
        for op in ops:
            self._current = op
            op.walk(self._visit_inner, ir.WalkOrder.PRE_ORDER)
        self.captures: list[ir.Value] = []
        # Ops recomputed in the body (constants, views, index arithmetic), operands first.
        self.sunk: list[ir.Operation] = []
        if self.serial_reason is None:
            for op in ops:
                self._current = op
                op.walk(self._visit_operands, ir.WalkOrder.PRE_ORDER)

    def _visit_inner(self, op):
        self.inner.add(op.operation)
        if op.name in _SERIAL_OPS and op != self._current:
            self.serial_reason = op.name
        return ir.WalkResult.ADVANCE

    def _defined_inside(self, value: ir.Value) -> bool:
        owner = value.owner
        if isinstance(owner, ir.Block):
            owner = owner.owner
        return owner.operation in self.inner

    def _visit_operands(self, op):
        operands = list(op.operands)
        if op == self._current:
            # The first dim's bounds become the chunk bounds [lo, hi).
            n_dims = len(op.regions[0].blocks[0].arguments)
            operands = [v for i, v in enumerate(operands) if i not in (0, n_dims)]
        for value in operands:
            self._capture(value)
        return ir.WalkResult.ADVANCE

    def _known(self, value: ir.Value) -> bool:
        return any(value == v for v in self.captures) or any(
            value == r for op in self.sunk for r in op.results)

    def _capture(self, value: ir.Value) -> None:
        if self._defined_inside(value) or self._known(value):
            return
        owner = value.owner
        if not isinstance(owner, ir.Block) and owner.name in _SINKABLE_OPS:
            # Recompute in the body: constants fold there, and views keep
            # their base pointer visible to LLVM (interleaved accesses).
            for operand in owner.operands:
                self._capture(operand)
            if not self._known(value):
                self.sunk.append(owner)
        elif _storage_type(value.type) is None:
            self.serial_reason = f"a captured value of type {value.type}"
        else:
            self.captures.append(value)

    def inner_loop_trip_counts(self) -> list[tuple[ir.Value, ir.Value]]:
        """(lower, upper) of inner scf.for loops whose bounds come from outside."""
        bounds = []

        def visit(op):
            if op.name == "scf.for":
                lower, upper = op.operands[0], op.operands[1]
                if not self._defined_inside(lower) and not self._defined_inside(upper):
                    bounds.append((lower, upper))
            return ir.WalkResult.ADVANCE

        for op in self.ops:
            op.walk(visit, ir.WalkOrder.PRE_ORDER)
        return bounds


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


def _outline(module: ir.Module, nest: _Nest, name: str) -> None:
    op = nest.op
    index = ir.IndexType.get()
    i64 = ir.IntegerType.get_signless(64)
    ptr = ir.Type.parse("!llvm.ptr")
    fields = [_storage_type(v.type) for v in nest.captures]
    if len(nest.ops) > 1:
        fields.append(i64)  # rows per block
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
        # work = rows * (iterations per row, summed over the nests).
        rows = arith.subi(upper0, lower0)
        per_row = None
        for member in nest.ops:
            dims = len(member.regions[0].blocks[0].arguments)
            member_row = None
            for d in range(1, dims):
                count = arith.subi(member.operands[dims + d], member.operands[d])
                member_row = count if member_row is None else arith.muli(member_row, count)
            if member_row is None and len(nest.ops) > 1:
                member_row = arith.constant(index, 1)
            if member_row is not None:
                per_row = member_row if per_row is None else arith.addi(per_row, member_row)
        inner = None
        for lower, upper in nest.inner_loop_trip_counts():
            count = arith.subi(upper, lower)
            inner = count if inner is None else arith.addi(inner, count)
        if inner is not None:
            inner = arith.maxsi(inner, arith.constant(index, 1))
            per_row = inner if per_row is None else arith.muli(per_row, inner)
        work = arith.index_cast(i64, rows if per_row is None else arith.muli(rows, per_row))
        # Inside a loop, small work runs an inline copy of the nests (no
        # call per iteration, and LLVM sees the loop in place); elsewhere
        # kiln_parallel_for runs small work serially itself, and one copy
        # less keeps LLVM's compile time down.
        in_loop = any(parent.operation.name in ("scf.for", "scf.while") for parent in ancestors(op))
        if in_loop:
            min_work = func.CallOp([i64], ir.FlatSymbolRefAttr.get(MIN_WORK_CALLEE), []).results[0]
            branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.sge, work, min_work), [], has_else=True)
    if in_loop:
        with ir.InsertionPoint(branch.else_block), op.location:
            serial_yield = scf.YieldOp([])
        for member in nest.ops:
            member.clone(ip=ir.InsertionPoint(serial_yield))
    with ir.InsertionPoint(branch.then_block if in_loop else op), op.location:
        for i, value in enumerate(nest.captures):
            stored = value
            if isinstance(value.type, ir.MemRefType):
                stored = _cast(value, fields[i])
            elif isinstance(value.type, ir.IndexType):
                stored = arith.index_cast(i64, value)
            ir.Operation.create("llvm.store", operands=[stored, _field_pointer(ctx, struct_type, i)])
        if len(nest.ops) > 1:
            # Rows per block: about ROW_BLOCK_ELEMENTS elements of each nest.
            per_row_or_1 = per_row if per_row is not None else arith.constant(index, 1)
            block = arith.maxsi(arith.divsi(arith.constant(index, ROW_BLOCK_ELEMENTS),
                                            arith.maxsi(per_row_or_1, arith.constant(index, 1))),
                                arith.constant(index, 1))
            ir.Operation.create("llvm.store", operands=[arith.index_cast(i64, block),
                                                        _field_pointer(ctx, struct_type, len(fields) - 1)])
        fn_ptr = ir.Operation.create("llvm.mlir.addressof", results=[ptr],
                                     attributes={"global_name": ir.FlatSymbolRefAttr.get(name)}).result
        func.CallOp([], ir.FlatSymbolRefAttr.get(RUNTIME_CALLEE),
                    [fn_ptr, ctx, arith.index_cast(i64, lower0), arith.index_cast(i64, upper0), work])
        if in_loop:
            scf.YieldOp([])

    # Body: reload the captures, run the nest over [lo, hi).
    replacements = []
    with ir.InsertionPoint(ret), op.location:
        for i, value in enumerate(nest.captures):
            loaded = ir.Operation.create("llvm.load", results=[fields[i]],
                                         operands=[_field_pointer(ctx_arg, struct_type, i)]).result
            if isinstance(value.type, ir.MemRefType):
                loaded = _cast(loaded, value.type)
            elif isinstance(value.type, ir.IndexType):
                loaded = arith.index_cast(index, loaded)
            replacements.append((value, loaded))
        for sunk in nest.sunk:
            clone = sunk.clone(ip=ir.InsertionPoint(ret))
            for i, operand in enumerate(clone.operands):
                for old, new in replacements:
                    if operand == old:
                        clone.operands[i] = new
                        break
            replacements.extend(zip(sunk.results, clone.results))
        lo = arith.index_cast(index, lo_arg)
        hi = arith.index_cast(index, hi_arg)
    # Find every use first: rewriting an operand changes how the bindings
    # identify its op.
    rewrites = [(use.owner, use.operand_number, new) for old, new in replacements
                for use in old.uses if use.owner.operation in nest.inner]
    for owner, number, new in rewrites:
        owner.operands[number] = new
    if len(nest.ops) == 1:
        op.operands[0] = lo
        op.operands[n_dims] = hi
        op.move_before(ret)
        return
    # Sibling nests over the same rows: run them block of rows by block of
    # rows, so a row computed by one nest is still in cache for the next.
    with ir.InsertionPoint(ret), op.location:
        block_rows = arith.index_cast(index, _load_field(ctx_arg, struct_type, len(fields) - 1, i64))
        rows_loop = scf.ForOp(lo, hi, block_rows)
    with ir.InsertionPoint(rows_loop.body), op.location:
        start = rows_loop.induction_variable
        stop = arith.minsi(arith.addi(start, block_rows), hi)
        yield_op = scf.YieldOp([])
    for member in nest.ops:
        dims = len(member.regions[0].blocks[0].arguments)
        member.operands[0] = start
        member.operands[dims] = stop
        member.move_before(yield_op)



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
    found = []

    def visit(op):
        if op.name == "func.call" and "cblas" in ir.FlatSymbolRefAttr(op.attributes["callee"]).value:
            found.append(op)
        return ir.WalkResult.ADVANCE

    function.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(found)


# Ops that may sit between two sibling nests run as one body: they neither
# read nor write buffer contents, so the earlier nest may run after them.
_BETWEEN_OPS = ("memref.dim", "memref.alloc", "memref.subview", "memref.cast", "memref.collapse_shape",
                "memref.expand_shape", "memref.reinterpret_cast", "memref.extract_strided_metadata",
                "llvm.mlir.constant")
_VIEW_OPS = ("memref.subview", "memref.cast", "memref.collapse_shape", "memref.expand_shape",
             "memref.reinterpret_cast")


def _is_check(op: ir.Operation) -> bool:
    """`scf.if %bad { func.call @kiln_check_failed(...) }` (reads no buffers)."""
    if op.name != "scf.if" or len(op.results):
        return False
    inner = []

    def visit(o):
        inner.append(o)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    for o in inner[1:]:
        if o.name == "func.call":
            if ir.FlatSymbolRefAttr(o.attributes["callee"]).value != "kiln_check_failed":
                return False
        elif not (o.name in ("scf.yield", "arith.constant")):
            return False
    return True


def _may_sit_between(op: ir.Operation) -> bool:
    name = op.name
    return (name.startswith("arith.") and not op.regions) or name in _BETWEEN_OPS or _is_check(op)


def _resolve_size(v: ir.Value):
    """A dim value seen through `memref.dim` of allocations (their size
    operands) and of reshapes: a Value, an int, or ("dim", buffer, axis)."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return v
    if owner.name == "arith.constant":
        return constant_int(v)
    if owner.name != "memref.dim" or constant_int(owner.operands[1]) is None:
        return v
    return _resolve_buffer_dim(owner.operands[0], constant_int(owner.operands[1]))


def _resolve_buffer_dim(buffer: ir.Value, axis: int):
    t = ir.MemRefType(buffer.type)
    if not t.is_dynamic_dim(axis):
        return t.shape[axis]
    owner = buffer.owner
    if isinstance(owner, ir.Block):
        return ("dim", buffer, axis)
    dynamic_before = sum(1 for d in range(axis) if t.is_dynamic_dim(d))
    if owner.name == "memref.alloc":
        return _resolve_size(list(owner.operands)[dynamic_before])
    if owner.name == "memref.expand_shape":
        return _resolve_size(list(owner.operands)[1 + dynamic_before])
    if owner.name == "memref.collapse_shape":
        source_type = ir.MemRefType(owner.operands[0].type)
        groups = [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(g)]
                  for g in ir.ArrayAttr(owner.attributes["reassociation"])]
        non_unit = [d for d in groups[axis] if source_type.shape[d] != 1]
        if len(non_unit) == 1:
            return _resolve_buffer_dim(owner.operands[0], non_unit[0])
    if owner.name == "memref.cast":
        return _resolve_buffer_dim(owner.operands[0], axis)
    return ("dim", buffer, axis)


def _same_size(a: ir.Value, b: ir.Value) -> bool:
    ra, rb = _resolve_size(a), _resolve_size(b)
    if isinstance(ra, tuple) and isinstance(rb, tuple):
        return ra[1] == rb[1] and ra[2] == rb[2]
    if isinstance(ra, int) or isinstance(rb, int):
        return ra == rb
    if isinstance(ra, tuple) or isinstance(rb, tuple):
        return False
    return ra == rb


def _view_root(v: ir.Value) -> ir.Value:
    """The buffer `v` is a view of: through every op that makes a memref
    from a memref (subview, transpose, reshapes, casts, ...), up to an
    allocation or a block argument."""
    while not isinstance(v.owner, ir.Block) and v.owner.name != "memref.alloc":
        sources = [o for o in v.owner.operands if isinstance(o.type, ir.MemRefType)]
        if not sources:
            break
        v = sources[0]
    return v


def _row_view_root(v: ir.Value) -> ir.Value | None:
    """The buffer `v` views such that index 0 of `v` is row 0 of it (through
    casts and reshapes that only add or drop unit dims after dim 0), or
    None when `v` is some other view."""
    while not isinstance(v.owner, ir.Block) and v.owner.name in _VIEW_OPS:
        owner = v.owner
        if owner.name in ("memref.expand_shape", "memref.collapse_shape"):
            expanded = v if owner.name == "memref.expand_shape" else owner.operands[0]
            first = [ir.IntegerAttr(d).value for d in ir.ArrayAttr(ir.ArrayAttr(owner.attributes["reassociation"])[0])]
            shape = ir.MemRefType(expanded.type).shape
            if first[0] != 0 or any(shape[d] != 1 for d in first[1:]):
                return None
        elif owner.name != "memref.cast":
            return None
        v = owner.operands[0]
    return v


def _row_local(nests: list[ir.Operation]) -> bool:
    """Whether running the nests row block by row block is the same as
    running them one after the other: every buffer a nest writes is an
    allocation, reached in the nests only through views that keep its rows
    (unit-dim reshapes, casts), and every access to it is at row = the
    nest's first induction variable."""
    accesses = []  # (buffer, first index or None, row iv, is store)
    for nest in nests:
        iv = nest.regions[0].blocks[0].arguments[0]
        found, other = [], []

        def visit(o):
            if o.name == "memref.load":
                operands = list(o.operands)
                found.append((operands[0], operands[1] if len(operands) > 1 else None, iv, False))
            elif o.name == "memref.store":
                operands = list(o.operands)
                found.append((operands[1], operands[2] if len(operands) > 2 else None, iv, True))
            elif o.name.startswith("memref.") and o.name not in ("memref.dim",) + _VIEW_OPS:
                other.append(o)
            return ir.WalkResult.ADVANCE

        nest.walk(visit, ir.WalkOrder.PRE_ORDER)
        if other:
            return False
        accesses.extend(found)
    written = []
    for buffer, _, _, is_store in accesses:
        if is_store:
            root = _row_view_root(buffer)
            if root is None or isinstance(root.owner, ir.Block) or root.owner.name != "memref.alloc":
                return False
            if not any(root == w for w in written):
                written.append(root)
    for buffer, row, iv, _ in accesses:
        if not any(_view_root(buffer) == w for w in written):
            continue
        root = _row_view_root(buffer)
        if root is None or row is None or row != iv:
            return False
    return True


def _same_rows(a: ir.Operation, b: ir.Operation) -> bool:
    """Both nests start at row 0 with step 1 and have the same row count."""
    def rows(op):
        n = len(op.regions[0].blocks[0].arguments)
        return op.operands[0], op.operands[n], op.operands[2 * n]
    la, ua, sa = rows(a)
    lb, ub, sb = rows(b)
    return (constant_int(la) == 0 and constant_int(lb) == 0 and constant_int(sa) == 1
            and constant_int(sb) == 1 and _same_size(ua, ub))


def _group_siblings(ops: list[ir.Operation]) -> list[list[ir.Operation]]:
    """Consecutive nests of one block over the same rows, with only
    `_may_sit_between` ops between them and row-local accesses, form one
    group (run as one body); others are groups of one."""
    groups: list[list[ir.Operation]] = []
    for op in ops:
        if groups:
            last = groups[-1][-1]
            if last.block == op.block and _same_rows(groups[-1][0], op):
                siblings = list(op.block.operations)
                start = next(i for i, o in enumerate(siblings) if o.operation == last.operation)
                stop = next(i for i, o in enumerate(siblings) if o.operation == op.operation)
                between = siblings[start + 1:stop]
                if all(_may_sit_between(o.operation) for o in between) and _row_local(groups[-1] + [op]):
                    groups[-1].append(op)
                    continue
        groups.append([op])
    return groups


@register_pass
class KilnParallelize(ModulePass):
    """Run outermost parallel loops on a thread pool (runtime/support.c's kiln_parallel_for)."""

    name = "kiln-parallelize"
    min_work: int = option(SERIAL_WORK, "nests with constant bounds and fewer iterations stay inline", minimum=0)

    def apply(self, module: ir.Module) -> None:
        candidates = []
        blas_users: dict = {}
        for op in collect_ops(module, {"scf.parallel"}):
            if any(parent.name in ("scf.parallel", "llvm.func") for parent in ancestors(op)):
                continue
            if len(op.results):
                continue
            static = _static_work(op)
            if static is not None and static < self.min_work:
                continue
            function = _enclosing_function(op)
            if function not in blas_users:
                blas_users[function] = _calls_blas(function)
            if blas_users[function]:
                continue
            nest = _Nest([op])
            if nest.serial_reason is None:
                candidates.append(nest)
        if not candidates:
            return
        candidates = [_Nest(group) for group in _group_siblings([c.op for c in candidates])]
        with module.context, ir.Location.unknown():
            _declare_runtime(module)
        counters: dict[str, int] = {}
        for nest in candidates:
            owner = _enclosing_function(nest.op)
            base = ir.StringAttr(owner.attributes["sym_name"]).value
            counters[base] = counters.get(base, -1) + 1
            with module.context, ir.Location.unknown():
                _outline(module, nest, f"{base}_parallel{counters[base]}")

