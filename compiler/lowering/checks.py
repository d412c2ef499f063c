"""Stage "mlir": lowering of run-time checks.

In: `check` equations (bool predicate, up to two i64 values to report).
Out: `kiln.check(%pred, %v...) {kind, message}` at the equation's source
location; the `kiln-lower-checks` pass turns it into a branch that reports
the failure (and the message) to the runtime.
"""

from __future__ import annotations

from kiln.compiler.lowering import lowering
from kiln.dialects import kiln as kiln_dialect
from kiln.dialects import stablehlo as hlo
from kiln.primitives import checks


@lowering(checks.check_p)
def _check(ctx, eqn, pred, *values):
    values = [hlo.convert(v, hlo.i64()) for v in values]
    kiln_dialect.check(pred, values, eqn.params["kind"], eqn.params["message"])
    return []
