"""Pass `kiln-elementwise-in-place` (stage "linalg", before bufferization).

In: an all-parallel `linalg.generic` writing into a fresh `tensor.empty`
while one of its inputs has the output's type and indexing map and no other
use (for instance the loop-carried `x` of `x = 0.5 * (x + a / x)`).
Out: the generic writes into that input instead, so one-shot bufferization
updates the input's buffer in place: no allocation, and a loop-carried value
keeps one buffer across iterations instead of being copied at every
iteration. Function arguments and views of them are never chosen (they are not
writable), and only inputs defined in the generic's own block, so a value computed before a
loop is never overwritten inside it.
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
                        and not _is_function_argument(value) and _defined_in(value, op.block)):
                    op.operands[len(inputs)] = value
                    break
