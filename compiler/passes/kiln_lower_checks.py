"""Pass `kiln-lower-checks` (stage "linalg", after kiln-dims-from-shapes).

In: `stablehlo.custom_call @kiln.check(%ok: tensor<i1>, %v...: tensor<i64>)`
with the check id in `backend_config`.
Out: `scf.if (!ok) { func.call @kiln_check_failed(id, v0, v1) }`. The callee
lives in the runtime support code linked into every library: it records the
failure and unwinds to the entry wrapper, so nothing after a failed check
runs (no out-of-bounds access can follow it).
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, func, ir, scf, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops

FAILURE_CALLEE = "kiln_check_failed"


def _declare_callee(module: ir.Module) -> None:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == FAILURE_CALLEE:
            return
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint.at_block_begin(module.body):
        decl = func.FuncOp(FAILURE_CALLEE, ir.FunctionType.get([i64, i64, i64], []))
        decl.attributes["sym_visibility"] = ir.StringAttr.get("private")


def _check_id(op: ir.Operation) -> int:
    """The check id in `backend_config`; anything else is malformed input."""
    config = op.attributes["backend_config"] if "backend_config" in op.attributes else None
    if not isinstance(config, ir.StringAttr) or not config.value.isdigit():
        raise ValueError(f"kiln-lower-checks: {op.location}: a kiln.check custom call needs "
                         f'backend_config = "<check id>" (a decimal integer), got {config or "none"}')
    return int(config.value)


def lower_checks(module: ir.Module) -> None:
    """Turn kiln.check custom calls into branches that report the failure."""
    checks = [op for op in collect_ops(module, {"stablehlo.custom_call"})
              if ir.StringAttr(op.attributes["call_target_name"]).value == "kiln.check"]
    if not checks:
        return
    i64 = ir.IntegerType.get_signless(64)
    with module.context, ir.Location.unknown():
        _declare_callee(module)
    for op in checks:
        check_id = _check_id(op)
        with ir.InsertionPoint(op), op.location:
            ok = tensor.extract(op.operands[0], [])
            bad = arith.xori(ok, arith.constant(ir.IntegerType.get_signless(1), 1))
            if_op = scf.IfOp(bad)
            with ir.InsertionPoint(if_op.then_block):
                values = [tensor.extract(v, []) for v in list(op.operands)[1:]]
                values += [arith.constant(i64, 0)] * (2 - len(values))
                func.CallOp([], ir.FlatSymbolRefAttr.get(FAILURE_CALLEE), [arith.constant(i64, check_id), *values])
                scf.YieldOp([])
        op.erase()


@register_pass
class KilnLowerChecks(ModulePass):
    """Turn kiln.check custom calls into branches that report the failure."""

    name = "kiln-lower-checks"

    def apply(self, module: ir.Module) -> None:
        lower_checks(module)
