"""Pass `kiln-dedup-parallel-bodies` (stage "bufferized", after kiln-branchless-bit-selects).

In: the `llvm.func` bodies kiln-parallelize outlined (`<fn>_parallel<N>`),
each reading everything it uses through its context pointer.
Out: one body per distinct text; the `llvm.mlir.addressof` and `llvm.call`
of the others name the one kept, and the others are erased.

A body is a function of its context struct, its bounds and nothing else
(it is isolated from above; its SSA names print the same wherever it comes
from), so two bodies whose texts are equal but for their names compute the
same thing. Equal bodies are common: the same statement in two versions of
a broadcast, the same copy of an array in two places (NPBench's
channel_flow: 215 bodies, 104 distinct), and each one LLVM compiles costs
compile time, not run time.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass

_REFERENCES = (("llvm.mlir.addressof", "global_name"), ("llvm.call", "callee"))


def _name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _body_key(op: ir.Operation, name: str) -> str:
    """The body's text with its own name left out."""
    # Local scope: printing a nested op otherwise numbers the values of the
    # whole module first (quadratic over many bodies).
    text = op.operation.get_asm(use_local_scope=True, assume_verified=True)
    return text.replace(f"@{name}(", "@(", 1)


@register_pass
class KilnDedupParallelBodies(ModulePass):
    """Keep one copy of outlined parallel bodies that are identical but for their names."""

    name = "kiln-dedup-parallel-bodies"

    def apply(self, module: ir.Module) -> None:
        kept: dict[str, str] = {}
        replaced: dict[str, str] = {}
        duplicates = []
        for op in module.body.operations:
            if op.operation.name != "llvm.func" or "_parallel" not in _name(op) or not op.regions[0].blocks:
                continue
            name = _name(op)
            key = _body_key(op, name)
            if key in kept:
                replaced[name] = kept[key]
                duplicates.append(op)
            else:
                kept[key] = name
        if not replaced:
            return

        def visit(inner):
            for op_name, attribute in _REFERENCES:
                if inner.name == op_name and attribute in inner.attributes:
                    target = ir.FlatSymbolRefAttr(inner.attributes[attribute]).value
                    if target in replaced:
                        inner.attributes[attribute] = ir.FlatSymbolRefAttr.get(replaced[target])
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        for op in duplicates:
            op.operation.erase()
