"""Pass `tensorssa-rename` (stage "functionalized", after tensorssa-block-propagation).

In: `tensorssa.update(new, old)` markers, each in the region where `old`
is defined (see tensorssa-block-propagation).
Out: every use of `old` that runs after the update — later ops of the same
block and ops nested in them — reads `new` instead. Updates are handled in
program order, so a chain of writes renames version by version.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._tensorssa import as_operation, is_after
from kiln.compiler.passes._util import collect_ops


@register_pass
class TensorssaRename(ModulePass):
    """Point uses after each tensorssa.update at the new version."""

    name = "tensorssa-rename"

    def apply(self, module: ir.Module) -> None:
        for update in collect_ops(module, {"tensorssa.update"}):
            update = as_operation(update)
            new, old = update.operands[0], update.operands[1]
            for use in list(old.uses):
                owner = as_operation(use.owner)
                if owner != update and is_after(owner, update):
                    owner.operands[use.operand_number] = new
