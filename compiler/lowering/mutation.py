"""Stage "mlir": lowering of copies (value semantics until views and writes arrive)."""

from __future__ import annotations

from kiln.compiler.lowering import lowering
from kiln.primitives import mutation


@lowering(mutation.copy_p)
def _copy(ctx, eqn, x):
    # A tensor value never changes, so the copy is the value itself; the
    # runtime copies results that alias an argument.
    return [x]
