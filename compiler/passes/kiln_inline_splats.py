"""Pass `kiln-inline-splats` (stage "linalg", after linalg-fuse-elementwise-ops).

In: a `linalg.generic` reading a splat: a tensor made by `linalg.fill %c` or by
a generic with no inputs whose body yields a value `%c` defined outside it
(`0.5 * (A[:-2] + A[2:])`: the broadcast scalar). When the splat has several
readers (cse merges the equal broadcasts of `0.5 * x; ...; 0.5 * y`),
elementwise fusion leaves it alone and it is materialized: a buffer filled
and read at every iteration of a loop.
Out: each reader uses `%c` itself in its body, and the inputs its body no
longer reads are dropped from the reader (kept only when one alone gives a
loop its extent). The splat is then dead and canonicalize erases it (the
lit test shows no buffer left for it). Left as an unread input, a splat that
shares its `tensor.empty` with the reader bufferized into the reader's own
buffer and stayed alive: the bounds check of `x[idx]` filled the index
buffer with 0 and then with the length at every row of a CSR product.

A 0-d tensor read by an elementwise generic (a scalar the tracer broadcast:
`(x - first) / (last - first)` with `first` a reduction's result) is a splat
too: its block argument becomes a `tensor.extract` of the scalar placed before
the generic. The body then computes on values defined outside it (LLVM hoists
`last - first` and its division out of the loop instead of loading the 0-d
buffers at every iteration), and a generic that only broadcasts a 0-d tensor
(`linalg.generic ins(%s : tensor<f64>)` yielding it, left when the broadcast
has several readers) becomes a splat its readers inline in turn (generics are
visited in program order, producers first).
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import all_parallel, collect_ops, drop_unused_inputs


def _splat_value(value: ir.Value) -> ir.Value | None:
    """The scalar every element of `value` holds, when it is a splat."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation
    if op.name == "linalg.fill":
        return op.operands[0]
    if op.name != "linalg.generic" or len(op.results) != 1 or not all_parallel(op):
        return None
    body = op.regions[0].blocks[0]
    operations = list(body.operations)
    if len(operations) != 1 or len(operations[0].operands) != 1:
        return None
    yielded = operations[0].operands[0]
    defined_inside = isinstance(yielded.owner, ir.Block) and yielded.owner == body
    return None if defined_inside else yielded


def _is_rank0(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType) and ir.RankedTensorType(value.type).rank == 0


def _rank0_scalar(value: ir.Value, generic: ir.Operation) -> ir.Value:
    """The element of the 0-d tensor `value`, read before `generic`."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.operation.name == "tensor.from_elements":
        return owner.operation.operands[0]
    with ir.InsertionPoint(generic), generic.location:
        return tensor.extract(value, [])


def _inline_splats(generic: ir.Operation) -> None:
    body = generic.regions[0].blocks[0]
    inputs = len(generic.operands) - len(generic.results)
    for index in range(inputs):
        operand, argument = generic.operands[index], body.arguments[index]
        if _is_rank0(operand):
            # Only a read of the element counts: an unused argument needs no extract.
            if list(argument.uses):
                argument.replace_all_uses_with(_rank0_scalar(operand, generic))
            continue
        scalar = _splat_value(operand)
        if scalar is not None and scalar.type == argument.type:
            argument.replace_all_uses_with(scalar)
    # The inputs no body reads any more go: left in place, a splat sharing
    # its `tensor.empty` with the reader bufferizes into the reader's buffer,
    # and its fill stays (a bounds-checked gather `x[idx]` filled its index
    # buffer twice before computing it).
    drop_unused_inputs(generic)


@register_pass
class KilnInlineSplats(ModulePass):
    """Read a broadcast scalar as the scalar in elementwise bodies."""

    name = "kiln-inline-splats"

    def apply(self, module: ir.Module) -> None:
        for generic in collect_ops(module, {"linalg.generic"}):
            _inline_splats(generic)
