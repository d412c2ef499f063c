"""kiln's dialects: `tensorssa` and `immut` (mutation), `kiln` (run-time
checks and scans), and thin StableHLO op builders.

`new_context()` is the one place dialects are loaded: every context kiln
parses, builds or runs passes in comes from it.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, irdl, load_dialects, register_dialect_modules, register_stablehlo_dialect
from kiln.dialects import immut, kiln, tensorssa

# The Python module of each dialect the provider has none for is the one
# of this package named after it (stablehlo, tensorssa, immut, kiln): without
# one the bindings retry a failing import on every op they wrap.
register_dialect_modules("kiln.dialects")


# The upstream dialects whose ops kiln's lowering and passes create through
# the bindings (test_every_dialect_kiln_builds_ops_of_is_loaded_in_its_contexts
# checks the list against the sources).
BUILT_DIALECTS = ["builtin", "func", "arith", "math", "index", "tensor", "linalg", "scf", "memref",
                  "bufferization", "affine", "llvm", "cf", "complex", "ub", "vector"]


def new_context() -> ir.Context:
    """A context with every upstream dialect registered, StableHLO and kiln's
    `tensorssa`, `immut` and `kiln` dialects loaded (unregistered dialects
    are refused, so a misspelt op is an error, not an opaque op).

    Of the upstream dialects only those kiln builds ops of from Python are
    loaded (`BUILT_DIALECTS`: the bindings do not load a dialect for an op
    they create); the others are registered and load when the parser or a
    pass (its dependent dialects) first needs them, as in `mlir-opt`.
    Loading all ~60 of the provider's dialects was 5 of a context's 6 ms,
    paid on every compile."""
    ctx = ir.Context(load_on_create_dialects=[])
    load_dialects(ctx, BUILT_DIALECTS)
    register_stablehlo_dialect(ctx)
    ctx.allow_unregistered_dialects = False
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(tensorssa.IRDL + immut.IRDL + kiln.IRDL))
    return ctx
