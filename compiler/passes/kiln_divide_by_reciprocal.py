"""Pass `kiln-divide-by-reciprocal` (stage "bufferized", before kiln-parallelize).

In: elementwise `scf.parallel` nests (loads, arithmetic, stores) that divide
by a value that does not change along the nest's last dimension: a scalar
(`x / (2 * dx)`), or one value per row (`e / s[i]`), f32 or f64.
Out: the nest over blocks of at most BLOCK elements of its last dimension,
each block computing every such quotient from the divisor's reciprocal,
exactly, and redone with division when one of its elements needs it:

    y = 1 / c;  c_ok = 2^-100 <= |c| <= 2^100          (f32: 2^-30, 2^30)
    scf.parallel (i.., b) = (.., 0) to (.., ceil(n / BLOCK)) {
      s = lb + b * BLOCK;  e = min(s + BLOCK, ub)
      %bad = scf.for j = s to e iter_args(%bad = false) {
        q = x * y;  r = fma(-q, c, x);  x/c = copysign(fma(r, y, q), q)
        %bad |= |x| > 2^800 or 0 < |x| < 2^-800        (f32: 2^60, 2^-60)
        (the rest of the body, stores included)
      }
      scf.if (%bad or not c_ok) {kiln.rarely_taken} {
        scf.for j = s to e { (the original body, with its divisions) }
      }
    }

Exactness: with y = RN(1/c), q = RN(x y) is within an ulp of x/c, the
remainder r = x - q c is exact in an fma, and RN(q + r y) is the correctly
rounded quotient (Markstein's theorem), as long as nothing overflows or
underflows: the bounds on |c| and |x| keep q, r and y normal with room to
spare. Checked against division bit for bit on every f32 `x` for 40
divisors (all ones mantissas, powers of two, random) and on 2.56e9 random
f64 pairs (cmake-free-scripts/check_reciprocal_division.py, which finds
millions of mismatches without the bounds on x). `copysign` gives a zero quotient its sign (the
fma would turn -0 into +0); NaN stays NaN; an infinite or huge `x` and a
zero, infinite, NaN or extreme divisor take the division. The redo reads
what the first pass read: the nest's stores go to buffers it does not read
(another allocation, or an entry's argument other than the ones it reads;
kiln's entries refuse overlapping written arguments), checked through
views to each buffer's root; an in-place update (`x /= c`) is left alone.

Why: a division is the slowest arithmetic a loop does: 8 cycles per
4 doubles on a Sapphire Rapids core against 0.5 for a multiply or an fma.
channel_flow's pressure stencil and right-hand side divide by `2 * dx`
and `2 * (dx**2 + dy**2)` on every element; those loops were bound by the
divider, ~40 % of the kernel's time. (On a CPU without fma instructions
LLVM calls libm's `fma`: still exact, but slower than dividing; x86-64
CPUs since 2013 and AArch64 ones have them.) JAX does not divide exactly there
(its quotients differ from NumPy's in the last bit); kiln keeps NumPy's.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, scf
from kiln.compiler.mlir import math as mlir_math
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._outlining import RARELY_TAKEN
from kiln.compiler.passes._util import VIEW_OPS, clone_ops, collect_ops

BLOCK = 1024
# Per type: (least |c|, greatest |c|, least nonzero |x|, greatest |x|).
_BOUNDS = {"f64": (2.0 ** -100, 2.0 ** 100, 2.0 ** -800, 2.0 ** 800),
           "f32": (2.0 ** -30, 2.0 ** 30, 2.0 ** -60, 2.0 ** 60)}
_BODY_OPS = ("memref.load", "memref.store")


def _base(value: ir.Value) -> ir.Value:
    """The value `value` views, through subviews, casts and reshapes."""
    while not isinstance(value.owner, ir.Block) and value.owner.operation.name in VIEW_OPS:
        value = value.owner.operands[0]
    return value


def _fresh(base: ir.Value) -> bool:
    """Whether `base` is a buffer of its own: an allocation, or an argument
    of an entry (a written argument shares no memory with the others: every
    Python entry refuses the call otherwise)."""
    owner = base.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner
        return parent.operation.name == "func.func" and "llvm.emit_c_interface" in parent.attributes and \
            owner == parent.regions[0].blocks[0]
    return owner.operation.name in ("memref.alloc", "memref.alloca")


def _carriers(base: ir.Value) -> set:
    """Every memref value that may hold (part of) buffer `base`: its views,
    and what a loop, a branch or any other op passes it on as (their
    memref results and region arguments), transitively."""
    found, work = {base}, [base]

    def add(values):
        for v in values:
            if isinstance(v.type, (ir.MemRefType, ir.UnrankedMemRefType)) and v not in found:
                found.add(v)
                work.append(v)

    while work:
        for use in work.pop().uses:
            user = use.owner
            if user.operation.name in ("scf.yield", "scf.condition"):
                user = user.operation.parent
            add(user.results)
            for region in user.regions:
                for block in region.blocks:
                    add(block.arguments)
    return found


def _elementwise(nest: ir.Operation, carriers: dict) -> list[ir.Operation] | None:
    """The body ops of `nest` (its terminator left out) when it is an
    elementwise nest this pass may run twice over a block: no results, a
    last dimension of step 1, only arithmetic, loads and stores, and stores
    to buffers of their own (`_fresh`) that no load of the nest reads
    (`_carriers`; `carriers` memoizes them per buffer)."""
    block = nest.regions[0].blocks[0]
    dims = len(block.arguments)
    if len(nest.results) or len(nest.operands) != 3 * dims or \
            isinstance(step := nest.operands[3 * dims - 1].owner, ir.Block) or \
            step.operation.name != "arith.constant" or ir.IntegerAttr(step.attributes["value"]).value != 1:
        return None
    ops = list(block.operations)
    terminator = ops.pop()
    if terminator.operation.name != "scf.reduce" or len(terminator.operands):
        return None
    loaded, stored = set(), set()
    for op in ops:
        name = op.operation.name
        if len(op.regions) or not (name.startswith(("arith.", "math.")) or name in _BODY_OPS):
            return None
        if name == "memref.load":
            loaded.add(_base(op.operands[0]))
        elif name == "memref.store":
            stored.add(_base(op.operands[1]))
    for base in stored:
        if not _fresh(base):
            return None
        if base not in carriers:
            carriers[base] = _carriers(base)
        if not loaded.isdisjoint(carriers[base]):
            return None
    return ops if stored else None


def _divisions(ops: list[ir.Operation], j: ir.Value) -> list[ir.Operation]:
    """The f32/f64 `arith.divf` ops of `ops` whose divisor does not depend on
    `j` (the last dimension's induction variable)."""
    varying = {j}
    found = []
    for op in ops:
        if any(v in varying for v in op.operands):
            varying.update(op.results)
        if op.operation.name == "arith.divf" and str(op.result.type) in _BOUNDS and op.operands[1] not in varying:
            found.append(op)
    return found


def _chain(value: ir.Value, inside: dict) -> set:
    """The body ops `value` is computed by (itself included), in body order."""
    needed, stack = set(), [value]
    while stack:
        v = stack.pop()
        op = inside.get(v)
        if op is None or op in needed:
            continue
        needed.add(op)
        stack.extend(op.operands)
    return needed


def _bound(value: ir.Value, limit: float) -> ir.Value:
    return arith.constant(value.type, limit)


def _fast_quotient(x: ir.Value, c: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """x / c from y = 1/c (exact where the second value, `bad`, is false)."""
    q = arith.mulf(x, y)
    r = mlir_math.fma(arith.negf(q), c, x)
    quotient = mlir_math.copysign(mlir_math.fma(r, y, q), q)
    _, _, least, greatest = _BOUNDS[str(x.type)]
    a = mlir_math.absf(x)
    huge = arith.cmpf(arith.CmpFPredicate.OGT, a, _bound(a, greatest))
    tiny = arith.andi(arith.cmpf(arith.CmpFPredicate.OLT, a, _bound(a, least)),
                      arith.cmpf(arith.CmpFPredicate.OGT, a, _bound(a, 0.0)))
    return quotient, arith.ori(huge, tiny)


def _divisor_ok(c: ir.Value) -> ir.Value:
    least, greatest, _, _ = _BOUNDS[str(c.type)]
    a = mlir_math.absf(c)
    return arith.andi(arith.cmpf(arith.CmpFPredicate.OGE, a, _bound(a, least)),
                      arith.cmpf(arith.CmpFPredicate.OLE, a, _bound(a, greatest)))


def _prepare(c: ir.Value, here: ir.Value, reciprocal: dict, oks: list) -> None:
    """Divisor `c`, computed as `here` at the insertion point: its reciprocal
    (recorded in `reciprocal`) and whether it is in range (appended to `oks`)."""
    reciprocal[c] = (here, arith.divf(arith.constant(here.type, 1.0), here))
    oks.append(_divisor_ok(here))


def _rewrite(nest: ir.Operation, ops: list[ir.Operation], divisions: list[ir.Operation]) -> None:
    index = ir.IndexType.get()
    i1 = ir.IntegerType.get_signless(1)
    block = nest.regions[0].blocks[0]
    ivs = list(block.arguments)
    dims = len(ivs)
    lowers, uppers, steps = (list(nest.operands[k * dims:(k + 1) * dims]) for k in range(3))
    inside = {r: op for op in ops for r in op.results}
    divisors = []
    for op in divisions:
        if op.operands[1] not in divisors:
            divisors.append(op.operands[1])
    hoisted = set()
    for c in divisors:
        hoisted |= _chain(c, inside)
    with ir.InsertionPoint(nest), nest.location:
        size = arith.constant(index, BLOCK)
        zero, one = arith.constant(index, 0), arith.constant(index, 1)
        blocks = arith.ceildivsi(arith.subi(uppers[-1], lowers[-1]), size)
        # (A divisor from outside the nest: its reciprocal once, before it.)
        reciprocal, oks = {}, []
        for c in divisors:
            if c not in inside:
                _prepare(c, c, reciprocal, oks)
        outer = scf.ParallelOp([], lowers[:-1] + [zero], uppers[:-1] + [blocks], steps[:-1] + [one], [])
        body = outer.regions[0].blocks.append(*([index] * dims))
    with ir.InsertionPoint(body), nest.location:
        start = arith.addi(lowers[-1], arith.muli(body.arguments[-1], size))
        stop = arith.minsi(arith.addi(start, size), uppers[-1])
        mapping = {ivs[d]: body.arguments[d] for d in range(dims - 1)}
        clone_ops([op for op in ops if op in hoisted], mapping)
        for c in divisors:
            if c in inside:
                _prepare(c, mapping[c], reciprocal, oks)
        all_ok = oks[0]
        for ok in oks[1:]:
            all_ok = arith.andi(all_ok, ok)
        false = arith.constant(i1, 0)
        fast = scf.ForOp(start, stop, one, [false])
        with ir.InsertionPoint(fast.body):
            inner = dict(mapping)
            inner[ivs[-1]] = fast.induction_variable
            bad = fast.inner_iter_args[0]
            for op in ops:
                if op in hoisted:
                    continue  # (computed once per block, above)
                if op in divisions:
                    hc, y = reciprocal[op.operands[1]]
                    quotient, flagged = _fast_quotient(inner.get(op.operands[0], op.operands[0]), hc, y)
                    inner[op.result] = quotient
                    bad = arith.ori(bad, flagged)
                else:
                    clone_ops([op], inner)
            scf.YieldOp([bad])
        redo = arith.ori(fast.results[0], arith.xori(all_ok, arith.constant(i1, 1)))
        again = scf.IfOp(redo, [])
        again.attributes[RARELY_TAKEN] = ir.UnitAttr.get()
        with ir.InsertionPoint(again.then_block):
            exact = scf.ForOp(start, stop, one, [])
            with ir.InsertionPoint(exact.body):
                inner = dict(mapping)
                inner[ivs[-1]] = exact.induction_variable
                clone_ops(ops, inner)
                scf.YieldOp([])
            scf.YieldOp([])
        scf.ReduceOp([], 0)
    nest.erase()


@register_pass
class KilnDivideByReciprocal(ModulePass):
    """Divide by a loop-invariant value through its reciprocal, exactly (blocks that need it divide again)."""

    name = "kiln-divide-by-reciprocal"
    enabled: bool = option(True, "rewrite the divisions (false: leave every nest as it is)")

    def apply(self, module: ir.Module) -> None:
        if not self.enabled:
            return
        carriers: dict = {}
        for nest in collect_ops(module, {"scf.parallel"}):
            if not any(op.operation.name == "arith.divf" for op in nest.regions[0].blocks[0].operations):
                continue
            ops = _elementwise(nest, carriers)
            if ops is None:
                continue
            j = nest.regions[0].blocks[0].arguments[-1]
            divisions = _divisions(ops, j)
            if divisions:
                _rewrite(nest, ops, divisions)
