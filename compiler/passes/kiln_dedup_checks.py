"""Pass `kiln-dedup-checks` (stage "bufferized", before kiln-hoist-loop-checks).

In: run-time checks `scf.if %bad { func.call @kiln_check_failed(...) }`,
many of them testing one condition value: kiln-check-alloc-sizes checks
every allocation of the same sizes again (channel_flow: 696 checks in its
function, 206 distinct condition-and-values pairs after `cse`; 180 remain).
Out: a check is erased when a check of the same `%bad` runs before it: one
earlier in its block or in a block that encloses it. That one did not
fail, so `%bad` is false and the later one cannot fail either (its message
would never be seen). LLVM compiled each check as a branch and a call.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes.kiln_lower_checks import is_check


def _dedup_block(block: ir.Block, checked: set, doomed: list[ir.Operation]) -> None:
    """Collect in `doomed` the checks of `block` (and of the regions nested
    in it) whose condition is in `checked` or was checked earlier in the
    block. `checked` holds the conditions checked before the block; it is
    the same set on return (one set for the whole walk: linear)."""
    added = []
    for op in block.operations:
        op = op.operation
        if is_check(op):
            condition = op.operands[0]
            if condition in checked:
                doomed.append(op)
            else:
                checked.add(condition)
                added.append(condition)
            continue
        for region in op.regions:
            for inner in region.blocks:
                _dedup_block(inner, checked, doomed)
    for condition in added:
        checked.discard(condition)


@register_pass
class KilnDedupChecks(ModulePass):
    """Erase run-time checks of a condition that an earlier, enclosing check already tested."""

    name = "kiln-dedup-checks"

    def apply(self, module: ir.Module) -> None:
        doomed: list[ir.Operation] = []
        _dedup_block(module.body, set(), doomed)
        for op in doomed:
            op.erase()
