"""The `linalg` dialect's Python module for kiln: the generated op and enum
classes, and builders for the named ops kiln creates (fill, copy, matmul,
transpose), without the OpDSL definitions the provider's package imports.

The bindings import this module when they first wrap a linalg op (the
dialect search path starts with kiln.compiler.dialect_modules); every
other kiln module reaches it as `kiln.compiler.mlir.linalg`.
"""

from __future__ import annotations

from torch_mlir._mlir_libs._mlirDialectsLinalg import fill_builtin_region
from torch_mlir.dialects._linalg_enum_gen import *  # noqa: F401,F403
from torch_mlir.dialects._linalg_enum_gen import _iteratortypeenum
from torch_mlir.dialects._linalg_ops_gen import *  # noqa: F401,F403
from torch_mlir.dialects._linalg_ops_gen import _Dialect  # noqa: F401
from torch_mlir.dialects._ods_common import get_op_result_or_value
from torch_mlir.ir import (AffineDimExpr, AffineMap, AffineMapAttr, ArrayAttr, RankedTensorType, Value,
                           register_attribute_builder)


@register_attribute_builder("IteratorTypeArrayAttr")
def _iterator_types(names, context):
    """`iterator_types` given as strings ("parallel", "reduction")."""
    return ArrayAttr.get([_iteratortypeenum(n, context) for n in names])


def _named(op_class, inputs, outs):
    """A named structured op on `inputs` into `outs`, its body built from the
    op's definition; its result on tensors, else the op."""
    inputs = [get_op_result_or_value(v) for v in inputs]
    outs = [get_op_result_or_value(v) for v in outs]
    results = [o.type for o in outs if isinstance(o.type, RankedTensorType)]
    op = op_class(results, inputs, outs)
    fill_builtin_region(op.operation)
    return op.result if results else op


def fill(value, *, outs):
    """`linalg.fill ins(value) outs(outs[0])`."""
    return _named(FillOp, [value], outs)  # noqa: F405


def copy(source, *, outs):
    """`linalg.copy ins(source) outs(outs[0])`."""
    return _named(CopyOp, [source], outs)  # noqa: F405


def matmul(lhs, rhs, *, outs):
    """`linalg.matmul ins(lhs, rhs) outs(outs[0])` with the default indexing
    maps set, as a parsed matmul has them (passes read them)."""
    result = _named(MatmulOp, [lhs, rhs], outs)  # noqa: F405
    op = result.owner if isinstance(result, Value) else result.operation
    if "indexing_maps" not in op.attributes:
        op.attributes["indexing_maps"] = ArrayAttr.get([
            AffineMapAttr.get(AffineMap.get(3, 0, [AffineDimExpr.get(a), AffineDimExpr.get(b)]))
            for a, b in ((0, 2), (2, 1), (0, 1))])
    return result


def transpose(source, *, outs, permutation):
    """`linalg.transpose ins(source) outs(outs[0]) permutation = [...]`."""
    source, init = get_op_result_or_value(source), get_op_result_or_value(outs[0])
    results = [init.type] if isinstance(init.type, RankedTensorType) else []
    op = TransposeOp(results, source, init, permutation)  # noqa: F405
    fill_builtin_region(op.operation)
    return op.result if results else op
