"""Pass `kiln-hoist-loop-checks` (stage "bufferized", before kiln-version-small-dims).

In: loops (`scf.while`, `scf.for`) whose body recomputes shape arithmetic
and re-runs run-time checks that do not depend on the iteration (the size
check of `B[1:-1, 1:-1] = f(A[...])` in a time loop).
Out: the loop-invariant, side-effect-free ops of the body (index
arithmetic, views, constants) are computed once before the loop, and the
invariant checks `scf.if %bad { func.call @kiln_check_failed(...) }` run
once before it, guarded by "the loop runs at least once", so a loop that
does not run still raises nothing, as in NumPy.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import UNSAFE_TO_SPECULATE, clone_ops, collect_ops
from kiln.compiler.passes.kiln_lower_checks import is_check

# Side-effect-free ops that are safe to run even when the loop runs zero
# times (no division: a zero divisor is undefined behaviour in LLVM).
_PURE_PREFIXES = ("arith.", "index.", "math.")
_PURE_OPS = {"memref.dim", "memref.subview", "memref.cast", "memref.expand_shape", "memref.collapse_shape",
             "memref.reinterpret_cast", "llvm.mlir.addressof", "llvm.mlir.constant", "llvm.mlir.zero",
             "affine.apply", "affine.min", "affine.max"}


def _hoistable_pure(op: ir.Operation) -> bool:
    if len(op.regions) != 0 or op.name in UNSAFE_TO_SPECULATE:
        return False
    return op.name in _PURE_OPS or op.name.startswith(_PURE_PREFIXES)


def _inside(value: ir.Value, loop: ir.Operation) -> bool:
    """Whether `value` is defined in one of `loop`'s regions."""
    owner = value.owner
    parent = owner.owner if isinstance(owner, ir.Block) else owner.parent
    while parent is not None:
        if parent == loop:
            return True
        parent = parent.parent
    return False


def _uses_only_outside(op: ir.Operation, loop: ir.Operation) -> bool:
    """Every value `op` (and its regions) reads from outside itself is defined outside `loop`."""
    ok = True

    def visit(inner):
        nonlocal ok
        for value in inner.operands:
            if _inside(value, loop) and not _inside(value, op):
                ok = False
        return ir.WalkResult.ADVANCE if ok else ir.WalkResult.INTERRUPT

    op.walk(visit)
    return ok


def _observable(op: ir.Operation) -> bool:
    """Whether `op` may fail, print, warn, allocate or never end: a check
    must not run before it (the error, or its absence, would change)."""
    found = False

    def visit(inner):
        nonlocal found
        if inner.name in ("func.call", "memref.alloc", "memref.alloca", "scf.while", "llvm.call"):
            found = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def _runs_once(loop: ir.Operation) -> ir.Value | None:
    """An i1 before `loop`: true when its body runs at least once (None when
    that cannot be computed cheaply)."""
    if loop.name == "scf.for":
        unsigned = "unsignedCmp" in loop.attributes
        return arith.cmpi(arith.CmpIPredicate.ult if unsigned else arith.CmpIPredicate.slt,
                          loop.operands[0], loop.operands[1])
    before = loop.regions[0].blocks[0]
    operations = list(before.operations)
    if any(not _hoistable_pure(o) for o in operations[:-1]):
        return None
    mapping = {argument: value for argument, value in zip(before.arguments, loop.operands)}
    clone_ops(operations[:-1], mapping)
    condition = operations[-1].operands[0]
    return mapping.get(condition, condition)


@register_pass
class KilnHoistLoopChecks(ModulePass):
    """Compute loop-invariant shape arithmetic and run invariant checks once, before the loop."""

    name = "kiln-hoist-loop-checks"

    def apply(self, module: ir.Module) -> None:
        for loop in collect_ops(module, ("scf.while", "scf.for"), post_order=True):  # inner loops first
            self._hoist(loop)

    def _hoist(self, loop: ir.Operation) -> None:
        body = loop.regions[1 if loop.name == "scf.while" else 0].blocks[0]
        runs = None
        blocked = False
        for op in list(body.operations):
            if _hoistable_pure(op) and _uses_only_outside(op, loop):
                op.move_before(loop)
                continue
            if not blocked and is_check(op) and _uses_only_outside(op, loop):
                if runs is None:
                    with ir.InsertionPoint(loop), loop.location:
                        runs = _runs_once(loop)
                    if runs is None:
                        blocked = True
                        continue
                with ir.InsertionPoint(loop), op.location:
                    op.operands[0] = arith.andi(runs, op.operands[0])
                op.move_before(loop)
                continue
            if _observable(op):
                blocked = True
