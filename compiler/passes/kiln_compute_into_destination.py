"""Pass `kiln-compute-into-destination` (stage "linalg", after kiln-fuse-insert-slices, before kiln-elementwise-in-place).

In: `tensor.insert_slice %v into %D[offsets][sizes][strides]` where `%v` is the
only use of an all-parallel `linalg.generic` writing a fresh `tensor.empty`
without reading it (`B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + ...)`).
Out: the generic writes `tensor.extract_slice %D[offsets][sizes][strides]`
instead, moved next to the write. One-shot bufferization then computes the
expression straight into the destination's buffer (a subview of it): no
temporary and no copy, since the insert of a subview into itself is no copy
(memref-copy-to-linalg drops it). An expression that reads the destination
at other positions (`A[1:-1] = A[:-2] + A[2:]`) keeps its temporary: NumPy
computes the whole right-hand side before writing (bufferization would see
the overlap too, but would then copy every input that reads it).

The same for a whole written argument (`out[:, :, :] = expr`, `out[...] =
expr`): the function returns the argument's new value (a result marked
`kiln.written_argument = K`), and when that is such a generic, used only by
the return and reading no element of argument K, the generic writes into
argument K itself: bufferization computes into the caller's buffer and
kiln-store-written-arguments has nothing left to copy.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import all_parallel, collect_ops


def _fresh_unread_output(generic: ir.Operation) -> bool:
    """One output, a `tensor.empty` that the body never reads, written through a
    permutation map (so every element is written)."""
    if generic.name != "linalg.generic" or len(generic.results) != 1 or not all_parallel(generic):
        return False
    init = generic.operands[len(generic.operands) - 1]
    if isinstance(init.owner, ir.Block) or init.owner.name != "tensor.empty":
        return False
    body = generic.regions[0].blocks[0]
    if len(list(body.arguments[len(body.arguments) - 1].uses)) != 0:
        return False
    maps = list(ir.ArrayAttr(generic.attributes["indexing_maps"]))
    return ir.AffineMapAttr(maps[-1]).value.is_permutation


_VIEWS = {"tensor.extract_slice", "tensor.cast", "tensor.expand_shape", "tensor.collapse_shape"}


def _root(value: ir.Value) -> ir.Value:
    """The tensor `value` is a view of (through slices, casts and reshapes)."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in _VIEWS:
        value = value.owner.operands[0]
    return value


def _window_of(value: ir.Value, insert: ir.Operation) -> bool:
    """Whether `value` is the very elements `insert` writes: an extract_slice of
    its destination with the same offsets, sizes and strides."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "tensor.extract_slice":
        return False
    same = all(owner.attributes[n] == insert.attributes[n] for n in ("static_offsets", "static_sizes", "static_strides"))
    return same and list(owner.operands) == list(insert.operands)[1:]


def _reads_elsewhere(generic: ir.Operation, insert: ir.Operation) -> bool:
    """Whether the generic reads the destination other than at the written elements."""
    dest = _root(insert.operands[1])
    inputs = list(generic.operands)[:-1]
    return any(_root(v) == dest and not _window_of(v, insert) for v in inputs)


def _read_window(generic: ir.Operation, insert: ir.Operation, maps: list) -> ir.Value | None:
    """An input that is the written elements, read through the output's map."""
    for value, map_ in zip(list(generic.operands)[:-1], maps):
        if _window_of(value, insert) and map_ == maps[-1]:
            return value
    return None


def _compute_into(insert: ir.Operation) -> bool:
    value = insert.operands[0]
    producer = value.owner
    if isinstance(producer, ir.Block) or len(list(value.uses)) != 1:
        return False
    generic = producer.operation
    if not _fresh_unread_output(generic) or generic.block != insert.block or _reads_elsewhere(generic, insert):
        return False
    # Move the generic down to the write (it is pure and the write is its only
    # user), where the destination and the slice's offsets are all defined.
    generic.move_before(insert)
    output = len(generic.operands) - 1
    maps = list(ir.ArrayAttr(generic.attributes["indexing_maps"]))
    window = _read_window(generic, insert, maps)
    if window is not None:
        # `A[1:-1] = 2 * A[1:-1]`: the generic overwrites the elements it reads,
        # each after reading it, as bufferization knows (elementwise access).
        generic.operands[output] = window
        return True
    attributes = {name: insert.attributes[name] for name in
                  ("static_offsets", "static_sizes", "static_strides", "operandSegmentSizes")}
    segments = list(ir.DenseI32ArrayAttr(insert.attributes["operandSegmentSizes"]))
    # insert_slice operands: source, dest, offsets, sizes, strides; extract_slice's: source, offsets, sizes, strides.
    attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([1] + segments[2:])
    with ir.InsertionPoint(generic), insert.location:
        fresh = ir.Operation.create("tensor.extract_slice", results=[value.type],
                                   operands=list(insert.operands)[1:], attributes=attributes)
    generic.operands[output] = fresh.results[0]
    return True


WRITTEN_ARGUMENT = "kiln.written_argument"


def _may_read(value: ir.Value, argument: ir.Value) -> bool:
    """Whether `value` may be (a view of) `argument`: through views and the
    branches of an `scf.if` (a versioned broadcast yields its operand)."""
    while not isinstance(value.owner, ir.Block):
        owner = value.owner
        if owner.name == "scf.if":
            index = ir.OpResult(value).result_number
            return any(_may_read(region.blocks[0].operations[len(region.blocks[0].operations) - 1].operands[index],
                                 argument) for region in owner.regions if len(region.blocks))
        if owner.name not in _VIEWS:
            return False
        value = owner.operands[0]
    return value == argument


def _compute_into_written_arguments(fn: ir.Operation) -> None:
    """Each result that is the new value of a written argument K and is
    computed by a generic as above, into argument K (see the module docstring)."""
    if "res_attrs" not in fn.attributes or not len(fn.regions[0].blocks):
        return
    body = fn.regions[0].blocks[0]
    ret = body.operations[len(body.operations) - 1]
    if ret.name != "func.return":
        return
    for index, attrs in enumerate(ir.ArrayAttr(fn.attributes["res_attrs"])):
        attrs = ir.DictAttr(attrs)
        if WRITTEN_ARGUMENT not in attrs:
            continue
        argument = body.arguments[ir.IntegerAttr(attrs[WRITTEN_ARGUMENT]).value]
        value = ret.operands[index]
        producer = value.owner
        if isinstance(producer, ir.Block) or len(list(value.uses)) != 1 or value.type != argument.type:
            continue
        generic = producer.operation
        if not _fresh_unread_output(generic) or generic.block != body:
            continue
        if any(_may_read(v, argument) for v in list(generic.operands)[:-1]):
            continue
        generic.operands[len(generic.operands) - 1] = argument


@register_pass
class KilnComputeIntoDestination(ModulePass):
    """Compute an elementwise expression written into a slice straight into the slice."""

    name = "kiln-compute-into-destination"

    def apply(self, module: ir.Module) -> None:
        for insert in collect_ops(module, {"tensor.insert_slice"}):
            _compute_into(insert)
        for fn in collect_ops(module, {"func.func"}):
            _compute_into_written_arguments(fn)
