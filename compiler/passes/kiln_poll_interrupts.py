"""Pass `kiln-poll-interrupts` (stage "bufferized", after kiln-version-small-dims).

In: `scf.while` loops (every loop the user wrote: `while`, `for`,
`kiln.for_loop`, `kiln.while_loop`).
Out: at the start of each loop body, `scf.if (volatile load of
@kiln_interrupt_flag != 0) { func.call @kiln_poll() }`. The flag and
`kiln_poll` live in the support code linked into every library
(runtime/support.c, "Interrupts"): a watchdog raises the flag while a call
of Python's main thread lasts, and `kiln_poll` runs Python's pending signal
handlers, unwinding the call when one raises (Ctrl-C, signal.alarm).
The loops of array operations (linalg) are not polled: each is bounded by
its sizes, while a user loop may run for minutes.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, func, ir, llvm, scf
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops

INTERRUPT_FLAG = "kiln_interrupt_flag"
POLL_CALLEE = "kiln_poll"


def _declare_runtime_symbols(module: ir.Module) -> None:
    """`llvm.mlir.global external @kiln_interrupt_flag() : i32` and
    `func.func private @kiln_poll()`, unless the module has them."""
    names = {ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations
             if "sym_name" in op.attributes}
    with ir.InsertionPoint.at_block_begin(module.body):
        if INTERRUPT_FLAG not in names:
            llvm.GlobalOp(ir.IntegerType.get_signless(32), INTERRUPT_FLAG, ir.Attribute.parse("#llvm.linkage<external>"),
                          addr_space=0)
        if POLL_CALLEE not in names:
            decl = func.FuncOp(POLL_CALLEE, ir.FunctionType.get([], []))
            decl.attributes["sym_visibility"] = ir.StringAttr.get("private")
            decl.attributes["llvm.memory_effects"] = ir.Attribute.parse(
                "#llvm.memory_effects<other = none, argMem = none, inaccessibleMem = readwrite, errnoMem = none, "
                "targetMem0 = none, targetMem1 = none>")


def poll_for_interrupts() -> None:
    """At the insertion point: call kiln_poll when the interrupt flag is set."""
    i32 = ir.IntegerType.get_signless(32)
    address = llvm.AddressOfOp(llvm.PointerType.get(), INTERRUPT_FLAG).result
    flag = llvm.LoadOp(i32, address, alignment=4, volatile_=True).result
    raised = arith.cmpi(arith.CmpIPredicate.ne, flag, arith.constant(i32, 0))
    if_op = scf.IfOp(raised)
    with ir.InsertionPoint(if_op.then_block):
        func.CallOp([], ir.FlatSymbolRefAttr.get(POLL_CALLEE), [])
        scf.YieldOp([])


@register_pass
class KilnPollInterrupts(ModulePass):
    """Poll kiln's interrupt flag at the start of every loop body, so Ctrl-C and signal handlers stop a long call."""

    name = "kiln-poll-interrupts"

    def apply(self, module: ir.Module) -> None:
        loops = collect_ops(module, {"scf.while"})
        if not loops:
            return
        with module.context, ir.Location.unknown():
            _declare_runtime_symbols(module)
        for loop in loops:
            body = loop.regions[1].blocks[0]
            with ir.InsertionPoint.at_block_begin(body), loop.location:
                poll_for_interrupts()
