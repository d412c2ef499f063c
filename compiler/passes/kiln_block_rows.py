"""Pass `kiln-block-rows` (stage "bufferized", before kiln-parallelize).

In: the outermost `scf.parallel` nests kiln-parallelize would outline
(`parallel_candidates`), on memrefs.
Out: consecutive nests of one block over the same rows (row 0 to the same
count, step 1), with nothing between them that reads or writes buffers,
whose written buffers are allocations accessed only at the nest's own row,
become one nest over blocks of rows that runs every nest in turn on its
block:

    %per_row = (iterations per row, summed over the nests)
    %rows_per_block = max(ROW_BLOCK_ELEMENTS / max(%per_row, 1), 1)
    %blocks = ceildiv(%rows, %rows_per_block)
    scf.parallel (%b) = (%c0) to (%blocks) step (%c1) {
      %start = %b * %rows_per_block
      %stop = min(%start + %rows_per_block, %rows)
      scf.parallel (%i, %j) = (%start, %c0) to (%stop, %m) ... { first nest }
      scf.parallel (%i) = (%start) to (%stop) ... { second nest }
    }

A row computed by one nest is still in cache (a few tens of KiB) when the
next reads it: softmax's max, exp, sum and divide make one pass over memory
instead of four. A nest may reach a written allocation through views that
keep its rows: casts, reshapes of unit dims after dim 0, and subviews with
offset 0 and stride 1 in dim 0 (the column blocks kiln-block-sums reads
rows of softmax's exp through; until session 13 such a subview ended the
group, and softmax_rows at (1000, 4000) made three passes: 4.8-5.2 ms, now
2.0-2.2). kiln-parallelize then outlines the block loop like any
other nest (threads take blocks of rows).
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, scf
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import constant_int
from kiln.compiler.passes.kiln_parallelize import SERIAL_WORK, parallel_candidates

# Sibling nests over the same rows run in blocks of rows of about this many
# elements per nest (a few tens of KiB: the rows stay in L1/L2 between nests).
ROW_BLOCK_ELEMENTS = 8192

# Ops that may sit between two sibling nests blocked together: they neither
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


def _keeps_rows(subview: ir.Operation) -> bool:
    """Whether row i of a `memref.subview` is row i of its source: offset 0
    and stride 1 in dim 0, which the view keeps (the column slices of
    kiln-block-sums: `%x[0, %k] [%rows, %n] [1, 1]`)."""
    offsets = list(ir.DenseI64ArrayAttr(subview.attributes["static_offsets"]))
    sizes = list(ir.DenseI64ArrayAttr(subview.attributes["static_sizes"]))
    strides = list(ir.DenseI64ArrayAttr(subview.attributes["static_strides"]))
    same_rank = ir.MemRefType(subview.result.type).rank == ir.MemRefType(subview.operands[0].type).rank
    return offsets[0] == 0 and strides[0] == 1 and (same_rank or sizes[0] != 1)


def _row_view_root(v: ir.Value) -> ir.Value | None:
    """The buffer `v` views such that index 0 of `v` is row 0 of it (through
    casts, subviews that keep the rows and reshapes that only add or drop
    unit dims after dim 0), or None when `v` is some other view."""
    while not isinstance(v.owner, ir.Block) and v.owner.name in _VIEW_OPS:
        owner = v.owner
        if owner.name in ("memref.expand_shape", "memref.collapse_shape"):
            expanded = v if owner.name == "memref.expand_shape" else owner.operands[0]
            first = [ir.IntegerAttr(d).value for d in ir.ArrayAttr(ir.ArrayAttr(owner.attributes["reassociation"])[0])]
            shape = ir.MemRefType(expanded.type).shape
            if first[0] != 0 or any(shape[d] != 1 for d in first[1:]):
                return None
        elif owner.name == "memref.subview":
            if not _keeps_rows(owner):
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
        # A view that is not a row view (a transpose) stops `_row_view_root`
        # short of the written allocation: its row i is not the buffer's row i.
        root = _row_view_root(buffer)
        if root is None or not any(root == w for w in written) or row is None or row != iv:
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
    group (blocked together); others are groups of one."""
    groups: list[list[ir.Operation]] = []
    # Each block's ops and their positions, listed once: listing the block
    # for each nest was quadratic (channel_flow's function block: 236 nests).
    blocks: dict = {}

    def siblings_of(block: ir.Block) -> tuple[list, dict]:
        if block not in blocks:
            siblings = list(block.operations)
            blocks[block] = (siblings, {o.operation: i for i, o in enumerate(siblings)})
        return blocks[block]

    for op in ops:
        if groups:
            last = groups[-1][-1]
            if last.block == op.block and _same_rows(groups[-1][0], op):
                siblings, position = siblings_of(op.block)
                between = siblings[position[last.operation] + 1:position[op.operation]]
                if all(_may_sit_between(o.operation) for o in between) and _row_local(groups[-1] + [op]):
                    groups[-1].append(op)
                    continue
        groups.append([op])
    return groups



def _defined_outside(value: ir.Value, nest: ir.Operation) -> bool:
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner
    while op is not None:
        if op.operation == nest.operation:
            return False
        op = op.parent
    return True


def _iterations_per_row(nests: list[ir.Operation]) -> ir.Value:
    """Innermost iterations of one row, summed over the nests: each nest's
    other dims times the trip counts of its inner scf.for loops with outside
    bounds (summed, at least 1)."""
    index = ir.IndexType.get()
    per_row = None
    inner = None
    for nest in nests:
        dims = len(nest.regions[0].blocks[0].arguments)
        nest_row = None
        for d in range(1, dims):
            count = arith.subi(nest.operands[dims + d], nest.operands[d])
            nest_row = count if nest_row is None else arith.muli(nest_row, count)
        if nest_row is None:
            nest_row = arith.constant(index, 1)
        per_row = nest_row if per_row is None else arith.addi(per_row, nest_row)
        loops = []

        def visit(op):
            if op.name == "scf.for":
                loops.append(op)
            return ir.WalkResult.ADVANCE

        nest.walk(visit, ir.WalkOrder.PRE_ORDER)
        for loop in loops:
            lower, upper = loop.operands[0], loop.operands[1]
            if _defined_outside(lower, nest) and _defined_outside(upper, nest):
                count = arith.subi(upper, lower)
                inner = count if inner is None else arith.addi(inner, count)
    if inner is not None:
        per_row = arith.muli(per_row, arith.maxsi(inner, arith.constant(index, 1)))
    return per_row


def _block_rows(nests: list[ir.Operation]) -> None:
    """Replace the sibling nests by one nest over blocks of their rows, at
    the place of the last (the ops between them touch no buffer)."""
    last = nests[-1]
    index = ir.IndexType.get()
    dims = len(last.regions[0].blocks[0].arguments)
    rows = last.operands[dims]
    with ir.InsertionPoint(last), last.location:
        zero, one = arith.constant(index, 0), arith.constant(index, 1)
        per_row = _iterations_per_row(nests)
        rows_per_block = arith.maxsi(arith.divsi(arith.constant(index, ROW_BLOCK_ELEMENTS),
                                                 arith.maxsi(per_row, one)), one)
        blocks = arith.ceildivsi(rows, rows_per_block)
        outer = scf.ParallelOp([], [zero], [blocks], [one], [])
        body = outer.regions[0].blocks.append(index)
    with ir.InsertionPoint(body), last.location:
        start = arith.muli(body.arguments[0], rows_per_block)
        stop = arith.minsi(arith.addi(start, rows_per_block), rows)
        reduce = scf.ReduceOp([], 0)
    for nest in nests:
        n = len(nest.regions[0].blocks[0].arguments)
        nest.operands[0] = start
        nest.operands[n] = stop
        nest.move_before(reduce)


@register_pass
class KilnBlockRows(ModulePass):
    """Run sibling loop nests over the same rows block of rows by block of rows, so rows stay in cache."""

    name = "kiln-block-rows"

    def apply(self, module: ir.Module) -> None:
        for group in _group_siblings(parallel_candidates(module, SERIAL_WORK)):
            if len(group) > 1:
                _block_rows(group)
