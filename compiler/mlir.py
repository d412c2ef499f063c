"""The MLIR provider: the only module of kiln that imports the MLIR Python
bindings (torch-mlir's build of upstream MLIR plus StableHLO).

Everything else imports `ir`, `passmanager`, `ExecutionEngine`, the dialect
modules and `new_context` from here, so the provider can be swapped.
"""

from __future__ import annotations

from torch_mlir import ir, passmanager  # noqa: F401
from torch_mlir._mlir_libs import _stablehlo
from torch_mlir.dialects import (  # noqa: F401
    arith,
    irdl,
    bufferization,
    func,
    linalg,
    math,
    memref,
    scf,
    tensor,
)
from torch_mlir.execution_engine import ExecutionEngine  # noqa: F401

PROVIDER = "torch-mlir==20261001"

# StableHLO attribute classes the lowering and passes build or read.
GatherDimensionNumbers = _stablehlo.GatherDimensionNumbers
ScatterDimensionNumbers = _stablehlo.ScatterDimensionNumbers

_stablehlo.register_stablehlo_passes()


def new_context() -> ir.Context:
    """A context with every upstream dialect, StableHLO, and kiln's
    `tensorssa` and `immut` dialects loaded."""
    from kiln.dialects import immut, tensorssa

    ctx = ir.Context()
    _stablehlo.register_dialect(ctx)
    ctx.allow_unregistered_dialects = False
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(tensorssa.IRDL + immut.IRDL))
    return ctx


def dynamic_size() -> int:
    return ir.ShapedType.get_dynamic_size()
