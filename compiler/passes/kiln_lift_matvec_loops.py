"""Pass `kiln-lift-matvec-loops` (stage "linalg", before kiln-scalarize-dots).

In: a counted loop (`scf.while` counting up by a constant step, or
`scf.for`) whose body multiplies a row or column of a matrix `V` by a block
of a matrix `B`, both defined before the loop (a `linalg.matmul` into a
zero fill with a `(1, K)` or `(K, 1)` result):
- `V[r:r+R, c] @ B[r:r+R, s:s+K]` (a column; NPBench's covariance and
  correlation: `for i in range(M): C[i, i:M] = data[:, i] @ data[:, i:M]`),
- `V[c, r:r+R] @ B[r:r+R, s:s+K]` (a row; a matrix product written row by
  row, `for i in range(n): C[i, :] = A[i, :] @ B`),
- `B[s:s+K, r:r+R] @ V[r:r+R, c]` and `B[s:s+K, r:r+R] @ V[c, r:r+R]` (column
  by column, `for j in range(m): C[:, j] = A @ B[:, j]`),
- and vector-vector dots, `V[c, :] @ B[:, j]` (a `(1, 1)` result: the
  triple loop `for i: for j: C[i, j] = np.dot(A[i, :], B[:, j])`),
where a whole matrix counts as a block, the contracted range `r, R` is
loop-invariant and equal on both sides (checked at run time), and the
vector's index `c` and the block's free range `s, K` may change from one
iteration to the next.
Out: each iteration's product is a row (or column) of one matrix product
computed once before the loop: `G = V[r:r+R, :].T @ B[r:r+R, :]` (columns),
`V[:, r:r+R] @ B[r:r+R, :]` (rows), or for the vector on the right
`B[:, r:r+R] @ V[r:r+R, :]` (or `@ V[:, r:r+R].T`); the body reads
`G[c, s:s+K]` (or `G[s:s+K, c]`). One BLAS gemm (or syrk for
`data.T @ data`: kiln-linalg-to-blas reads transposed operands in place)
reads each matrix once and runs at the machine's flop rate, where the loop
of mat-vecs reads the block once per iteration and is bound by memory
bandwidth (covariance at NPBench's preset M: M = 1400 passes over a 20 MB
array; 1000 rows of a 1000 x 1000 product: 48x).

`G` is computed before the outermost of the directly nested counted loops
whose every iteration runs this one with the same matrices and ranges
(`for i: for j:` above: before the `i` loop), the loop's work multiplied
by theirs; an inner loop whose bounds depend on the loop around it (`for j
in range(i, n)`) counts its trips at that loop's first and last iterations.

The product covers every pair of a vector and a block column (row), also
those the loop never reads, so it pays off only when the loop does a good
part of that work. Before the loop, the pass estimates the loop's work
from its trip count T and the block width at the first and last iterations
(the width's index arithmetic, cloned with the counter replaced; a width
computed by anything but side-effect-free scalar ops leaves the loop
alone): `T * (K_first + K_last) * 4 >= rows(G) * cols(G)`, i.e. the loop
reads at least an eighth of `G`; and `G` must not be much larger than its
operands (`rows(G) * cols(G) <= 4 * R * (rows(G) + cols(G)) + 2**20`: a
short, very wide `V` would give a `G` of squared size, memory the loop
never needs). The two contracted ranges must also be equal: when they are
not, the product's own shape check raises NumPy's error in the loop, as
before. Both ways stay in the code: `G` is computed under `scf.if` (an
empty tensor otherwise) and each iteration takes its part of `G` or runs
its own product, on that one loop-invariant flag. The results agree up to
the summation order of the BLAS routines (within a few ulp of NumPy's
per-iteration gemv).

Only f32/f64 products are lifted (what BLAS runs). The vector's slice reads
the matrix at an index the body has already checked; `G`'s slice reads
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
_SCALAR_OPS = {"tensor.dim", "tensor.extract", "tensor.from_elements"}
# What a counted `scf.while`'s condition region may hold (before
# canonicalization, scalars pass through 0-d tensors).
_CONDITION_OPS = {"tensor.from_elements", "tensor.extract", "arith.cmpi", "scf.condition"}
_SLT = 2  # arith.cmpi predicate "slt"
# G's elements that are always acceptable, whatever its operands' sizes.
_SMALL_PRODUCT = 1 << 20
_PLAIN_MAPS = ("affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
               "affine_map<(d0, d1, d2) -> (d0, d1)>")


def _defined_outside(value: ir.Value, loop: ir.Operation) -> bool:
    return not defined_inside(value, loop)


def _scalar(value: ir.Value) -> ir.Value:
    """`x` for `tensor.extract (tensor.from_elements x)[]` (a scalar passed
    through a 0-d tensor, before canonicalization), else `value`."""
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.name == "tensor.extract" and len(owner.operands) == 1:
        source = owner.operands[0].owner
        if not isinstance(source, ir.Block) and source.name == "tensor.from_elements" and \
                len(source.operands) == 1:
            return source.operands[0]
    return value


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


class _Vector:
    """A row or column of `matrix`, `along` the axis it runs on (0: a column
    `matrix[start:start+size, index]`; 1: a row `matrix[index, start:start+size]`)."""

    def __init__(self, matrix, along, index, start, size):
        self.matrix, self.along, self.index, self.start, self.size = matrix, along, index, start, size


def _vector(value: ir.Value) -> _Vector | None:
    """The row or column of a matrix that `value`, a `(1, R)`, `(R, 1)` or
    `(R,)` tensor, is (a rank-2 slice with a unit size, rank-reducing or
    through unit-dim collapse/expand reshapes); else None."""
    while True:
        op = value.owner
        if isinstance(op, ir.Block) or op.name not in ("tensor.expand_shape", "tensor.collapse_shape"):
            break
        shape = ir.RankedTensorType(op.operands[0].type).shape
        if sum(1 for d in shape if d != 1) > 1:
            return None
        value = op.operands[0]
    found = _slice(value)
    # (rank 1: a rank-reducing slice, as kiln-rank-reducing-slices makes of `matrix[:, i]`)
    if found is None or ir.RankedTensorType(value.type).rank not in (1, 2):
        return None
    source, offsets, sizes = found
    if sizes[1] == 1:
        return _Vector(source, 0, offsets[1], offsets[0], sizes[0])
    if sizes[0] == 1:
        return _Vector(source, 1, offsets[0], offsets[1], sizes[1])
    return None


def _block(value: ir.Value):
    """(matrix, offsets, sizes) of a rank-2 unit-stride slice, or of a whole
    rank-2 matrix (offsets 0, sizes None: its dims)."""
    found = _slice(value)
    if found is not None:
        return found
    if ir.RankedTensorType(value.type).rank != 2:
        return None
    # A rank-reducing slice given back its unit dim (`B[:, j]` as a 1-column block).
    op = value.owner
    if not isinstance(op, ir.Block) and op.name == "tensor.expand_shape":
        found = _slice(op.operands[0])
        if found is not None and ir.RankedTensorType(op.operands[0].type).rank == 1:
            units = [i for i, d in enumerate(ir.RankedTensorType(value.type).shape) if d == 1]
            if units and all(found[2][i] == 1 for i in units):
                return found
    return value, [0, 0], [None, None]


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
        if any(o.name not in _CONDITION_OPS for o in operations):
            return
        condition = operations[-1]
        forwarded = [_scalar(v) for v in list(condition.operands)[1:]]
        if len(forwarded) != len(before.arguments) or any(v != a for v, a in zip(forwarded, before.arguments)):
            return
        compare = condition.operands[0].owner
        if isinstance(compare, ir.Block) or compare.name != "arith.cmpi" or \
                ir.IntegerAttr(compare.attributes["predicate"]).value != _SLT:
            return
        counter, upper = (_scalar(v) for v in compare.operands)
        if not isinstance(counter.owner, ir.Block) or counter.owner != before or not _defined_outside(upper, loop):
            return
        position = ir.BlockArgument(counter).arg_number
        yielded = _scalar(after.operations[len(after.operations) - 1].operands[position])
        add = yielded.owner
        if isinstance(add, ir.Block) or add.name != "arith.addi" or \
                _scalar(add.operands[0]) != after.arguments[position]:
            return
        step = constant_int(add.operands[1])
        if step is None or step <= 0:
            return
        self.body = after
        self.counter = after.arguments[position]
        self.lower, self.upper, self.step = loop.operands[position], upper, step

    def trips(self) -> ir.Value:
        """The trip count (at the insertion point, before the loop)."""
        return _trips(self.lower, self.upper, self.step)


def _trips(lower: ir.Value, upper: ir.Value, step: int) -> ir.Value:
    """How many times a loop from `lower` to `upper` by `step` (> 0) runs."""
    span = arith.subi(upper, lower)
    if step != 1:
        span = arith.divsi(arith.addi(span, arith.constant(span.type, step - 1)), arith.constant(span.type, step))
    return arith.maxsi(span, arith.constant(span.type, 0))


def _clone_with_counter(value: ir.Value, loop: _Counted, counter: ir.Value | None, cache: dict,
                        placement: ir.Operation | None = None) -> ir.Value | None:
    """`value` (a scalar computed in the loop body) recomputed at the
    insertion point with the loop counter replaced by `counter`; None when
    it depends on anything but side-effect-free scalar ops, the counter and
    values from before `placement` (an enclosing loop; default: the loop).
    With `counter` None, only whether it could be (nothing is created)."""
    if _defined_outside(value, loop.loop):
        return value if _defined_outside(value, placement or loop.loop) else None
    if _scalar(value) == loop.counter:
        return counter if counter is not None else value
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
        clone = _clone_with_counter(operand, loop, counter, cache, placement)
        if clone is None:
            return None
        operands.append(clone)
    if counter is None:
        cache[value] = value
        return value
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
    """One matrix-vector product in a counted loop: the vector, the block,
    which side the vector is on (`left`: a `(1, K)` result) and the block's
    free offset and width."""

    def __init__(self, matmul, loop, vector, block, left):
        self.matmul, self.loop, self.vector, self.left = matmul, loop, vector, left
        self.matrix, offsets, sizes = block
        free, contracted = (1, 0) if left else (0, 1)
        self.start, self.width = offsets[free], sizes[free]
        self.block_start, self.block_size = offsets[contracted], sizes[contracted]
        self.free_axis, self.contracted_axis = free, contracted


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
    if str(result_type.element_type) not in _FLOATS or zero_fill(init) is None:
        return None
    if any(str(ir.RankedTensorType(v.type).element_type) != str(result_type.element_type) for v in (lhs, rhs)):
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
    for left in (True, False):
        if result_type.shape[0 if left else 1] != 1:
            continue
        vector = _vector(lhs if left else rhs)
        block = _block(rhs if left else lhs)
        if vector is None or block is None:
            continue
        candidate = _Candidate(matmul, loop, vector, block, left)
        invariant = (vector.matrix, vector.start, vector.size, candidate.matrix, candidate.block_start,
                     candidate.block_size)
        if all(v is None or _invariant(v, parent) for v in invariant):
            return candidate
    return None


def _dim(value: ir.Value, axis: int) -> ir.Value:
    return tensor.dim(value, index_value(axis))


def _rows_or_columns(matrix: ir.Value, axis: int, start: ir.Value, size: ir.Value, element) -> ir.Value:
    """`matrix[start:start+size, :]` (axis 0) or `matrix[:, start:start+size]` (axis 1)."""
    dynamic = ir.ShapedType.get_dynamic_size()
    other = _dim(matrix, 1 - axis)
    sizes = [size, other] if axis == 0 else [other, size]
    static_offsets = [dynamic, 0] if axis == 0 else [0, dynamic]
    return tensor.extract_slice(ir.RankedTensorType.get([dynamic, dynamic], element), matrix, [start], sizes, [],
                                static_offsets, [dynamic, dynamic], [1, 1])


def _transposed(value: ir.Value, element) -> ir.Value:
    return linalg.transpose(value, outs=[tensor.empty([_dim(value, 1), _dim(value, 0)], element)],
                            permutation=[1, 0])


def _last(first: ir.Value, trips: ir.Value, step: int) -> ir.Value:
    """The counter's value at the last of `trips` iterations."""
    return arith.addi(first, arith.muli(arith.subi(trips, arith.constant(first.type, 1)),
                                        arith.constant(first.type, step)))


def _placement(candidate: _Candidate) -> tuple[list[_Counted], bool] | None:
    """The counted loops around the candidate's loop, innermost first, out
    of which `G` can be computed as well: each holds the one inside directly
    in its body, and the matrices, the contracted ranges, the inner loops'
    bounds and the block width's inputs are all defined before it; and
    whether the candidate's loop bounds depend on the one loop around it
    (a triangular nest, `for j in range(i, n)`: its trip counts at the outer
    loop's first and last iterations are computed instead). None when the
    width cannot be evaluated even before the candidate's own loop."""
    loop = candidate.loop
    if not _width_computable(candidate, loop.loop):
        return None
    levels: list[_Counted] = []
    inner = loop
    needed = [candidate.vector.matrix, candidate.vector.start, candidate.vector.size, candidate.matrix,
              candidate.block_start, candidate.block_size]
    while True:
        parent = inner.loop.parent
        if parent is None or parent.name not in ("scf.while", "scf.for"):
            return levels, False
        outer = _Counted(parent)
        if outer.body is None or inner.loop.block != outer.body:
            return levels, False
        if not all(v is None or isinstance(v, int) or _defined_outside(v, parent) for v in needed) or \
                not _width_computable(candidate, parent):
            return levels, False
        bounds = [level.lower for level in [loop, *levels]] + [level.upper for level in [loop, *levels]]
        if all(_defined_outside(v, parent) for v in bounds):
            levels.append(outer)
            inner = outer
            continue
        # The candidate's own bounds computed from this loop's counter.
        if not levels and all(_clone_with_counter(v, outer, None, {}) is not None for v in (loop.lower, loop.upper)):
            return [outer], True
        return levels, False


def _width_computable(candidate: _Candidate, placement: ir.Operation) -> bool:
    width = candidate.width
    return width is None or isinstance(width, int) or \
        _clone_with_counter(width, candidate.loop, None, {}, placement) is not None


def _rewrite(candidate: _Candidate) -> bool:
    """Compute `G` before the loop and read its part in the body; False (and
    nothing changed but dead scalar ops) when the block width cannot be
    evaluated before the loop."""
    loop, matmul, vector = candidate.loop, candidate.matmul, candidate.vector
    result_type = ir.RankedTensorType(matmul.results[0].type)
    element = result_type.element_type
    dynamic = ir.ShapedType.get_dynamic_size()
    i64 = ir.IntegerType.get_signless(64)

    def constant(value: int) -> ir.Value:
        return arith.constant(i64, value)

    found = _placement(candidate)
    if found is None:
        return False
    outer, triangular = found
    placement = outer[-1].loop if outer else loop.loop
    with ir.InsertionPoint(placement), placement.location:
        if triangular:
            # Twice the iterations of the nest: the outer trips times the
            # inner ones at its first and last iterations.
            around = outer[0]
            around_trips = around.trips()
            around_last = _last(around.lower, around_trips, around.step)
            ends = [[_clone_with_counter(v, around, counter, {}) for v in (loop.lower, loop.upper)]
                    for counter in (around.lower, around_last)]
            inner_trips = [_trips(lower, upper, loop.step) for lower, upper in ends]
            iterations2 = arith.muli(_as_i64(around_trips),
                                     arith.addi(_as_i64(inner_trips[0]), _as_i64(inner_trips[1])))
            first, last = ends[0][0], _last(ends[1][0], inner_trips[1], loop.step)
        else:
            counted = loop.trips()
            iterations2 = arith.muli(_as_i64(counted), constant(2))
            for level in outer:  # every iteration of the enclosing loops runs this one
                iterations2 = arith.muli(iterations2, _as_i64(level.trips()))
            first, last = loop.lower, _last(loop.lower, counted, loop.step)
        widths = []
        for counter in (first, last):
            width = candidate.width
            if width is None:
                width = _dim(candidate.matrix, candidate.free_axis)
            elif not isinstance(width, int):
                width = _clone_with_counter(width, loop, counter, {}, placement)
            widths.append(_as_i64(_as_index(width)))
        # G's rows (columns) are the vectors: V's columns for a column, its rows for a row.
        vectors = _dim(vector.matrix, 1 - vector.along)
        free = _dim(candidate.matrix, candidate.free_axis)
        start, size = _as_index(vector.start), _as_index(vector.size)
        block_start = index_value(0) if candidate.block_start is None else _as_index(candidate.block_start)
        block_size = _dim(candidate.matrix, candidate.contracted_axis) if candidate.block_size is None else \
            _as_index(candidate.block_size)
        same_range = arith.andi(arith.cmpi(arith.CmpIPredicate.eq, start, block_start),
                                arith.cmpi(arith.CmpIPredicate.eq, size, block_size))
        product = arith.muli(_as_i64(vectors), _as_i64(free))
        reads = arith.muli(arith.muli(iterations2, arith.addi(widths[0], widths[1])), constant(2))
        # G no larger than a few times its operands (a short, very wide V
        # would make a G of squared size that the loop never holds at once).
        operands = arith.muli(_as_i64(size), arith.addi(_as_i64(vectors), _as_i64(free)))
        bound = arith.addi(arith.muli(operands, constant(4)), constant(_SMALL_PRODUCT))
        worth = same_range
        for condition in (arith.cmpi(arith.CmpIPredicate.sge, reads, product),
                          arith.cmpi(arith.CmpIPredicate.sle, product, bound),
                          arith.cmpi(arith.CmpIPredicate.sgt, iterations2, constant(2))):
            worth = arith.andi(worth, condition)
        g_type = ir.RankedTensorType.get([dynamic, dynamic], element)
        branch = scf.IfOp(worth, [g_type], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            # The vectors as the rows (left) or columns (right) of one matrix.
            part = _rows_or_columns(vector.matrix, vector.along, start, size, element)
            block = _rows_or_columns(candidate.matrix, candidate.contracted_axis, start, size, element)
            if candidate.left:
                lhs, rhs = (_transposed(part, element) if vector.along == 0 else part), block
            else:
                lhs, rhs = block, (part if vector.along == 0 else _transposed(part, element))
            init = linalg.fill(arith.constant(element, 0.0),
                               outs=[tensor.empty([_dim(lhs, 0), _dim(rhs, 1)], element)])
            scf.YieldOp([linalg.matmul(lhs, rhs, outs=[init])])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([tensor.empty([index_value(0), index_value(0)], element)])
        g = branch.results[0]
    fill = zero_fill(matmul.operands[2])
    with ir.InsertionPoint(matmul), matmul.location:
        choice = scf.IfOp(worth, [result_type], has_else=True)
        with ir.InsertionPoint(choice.then_block):
            index = _as_index(vector.index)
            offset = index_value(0) if candidate.start is None else _as_index(candidate.start)
            width = candidate.width
            if width is None:
                width = _dim(candidate.matrix, candidate.free_axis)
            free_size = result_type.shape[1 if candidate.left else 0]
            sizes = [] if free_size != dynamic else [_as_index(width)]
            if candidate.left:
                offsets, static_sizes = [index, offset], [1, free_size]
            else:
                offsets, static_sizes = [offset, index], [free_size, 1]
            picked = tensor.extract_slice(result_type, g, offsets, sizes, [], [dynamic, dynamic], static_sizes,
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
