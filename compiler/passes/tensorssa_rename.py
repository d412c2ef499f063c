"""Pass `tensorssa-rename` (stage "functionalized", after tensorssa-block-propagation).

In: `tensorssa.update(new, old)` markers, each in the region where `old`
is defined or nested in it (see tensorssa-block-propagation).
Out: every use of `old` that runs after the update — later ops of the same
block and ops nested in them — reads `new` instead. Updates take effect in
program order, so a chain of writes renames version by version.

Linear in the size of the function: one walk in program order carries the
latest version of each renamed value. At an update (its own operands read
through the versions first), `old` and every value that already reads as
`old` read as `new` from there on; an update inside a nested block holds
until the end of that block only. A value is read through its chain of
versions, shortened as it is read; the entries a block made or shortened
are undone when the walk leaves it.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass


class _Versions:
    """The latest version of each renamed value, scoped by block: `newer`
    maps a value to a later version of it (follow it to the latest), and
    `undo` logs each entry's previous state so a block's entries can be
    dropped when the walk leaves it."""

    _ABSENT = object()

    def __init__(self) -> None:
        self.newer: dict = {}
        self.undo: list = []

    def _set(self, value: ir.Value, version: ir.Value) -> None:
        self.undo.append((value, self.newer.get(value, self._ABSENT)))
        self.newer[value] = version

    def latest(self, value: ir.Value) -> ir.Value:
        """The version of `value` in force here; the chain to it is shortened."""
        chain = []
        while value in self.newer:
            chain.append(value)
            value = self.newer[value]
        for older in chain[:-1]:
            self._set(older, value)
        return value

    def update(self, new: ir.Value, old: ir.Value) -> None:
        """From here on (to the end of the block), `old` reads as `new`.
        `new` itself has no newer version yet: the earlier passes make it
        just before its update, after every update that could rename it."""
        if new != old:
            self._set(old, new)

    def rename_block(self, block: ir.Block) -> None:
        """Point every operand in `block` (and nested in it) at its latest version."""
        mark = len(self.undo)
        for view in block.operations:
            op = view.operation
            operands = op.operands
            for i, value in enumerate(operands):
                if value in self.newer:
                    operands[i] = self.latest(value)
            if op.name == "tensorssa.update":
                self.update(operands[0], operands[1])
            for region in op.regions:
                for inner in region.blocks:
                    self.rename_block(inner)
        while len(self.undo) > mark:
            value, previous = self.undo.pop()
            if previous is self._ABSENT:
                del self.newer[value]
            else:
                self.newer[value] = previous


@register_pass
class TensorssaRename(ModulePass):
    """Point uses after each tensorssa.update at the new version."""

    name = "tensorssa-rename"

    def apply(self, module: ir.Module) -> None:
        _Versions().rename_block(module.body)
