# RUN: %PYTHON %s | filecheck %s
"""Stages "jaxpr" and "mlir" of the `scatter_add` primitive (np.histogram's
counts): a new array, the updates added at their indices; it lowers to a
`stablehlo.scatter` whose update computation adds (kiln-legalize-writes
turns it into a loop)."""

import numpy as np

import kiln
from kiln.primitives.indexing import scatter_add_p
from kiln.tracing import bind


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


@kiln.qjit
def f(counts, idx, w):
    return bind(scatter_add_p, counts, idx, w)


f(np.zeros(3), np.array([0, 2, 2]), np.ones(3))


# CHECK-LABEL: TEST: jaxpr
@run
def jaxpr():
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:i64[] c:i64[] d:f64[a] e:i64[b] f:f64[c]. let
    # CHECK-NEXT:     g:f64[a] = scatter_add d e f
    # CHECK-NEXT:   in (g) }


# CHECK-LABEL: TEST: mlir
@run
def mlir():
    print(kiln.get_compilation_stage(f, "mlir"))
    # CHECK: %[[R:.*]] = "stablehlo.scatter"(%arg3, %arg4, %arg5) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    # CHECK-NEXT: ^bb0(%[[OLD:.*]]: tensor<f64>, %[[NEW:.*]]: tensor<f64>):
    # CHECK-NEXT:   %[[SUM:.*]] = stablehlo.add %[[OLD]], %[[NEW]] : tensor<f64>
    # CHECK-NEXT:   stablehlo.return %[[SUM]] : tensor<f64>
    # CHECK-NEXT: }) : (tensor<?xf64>, tensor<?xi64>, tensor<?xf64>) -> tensor<?xf64>
    # CHECK-NEXT: return %[[R]] : tensor<?xf64>
