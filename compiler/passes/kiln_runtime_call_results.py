"""Pass `kiln-runtime-call-results` (stage "bufferized", right after one-shot-bufferize).

In: `%r = func.call @f(...)` of a private declaration marked
`kiln.returns_argument = K` (a runtime routine that fills its K-th memref
argument and returns it, as kiln-lower-sorts declares them: a tensor result
lets bufferization see the write).
Out: `func.call @f(...)` without results, `%r` replaced by the K-th operand,
and `@f` declared without results: the routine's C signature takes each
memref as its expanded fields (allocated and aligned pointers, offset,
sizes, strides) and returns nothing, which every C ABI agrees on.
It must run before buffer-deallocation-pipeline: that pipeline takes a
call's memref result for a fresh buffer the caller owns and frees it, so the
output argument was freed twice whenever it was not allocated in the call's
block (an output buffer hoisted out of a loop was freed by every iteration).
"""

from __future__ import annotations

from kiln.compiler.mlir import func, ir, memref
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops

RETURNS_ARGUMENT = "kiln.returns_argument"


def _marked_declarations(module: ir.Module) -> dict[str, int]:
    marked = {}
    for op in module.body.operations:
        if op.operation.name == "func.func" and RETURNS_ARGUMENT in op.attributes:
            marked[ir.StringAttr(op.attributes["sym_name"]).value] = ir.IntegerAttr(op.attributes[RETURNS_ARGUMENT]).value
    return marked


def drop_returned_arguments(module: ir.Module) -> None:
    """Make calls of routines that return an argument return nothing."""
    marked = _marked_declarations(module)
    if not marked:
        return
    for call in collect_ops(module, {"func.call"}):
        callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        if callee not in marked or len(call.results) != 1:
            continue
        argument = call.operands[marked[callee]]
        with ir.InsertionPoint(call), call.location:
            func.CallOp([], ir.FlatSymbolRefAttr.get(callee), list(call.operands))
            result = call.results[0]
            replacement = argument if argument.type == result.type else memref.CastOp(result.type, argument).result
        result.replace_all_uses_with(replacement)
        call.erase()
    for op in module.body.operations:
        if op.operation.name != "func.func" or RETURNS_ARGUMENT not in op.attributes:
            continue
        inputs = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value).inputs
        op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, []))
        del op.attributes[RETURNS_ARGUMENT]


@register_pass
class KilnRuntimeCallResults(ModulePass):
    """Calls of runtime routines that fill an argument return nothing; their result is that argument."""

    name = "kiln-runtime-call-results"

    def apply(self, module: ir.Module) -> None:
        drop_returned_arguments(module)
