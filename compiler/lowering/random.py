"""Stage "mlir": lowering of the `random` primitive.

In: `random` equations (state words, parameters, the count as a static int or
a dim). Out: `kiln.random(%state, %count, %a, %b, %p, %q, %r) {method,
bit_generator}` at the equation's source location; `kiln-lower-random` turns
it into calls of runtime/random.c.
"""

from __future__ import annotations

from kiln.compiler.lowering import lowering
from kiln.dialects import kiln as kiln_dialect
from kiln.dialects import stablehlo as hlo
from kiln.dialects.stablehlo import tensor_type
from kiln.primitives.random import random_p


@lowering(random_p)
def _random(ctx, eqn, state, a, b, p, q, r, *dyn):
    count = ctx.dim(eqn.outvars[1].aval.shape[0])
    if isinstance(count, int):
        count = hlo.scalar_i64(count)
    return list(kiln_dialect.random(state, count, [a, b], [p, q, r], tensor_type(eqn.outvars[1].aval),
                                    eqn.params["method"], eqn.params["bit_generator"]))
