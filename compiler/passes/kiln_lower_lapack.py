"""Pass `kiln-lower-lapack` (stage "linalg", after kiln-lower-prints).

In: `kiln.lapack_<kernel>(%arrays..., %dims...) {options}` on tensors
(f64 or complex<f64>, batch-first).
Out: each result a `memref.alloc` of its dims, then each array operand's
own buffer (`bufferization.to_buffer ... read_only`, any strides: no copy;
runtime/lapack.c copies every matrix into LAPACK's column-major scratch
itself and never writes an operand), then directly after them
`func.call @kiln_lapack_<kernel>_<f64|c128>(arrays..., results...,
options...)`, the results turned back into tensors by
`bufferization.to_tensor ... restrict writable` (each memref reaches runtime/lapack.c as its expanded
descriptor: pointers, offset, sizes, strides). One-shot-bufferize then
sees plain buffers; `codegen.py` links the OpenBLAS that NumPy ships (the
same library as `kiln-linalg-to-blas`).
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, func, ir, memref, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops
from kiln.compiler.passes.kiln_linalg_to_blas import blas_library
from kiln.dialects.kiln import LAPACK_OPS
from kiln.errors import KilnValueError

OP_PREFIX = "kiln.lapack_"
CALLEE_PREFIX = "kiln_lapack_"
_SUFFIX = {"f64": "f64", "complex<f64>": "c128"}


def uses_lapack(module_text: str) -> bool:
    return f"@{CALLEE_PREFIX}" in module_text


def _any_strides(t: ir.RankedTensorType, shape: list[int] | None = None) -> ir.MemRefType:
    """A memref type of `t`'s element with any offset and strides."""
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    layout = ir.StridedLayoutAttr.get(dynamic, [dynamic] * t.rank)
    return ir.MemRefType.get(t.shape if shape is None else shape, t.element_type, layout)


def _generic(t: ir.RankedTensorType) -> list[int]:
    return [ir.ShapedType.get_dynamic_size()] * t.rank


def _cast(value: ir.Value, t: ir.Type) -> ir.Value:
    return value if value.type == t else memref.cast(t, value)


def _declare(module: ir.Module, name: str, argument_types: list[ir.Type]) -> None:
    if name in ir.SymbolTable(module.operation):
        return
    with ir.InsertionPoint.at_block_begin(module.body):
        decl = func.FuncOp(name, ir.FunctionType.get(argument_types, []), visibility="private")
    decl.attributes["llvm.nounwind"] = ir.UnitAttr.get()


def _lower(module: ir.Module, op: ir.Operation, serial: int) -> int:
    kernel = op.name[len(OP_PREFIX):]
    n_arrays = len(LAPACK_OPS[kernel][0])
    operands = list(op.operands)
    arrays, dims = operands[:n_arrays], operands[n_arrays:]
    element = str(ir.RankedTensorType(arrays[0].type).element_type)
    callee = f"{CALLEE_PREFIX}{kernel}_{_SUFFIX[element]}"
    i64, index = ir.IntegerType.get_signless(64), ir.IndexType.get()
    with ir.InsertionPoint(op), op.location:
        sizes = iter([arith.index_cast(index, tensor.extract(d, [])) for d in dims])
        allocations, result_arguments, result_types = [], [], []
        for result in op.results:
            t = ir.RankedTensorType(result.type)
            alloc = memref.alloc(ir.MemRefType.get(t.shape, t.element_type),
                                 [next(sizes) for d in t.shape if d == ir.ShapedType.get_dynamic_size()], [])
            allocations.append(alloc)
            generic = ir.MemRefType.get(_generic(t), t.element_type)
            result_arguments.append(_cast(alloc, generic))
            result_types.append(generic)
        arguments, types = [], []
        for array in arrays:
            t = ir.RankedTensorType(array.type)
            # The tensor's own buffer, read-only and no copy: runtime/lapack.c
            # copies each matrix into its scratch before calling LAPACK and
            # never writes an operand, and the call directly follows the
            # `to_buffer`s, so nothing writes the buffer between them. The
            # numbered attribute keeps CSE from merging the `to_buffer`s of
            # calls sharing an operand: merged into the first call's, the
            # tensor's last use would be that one, and one-shot-bufferize
            # (blind to memref uses) could reuse its buffer before the
            # later calls read it.
            generic = _any_strides(t, _generic(t))
            buffer = ir.Operation.create(
                "bufferization.to_buffer", results=[_any_strides(t)], operands=[array],
                attributes={"read_only": ir.UnitAttr.get(), "kiln.lapack_operand": ir.IntegerAttr.get(i64, serial)}
            ).result
            serial += 1
            arguments.append(_cast(buffer, generic))
            types.append(generic)
        arguments += result_arguments
        types += result_types
        options = [arith.constant(i64, int(v)) for v in ir.DenseI64ArrayAttr(op.attributes["options"])]
        _declare(module, callee, types + [i64] * len(options))
        func.CallOp([], ir.FlatSymbolRefAttr.get(callee), arguments + options)
        for result, alloc in zip(op.results, allocations):
            value = ir.Operation.create("bufferization.to_tensor", results=[result.type], operands=[alloc],
                                        attributes={"restrict": ir.UnitAttr.get(),
                                                    "writable": ir.UnitAttr.get()}).result
            result.replace_all_uses_with(value)
    op.erase()
    return serial


@register_pass
class KilnLowerLapack(ModulePass):
    """Lower `kiln.lapack_*` ops to calls of runtime/lapack.c on buffers."""

    name = "kiln-lower-lapack"

    def apply(self, module: ir.Module) -> None:
        ops = collect_ops(module, {OP_PREFIX + kernel for kernel in LAPACK_OPS})
        if not ops:
            return
        if blas_library() is None:
            raise KilnValueError(
                "np.linalg: kiln computes decompositions with the LAPACK of the OpenBLAS that NumPy's wheel ships "
                "(numpy.libs/libscipy_openblas64_*), and none was found (or KILN_BLAS=none); install NumPy from its "
                "wheel, or point KILN_BLAS at an ILP64 OpenBLAS with the scipy_ symbol prefix")
        serial = 0
        for op in ops:
            serial = _lower(module, op, serial)
