"""kiln's dialects: `tensorssa` and `immut` (mutation), `kiln` (run-time
checks and scans), and thin StableHLO op builders.

`new_context()` is the one place dialects are loaded: every context kiln
parses, builds or runs passes in comes from it.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, irdl, register_dialect_modules, register_stablehlo_dialect
from kiln.dialects import immut, kiln, tensorssa

# The Python module of each dialect the provider has none for is the one
# of this package named after it (stablehlo, tensorssa, immut, kiln): without
# one the bindings retry a failing import on every op they wrap.
register_dialect_modules("kiln.dialects")


def new_context() -> ir.Context:
    """A context with every upstream dialect, StableHLO, and kiln's
    `tensorssa`, `immut` and `kiln` dialects loaded (unregistered dialects
    are refused, so a misspelt op is an error, not an opaque op)."""
    ctx = ir.Context()
    register_stablehlo_dialect(ctx)
    ctx.allow_unregistered_dialects = False
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(tensorssa.IRDL + immut.IRDL + kiln.IRDL))
    return ctx
