"""Pass `kiln-lower-checks` (stage "linalg", after kiln-dims-from-shapes).

In: `kiln.check(%ok: tensor<i1>, %v...: tensor<i64>) {kind, message}`.
Out: `scf.if (!ok) { func.call @kiln_check_failed(kind code, message, v0, v1) }`
(`func.call @kiln_warn(message)` for a warning kind, which records the
message for the runtime to warn with after the call)
where the message is a private `llvm.mlir.global` string of the module (the
check's message plus ` (at FILE:LINE)` from its location), so a library
carries its own messages. The callee lives in the runtime support code
linked into every library: it records the failure and unwinds to the entry
wrapper, so nothing after a failed check runs (no out-of-bounds access can
follow it).
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, func, ir, llvm, scf, source_position, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops, declare_private_function, StringGlobals
from kiln.dialects.kiln import CHECK_KINDS, MAX_CHECK_VALUES
from kiln.errors import CHECK_WARNINGS

FAILURE_CALLEE = "kiln_check_failed"
WARNING_CALLEE = "kiln_warn"
MESSAGE_PREFIX = "kiln_check_message_"


def declare_failure_callee(module: ir.Module) -> None:
    """`func.func private @kiln_check_failed(kind: i64, message: !llvm.ptr, i64, i64)`."""
    i64 = ir.IntegerType.get_signless(64)
    declare_private_function(module, FAILURE_CALLEE, [i64, llvm.PointerType.get(), i64, i64])
    # It never returns (it unwinds to the entry wrapper), so LLVM may use the
    # checked condition after the check: a checked index needs no clamp.
    callee = ir.SymbolTable(module.operation)[FAILURE_CALLEE]
    callee.attributes["llvm.passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noreturn"), ir.StringAttr.get("cold")])


def declare_warning_callee(module: ir.Module) -> None:
    """`func.func private @kiln_warn(message: !llvm.ptr)`."""
    declare_private_function(module, WARNING_CALLEE, [llvm.PointerType.get()])


def report_failure(kind_code: int, message: ir.Value, values: list[ir.Value]) -> None:
    """Call the failure hook (at the insertion point) with two i64 values,
    missing ones as zeros."""
    i64 = ir.IntegerType.get_signless(64)
    if len(values) < MAX_CHECK_VALUES:
        values = list(values) + [arith.constant(i64, 0)] * (MAX_CHECK_VALUES - len(values))
    func.CallOp([], ir.FlatSymbolRefAttr.get(FAILURE_CALLEE), [arith.constant(i64, kind_code), message, *values])


def is_check(op: ir.Operation) -> bool:
    """`scf.if %bad { func.call @kiln_check_failed(...) }` with no else and no
    results (the then block holds only the call, its constant operands and
    the yield): the form this pass lowers a check to."""
    if op.name != "scf.if" or len(op.results) != 0 or len(op.regions[1].blocks) != 0:
        return False
    calls = [o for o in op.regions[0].blocks[0].operations if o.name == "func.call"]
    return len(calls) == 1 and ir.FlatSymbolRefAttr(calls[0].attributes["callee"]).value == FAILURE_CALLEE and \
        all(o.name in ("func.call", "scf.yield", "arith.constant", "llvm.mlir.addressof", "llvm.mlir.zero")
            for o in op.regions[0].blocks[0].operations)


def _message_text(op: ir.Operation) -> str:
    """The check's message, naming the user's source line when its location has one."""
    message = ir.StringAttr(op.attributes["message"]).value
    position = source_position(op.location)
    if position is None:
        return message
    filename, line, _ = position
    # The runtime fills the message's `{}`s with str.format: braces of the file name are literal.
    where = f"{filename}:{line}".replace("{", "{{").replace("}", "}}")
    return f"{message} (at {where})"


def _check_operands(op: ir.Operation) -> list[ir.Value]:
    """The reported values; IRDL cannot bound their count, so it is checked here."""
    values = list(op.operands)[1:]
    if len(values) > MAX_CHECK_VALUES:
        raise ValueError(f"kiln-lower-checks: {op.location}: kiln.check reports at most {MAX_CHECK_VALUES} "
                         f"values, got {len(values)}; put the rest into the message")
    return values


def lower_checks(module: ir.Module) -> None:
    """Turn `kiln.check` ops into branches that report the failure and its message."""
    checks = collect_ops(module, {"kiln.check"})
    if not checks:
        return
    kinds = {ir.StringAttr(op.attributes["kind"]).value for op in checks}
    with module.context, ir.Location.unknown():
        if kinds - set(CHECK_WARNINGS):
            declare_failure_callee(module)
        if kinds & set(CHECK_WARNINGS):
            declare_warning_callee(module)
    strings = StringGlobals(module, MESSAGE_PREFIX)
    for op in checks:
        values = _check_operands(op)
        kind = ir.StringAttr(op.attributes["kind"]).value
        kind_code = CHECK_KINDS.index(kind) + 1
        with module.context, ir.Location.unknown():
            symbol = strings.symbol(_message_text(op))
        with ir.InsertionPoint(op), op.location:
            ok = tensor.extract(op.operands[0], [])
            bad = arith.xori(ok, arith.constant(ir.IntegerType.get_signless(1), 1))
            if_op = scf.IfOp(bad)
            with ir.InsertionPoint(if_op.then_block):
                message = llvm.AddressOfOp(llvm.PointerType.get(), symbol).result
                if kind in CHECK_WARNINGS:
                    func.CallOp([], ir.FlatSymbolRefAttr.get(WARNING_CALLEE), [message])
                else:
                    report_failure(kind_code, message, [tensor.extract(v, []) for v in values])
                scf.YieldOp([])
        op.erase()


@register_pass
class KilnLowerChecks(ModulePass):
    """Turn `kiln.check` ops into branches that report the failure and its message."""

    name = "kiln-lower-checks"

    def apply(self, module: ir.Module) -> None:
        lower_checks(module)
