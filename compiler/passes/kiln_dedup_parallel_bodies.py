"""Pass `kiln-dedup-parallel-bodies` (stage "bufferized", after kiln-outline-serial-loops).

In: the `llvm.func` bodies kiln-parallelize and kiln-outline-serial-loops
outlined (`<fn>_parallel<N>`, `<fn>_serial<N>`), each reading everything it
uses through its context pointer.
Out: one body per distinct text; the `llvm.mlir.addressof` and `llvm.call`
of the others name the one kept, and the others are erased.

A body is a function of its context struct, its bounds and nothing else
(it is isolated from above; its SSA names print the same wherever it comes
from), so two bodies whose texts are equal but for their names compute the
same thing. Equal bodies are common: the same statement in two versions of
a broadcast, the same copy of an array in two places (NPBench's
channel_flow: 215 bodies, 104 distinct; nbody's getAcc and getEnergy,
traced twice, as serial bodies), and each one LLVM compiles costs compile
time, not run time.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass

_REFERENCES = (("llvm.mlir.addressof", "global_name"), ("llvm.call", "callee"))
# The names the outlining passes give their bodies.
_BODY_MARKERS = ("_parallel", "_serial")


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
    """Keep one copy of outlined bodies (parallel or serial) that are identical but for their names."""

    name = "kiln-dedup-parallel-bodies"

    def apply(self, module: ir.Module) -> None:
        kept: dict[str, str] = {}
        replaced: dict[str, str] = {}
        duplicates = []
        for op in module.body.operations:
            if op.operation.name != "llvm.func" or not op.regions[0].blocks \
                    or not any(marker in _name(op) for marker in _BODY_MARKERS):
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
