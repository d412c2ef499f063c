"""Pass `kiln-unroll-elementwise-loops` (stage "linalg", before linalg-fuse-elementwise-ops).

In: a counted loop (`scf.while` from a `for_loop`, or `scf.for`) with a
constant trip count whose body only computes elementwise: all-parallel
`linalg.generic`s and scalar arithmetic on the counter.
Out: the body repeated trip-count times in straight-line code, so the
elementwise fusion that follows turns a chain like `10x a = a * sz` into one
loop nest making one pass over memory instead of ten.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import all_parallel, clone_ops, collect_ops, constant_int

# Ops a body may hold besides its elementwise generics: shape queries,
# fresh tensors, and scalar (counter) arithmetic, none with side effects.
_PLAIN_OPS = {"tensor.empty", "tensor.dim", "tensor.extract", "tensor.from_elements", "tensor.cast",
              "arith.constant", "linalg.yield"}
_PLAIN_DIALECTS = ("arith.", "math.")
_SLT = 2  # arith.cmpi's predicate number for `slt`


def _constant(value: ir.Value) -> int | None:
    """The integer of a scalar `arith.constant` or of a 0-d dense one."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    if isinstance(attr, ir.DenseIntElementsAttr) and ir.ShapedType(value.type).rank == 0:
        return ir.DenseIntElementsAttr(attr)[0]
    return None


def _scalar(value: ir.Value) -> ir.Value:
    """`v` for `tensor.extract v[]` (0-d counters before kiln-scalarize-rank0)."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.name == "tensor.extract" and len(owner.operands) == 1:
        return owner.operands[0]
    return value


def _is(value: ir.Value, block_argument: ir.Value) -> bool:
    return isinstance(value.owner, ir.Block) and value == block_argument


def _trip_count(lower: int, upper: int, step: int) -> int:
    return max(0, -(-(upper - lower) // step)) if step > 0 else 0


def _while_trip_count(op: ir.Operation) -> int | None:
    """The trip count of `scf.while` whose condition is `counter < constant`,
    whose counter starts at a constant and grows by a constant step, and whose
    condition region forwards its arguments unchanged; else None."""
    before = op.regions[0].blocks[0]
    after = op.regions[1].blocks[0]
    condition = before.operations[len(before.operations) - 1]
    forwarded = list(condition.operands)[1:]
    if len(forwarded) != len(before.arguments) or not all(_is(v, a) for v, a in zip(forwarded, before.arguments)):
        return None
    if any(o.name not in {"tensor.extract", "arith.cmpi", "scf.condition", "arith.constant"} for o in before.operations):
        return None
    compare = condition.operands[0].owner
    if isinstance(compare, ir.Block) or compare.name != "arith.cmpi" or \
            ir.IntegerAttr(compare.attributes["predicate"]).value != _SLT:
        return None
    counter, upper = _scalar(compare.operands[0]), _constant(compare.operands[1])
    if upper is None or not isinstance(counter.owner, ir.Block):
        return None
    position = ir.BlockArgument(counter).arg_number
    lower = _constant(op.operands[position])
    yielded = after.operations[len(after.operations) - 1].operands[position]
    owner = yielded.owner
    if not isinstance(owner, ir.Block) and owner.name == "tensor.from_elements":
        yielded = owner.operands[0]
        owner = yielded.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.addi" or \
            not _is(_scalar(owner.operands[0]), after.arguments[position]):
        return None
    step = _constant(owner.operands[1])
    if lower is None or step is None:
        return None
    return _trip_count(lower, upper, step)


def _elementwise_body(block: ir.Block, terminator: str) -> bool:
    """Whether the block computes only elementwise, with at least one
    generic over an array (else there is nothing to fuse)."""
    arrays = 0
    for o in block.operations:
        if o.name == terminator:
            continue
        if o.name == "linalg.generic":
            if not all_parallel(o) or any(not _plain(inner) for inner in o.regions[0].blocks[0].operations):
                return False
            arrays += any(ir.ShapedType(r.type).rank > 0 for r in o.results)
        elif not _plain(o):
            return False
    return arrays > 0


def _plain(op: ir.Operation) -> bool:
    return op.name in _PLAIN_OPS or (op.name.startswith(_PLAIN_DIALECTS) and len(op.regions) == 0)


def _size(block: ir.Block) -> int:
    size = 0
    for o in block.operations:
        size += 1 + sum(len(r.blocks[0].operations) for r in o.regions if len(r.blocks))
    return size


def _unroll(op: ir.Operation, body: ir.Block, initial: list, trips: int, induction=None) -> list:
    """Clone `body` `trips` times before `op`, each copy reading the values
    the previous one yielded; returns the last yielded values."""
    carried = list(initial)
    arguments = list(body.arguments)
    terminator = body.operations[len(body.operations) - 1]
    for trip in range(trips):
        mapping = {}
        with ir.InsertionPoint(op):
            if induction is not None:
                mapping[arguments[0]] = induction(trip)
            for argument, value in zip(arguments[len(arguments) - len(carried):], carried):
                mapping[argument] = value
            clone_ops(list(body.operations)[:-1], mapping)
        carried = [mapping.get(v, v) for v in terminator.operands]
    return carried


@register_pass
class KilnUnrollElementwiseLoops(ModulePass):
    """Unroll short counted loops of elementwise updates so that they fuse."""

    name = "kiln-unroll-elementwise-loops"
    max_trips: int = option(16, "loops with more iterations stay loops", minimum=0)
    max_ops: int = option(512, "loops whose unrolled body would exceed this many ops stay loops", minimum=0)

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, ("scf.while", "scf.for"), post_order=True):  # inner loops first
            self._try(op)

    def _try(self, op: ir.Operation) -> None:
        if op.name == "scf.while":
            trips, body = _while_trip_count(op), op.regions[1].blocks[0]
            initial, induction = list(op.operands), None
        else:
            bounds = [constant_int(v) for v in list(op.operands)[:3]]
            if None in bounds or "unsignedCmp" in op.attributes:
                return
            lower, upper, step = bounds
            trips, body = _trip_count(lower, upper, step), op.regions[0].blocks[0]
            initial = list(op.operands)[3:]
            index_type = op.operands[0].type

            def induction(trip, lower=lower, step=step, index_type=index_type):
                return arith.constant(index_type, lower + trip * step)
        terminator = "scf.yield"
        if trips is None or trips > self.max_trips or trips * _size(body) > self.max_ops:
            return
        if not _elementwise_body(body, terminator):
            return
        with op.location:
            final = _unroll(op, body, initial, trips, induction)
        for old, new in zip(op.results, final):
            old.replace_all_uses_with(new)
        op.erase()
