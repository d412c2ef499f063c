"""Pass `kiln-store-written-arguments` (stage "bufferized", after one-shot-bufferize).

In: a function whose results marked `kiln.written_argument = K` are the
final values of arguments it writes (the lowering marks them; those
arguments are `bufferization.writable`, so one-shot bufferization updated
them in place wherever no read of an older value needed a copy).
Out: those results are gone; the final value is in argument K's buffer: a
result that is argument K itself needs nothing, any other is copied into it
at the return unless it is already the same buffer (a loop result that
bufferized onto the argument). The caller's array is then written in place:
no copy of the whole argument in or out.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, memref, scf
from kiln.compiler.passes import ModulePass, register_pass

WRITTEN_ARGUMENT = "kiln.written_argument"


def _written_results(fn: ir.Operation) -> dict[int, int]:
    """Result index -> argument index, from the results' attributes."""
    if "res_attrs" not in fn.attributes:
        return {}
    written = {}
    for i, attrs in enumerate(ir.ArrayAttr(fn.attributes["res_attrs"])):
        attrs = ir.DictAttr(attrs)
        if WRITTEN_ARGUMENT in attrs:
            written[i] = ir.IntegerAttr(attrs[WRITTEN_ARGUMENT]).value
    return written


# Ops whose result is a view of their first operand's buffer.
_VIEWS = {"memref.subview", "memref.collapse_shape", "memref.expand_shape", "memref.reshape", "memref.cast",
          "memref.reinterpret_cast"}


def _is_fresh(value: ir.Value) -> bool:
    """Whether `value` is (a view of) a buffer allocated by the function: a
    store into an argument cannot change it. Anything else (an argument, a
    loop or branch result that may be one) is not known to be fresh."""
    while not isinstance(value.owner, ir.Block):
        op = value.owner.operation
        if op.name in ("memref.alloc", "memref.alloca"):
            return True
        if op.name not in _VIEWS:
            return False
        value = op.operands[0]
    return False


def _buffers_differ(value: ir.Value, argument: ir.Value) -> ir.Value:
    source = memref.ExtractAlignedPointerAsIndexOp(value).result
    target = memref.ExtractAlignedPointerAsIndexOp(argument).result
    return arith.cmpi(arith.CmpIPredicate.ne, source, target)


def _copy_of(value: ir.Value) -> ir.Value:
    """A fresh buffer holding `value`'s elements (identity layout)."""
    shaped = ir.MemRefType(value.type)
    sizes = [memref.dim(value, arith.constant(ir.IndexType.get(), axis))
             for axis in range(shaped.rank) if shaped.is_dynamic_dim(axis)]
    fresh = memref.alloc(ir.MemRefType.get(shaped.shape, shaped.element_type), sizes, [])
    memref.copy(value, fresh)
    return fresh


def _store_at_return(ret: ir.Operation, written: dict[int, int], arguments) -> list:
    """Before `ret`: copy each written result into its argument unless they
    share a buffer; returns the operands of the new return (written results
    dropped). A kept result that may view an argument is copied first when
    some store runs, so that it keeps the value it had."""
    operands = list(ret.operands)
    stores = [(operands[i], arguments[k]) for i, k in written.items() if operands[i] != arguments[k]]
    if not stores:
        return [v for i, v in enumerate(operands) if i not in written]
    with ir.InsertionPoint(ret), ret.location:
        differs = [_buffers_differ(value, argument) for value, argument in stores]
        any_store = differs[0]
        for differ in differs[1:]:
            any_store = arith.ori(any_store, differ)
        for i, value in enumerate(operands):
            if i in written or not isinstance(value.type, ir.MemRefType) or _is_fresh(value):
                continue
            branch = scf.IfOp(any_store, [value.type], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.yield_([_copy_of(value)])
            with ir.InsertionPoint(branch.else_block):
                scf.yield_([value])
            operands[i] = branch.result
        for (value, argument), differ in zip(stores, differs):
            branch = scf.IfOp(differ)
            with ir.InsertionPoint(branch.then_block):
                memref.copy(value, argument)
                scf.yield_([])
    return [v for i, v in enumerate(operands) if i not in written]


def store_written_arguments(fn: ir.Operation) -> None:
    written = _written_results(fn)
    if not written:
        return
    arguments = fn.regions[0].blocks[0].arguments
    returns = []
    for block in fn.regions[0].blocks:
        last = block.operations[len(block.operations) - 1]
        if last.operation.name == "func.return":
            returns.append(last.operation)
    for ret in returns:
        kept = _store_at_return(ret, written, arguments)
        with ir.InsertionPoint(ret), ret.location:
            ir.Operation.create("func.return", operands=kept)
        ret.erase()
    fn_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    results = [t for i, t in enumerate(fn_type.results) if i not in written]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(fn_type.inputs, results))
    res_attrs = [a for i, a in enumerate(ir.ArrayAttr(fn.attributes["res_attrs"])) if i not in written]
    fn.attributes["res_attrs"] = ir.ArrayAttr.get(res_attrs)


@register_pass
class KilnStoreWrittenArguments(ModulePass):
    """Leave the final value of each written argument in its buffer instead of returning it."""

    name = "kiln-store-written-arguments"

    def apply(self, module: ir.Module) -> None:
        for op in module.body.operations:
            if op.operation.name == "func.func" and len(op.regions[0].blocks):
                store_written_arguments(op.operation)
