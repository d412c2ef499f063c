"""Stage "mlir": lowering of run-time checks.

In: `check` equations (bool predicate, up to two i64 values to report).
Out: `stablehlo.custom_call @kiln.check(%pred, %v...)` with side effects and
the check's index into the module's table of messages
(`kiln.check_id`); the `kiln-lower-checks` pass turns it into a branch that
reports the failure to the runtime.
"""

from __future__ import annotations

from kiln.compiler.lowering import lowering
from kiln.compiler.mlir import ir
from kiln.dialects import stablehlo as hlo
from kiln.primitives import checks

CHECK_TARGET = "kiln.check"


@lowering(checks.check_p)
def _check(ctx, eqn, pred, *values):
    check_id = ctx.register_check(eqn.params["kind"], eqn.params["message"])
    values = [hlo.convert(v, hlo.i64()) for v in values]
    hlo.op("custom_call", [], [pred, *values],
           call_target_name=ir.StringAttr.get(CHECK_TARGET),
           has_side_effect=ir.BoolAttr.get(True),
           backend_config=ir.StringAttr.get(str(check_id)))
    return []
