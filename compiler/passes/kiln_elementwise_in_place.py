"""Pass `kiln-elementwise-in-place` (stage "linalg", before bufferization).

In: an all-parallel `linalg.generic` writing into a fresh `tensor.empty`
while one of its inputs has the output's type and indexing map and no other
use (for instance the loop-carried `x` of `x = 0.5 * (x + a / x)`).
Out: the generic writes into that input instead, so one-shot bufferization
updates the input's buffer in place: no allocation, and a loop-carried value
keeps one buffer across iterations instead of being copied at every
iteration. Function arguments and views of them are never chosen (they are not
writable), and only inputs defined in the generic's own block, so a value computed before a
loop is never overwritten inside it. A view (a slice, a reshape, a versioned
broadcast's `scf.if`) is chosen only when the tensor it views has no other
reader either: hdiff's `lap[1:] - lap[:-1]` written over `lap[1:]` made
bufferization copy that slice first (lap is read again by the next
statement), a copy as large as the result's fresh buffer would have been.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import all_parallel, collect_ops



def _single_use(value: ir.Value) -> bool:
    """One use that reads the elements (`tensor.dim` reads only the shape)."""
    readers = [use for use in value.uses if use.owner.operation.name != "tensor.dim"]
    return len(readers) == 1


# Ops whose result may share its source's buffer after bufferization.
_VIEWS = {"tensor.extract_slice", "tensor.reshape", "tensor.collapse_shape", "tensor.expand_shape", "tensor.cast"}


def _is_function_argument(value: ir.Value) -> bool:
    """True for a function argument or a view of one (writing it would force
    a copy), also when an `scf.if` may yield it (a versioned broadcast whose
    common case is its operand, see kiln-legalize-dynamic)."""
    while not isinstance(value.owner, ir.Block):
        owner = value.owner.operation
        if owner.name == "scf.if":
            index = ir.OpResult(value).result_number
            return any(_is_function_argument(region.blocks[0].operations[len(region.blocks[0].operations) - 1]
                                             .operands[index]) for region in owner.regions)
        if owner.name not in _VIEWS:
            return False
        value = owner.operands[0]
    parent = value.owner.owner
    return parent is not None and parent.operation.name == "func.func"


def _defined_in(value: ir.Value, block: ir.Block) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return owner == block
    return owner.operation.block == block


def _readers_outside(value: ir.Value, op: ir.Operation | None) -> int:
    """Uses of `value` that read its elements, not counting those inside `op`."""
    count = 0
    for use in value.uses:
        user = use.owner.operation
        if user.name == "tensor.dim":
            continue
        if op is not None and _is_inside(user, op):
            continue
        count += 1
    return count


def _is_inside(user: ir.Operation, op: ir.Operation) -> bool:
    parent = user
    while parent is not None:
        if parent == op:
            return True
        parent = parent.parent
        if parent is not None:
            parent = parent.operation
    return False


def _sole_owner(value: ir.Value, block: ir.Block) -> bool:
    """Whether overwriting `value` (read once, by the generic) overwrites
    nothing another op reads: it is no view, or a view (through slices,
    reshapes and the branches of an `scf.if`) of a tensor defined in `block`
    that nothing else reads either."""
    while not isinstance(value.owner, ir.Block):
        owner = value.owner.operation
        if owner.name == "scf.if":
            index = ir.OpResult(value).result_number
            for region in owner.regions:
                term = region.blocks[0].operations[len(region.blocks[0].operations) - 1]
                yielded = term.operands[index]
                if _defined_in(yielded, region.blocks[0]):
                    continue  # made by the branch (a fresh copy)
                if not _defined_in(yielded, block) or _readers_outside(yielded, owner) != 0 \
                        or not _sole_owner(yielded, block):
                    return False
            return True
        if owner.name not in _VIEWS:
            return True
        source = owner.operands[0]
        if not _defined_in(source, block) or _readers_outside(source, None) != 1:
            return False
        value = source
    return True


@register_pass
class KilnElementwiseInPlace(ModulePass):
    """Let elementwise generics overwrite a dead input instead of a new tensor."""

    name = "kiln-elementwise-in-place"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"linalg.generic"}):
            if not all_parallel(op) or len(op.results) != 1:
                continue
            operands = list(op.operands)
            inputs, init = operands[:-1], operands[-1]
            init_owner = init.owner
            if isinstance(init_owner, ir.Block) or init_owner.operation.name != "tensor.empty":
                continue
            body = op.regions[0].blocks[0]
            if len(list(body.arguments[len(inputs)].uses)) != 0:
                continue
            maps = list(op.attributes["indexing_maps"])
            for i, value in enumerate(inputs):
                if (value.type == init.type and str(maps[i]) == str(maps[-1]) and _single_use(value)
                        and not _is_function_argument(value) and _defined_in(value, op.block)
                        and _sole_owner(value, op.block)):
                    op.operands[len(inputs)] = value
                    break
