"""Pass `kiln-chain-overwrites` (stage "linalg", last: after the last canonicalize).

In: two writes of the same elements of one tensor D in one block,
`x = write(v1 into D)` then `y = write(v2 into D)` (`tensor.insert` or
`tensor.insert_slice` with the same offsets, sizes and strides), as
canonicalization leaves `y = write(v2 into x)`: it folds a write over a write.
Out: `y = write(v2 into x)` again, the same value. D then has one writer, so
one-shot bufferization updates D's buffer in place instead of copying all of D
for the write whose result is still read (`A[i, j] += ...; A[i, j] /= 9.0`).
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops


def _attributes(op: ir.Operation) -> dict:
    return {name: op.attributes[name] for name in op.attributes}


def _same_target(first: ir.Operation, second: ir.Operation) -> bool:
    """Whether two writes into the same tensor cover the same elements: same op,
    same static offsets/sizes/strides, same index operands."""
    if first.name != second.name or _attributes(first) != _attributes(second):
        return False
    return list(first.operands)[2:] == list(second.operands)[2:]


def _chain_overwrite(op: ir.Operation) -> None:
    """Point `op` at the earlier write of the same elements of its destination, if any."""
    dest = op.operands[1]
    for use in dest.uses:
        earlier = use.owner
        if (earlier != op and use.operand_number == 1 and earlier.operation.block == op.operation.block
                and earlier.is_before_in_block(op) and _same_target(earlier, op)):
            op.operands[1] = earlier.result
            return


@register_pass
class KilnChainOverwrites(ModulePass):
    """Chain two writes of the same elements of a tensor, so its buffer has one writer."""

    name = "kiln-chain-overwrites"

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"tensor.insert", "tensor.insert_slice"}):
            _chain_overwrite(op)
