"""Pass `kiln-block-arg-reductions` (stage "linalg", after kiln-legalize-dynamic).

In: the two-operand `stablehlo.reduce` (value, index) of argmax / argmin that
the lowering marks `kiln.arg_reduce = "max" | "min"`, over the last axis of a
float, signed-integer or bool tensor, whose value result is unused.
Out: one pass over each row in blocks: a first `scf.for` over blocks of
`block` elements carries (best value, start of its block) as scalars; inside
it an `scf.for` reduces the block to its extreme with `arith.maximumf` /
`maxsi` / `ori` (a plain min/max reduction, which LLVM vectorizes); a block
replaces the best only when strictly better (a NaN beats any number, a later
NaN does not beat an earlier one). A last loop over the winning block finds
the first position holding the best value (or the first NaN), as an i32
min reduction of offsets. Rows are the
iterations of a parallel `linalg.generic` over the leading axes.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, linalg, scf, tensor
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import collect_ops, index_value

ARG_REDUCE = "kiln.arg_reduce"


def _is_float(t: ir.Type) -> bool:
    return isinstance(t, (ir.F16Type, ir.F32Type, ir.F64Type))


def _supported(op: ir.Operation) -> bool:
    if ARG_REDUCE not in op.attributes or len(op.operands) != 4 or len(op.results) != 2:
        return False
    x_type = ir.RankedTensorType(op.operands[0].type)
    dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
    if x_type.rank == 0 or dims != [x_type.rank - 1] or len(list(op.results[0].uses)) != 0:
        return False
    element = x_type.element_type
    if _is_float(element):
        return True
    return isinstance(element, ir.IntegerType) and ir.IntegerType(element).is_signless


class _Order:
    """The comparisons of one element type and direction (max or min)."""

    def __init__(self, element: ir.Type, is_max: bool):
        self.element, self.is_max = element, is_max
        self.is_float = _is_float(element)
        self.width = 0 if self.is_float else ir.IntegerType(element).width

    def identity(self) -> ir.Value:
        """The value every element is at least as good as."""
        if self.is_float:
            return arith.constant(self.element, float("-inf") if self.is_max else float("inf"))
        if self.width == 1:
            return arith.constant(self.element, 0 if self.is_max else 1)
        bound = 1 << (self.width - 1)
        return arith.constant(self.element, -bound if self.is_max else bound - 1)

    def combine(self, acc: ir.Value, x: ir.Value) -> ir.Value:
        """The extreme of two values; for floats NaN-propagating (`maximumf`)."""
        if self.is_float:
            return (arith.maximumf if self.is_max else arith.minimumf)(acc, x)
        if self.width == 1:
            return (arith.ori if self.is_max else arith.andi)(acc, x)
        return (arith.maxsi if self.is_max else arith.minsi)(acc, x)

    def better(self, a: ir.Value, b: ir.Value) -> ir.Value:
        """Whether `a` strictly beats `b` (a NaN beats any number)."""
        if not self.is_float:
            pred = ("ugt" if self.is_max else "ult") if self.width == 1 else ("sgt" if self.is_max else "slt")
            return arith.cmpi(_int_pred(pred), a, b)
        strictly = arith.cmpf(_float_pred("ogt" if self.is_max else "olt"), a, b)
        a_nan = arith.cmpf(_float_pred("uno"), a, a)
        b_num = arith.cmpf(_float_pred("ord"), b, b)
        return arith.ori(strictly, arith.andi(a_nan, b_num))

    def same(self, a: ir.Value, b: ir.Value) -> ir.Value:
        """Whether `a` is `b` (NaN is NaN)."""
        if not self.is_float:
            return arith.cmpi(_int_pred("eq"), a, b)
        return arith.ori(
            arith.cmpf(_float_pred("oeq"), a, b),
            arith.andi(arith.cmpf(_float_pred("uno"), a, a), arith.cmpf(_float_pred("uno"), b, b)))


def _int_pred(name: str):
    return getattr(arith.CmpIPredicate, name)


def _float_pred(name: str):
    return getattr(arith.CmpFPredicate, name.upper())


def _row_search(x: ir.Value, prefix: list, n: ir.Value, order: _Order, block: int) -> ir.Value:
    """The first position of the row `x[prefix..., :]` (of `n` elements)
    holding its extreme, as an index."""
    index = ir.IndexType.get()
    zero, one, step = index_value(0), index_value(1), index_value(block)
    blocks = scf.ForOp(zero, n, step, [order.identity(), zero])
    with ir.InsertionPoint(blocks.body):
        start = blocks.induction_variable
        best, best_start = blocks.inner_iter_args
        end = arith.minsi(arith.addi(start, step), n)
        inner = scf.ForOp(start, end, one, [order.identity()])
        with ir.InsertionPoint(inner.body):
            value = tensor.extract(x, [*prefix, inner.induction_variable])
            scf.YieldOp([order.combine(inner.inner_iter_args[0], value)])
        extreme = inner.results[0]
        wins = order.better(extreme, best)
        scf.YieldOp([arith.select(wins, extreme, best), arith.select(wins, start, best_start)])
    best, best_start = blocks.results
    end = arith.minsi(arith.addi(best_start, step), n)
    length = arith.subi(end, best_start)
    # The smallest offset in the winning block holding `best`, as an i32 min
    # reduction (x86 has vector i32 min, not i64), so that it vectorizes too;
    # `length` when none does (an empty row).
    i32 = ir.IntegerType.get_signless(32)
    limit = arith.index_cast(i32, length)
    search = scf.ForOp(index_value(0), length, one, [limit])
    with ir.InsertionPoint(search.body):
        k = search.induction_variable
        hit = order.same(tensor.extract(x, [*prefix, arith.addi(best_start, k)]), best)
        candidate = arith.select(hit, arith.index_cast(i32, k), limit)
        scf.YieldOp([arith.minsi(search.inner_iter_args[0], candidate)])
    return arith.addi(best_start, arith.index_cast(index, search.results[0]))


def _rewrite(op: ir.Operation, block: int) -> ir.Value:
    x = op.operands[0]
    x_type = ir.RankedTensorType(x.type)
    rank = x_type.rank
    is_max = ir.StringAttr(op.attributes[ARG_REDUCE]).value == "max"
    order = _Order(x_type.element_type, is_max)
    result_type = ir.RankedTensorType(op.results[1].type)
    index_element = result_type.element_type
    n = tensor.dim(x, index_value(rank - 1))
    outer_sizes = [tensor.dim(x, index_value(d)) if x_type.is_dynamic_dim(d) else x_type.shape[d]
                   for d in range(rank - 1)]
    # One row per iteration of a parallel generic over the leading axes
    # (rank 0 when the operand is 1-D); `x` is read inside by position.
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank - 1))
    generic = linalg.GenericOp([result_type], [], [tensor.empty(outer_sizes, index_element)],
                               ir.ArrayAttr.get([identity]),
                               ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * (rank - 1)))
    body = generic.regions[0].blocks.append(index_element)
    with ir.InsertionPoint(body):
        prefix = [linalg.IndexOp(d).result for d in range(rank - 1)]
        found = _row_search(x, prefix, n, order, block)
        linalg.YieldOp([arith.index_cast(index_element, found)])
    return generic.result


@register_pass
class KilnBlockArgReductions(ModulePass):
    """Rewrite marked argmax / argmin reductions over the last axis into a blocked, vectorizable search."""

    name = "kiln-block-arg-reductions"
    block: int = option(512, "elements per block: the vectorized extreme of each block is compared with the best "
                               "(at most 2**24 is used: offsets in a block are counted in i32)", minimum=1)

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"stablehlo.reduce"}):
            if not _supported(op):
                continue
            with ir.InsertionPoint(op), op.location:
                new = _rewrite(op, min(self.block, 1 << 24))
            op.results[1].replace_all_uses_with(new)
            op.erase()
