"""Pass `kiln-scale-vector-operand` (stage "stablehlo", after kiln-broadcast-operands).

In: a matrix-vector `stablehlo.dot_general` whose matrix operand is a scalar
times a matrix (`alpha * A @ x`, which Python parses as `(alpha * A) @ x`),
the product used only by the dot.
Out: the same dot with the scalar moved onto the vector, `A @ (alpha * x)`:
the scaling costs one multiply per vector element instead of a matrix-sized
temporary and a pass over the matrix (gesummv, atax-like code).
"""

from __future__ import annotations

import numpy as np

from kiln.compiler.mlir import DotDimensionNumbers, ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops
from kiln.dialects import stablehlo as hlo

DOT = "stablehlo.dot_general"
SCALAR_BROADCASTS = frozenset({"stablehlo.dynamic_broadcast_in_dim", "stablehlo.broadcast_in_dim"})


def _scalar_factor(value: ir.Value) -> tuple[ir.Value, ir.Value, ir.Operation] | None:
    """(scalar, matrix, broadcast) when `value` is `broadcast(scalar) * matrix`
    (either operand order) used once, else None."""
    product = value.owner
    if isinstance(product, ir.Block) or product.name != "stablehlo.multiply" or len(list(value.uses)) != 1:
        return None
    for side in (0, 1):
        broadcast = product.operands[side].owner
        if isinstance(broadcast, ir.Block) or broadcast.name not in SCALAR_BROADCASTS:
            continue
        scalar = broadcast.operands[0]
        if ir.RankedTensorType(scalar.type).rank == 0:
            return scalar, product.operands[1 - side], broadcast
    return None


def _free_dims(rank: int, batch: list[int], contracting: list[int]) -> list[int]:
    return [d for d in range(rank) if d not in batch and d not in contracting]


def _vector_shape(broadcast: ir.Operation, matrix_dims: list[int | None]) -> ir.Value | None:
    """The shape tensor of the vector, built from the matrix's (the dynamic
    broadcast of the scalar carries it): vector dim i has the size of matrix
    dim `matrix_dims[i]`, or 1 where that is None."""
    shape = broadcast.operands[1]
    element = ir.RankedTensorType(shape.type).element_type
    width = ir.IntegerType(element).width if isinstance(element, ir.IntegerType) else None
    if width not in (32, 64):
        return None  # an index-typed shape: kiln makes none at this stage
    parts = []
    for matrix_dim in matrix_dims:
        if matrix_dim is None:
            parts.append(hlo.constant(np.array([1], dtype=np.int64 if width == 64 else np.int32)))
            continue
        parts.append(hlo.one("slice", ir.RankedTensorType.get([1], element), shape,
                             start_indices=hlo.dense_i64_array([matrix_dim]),
                             limit_indices=hlo.dense_i64_array([matrix_dim + 1]),
                             strides=hlo.dense_i64_array([1])))
    if len(parts) == 1:
        return parts[0]
    return hlo.op("concatenate", [ir.RankedTensorType.get([len(parts)], element)], parts,
                  dimension=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)).result


def scale_vector_operand(dot: ir.Operation) -> bool:
    """Rewrite `dot(s * M, v)` (or `dot(v, s * M)`) into `dot(M, s * v)` when
    every free dim of `v` is statically 1 and `M` has a free dim that is not;
    returns whether it did."""
    numbers = DotDimensionNumbers(dot.attributes["dot_dimension_numbers"])
    sides = [(list(numbers.lhs_batching_dimensions), list(numbers.lhs_contracting_dimensions)),
             (list(numbers.rhs_batching_dimensions), list(numbers.rhs_contracting_dimensions))]
    for matrix_side in (0, 1):
        factor = _scalar_factor(dot.operands[matrix_side])
        if factor is None:
            continue
        scalar, matrix, broadcast = factor
        vector = dot.operands[1 - matrix_side]
        matrix_type, vector_type = ir.RankedTensorType(matrix.type), ir.RankedTensorType(vector.type)
        matrix_batch, matrix_contracting = sides[matrix_side]
        vector_batch, vector_contracting = sides[1 - matrix_side]
        vector_free = _free_dims(vector_type.rank, vector_batch, vector_contracting)
        matrix_free = _free_dims(matrix_type.rank, matrix_batch, matrix_contracting)
        if any(vector_type.shape[d] != 1 for d in vector_free):
            continue  # a matrix-matrix product: its result is no smaller than the scaled operand
        if all(matrix_type.shape[d] == 1 for d in matrix_free):
            continue  # a dot of vectors: nothing to save
        # Vector dim d has the size of the matching matrix dim (batch and
        # contracting dims pair up in order; the dot's verifier checked them).
        matching = dict(zip(vector_batch, matrix_batch)) | dict(zip(vector_contracting, matrix_contracting))
        dims = hlo.dense_i64_array([])
        with ir.InsertionPoint(dot), dot.location:
            if vector_type.has_static_shape:
                spread = hlo.one("broadcast_in_dim", vector_type, scalar, broadcast_dimensions=dims)
            elif broadcast.name == "stablehlo.dynamic_broadcast_in_dim":
                shape = _vector_shape(broadcast, [matching.get(d) for d in range(vector_type.rank)])
                if shape is None:
                    continue
                spread = hlo.one("dynamic_broadcast_in_dim", vector_type, scalar, shape, broadcast_dimensions=dims)
            else:
                continue  # a static matrix with a dynamic vector: the dot's verifier makes this unreachable
            scaled = hlo.one("multiply", vector_type, spread, vector)
        product = dot.operands[matrix_side].owner
        dot.operands[matrix_side] = matrix
        dot.operands[1 - matrix_side] = scaled
        product.erase()
        if not list(broadcast.results[0].uses):
            broadcast.erase()
        return True
    return False


@register_pass
class KilnScaleVectorOperand(ModulePass):
    """Move a scalar factor of a matrix-vector product's matrix onto its vector: (s * A) @ x becomes A @ (s * x)."""

    name = "kiln-scale-vector-operand"

    def apply(self, module: ir.Module) -> None:
        for dot in collect_ops(module, {DOT}):
            scale_vector_operand(dot)
