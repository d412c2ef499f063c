"""Pass `tensorssa-remove-update` (stage "functionalized", last).

In: a module whose `tensorssa.update` markers have served their purpose
(tensorssa-rename pointed every later use at the new version).
Out: the markers erased. No tensorssa op may remain; one that does is a
bug in the earlier passes and is reported.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._tensorssa import as_operation
from kiln.compiler.passes._util import collect_ops
from kiln.core import KilnInternalError


@register_pass
class TensorssaRemoveUpdate(ModulePass):
    """Erase tensorssa.update markers; check no tensorssa op is left."""

    name = "tensorssa-remove-update"

    def apply(self, module: ir.Module) -> None:
        for update in collect_ops(module, {"tensorssa.update"}):
            as_operation(update).erase()
        left = [op.name for op in collect_ops(module, _AnyTensorssa())]
        if left:
            raise KilnInternalError(f"tensorssa ops left after functionalization: {sorted(set(left))}")


class _AnyTensorssa:
    def __contains__(self, name: str) -> bool:
        return name.startswith("tensorssa.")
