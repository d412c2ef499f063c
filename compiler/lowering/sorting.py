"""Stage "mlir": sorting and selection -> `kiln.sort` (StableHLO's sort takes
a comparator region, which kiln would have to recognize again; the op says
what is asked, and kiln-lower-sorts turns it into calls of runtime/sort.c).
"""

from __future__ import annotations

from kiln.compiler.lowering import lowering
from kiln.dialects import kiln as kiln_dialect
from kiln.dialects.stablehlo import tensor_type
from kiln.primitives import sorting


@lowering(sorting.sort_p)
def _sort(ctx, eqn, x, kth):
    return [kiln_dialect.sort(x, kth, tensor_type(eqn.outvars[0].aval), eqn.params["indices"])]
