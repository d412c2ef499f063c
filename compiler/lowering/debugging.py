"""Stage "mlir": lowering of `debug_print`.

In: `debug_print` equations (any arrays, the numbered format as a param).
Out: `kiln.print(%v...) {format, dtypes}` at the equation's source
location; `kiln-lower-prints` turns it into calls into the runtime.
"""

from __future__ import annotations

from kiln.compiler.lowering import lowering
from kiln.dialects import kiln as kiln_dialect
from kiln.primitives.debugging import debug_print_p


@lowering(debug_print_p)
def _debug_print(ctx, eqn, *values):
    dtypes = [str(v.aval.dtype) for v in eqn.invars]
    kiln_dialect.print_values(list(values), eqn.params["format"], dtypes)
    return []
