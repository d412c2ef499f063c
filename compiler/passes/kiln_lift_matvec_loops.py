"""Pass `kiln-lift-matvec-loops` (stage "linalg", before kiln-collapse-batch-matmul).

In: a counted loop (`scf.while` counting up by a constant step, or
`scf.for`) whose body multiplies a column of a matrix by a block of columns
of a matrix, both defined before the loop:
`X[r:r+R, c] @ Y[r:r+R, s:s+K]` (a `linalg.matmul` of a `(1, R)` row made
from the column slice and an `(R, K)` slice, into a zero fill), with the
row range `r, R` the same on both sides and loop-invariant. The columns
`c, s, K` may change from one iteration to the next: NPBench's covariance
and correlation run `for i in range(M): C[i, i:M] = data[:, i] @ data[:, i:M]`.
Out: each iteration's product is a row of one matrix product,
`G = X[r:r+R, :].T @ Y[r:r+R, :]`, computed once before the loop; the
body reads `G[c, s:s+K]`. One BLAS gemm (kiln-linalg-to-blas) reads
each matrix once and runs at the machine's flop rate, where the loop of
mat-vecs reads `Y` once per iteration and is bound by memory bandwidth
(covariance at NPBench's preset M: M = 1400 passes over a 20 MB array).

The product covers every column pair, also those the loop never reads, so
it pays off only when the loop does a good part of that work. Before the
loop, the pass estimates the loop's work from its trip count T and the
block width at the first and last iterations (the width's index
arithmetic, cloned with the counter replaced; a width computed by anything
but side-effect-free scalar ops leaves the loop alone):
`T * (K_first + K_last) * 4 >= cols(X) * cols(Y)`, i.e. the loop reads at
least an eighth of the product's column pairs; and `G` must not be much
larger than its operands (`cols(X) * cols(Y) <= 4 * R * (cols(X) +
cols(Y)) + 2**20`: a short, very wide `X` would give a `G` of squared size,
memory the loop never needs). Both ways stay in the code:
`G` is computed under `scf.if` (an empty tensor otherwise) and each
iteration takes the row of `G` or runs its own product, on that one
loop-invariant flag. The results agree up to the summation order of the
two BLAS routines (each rounds like NumPy's per-row gemv, within a few ulp
of it).

Only f32/f64 products are lifted (what BLAS runs). Each column slice reads
the matrix at an index the body has already checked; `G`'s row slice reads
the same indices, so an out-of-bounds index still raises at its check,
before any read.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, linalg, scf, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._tensorssa import defined_inside
from kiln.compiler.passes._util import (UNSAFE_TO_SPECULATE, collect_ops, constant_int, index_value,
                                       mixed_slice_values, zero_fill)

_FLOATS = ("f32", "f64")
# Scalar ops the block width may be computed with (cloned before the loop
# with the counter replaced): side-effect free and defined for any input
# (no division, whose zero divisor would be undefined behaviour).
_SCALAR_PREFIXES = ("arith.", "index.")
_SCALAR_OPS = {"tensor.dim", "tensor.extract"}
_SLT = 2  # arith.cmpi predicate "slt"
# G's elements that are always acceptable, whatever its operands' sizes.
_SMALL_PRODUCT = 1 << 20
_PLAIN_MAPS = ("affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
               "affine_map<(d0, d1, d2) -> (d0, d1)>")


def _defined_outside(value: ir.Value, loop: ir.Operation) -> bool:
    return not defined_inside(value, loop)


def _slice(value: ir.Value):
    """(source, offsets, sizes) of a rank-2 unit-stride `tensor.extract_slice`, else None."""
    op = value.owner
    if isinstance(op, ir.Block) or op.name != "tensor.extract_slice":
        return None
    source = op.operands[0]
    if ir.RankedTensorType(source.type).rank != 2:
        return None
    offsets, k = mixed_slice_values(op, "static_offsets", 1)
    sizes, k = mixed_slice_values(op, "static_sizes", k)
    strides, _ = mixed_slice_values(op, "static_strides", k)
    if any(s != 1 for s in strides):
        return None
    return source, offsets, sizes


def _column(value: ir.Value):
    """(X, row offset, rows, column) when `value`, a `(1, R)` tensor, is a
    column slice `X[r:r+R, c]` reshaped to a row (through unit-dim
    collapse/expand reshapes); else None."""
    while True:
        op = value.owner
        if isinstance(op, ir.Block) or op.name not in ("tensor.expand_shape", "tensor.collapse_shape"):
            break
        shape = ir.RankedTensorType(op.operands[0].type).shape
        if sum(1 for d in shape if d != 1) > 1:
            return None
        value = op.operands[0]
    found = _slice(value)
    if found is None:
        return None
    source, offsets, sizes = found
    if sizes[1] != 1 or ir.RankedTensorType(value.type).rank != 2:
        return None
    return source, offsets[0], sizes[0], offsets[1]


def _same(a, b) -> bool:
    """Two offsets or sizes (ints or values) that are provably equal."""
    if isinstance(a, ir.Value) and constant_int(a) is not None:
        a = constant_int(a)
    if isinstance(b, ir.Value) and constant_int(b) is not None:
        b = constant_int(b)
    return a == b  # equal ints, or the same SSA value


def _invariant(v, loop: ir.Operation) -> bool:
    return isinstance(v, int) or _defined_outside(v, loop)


class _Counted:
    """A loop counting `counter` from `lower` up to (excluding) `upper` by a
    constant `step`: its body block, the counter inside the body, and the
    bounds as values defined before the loop."""

    def __init__(self, loop: ir.Operation):
        self.loop = loop
        self.body = None
        if loop.name == "scf.for":
            step = constant_int(loop.operands[2])
            if step is None or step <= 0 or "unsignedCmp" in loop.attributes:
                return
            self.body = loop.regions[0].blocks[0]
            self.counter = self.body.arguments[0]
            self.lower, self.upper, self.step = loop.operands[0], loop.operands[1], step
            return
        before, after = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
        operations = list(before.operations)
        if len(operations) != 2:
            return
        compare, condition = operations
        forwarded = list(condition.operands)[1:]
        if len(forwarded) != len(before.arguments) or any(v != a for v, a in zip(forwarded, before.arguments)):
            return
        if compare.name != "arith.cmpi" or condition.operands[0] != compare.result or \
                ir.IntegerAttr(compare.attributes["predicate"]).value != _SLT:
            return
        counter, upper = compare.operands
        if not isinstance(counter.owner, ir.Block) or counter.owner != before or not _defined_outside(upper, loop):
            return
        position = ir.BlockArgument(counter).arg_number
        yielded = after.operations[len(after.operations) - 1].operands[position]
        add = yielded.owner
        if isinstance(add, ir.Block) or add.name != "arith.addi" or add.operands[0] != after.arguments[position]:
            return
        step = constant_int(add.operands[1])
        if step is None or step <= 0:
            return
        self.body = after
        self.counter = after.arguments[position]
        self.lower, self.upper, self.step = loop.operands[position], upper, step

    def trips(self) -> ir.Value:
        """The trip count (at the insertion point, before the loop)."""
        span = arith.subi(self.upper, self.lower)
        if self.step != 1:
            step = arith.constant(span.type, self.step)
            span = arith.divsi(arith.addi(span, arith.constant(span.type, self.step - 1)), step)
        return arith.maxsi(span, arith.constant(span.type, 0))


def _clone_with_counter(value: ir.Value, loop: _Counted, counter: ir.Value, cache: dict) -> ir.Value | None:
    """`value` (a scalar computed in the loop body) recomputed at the
    insertion point with the loop counter replaced by `counter`; None when
    it depends on anything but side-effect-free scalar ops, the counter and
    values from before the loop."""
    if _defined_outside(value, loop.loop):
        return value
    if value == loop.counter:
        return counter
    if value in cache:
        return cache[value]
    op = value.owner
    if not isinstance(op, ir.Block):
        op = op.operation
    if isinstance(op, ir.Block) or len(op.regions) != 0 or op.name in UNSAFE_TO_SPECULATE or \
            not (op.name.startswith(_SCALAR_PREFIXES) or op.name in _SCALAR_OPS):
        return None
    if op.block != loop.body:
        return None
    operands = []
    for operand in op.operands:
        clone = _clone_with_counter(operand, loop, counter, cache)
        if clone is None:
            return None
        operands.append(clone)
    copy = op.clone()
    for i, operand in enumerate(operands):
        copy.operands[i] = operand
    for old, new in zip(op.results, copy.results):
        cache[old] = new
    return cache[value]


def _as_index(v) -> ir.Value:
    if isinstance(v, int):
        return index_value(v)
    if isinstance(v.type, ir.IndexType):
        return v
    return arith.index_cast(ir.IndexType.get(), v)


def _as_i64(v: ir.Value) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    if isinstance(v.type, ir.IndexType):
        return arith.index_cast(i64, v)
    if ir.IntegerType(v.type).width != 64:
        return arith.extsi(i64, v)
    return v


class _Candidate:
    """One matmul of a column by a block of columns inside a counted loop."""

    def __init__(self, matmul: ir.Operation, loop: _Counted, x, y, row, rows, column, start, width):
        self.matmul, self.loop = matmul, loop
        self.x, self.y, self.row, self.rows = x, y, row, rows
        self.column, self.start, self.width = column, start, width


def _candidate(matmul: ir.Operation) -> _Candidate | None:
    if len(matmul.operands) != 3 or len(matmul.results) != 1 or "cast" in matmul.attributes:
        return None
    if "indexing_maps" in matmul.attributes and \
            [str(m) for m in matmul.attributes["indexing_maps"]] != list(_PLAIN_MAPS):
        return None
    lhs, rhs, init = matmul.operands
    if not all(isinstance(v.type, ir.RankedTensorType) for v in (lhs, rhs, init)):
        return None
    result_type = ir.RankedTensorType(init.type)
    if result_type.shape[0] != 1 or str(result_type.element_type) not in _FLOATS or zero_fill(init) is None:
        return None
    if any(str(ir.RankedTensorType(v.type).element_type) != str(result_type.element_type) for v in (lhs, rhs)):
        return None
    column = _column(lhs)
    block = _slice(rhs)
    if column is None or block is None:
        return None
    x, row, rows, c = column
    y, (row_y, start), (rows_y, width) = block
    if not (_same(row, row_y) and _same(rows, rows_y)):
        return None
    # The nearest enclosing loop, through scf.if only.
    parent = matmul.parent
    while parent is not None and parent.name == "scf.if":
        parent = parent.parent
    if parent is None or parent.name not in ("scf.while", "scf.for"):
        return None
    loop = _Counted(parent)
    if loop.body is None:
        return None
    if parent.name == "scf.while" and matmul.parent == parent and matmul.block != loop.body:
        return None  # in the condition region
    if not all(_invariant(v, parent) for v in (x, y, row, rows)):
        return None
    return _Candidate(matmul, loop, x, y, row, rows, c, start, width)


def _rewrite(candidate: _Candidate) -> bool:
    """Compute `G` before the loop and read its row in the body; False (and
    nothing changed but dead scalar ops) when the block width cannot be
    evaluated before the loop."""
    loop, matmul = candidate.loop, candidate.matmul
    result_type = ir.RankedTensorType(matmul.results[0].type)
    element = result_type.element_type
    dynamic = ir.ShapedType.get_dynamic_size()
    with ir.InsertionPoint(loop.loop), loop.loop.location:
        counted = loop.trips()
        first = loop.lower
        step = arith.constant(first.type, loop.step)
        last = arith.addi(first, arith.muli(arith.subi(counted, arith.constant(first.type, 1)), step))
        widths = []
        for counter in (first, last):
            width = candidate.width
            if not isinstance(width, int):
                width = _clone_with_counter(width, loop, counter, {})
                if width is None:
                    return False
            widths.append(_as_i64(_as_index(width)))
        trips = _as_i64(counted)
        x_cols = tensor.dim(candidate.x, index_value(1))
        y_cols = tensor.dim(candidate.y, index_value(1))
        product_pairs = arith.muli(_as_i64(x_cols), _as_i64(y_cols))
        loop_pairs = arith.muli(arith.muli(trips, arith.addi(widths[0], widths[1])),
                                arith.constant(trips.type, 4))
        # G no larger than a few times its operands (a short, very wide X
        # would make a G of squared size that the loop never holds at once).
        operands = arith.muli(_as_i64(_as_index(candidate.rows)), arith.addi(_as_i64(x_cols), _as_i64(y_cols)))
        bound = arith.addi(arith.muli(operands, arith.constant(trips.type, 4)),
                           arith.constant(trips.type, _SMALL_PRODUCT))
        worth = arith.andi(arith.andi(arith.cmpi(arith.CmpIPredicate.sge, loop_pairs, product_pairs),
                                      arith.cmpi(arith.CmpIPredicate.sle, product_pairs, bound)),
                           arith.cmpi(arith.CmpIPredicate.sgt, trips, arith.constant(trips.type, 1)))
        g_type = ir.RankedTensorType.get([dynamic, dynamic], element)
        branch = scf.IfOp(worth, [g_type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            rows, row = _as_index(candidate.rows), _as_index(candidate.row)
            x_rows = tensor.extract_slice(g_type, candidate.x, [row], [rows, x_cols], [],
                                          [dynamic, 0], [dynamic, dynamic], [1, 1])
            y_rows = tensor.extract_slice(g_type, candidate.y, [row], [rows, y_cols], [],
                                          [dynamic, 0], [dynamic, dynamic], [1, 1])
            transposed = linalg.transpose(x_rows, outs=[tensor.empty([x_cols, rows], element)], permutation=[1, 0])
            zero = arith.constant(element, 0.0)
            init = linalg.fill(zero, outs=[tensor.empty([x_cols, y_cols], element)])
            scf.YieldOp([linalg.matmul(transposed, y_rows, outs=[init])])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([tensor.empty([index_value(0), index_value(0)], element)])
        g = branch.results[0]
    fill = zero_fill(matmul.operands[2])
    with ir.InsertionPoint(matmul), matmul.location:
        choice = scf.IfOp(worth, [result_type], has_else=True)
        with ir.InsertionPoint(choice.then_block):
            column, start = _as_index(candidate.column), _as_index(candidate.start)
            width = candidate.width
            sizes = [] if isinstance(width, int) else [_as_index(width)]
            picked = tensor.extract_slice(result_type, g, [v for v in (column, start)], sizes, [],
                                          [dynamic, dynamic], [1, width if isinstance(width, int) else dynamic],
                                          [1, 1])
            scf.YieldOp([picked])
        with ir.InsertionPoint(choice.else_block):
            init = matmul.operands[2]
            if fill.block == matmul.block:
                init = fill.clone().results[0]  # the fill runs only on this path
            computed = matmul.clone()
            computed.operands[2] = init
            scf.YieldOp([computed.results[0]])
    matmul.results[0].replace_all_uses_with(choice.results[0])
    matmul.erase()
    if fill.block == choice.operation.block and not list(fill.results[0].uses):
        fill.erase()
    return True


@register_pass
class KilnLiftMatvecLoops(ModulePass):
    """Compute a loop's column-by-columns products as one matrix product before the loop."""

    name = "kiln-lift-matvec-loops"

    def apply(self, module: ir.Module) -> None:
        for matmul in collect_ops(module, {"linalg.matmul"}):
            candidate = _candidate(matmul)
            if candidate is not None:
                _rewrite(candidate)
