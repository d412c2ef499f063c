"""Pass `kiln-linalg-to-blas` (stage "bufferized", after bufferization).

In: `linalg.matmul ins(%A, %B) outs(%C)` on f32/f64 memrefs whose rows are
contiguous (inner stride 1), usually right after `linalg.fill 0 -> %C`.
Out: a call to the CBLAS `gemm` of the OpenBLAS that NumPy ships
(`scipy_cblas_sgemm64_` / `scipy_cblas_dgemm64_`, 64-bit integers), with
beta = 0 when the zero fill is dropped, else beta = 1 (C += A B). A
matrix-vector product (B of one column: `A @ x`; A of one row: `x @ A`)
calls `gemv` instead (beta = 1, after the zero fill), as NumPy does:
OpenBLAS's gemm with one column is several times slower than its gemv. Matmuls of
other layouts or dtypes, and every matmul when no BLAS library is found,
stay as they are and lower to loops.

A transposed operand (`x.T @ y`, `x @ y.T`: a fresh buffer that a
`linalg.transpose`, or the generic that reads its input transposed, filled
only for this product, with nothing writing `x` in between) is read in
place with gemm's transpose flag, and the copy is dropped. `x.T @ x` and
`x @ x.T` into a fresh zero-filled result call `syrk` instead (half the
flops of gemm, as NumPy does) for the upper triangle, and runtime/matvec.c's
`kiln_mirror_upper_<f32|f64>` copies it to the lower one: the result is
exactly symmetric.

An f32 gemm whose A has at most 8 rows (a static count, or tested at run
time) calls runtime/matvec.c's `kiln_gemm_small_m_f32` instead: it reads
B once, where OpenBLAS's sgemm packs it first (NPBench's mlp, 8 rows of
30,000 against a 30,000 x 2,000 weight matrix: about twice as fast).

gemm's factors (kiln-fold-into-gemm leaves them next to the matmul): a
fresh buffer filled with `s * X` right before the matmul and read only by
it becomes alpha = s on `X` itself, and `C = s * C` in place right before
it beta = s. Each scaling stays, run only when its factor is 0 (and the
call then reads its result with a factor of 1): BLAS skips the product for
alpha = 0 and never reads C for beta = 0, where NumPy's `0 * nan` is nan.
"""

from __future__ import annotations

import functools
import glob
import os

from kiln.compiler.mlir import arith, func, ir, memref, scf
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import IDENTITY_2D, collect_ops, copies_transposed, index_value

# CBLAS enum values (cblas.h): CblasRowMajor, CblasNoTrans.
ROW_MAJOR = 101
NO_TRANS = 111
TRANS = 112
GEMM_SYMBOLS = {"f32": "scipy_cblas_sgemm64_", "f64": "scipy_cblas_dgemm64_"}
GEMV_SYMBOLS = {"f32": "scipy_cblas_sgemv64_", "f64": "scipy_cblas_dgemv64_"}
SYRK_SYMBOLS = {"f32": "scipy_cblas_ssyrk64_", "f64": "scipy_cblas_dsyrk64_"}
MIRROR_SYMBOLS = {"f32": "kiln_mirror_upper_f32", "f64": "kiln_mirror_upper_f64"}
# An f32 A of at most SMALL_M rows (runtime/matvec.c's KILN_SMALL_M): its kiln_gemm_small_m_f32, which
# reads B once where OpenBLAS's sgemm packs it first (8 x 30000 @ 30000 x 2000: 26 against 47 ms, 4 x 4096
# @ 4096 x 4096: 8.6 against 12.9 ms; docs/benchmarks.md, session 16). In f64 OpenBLAS's dgemm was as fast
# or faster than its f64 twin (8 x 2000 @ 2000 x 2000: 2.2 against 3.3 ms), so f64 stays with dgemm.
SMALL_M = 8
SMALL_M_SYMBOLS = {"f32": "kiln_gemm_small_m_f32"}
UPPER = 121  # CblasUpper
# Ops between a fill and its matmul that touch no memory.
_PURE_BETWEEN = {"memref.dim", "arith.constant", "arith.index_cast"}


@functools.lru_cache(maxsize=None)
def blas_library() -> str | None:
    """Path of the ILP64 OpenBLAS bundled with NumPy (`KILN_BLAS` overrides;
    `KILN_BLAS=none` disables the rewrite), or None."""
    override = os.environ.get("KILN_BLAS")
    if override:
        return None if override == "none" else override
    import numpy

    root = os.path.dirname(os.path.dirname(numpy.__file__))
    for pattern in ("numpy.libs/libscipy_openblas64_*.so*", "numpy/.dylibs/libscipy_openblas64_*.dylib"):
        found = sorted(glob.glob(os.path.join(root, pattern)))
        if found:
            return found[0]
    return None


def uses_blas(module_text: str) -> bool:
    return any(symbol in module_text
               for symbol in (*GEMM_SYMBOLS.values(), *GEMV_SYMBOLS.values(), *SYRK_SYMBOLS.values()))


def _rows_contiguous(t: ir.MemRefType) -> bool:
    if t.rank != 2:
        return False
    try:
        strides, _ = t.get_strides_and_offset()
    except (AttributeError, ValueError):
        return False
    return strides[1] == 1


def _is_plain_matmul(op: ir.Operation) -> bool:
    operands = list(op.operands)
    if len(operands) != 3 or not all(isinstance(v.type, ir.MemRefType) for v in operands):
        return False
    if "indexing_maps" in op.attributes:
        maps = [str(m) for m in op.attributes["indexing_maps"]]
        if maps != ["affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
                    "affine_map<(d0, d1, d2) -> (d0, d1)>"]:
            return False
    element = str(operands[0].type.element_type)
    if element not in GEMM_SYMBOLS or any(str(v.type.element_type) != element for v in operands):
        return False
    return all(_rows_contiguous(v.type) for v in operands)


def _declare(module: ir.Module, symbol: str, float_type: ir.Type) -> None:
    if symbol in ir.SymbolTable(module.operation):
        return
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    ptr = ir.Type.parse("!llvm.ptr")
    if symbol in GEMV_SYMBOLS.values():
        # order, trans, M, N, alpha, A, lda, x, incx, beta, y, incy
        inputs = [i32, i32, i64, i64, float_type, ptr, i64, ptr, i64, float_type, ptr, i64]
    elif symbol in SYRK_SYMBOLS.values():
        # order, uplo, trans, N, K, alpha, A, lda, beta, C, ldc
        inputs = [i32, i32, i32, i64, i64, float_type, ptr, i64, float_type, ptr, i64]
    elif symbol in MIRROR_SYMBOLS.values():
        # C, n, ldc (runtime/matvec.c)
        inputs = [ptr, i64, i64]
    elif symbol in SMALL_M_SYMBOLS.values():
        # M, N, K, alpha, A, lda, B, ldb, beta, C, ldc (runtime/matvec.c)
        inputs = [i64, i64, i64, float_type, ptr, i64, ptr, i64, float_type, ptr, i64]
    else:
        inputs = [i32, i32, i32, i64, i64, i64, float_type, ptr, i64, ptr, i64, float_type, ptr, i64]
    with ir.InsertionPoint.at_block_begin(module.body):
        fn = func.FuncOp(symbol, ir.FunctionType.get(inputs, []), visibility="private")
    fn.attributes["llvm.nounwind"] = ir.UnitAttr.get()


def _matrix(value: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(data pointer, rows, leading dimension) of a 2-d memref with unit inner stride."""
    meta = memref.ExtractStridedMetadataOp(value)
    base, offset = meta.results[0], meta.results[1]
    rows, cols, row_stride = meta.results[2], meta.results[3], meta.results[4]
    element_bytes = ir.MemRefType(value.type).element_type.width // 8
    address = arith.addi(memref.extract_aligned_pointer_as_index(base),
                         arith.muli(offset, index_value(element_bytes)))
    i64 = ir.IntegerType.get_signless(64)
    pointer = ir.Operation.create("llvm.inttoptr", results=[ir.Type.parse("!llvm.ptr")],
                                  operands=[arith.index_cast(i64, address)]).result
    # BLAS wants ld >= max(1, cols); a one-row view may carry any stride.
    leading = arith.maxsi(row_stride, arith.maxsi(cols, index_value(1)))
    return pointer, rows, arith.index_cast(i64, leading)


def _zero_fill_before(op: ir.Operation, target: ir.Value) -> ir.Operation | None:
    """The `linalg.fill 0.0 -> target` that directly precedes `op`, if any."""
    prev = op.operation
    while True:
        prev = _previous(prev)
        if prev is None:
            return None
        if prev.name in _PURE_BETWEEN:
            continue
        break
    if prev.name != "linalg.fill" or len(prev.operands) != 2 or prev.operands[1] != target:
        return None
    producer = prev.operands[0].owner
    if isinstance(producer, ir.Block) or producer.operation.name != "arith.constant":
        return None
    producer = producer.operation
    value = producer.attributes["value"]
    return prev if isinstance(value, ir.FloatAttr) and value.value == 0.0 else None


def _producer_before(op: ir.Operation, output: ir.Value, skip: set[str]) -> ir.Operation | None:
    """The `linalg.generic` writing `output` that comes right before `op`
    (past ops named in `skip`), else None."""
    prev = op.operation
    while True:
        prev = _previous(prev)
        if prev is None or prev.name not in skip:
            break
    if prev is None or prev.name != "linalg.generic" or len(prev.results) or prev.operands[-1] != output:
        return None
    return prev


def _scaling(generic: ir.Operation):
    """(input position, scalar) when the 2-d `generic` writes `scalar * x`
    elementwise, `x` an input read like the output and `scalar` a value from
    outside its body; else None."""
    maps = [str(m) for m in generic.attributes["indexing_maps"]]
    block = generic.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    if len(body) != 2 or body[0].name != "arith.mulf" or body[1].name != "linalg.yield":
        return None
    if body[1].operands[0] != body[0].result or maps[-1] != IDENTITY_2D:
        return None
    arguments = list(block.arguments)
    left, right = body[0].operands
    for x, scalar in ((left, right), (right, left)):
        if x not in arguments or scalar in arguments:
            continue
        if not isinstance(scalar.owner, ir.Block) and scalar.owner.operation.block == block:
            continue
        index = arguments.index(x)
        if index < len(arguments) - 1 and maps[index] == maps[-1]:
            return index, scalar
    return None


def _scale_before(op: ir.Operation, operand: ir.Value):
    """(generic, source, scalar) when `operand` is a fresh buffer that the op
    right before `op` (past pure index arithmetic) filled with `scalar *
    source` elementwise, and that nothing but that op, `op` and its dealloc
    uses (gemm's `alpha * A @ B`: kiln-fold-into-gemm put the scaling there);
    else None."""
    alloc = operand.owner
    if isinstance(alloc, ir.Block) or alloc.operation.name != "memref.alloc":
        return None
    prev = _producer_before(op, operand, _PURE_BETWEEN)
    if prev is None:
        return None
    if not all(u.owner.operation in (prev, op.operation) or u.owner.operation.name == "memref.dealloc"
               for u in operand.uses):
        return None
    found = _scaling(prev)
    if found is None:
        return None
    source = prev.operands[found[0]]
    if not _rows_contiguous(source.type) or str(source.type.element_type) != str(operand.type.element_type):
        return None
    return prev, source, found[1]


def _scale_in_place_before(op: ir.Operation, target: ir.Value):
    """(generic, scalar) when the op right before `op` (past pure index
    arithmetic and allocations) is an elementwise `target = scalar * target`
    in place (gemm's `beta * C` into C, from kiln-fold-into-gemm); else None."""
    prev = _producer_before(op, target, _PURE_BETWEEN | {"memref.alloc"})
    found = None if prev is None else _scaling(prev)
    if found is None or prev.operands[found[0]] != target:
        return None
    return prev, found[1]


def _only_when_zero(op: ir.Operation, scalar: ir.Value) -> ir.Value:
    """Run the scaling `op` only when `scalar` is 0 (it stays before the call)
    and return the factor the call applies instead: `scalar`, or 1 when it is
    0. BLAS skips the product when alpha is 0 and ignores C when beta is 0,
    where NumPy's `0 * x` still turns a NaN or an infinity of `x` into NaN;
    with the scaling done explicitly for 0 the call's result is NumPy's."""
    with ir.InsertionPoint(op), op.location:
        zero = arith.constant(scalar.type, 0.0)
        is_zero = arith.cmpf(arith.CmpFPredicate.OEQ, scalar, zero)
        factor = arith.select(is_zero, arith.constant(scalar.type, 1.0), scalar)
        branch = scf.IfOp(is_zero)
        with ir.InsertionPoint(branch.then_block):
            scf.YieldOp([])
    op.move_before(branch.then_block.operations[0])
    return factor


# Ops that write no memory a transposed copy's source could be (between
# the copy and its matmul).
_NO_WRITES = _PURE_BETWEEN | {"memref.alloc", "memref.extract_strided_metadata",
                              "memref.extract_aligned_pointer_as_index", "llvm.inttoptr", "llvm.mlir.addressof",
                              "llvm.mlir.zero", "memref.subview", "memref.cast"}


def _is_transpose_copy(op: ir.Operation) -> bool:
    """A transposing copy of a 2-d memref into a buffer (no results)."""
    return copies_transposed(op) and not op.results


def _harmless(op: ir.Operation, fresh: set) -> bool:
    """Whether `op` writes no memory but fresh buffers (`fresh`): pure index
    arithmetic, allocations, fills and copies into fresh buffers, failed-check
    branches (they never return)."""
    if op.name in _NO_WRITES or (op.name.startswith("arith.") and not op.regions):
        return True
    if op.name in ("linalg.fill", "linalg.generic", "linalg.transpose") and not op.results:
        outputs = list(op.operands)[-1:]
        return all(v in fresh for v in outputs)
    if op.name == "scf.if" and not op.results:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    if inner.name == "scf.yield" or inner.name.startswith("arith."):
                        continue
                    if inner.name != "func.call" or \
                            ir.FlatSymbolRefAttr(inner.attributes["callee"]).value != "kiln_check_failed":
                        return False
        return True
    return False


def _transposed_source(op: ir.Operation, operand: ir.Value) -> tuple[ir.Operation, ir.Value] | None:
    """(copy, source) when `operand` is a fresh buffer that a transpose copy
    of `source` (row-major) filled before `op`, with nothing between them
    writing `source`, and that only the copy, `op` and its deallocs use
    (`x.T @ y`: the product can read `x` with BLAS's transpose flag)."""
    alloc = operand.owner
    if isinstance(alloc, ir.Block) or alloc.operation.name != "memref.alloc":
        return None
    uses = [u.owner.operation for u in operand.uses]
    copies = [u for u in uses if _is_transpose_copy(u) and list(u.operands)[-1] == operand]
    if len(copies) != 1 or not all(u in (copies[0], op.operation) or u.name == "memref.dealloc" for u in uses):
        return None
    copy = copies[0]
    source = copy.operands[0]
    if copy.block != op.block or not _rows_contiguous(source.type) or \
            str(source.type.element_type) != str(operand.type.element_type):
        return None
    block_ops = [o.operation for o in op.block.operations]
    here, start = block_ops.index(op.operation), block_ops.index(copy)
    if start > here:
        return None
    between = block_ops[start + 1:here]
    fresh = {o.result for o in between if o.name == "memref.alloc"}
    if not all(_harmless(o, fresh) for o in between):
        return None
    return copy, source


def _drop_copy(copy: ir.Operation, buffer: ir.Value) -> None:
    """Erase a transpose copy the call no longer reads, and its buffer when
    only deallocs are left."""
    copy.erase()
    uses = [u.owner.operation for u in buffer.uses]
    if all(u.name == "memref.dealloc" for u in uses):
        for u in uses:
            u.erase()
        buffer.owner.operation.erase()


def _previous(op: ir.Operation) -> ir.Operation | None:
    block_ops = list(op.block.operations)
    for i, candidate in enumerate(block_ops):
        if candidate.operation == op:
            return block_ops[i - 1].operation if i > 0 else None
    return None


@register_pass
class KilnLinalgToBlas(ModulePass):
    """Rewrite row-major f32/f64 linalg.matmul on memrefs into CBLAS gemm calls."""

    name = "kiln-linalg-to-blas"

    def apply(self, module: ir.Module) -> None:
        if blas_library() is None:
            return
        i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
        for op in collect_ops(module, {"linalg.matmul"}):
            if not _is_plain_matmul(op):
                continue
            a, b, c = op.operands
            float_type = ir.MemRefType(a.type).element_type
            rows_of_a, columns_of_b = ir.MemRefType(a.type).shape[0], ir.MemRefType(b.type).shape[1]
            vector_product = columns_of_b == 1 or rows_of_a == 1
            symbol = (GEMV_SYMBOLS if vector_product else GEMM_SYMBOLS)[str(float_type)]
            # `alpha * A` (or `* B`) computed just before: the call scales instead.
            scalings = {}
            if not vector_product:
                for position, operand in ((0, a), (1, b)):
                    found = _scale_before(op, operand)
                    if found is not None:
                        scalings[position] = found
                        # Out of the way of the searches below; put back after them.
                        found[0].move_after(op.operation)
            # gemv returns without touching y when the inner dimension is 0, so a
            # zero fill before it stays (and the call accumulates, beta = 1).
            fill = None if vector_product else _zero_fill_before(op, c)
            # `C = beta * C` in place just before: the call scales C instead.
            in_place = _scale_in_place_before(op, c) if fill is None and not vector_product else None
            beta_factor = _only_when_zero(*in_place) if in_place is not None else None
            # `x.T` copied just before (and only for this product): the call
            # reads `x` with the transpose flag; `x.T @ x` (or `x @ x.T`) into
            # a fresh zero-filled result is a syrk and a mirror of its triangle.
            transposed = {}
            if not vector_product:
                for position, operand in ((0, a), (1, b)):
                    if position not in scalings:
                        found = _transposed_source(op, operand)
                        if found is not None:
                            transposed[position] = found
            if len(transposed) == 1 and not scalings and fill is not None and in_place is None:
                (position, (copy, source)), = transposed.items()
                if source == (b, a)[position]:
                    self._syrk(module, op, source, c, position == 0, float_type)
                    _drop_copy(copy, (a, b)[position])
                    op.erase()
                    fill.erase()
                    continue
            _declare(module, symbol, float_type)
            factors = []
            for position, (scaling, source, scalar) in sorted(scalings.items()):
                # Back before the call, run only for a factor of 0; the call
                # reads the unscaled source otherwise.
                scaling.move_before(op.operation)
                factors.append((position, scalar, _only_when_zero(scaling, scalar)))
            with ir.InsertionPoint(op), op.location:
                operands = [a, b]
                for position, scalar, _ in factors:
                    source = scalings[position][1]
                    pointer, _, lead = _matrix(source)
                    scaled_pointer, rows, scaled_lead = _matrix(operands[position])
                    is_zero = arith.cmpf(arith.CmpFPredicate.OEQ, scalar, arith.constant(scalar.type, 0.0))
                    operands[position] = (arith.select(is_zero, scaled_pointer, pointer), rows,
                                          arith.select(is_zero, scaled_lead, lead))
                trans_a = trans_b = None
                if 0 in transposed:  # a = x.T: gemm reads x, (k, m)
                    pa, _, lda = _matrix(transposed[0][1])
                    m = memref.dim(transposed[0][1], index_value(1))
                    trans_a = arith.constant(i32, TRANS)
                else:
                    pa, m, lda = operands[0] if 0 in scalings else _matrix(a)
                if 1 in transposed:  # b = y.T: gemm reads y, (n, k)
                    pb, _, ldb = _matrix(transposed[1][1])
                    k = memref.dim(transposed[1][1], index_value(1))
                    n = memref.dim(transposed[1][1], index_value(0))
                    trans_b = arith.constant(i32, TRANS)
                else:
                    pb, k, ldb = operands[1] if 1 in scalings else _matrix(b)
                    n = memref.dim(b, index_value(1))
                pc, _, ldc = _matrix(c)
                order = arith.constant(i32, ROW_MAJOR)
                trans = arith.constant(i32, TRANS if rows_of_a == 1 and columns_of_b != 1 else NO_TRANS)
                applied = [factor for _, _, factor in factors]
                alpha = applied[0] if len(applied) == 1 else arith.mulf(*applied) if applied else \
                    arith.constant(float_type, 1.0)
                beta = arith.constant(float_type, 0.0 if fill is not None else 1.0)
                if beta_factor is not None:
                    beta = beta_factor
                if columns_of_b == 1:
                    # c[:, 0] = A @ b[:, 0]; the column vectors step by their row strides.
                    arguments = [trans, m, k, alpha, pa, lda, pb, ldb, beta, pc, ldc]
                elif rows_of_a == 1:
                    # c[0, :] = B^T @ a[0, :]; the row vectors are contiguous.
                    one = arith.constant(i64, 1)
                    arguments = [trans, k, n, alpha, pb, ldb, pa, one, beta, pc, one]
                else:
                    arguments = [trans_a or trans, trans_b or trans, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc]
                arguments = [arith.index_cast(i64, v) if isinstance(v.type, ir.IndexType) else v for v in arguments]
                if vector_product or transposed or str(float_type) not in SMALL_M_SYMBOLS or \
                        (rows_of_a != ir.ShapedType.get_dynamic_size() and rows_of_a > SMALL_M):
                    func.CallOp([], ir.FlatSymbolRefAttr.get(symbol), [order, *arguments])
                else:
                    self._small_m_or_gemm(module, symbol, order, arguments, float_type, rows_of_a)
            op.erase()
            if fill is not None:
                fill.erase()
            for position, (copy, _) in transposed.items():
                _drop_copy(copy, (a, b)[position])

    @staticmethod
    def _small_m_or_gemm(module: ir.Module, symbol: str, order: ir.Value, arguments: list, float_type: ir.Type,
                         rows_of_a: int) -> None:
        """gemm's call (`arguments` after `order`, no transposes), through
        runtime/matvec.c's `kiln_gemm_small_m_<T>` when A has at most
        SMALL_M rows (known here, or tested at run time)."""
        small = SMALL_M_SYMBOLS[str(float_type)]
        _declare(module, small, float_type)
        small_arguments = arguments[2:]  # (gemm's without its transpose flags: m, n, k, alpha, A, ..., ldc)
        if rows_of_a != ir.ShapedType.get_dynamic_size():
            func.CallOp([], ir.FlatSymbolRefAttr.get(small), small_arguments)
            return
        i64 = ir.IntegerType.get_signless(64)
        few = arith.cmpi(arith.CmpIPredicate.sle, small_arguments[0], arith.constant(i64, SMALL_M))
        branch = scf.IfOp(few, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            func.CallOp([], ir.FlatSymbolRefAttr.get(small), small_arguments)
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            func.CallOp([], ir.FlatSymbolRefAttr.get(symbol), [order, *arguments])
            scf.YieldOp([])

    @staticmethod
    def _syrk(module: ir.Module, op: ir.Operation, source: ir.Value, c: ir.Value, transposed_left: bool,
              float_type: ir.Type) -> None:
        """`c = source.T @ source` (`transposed_left`) or `source @ source.T`:
        syrk writes the upper triangle, runtime/matvec.c mirrors it."""
        i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
        symbol, mirror = SYRK_SYMBOLS[str(float_type)], MIRROR_SYMBOLS[str(float_type)]
        _declare(module, symbol, float_type)
        _declare(module, mirror, float_type)
        with ir.InsertionPoint(op), op.location:
            pointer, rows, lead = _matrix(source)
            columns = memref.dim(source, index_value(1))
            n, k = (columns, rows) if transposed_left else (rows, columns)
            pc, _, ldc = _matrix(c)
            n, k = arith.index_cast(i64, n), arith.index_cast(i64, k)
            arguments = [arith.constant(i32, ROW_MAJOR), arith.constant(i32, UPPER),
                         arith.constant(i32, TRANS if transposed_left else NO_TRANS), n, k,
                         arith.constant(float_type, 1.0), pointer, lead, arith.constant(float_type, 0.0), pc, ldc]
            func.CallOp([], ir.FlatSymbolRefAttr.get(symbol), arguments)
            func.CallOp([], ir.FlatSymbolRefAttr.get(mirror), [pc, n, ldc])

