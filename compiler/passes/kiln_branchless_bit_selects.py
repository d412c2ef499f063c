"""Pass `kiln-branchless-bit-selects` (stage "bufferized", after kiln-poll-interrupts).

In: `scf.if` on a bit of the data (`cmpi ne|eq, %v, 0` where `%v` is 0 or 1
by construction: `x & 1`, and the xor/or/and of such bits, truncated or
extended) yielding integers, both branches a few side-effect-free integer
ops (crc16's `if (crc & 1) ^ (byte & 1): crc = (crc >> 1) ^ poly else:
crc >>= 1`). LLVM makes such an `if` a `select`, and x86's cmov conversion
turns a select in a loop back into a branch, which random data mispredicts
half the time (crc16 on 16 kB: 4x slower than with a cmov).
Out: both branches computed before the `if`, and each result
`arith.select` of the two: a cmov on x86, since kiln's LLVM options turn
cmov conversion off (`-x86-cmov-converter=false`, compiler/llvm_options.py).
Under options that leave it on (`KILN_LLVM_OPTIONS`), or with `mask=true`,
each result is `else ^ ((then ^ else) & (0 - ext(bit)))` instead: a mask
from the integer bit, which LLVM does not turn back into a select (it would
from an `i1`). Either way the loop has no branch on the data; the select is
shorter on the loop's critical path (a cmov after the test, where the mask
takes a negation, an and and an xor: crc16 on 16 kB 0.255 -> 0.196 ms).
Conditions that are not bits keep their `if`.
"""

from __future__ import annotations

from kiln.compiler.llvm_options import KEEP_CMOVS, llvm_options
from kiln.compiler.mlir import arith, ir
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import collect_ops

# Integer ops that are safe to compute on both paths (no division: a zero
# divisor is undefined behaviour in LLVM, and LLVM keeps those branches).
_SPECULATABLE = {"arith.constant", "arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.ori", "arith.xori",
                 "arith.shli", "arith.shrsi", "arith.shrui", "arith.extui", "arith.extsi", "arith.trunci",
                 "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui", "arith.cmpi", "arith.select"}
# Ops per branch above which computing both is not worth it.
_MAX_BRANCH_OPS = 8


def _int_width(t: ir.Type) -> int | None:
    return ir.IntegerType(t).width if isinstance(t, ir.IntegerType) else None


def _constant_int(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    attr = owner.operation.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _is_bit(value: ir.Value, depth: int = 0) -> bool:
    """Whether `value` (an integer wider than i1) is 0 or 1 by construction."""
    width = _int_width(value.type)
    if width is None or width < 2 or depth > 8:
        return False
    if _constant_int(value) in (0, 1):
        return True
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    op = owner.operation
    operands = list(op.operands)
    if op.name == "arith.andi":
        return any(_constant_int(v) == 1 or _is_bit(v, depth + 1) for v in operands)
    if op.name in ("arith.xori", "arith.ori"):
        return all(_is_bit(v, depth + 1) for v in operands)
    if op.name in ("arith.trunci", "arith.extui"):
        return _is_bit(operands[0], depth + 1)
    return False


def _bit_condition(cond: ir.Value) -> tuple[ir.Value, bool] | None:
    """(bit, then_when_one) when `cond` is `cmpi ne|eq, bit, 0`."""
    owner = cond.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.cmpi":
        return None
    op = owner.operation
    predicate = ir.IntegerAttr(op.attributes["predicate"]).value
    lhs, rhs = op.operands
    if _constant_int(lhs) == 0:
        lhs, rhs = rhs, lhs
    if _constant_int(rhs) != 0 or not _is_bit(lhs):
        return None
    if predicate == 0:  # eq
        return lhs, False
    if predicate == 1:  # ne
        return lhs, True
    return None


def _branch_ops(region: ir.Region) -> list | None:
    """The ops of a branch before its yield, when all are speculatable."""
    if len(region.blocks) != 1:
        return None
    ops = list(region.blocks[0].operations)
    body = ops[:-1]
    if len(body) > _MAX_BRANCH_OPS or any(op.name not in _SPECULATABLE for op in body):
        return None
    return body


def _resized(bit: ir.Value, t: ir.Type) -> ir.Value:
    width, target = _int_width(bit.type), _int_width(t)
    if width == target:
        return bit
    return arith.extui(t, bit) if width < target else arith.trunci(t, bit)


def cmovs_kept() -> bool:
    """Whether the LLVM options in force keep x86's cmovs (no cmov-to-branch conversion)."""
    return KEEP_CMOVS in llvm_options()


def _make_branchless(op: ir.Operation, mask_form: bool) -> None:
    if len(op.results) == 0 or any(_int_width(r.type) is None or _int_width(r.type) < 2 for r in op.results):
        return
    if len(op.regions[1].blocks) == 0:
        return
    condition = _bit_condition(op.operands[0])
    if condition is None:
        return
    bit, then_when_one = condition
    then_ops, else_ops = _branch_ops(op.regions[0]), _branch_ops(op.regions[1])
    if then_ops is None or else_ops is None:
        return
    then_values = list(op.regions[0].blocks[0].operations)[-1].operands
    else_values = list(op.regions[1].blocks[0].operations)[-1].operands
    for inner in then_ops + else_ops:
        inner.move_before(op)
    with ir.InsertionPoint(op), op.location:
        results = []
        for result, then_value, else_value in zip(op.results, then_values, else_values):
            if not mask_form:
                results.append(arith.select(op.operands[0], then_value, else_value))
                continue
            t = result.type
            choose_then = _resized(bit, t)
            if not then_when_one:
                choose_then = arith.xori(choose_then, arith.constant(t, 1))
            mask = arith.subi(arith.constant(t, 0), choose_then)
            results.append(arith.xori(else_value, arith.andi(arith.xori(then_value, else_value), mask)))
    for result, value in zip(op.results, results):
        result.replace_all_uses_with(value)
    op.erase()


@register_pass
class KilnBranchlessBitSelects(ModulePass):
    """Compute small integer `if`s on a data bit without a branch."""

    name = "kiln-branchless-bit-selects"
    mask: bool = option(False, "always the mask form, also when LLVM keeps cmovs")

    def apply(self, module: ir.Module) -> None:
        mask_form = self.mask or not cmovs_kept()
        for op in collect_ops(module, {"scf.if"}, post_order=True):
            _make_branchless(op, mask_form)
