"""Stage "mlir": lowering of copies and writes.

In: `copy`, `assign`, `scatter` equations (only in functions that write,
where `ctx.reference_semantics` also makes the views lower to `tensorssa`
views; see their rules in shape.py / indexing.py).
Out: `assign` becomes `tensorssa.copy`, `scatter` `tensorssa.scatter`, and
`copy` an `immut.assign` (a new value that no later write can reach). The
tensorssa-* passes functionalize them.
"""

from __future__ import annotations

from kiln.compiler.lowering import fresh_value, lowering
from kiln.compiler.mlir import ir
from kiln.dialects import stablehlo as hlo
from kiln.dialects import tensorssa
from kiln.primitives import mutation


@lowering(mutation.copy_p)
def _copy(ctx, eqn, x):
    return [fresh_value(x) if ctx.reference_semantics else x]


@lowering(mutation.assign_p)
def _assign(ctx, eqn, target, value):
    tensorssa.effect("copy", target, value)
    return []


@lowering(mutation.scatter_p)
def _scatter(ctx, eqn, target, indices, updates):
    indices = hlo.convert(indices, hlo.i64())
    tensorssa.effect("scatter", target, indices, updates,
                     axis=ir.IntegerAttr.get(hlo.i64(), eqn.params["axis"]))
    return []
