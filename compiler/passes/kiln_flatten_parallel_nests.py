"""Pass `kiln-flatten-parallel-nests` (stage "bufferized", after kiln-block-rows).

In: an outermost `scf.parallel` nest of two or more loops from 0 with step 1
whose induction variables are used only as the full index list, in order,
of loads and stores of contiguous buffers (identity layout) whose dims are
the nest's bounds: an elementwise nest such as `img * 2.0 + b` on
(H, W, 3) images, or the fill of an accumulator. A dim is the bound when
it is the same value, a dim of the same buffer, the size the buffer was
allocated with, or one a run-time check before the nest compared with it
(`scf.if (%a != %b) { kiln_check_failed }`: `img` and `b` have their own
dim variables, checked equal).
Out: one loop over the product of the bounds, reading and writing the
buffers collapsed to one dimension (`memref.collapse_shape`):

    scf.parallel (%i, %j, %k) = (0, 0, 0) to (%h, %w, %c) { %x = memref.load %a[%i, %j, %k] ... }
    ->
    %a1 = memref.collapse_shape %a [[0, 1, 2]]
    scf.parallel (%f) = (0) to (%h * %w * %c) { %x = memref.load %a1[%f] ... }

An innermost loop over 3 channels does not vectorize (LLVM runs it scalar
with a dynamic trip count); one loop over every element does, whatever the
extents, in one copy of the body (kiln-version-small-dims's alternative, a
copy per extent, is kept for nests that read per-channel vectors).
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, memref, scf
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collapsed_1d, constant_int, index_value


def _identity_layout(t: ir.MemRefType) -> bool:
    layout = t.layout
    return isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(t.rank)


def _size_key(value: ir.Value) -> tuple:
    """What an index value is known to equal: a constant, a dim of a buffer
    (through the sizes an allocation was made with), or the value itself."""
    known = constant_int(value)
    if known is not None:
        return ("constant", known)
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.name == "memref.dim":
        axis = constant_int(owner.operands[1])
        if axis is not None:
            return _dim_key(owner.operands[0], axis)
    return ("value", value)


def _dim_key(buffer: ir.Value, axis: int) -> tuple:
    """`_size_key` of dim `axis` of `buffer`."""
    t = ir.MemRefType(buffer.type)
    if not t.is_dynamic_dim(axis):
        return ("constant", t.shape[axis])
    owner = buffer.owner
    if not isinstance(owner, ir.Block) and owner.name == "memref.alloc":
        dynamic_before = sum(1 for d in range(axis) if t.is_dynamic_dim(d))
        return _size_key(list(owner.operands)[dynamic_before])
    return ("dim", buffer, axis)


def _defined_outside(value: ir.Value, op: ir.Operation) -> bool:
    owner = value.owner
    node = owner.owner if isinstance(owner, ir.Block) else owner
    target = op.operation
    while node is not None:
        if node.operation == target:
            return False
        node = node.parent
    return True


def _access(use_owner: ir.Operation) -> tuple[ir.Value, list] | None:
    """(buffer, indices) of a `memref.load` / `memref.store`, else None."""
    operands = list(use_owner.operands)
    if use_owner.name == "memref.load":
        return operands[0], operands[1:]
    if use_owner.name == "memref.store":
        return operands[1], operands[2:]
    return None


class _Equalities:
    """Sizes known to be equal where a nest runs: those compared by the
    run-time checks before it (`scf.if (a != b) { kiln_check_failed }`,
    which does not return), in its block or an enclosing one. A union-find
    over `_size_key`s; each nested block works on its own copy."""

    def __init__(self, parent: dict | None = None):
        self.parent = dict(parent or {})

    def copy(self) -> "_Equalities":
        return _Equalities(self.parent)

    def find(self, key: tuple) -> tuple:
        while key in self.parent:
            key = self.parent[key]
        return key

    def union(self, a: tuple, b: tuple) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb

    def record_check(self, op: ir.Operation) -> bool:
        """Record `op` if it is a check that two sizes are equal."""
        if op.name != "scf.if" or len(op.results) or isinstance(op.operands[0].owner, ir.Block):
            return False
        compare = op.operands[0].owner
        if compare.name != "arith.cmpi" or ir.IntegerAttr(compare.attributes["predicate"]).value != 1:
            return False
        calls = [o for o in op.regions[0].blocks[0].operations if o.name == "func.call"]
        if not calls or ir.FlatSymbolRefAttr(calls[0].attributes["callee"]).value != "kiln_check_failed":
            return False
        a, b = (_strip_cast(v) for v in compare.operands)
        self.union(_size_key(a), _size_key(b))
        return True


def _strip_cast(value: ir.Value) -> ir.Value:
    """The index value an `arith.index_cast` (to i64, for a check) converts."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.name == "arith.index_cast":
        return owner.operands[0]
    return value


def _flattenable(op: ir.Operation, equal: _Equalities) -> list[ir.Operation] | None:
    """The loads and stores to rewrite when `op` is an elementwise nest
    over contiguous buffers shaped like its bounds, else None."""
    ivs = list(op.regions[0].blocks[0].arguments)
    n = len(ivs)
    if n < 2 or len(op.results):
        return None
    operands = list(op.operands)
    if any(constant_int(v) != 0 for v in operands[:n]) or any(constant_int(v) != 1 for v in operands[2 * n:3 * n]):
        return None
    bounds = [equal.find(_size_key(v)) for v in operands[n:2 * n]]
    accesses: list[ir.Operation] = []
    for iv in ivs:
        for use in iv.uses:
            owner = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            found = _access(owner)
            if found is None:
                return None
            buffer, indices = found
            if len(indices) != n or any(not (a == b) for a, b in zip(indices, ivs)):
                return None
            if any(owner == seen for seen in accesses):
                continue
            t = ir.MemRefType(buffer.type)
            if not _identity_layout(t) or not _defined_outside(buffer, op):
                return None
            if any(equal.find(_dim_key(buffer, d)) != bounds[d] for d in range(n)):
                return None
            accesses.append(owner)
    return accesses or None


def _flatten(op: ir.Operation, accesses: list[ir.Operation]) -> None:
    block = op.regions[0].blocks[0]
    n = len(block.arguments)
    bounds = list(op.operands)[n:2 * n]
    flat: list[tuple[ir.Value, ir.Value]] = []
    with ir.InsertionPoint(op), op.location:
        static = [constant_int(b) for b in bounds]
        if all(s is not None for s in static):
            product = 1
            for s in static:
                product *= s
            total = index_value(product)
        else:
            total = bounds[0]
            for bound in bounds[1:]:
                total = arith.muli(total, bound)
        for access in accesses:
            buffer = _access(access)[0]
            if not any(buffer == b for b, _ in flat):
                flat.append((buffer, collapsed_1d(buffer)))
        loop = scf.ParallelOp([], [index_value(0)], [total], [index_value(1)], [])
        body = loop.regions[0].blocks.append(ir.IndexType.get())
    with ir.InsertionPoint(body), op.location:
        reduce = scf.ReduceOp([], 0)
    for inner in list(block.operations)[:-1]:
        inner.move_before(reduce)
    index = body.arguments[0]
    for access in accesses:
        buffer = _access(access)[0]
        view = next(v for b, v in flat if b == buffer)
        with ir.InsertionPoint(access), access.location:
            if access.name == "memref.load":
                access.results[0].replace_all_uses_with(memref.load(view, [index]))
            else:
                memref.store(access.operands[0], view, [index])
        access.erase()
    op.erase()


@register_pass
class KilnFlattenParallelNests(ModulePass):
    """Run elementwise loop nests over contiguous buffers as one loop over all elements."""

    name = "kiln-flatten-parallel-nests"

    def apply(self, module: ir.Module) -> None:
        for fn in module.body.operations:
            if fn.operation.name == "func.func" and fn.regions[0].blocks:
                _visit(fn.regions[0].blocks[0], _Equalities())


def _visit(block: ir.Block, equal: _Equalities) -> None:
    """Flatten the outermost nests of `block` and of the blocks nested in
    it (not inside another nest), in order, knowing the checks before them."""
    for op in list(block.operations):
        if equal.record_check(op):
            continue
        if op.name == "scf.parallel":
            accesses = _flattenable(op, equal)
            if accesses is not None:
                _flatten(op, accesses)
            continue
        for region in op.regions:
            for inner in region.blocks:
                _visit(inner, equal.copy())
