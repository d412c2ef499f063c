"""Pass `kiln-split-write-chains` (stage "bufferized", first: right before one-shot-bufferize).

In: a function body whose top-level block updates one tensor many times
(`%t1 = tensor.insert_slice %v1 into %t0`, `%t2 = ... into %t1`, ...), the
tensors of NumPy slice writes to one array after functionalization.
Out: once `writes` updates (an option, default 8) followed the last cut, the
chain is cut after the first update past which no earlier version (nor a
view or other alias of one) is used any more:

    %m = bufferization.to_buffer %tk : tensor<?x?xf64> to memref<?x?xf64>
    %tk2 = bufferization.to_tensor %m restrict writable : memref<?x?xf64> to tensor<?x?xf64>

and the later uses of `%tk` read `%tk2`. Both ops fold away in bufferization
(`%tk2`'s buffer is `%tk`'s), so the bufferized function is the same; the cut
only keeps one-shot-bufferize's analysis from seeing all versions as one alias
set. Its in-place decision for each operand checks every read of the operand's
alias set against every write of it: on a chain of n updates that is n
decisions of n reads by n writes, and 96 slice writes to one array took 0.6 s
(cubic in n; docs/benchmarks.md, "Compile time"). Cut every 8 updates, the
chain's sets stay small: 27 ms for those 96 writes, 96 ms for 192 (5.1 s
uncut).

A cut is made only where it cannot change what bufferization decides: no
value that may share the updated tensor's buffer (found conservatively: any op
this pass does not know links all its tensor and memref operands to its
results) is used after the cut point, the buffer does not come from an
argument other than a `bufferization.writable = false` one (the first write
into such an argument is a copy), and it is a fresh allocation with the
identity layout the `to_buffer` type names. Chains inside loops and branches
are left alone: their yielded value must stay equivalent to the loop's
argument, which a cut would hide (and allocate a buffer per iteration).
"""

from __future__ import annotations

from kiln.compiler.mlir import bufferization, ir
from kiln.compiler.passes import ModulePass, option, register_pass

# Ops whose result shares the buffer of operand 0 and of nothing else.
VIEWS = frozenset({"tensor.extract_slice", "tensor.collapse_shape", "tensor.expand_shape", "tensor.cast",
                   "tensor.reshape"})
# Updates of the tensor in operand 1 (the destination), whose result is that tensor updated.
UPDATES = frozenset({"tensor.insert_slice", "tensor.insert"})
# Results that are fresh buffers with the identity layout.
FRESH = frozenset({"tensor.empty", "bufferization.alloc_tensor"})


def _has_buffer(value: ir.Value) -> bool:
    return isinstance(value.type, (ir.RankedTensorType, ir.UnrankedTensorType, ir.MemRefType,
                                   ir.UnrankedMemRefType))


def _outer_values_used(op: ir.Operation) -> list[ir.Value]:
    """The operands of `op` and the values its regions use but do not define."""
    inner: set = set()
    used: list[ir.Value] = list(op.operands)

    def visit(nested):
        for region in nested.regions:
            for block in region.blocks:
                inner.update(block.arguments)
        inner.update(nested.results)
        if nested != op:
            used.extend(nested.operands)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return [v for v in used if v not in inner]


def _aliasing(op: ir.Operation) -> tuple[list[ir.Value], list[ir.Value]]:
    """The operands (and values used inside its regions) whose buffer a result
    of `op` may share, and those results."""
    name = op.name
    results = [r for r in op.results if _has_buffer(r)]
    if not results:
        return [], []
    if name in VIEWS:
        return [op.operands[0]], results
    if name in UPDATES:
        return [op.operands[1]], results
    if name in FRESH:
        return [], results
    if name.startswith("linalg.") and "operandSegmentSizes" in op.attributes:  # results share the outs
        inputs, outputs = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[:2]
        return list(op.operands)[inputs:inputs + outputs], results
    return [v for v in _outer_values_used(op) if _has_buffer(v)], results


class _Sets:
    """Union-find over values: the alias sets a buffer may span, each with the
    position of its last use and whether it holds an argument a cut must not hide."""

    def __init__(self):
        self.parent: dict = {}
        self.last_use: dict = {}
        self.pinned: dict = {}

    def add(self, value: ir.Value, last_use: int, pinned: bool) -> None:
        self.parent[value] = value
        self.last_use[value] = last_use
        self.pinned[value] = pinned

    def find(self, value: ir.Value) -> ir.Value:
        root = value
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[value] != root:
            self.parent[value], value = root, self.parent[value]
        return root

    def union(self, a: ir.Value, b: ir.Value) -> None:
        a, b = self.find(a), self.find(b)
        if a == b:
            return
        self.parent[b] = a
        self.last_use[a] = max(self.last_use[a], self.last_use[b])
        self.pinned[a] = self.pinned[a] or self.pinned[b]


def _read_only_arguments(function: ir.Operation) -> list[bool]:
    """Per argument of `function`: whether it is marked `bufferization.writable = false`."""
    block = function.regions[0].blocks[0]
    flags = [False] * len(block.arguments)
    if "arg_attrs" not in function.attributes:
        return flags
    for i, attrs in enumerate(ir.ArrayAttr(function.attributes["arg_attrs"])):
        attrs = ir.DictAttr(attrs)
        if "bufferization.writable" in attrs and not ir.BoolAttr(attrs["bufferization.writable"]).value:
            flags[i] = True
    return flags


def _identity_buffer_type(tensor_type: ir.Type) -> ir.MemRefType | None:
    if not isinstance(tensor_type, ir.RankedTensorType) or tensor_type.encoding is not None:
        return None
    return ir.MemRefType.get(tensor_type.shape, tensor_type.element_type)


def split_chains(function: ir.Operation, writes: int) -> int:
    """Cut the update chains of `function`'s top-level block every `writes`
    updates where that is safe; return the number of cuts."""
    if len(function.regions[0].blocks) != 1:
        return 0
    block = function.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    if sum(op.name in UPDATES for op in ops) < writes:
        return 0
    last_use: dict = {}
    for position, top in enumerate(ops):
        def visit(nested, position=position):
            for v in nested.operands:
                last_use[v] = position
            return ir.WalkResult.ADVANCE

        top.walk(visit)
    sets = _Sets()
    fresh_identity: dict = {}  # value -> whether its buffer is a fresh identity-layout allocation
    for argument, read_only in zip(block.arguments, _read_only_arguments(function)):
        if _has_buffer(argument):
            sets.add(argument, last_use.get(argument, -1), pinned=not read_only)
            fresh_identity[argument] = read_only
    cuts = 0
    updates = 0
    for position, op in enumerate(ops):
        sources, results = _aliasing(op)
        is_update = op.name in UPDATES
        if is_update:
            # Before the update joins them: is any member of its destination's
            # set used after it, or is the set pinned to an argument?
            dest_set = sets.find(op.operands[1])
            dest_done = sets.last_use[dest_set] <= position and not sets.pinned[dest_set]
        for r in results:
            sets.add(r, last_use.get(r, -1), pinned=False)
            fresh_identity[r] = op.name in FRESH or (is_update and fresh_identity.get(op.operands[1], False))
            for s in sources:
                sets.union(s, r)
        if not is_update:
            continue
        updates += 1
        result = op.results[0]
        buffer_type = _identity_buffer_type(result.type)
        if updates < writes or not dest_done or not fresh_identity[result] or buffer_type is None:
            continue
        cut = _cut(result, buffer_type)
        sets.add(cut, last_use.get(result, -1), pinned=False)
        fresh_identity[cut] = True
        updates = 0
        cuts += 1
    return cuts


def _cut(value: ir.Value, buffer_type: ir.MemRefType) -> ir.Value:
    """Make the later uses of `value` read it again through its buffer; return the new tensor."""
    op = value.owner
    with ir.InsertionPoint.after(op), op.location:
        buffer = bufferization.ToBufferOp(buffer_type, value)
        tensor = bufferization.ToTensorOp(value.type, buffer.result, restrict=True, writable=True)
    value.replace_all_uses_except(tensor.result, buffer.operation)
    return tensor.result


@register_pass
class KilnSplitWriteChains(ModulePass):
    """Cut long chains of updates of one tensor where no earlier version is used, to keep one-shot-bufferize linear."""

    name = "kiln-split-write-chains"
    writes: int = option(8, "updates of one tensor between two cuts", minimum=1)

    def apply(self, module: ir.Module) -> None:
        for op in module.body.operations:
            if op.operation.name == "func.func":
                split_chains(op.operation, self.writes)
