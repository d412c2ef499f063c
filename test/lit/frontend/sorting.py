# RUN: %PYTHON %s | filecheck %s
"""Stages "jaxpr" and "mlir" of the `sort` primitive: np.sort along axis 0
moves the axis last and back; np.argpartition normalizes its kth (negative
ones counted from the end, checked at run time) and passes it as the
primitive's second operand. Both lower to `kiln.sort {indices}`."""

import numpy as np

import kiln


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


@kiln.qjit
def f(x, k):
    return np.sort(x, axis=0), np.argpartition(x, k)


f(np.zeros((4, 3)), 1)


# CHECK-LABEL: TEST: jaxpr
@run
def jaxpr():
    print(f.jaxpr)
    # CHECK: { lambda a:i64[0] ; b:i64[] c:i64[] d:f64[b,c] e:i64[]. let
    # CHECK-NEXT:     f:f64[c,b] = transpose[permutation=(1,0)] d
    # CHECK-NEXT:     g:f64[c,b] = sort[indices=False] f a
    # CHECK-NEXT:     h:f64[b,c] = transpose[permutation=(1,0)] g
    # CHECK:          _ = check[kind=ValueError message=kth(={}) out of bounds ({})]
    # CHECK-NEXT:     [[P:[a-z]+]]:i64[b,c] = sort[indices=True] d {{[a-z]+}}
    # CHECK-NEXT:   in (h [[P]]) }


# CHECK-LABEL: TEST: mlir
@run
def mlir():
    print(kiln.get_compilation_stage(f, "mlir"))
    # CHECK: %[[NONE:.*]] = stablehlo.constant dense<> : tensor<0xi64>
    # CHECK: %[[T:.*]] = stablehlo.transpose %arg2, dims = [1, 0]
    # CHECK-NEXT: %[[S:.*]] = "kiln.sort"(%[[T]], %[[NONE]]) {indices = false} : (tensor<?x?xf64>, tensor<0xi64>) -> tensor<?x?xf64>
    # CHECK-NEXT: %[[BACK:.*]] = stablehlo.transpose %[[S]], dims = [1, 0]
    # CHECK: %[[P:.*]] = "kiln.sort"(%arg2, %{{.*}}) {indices = true} : (tensor<?x?xf64>, tensor<1xi64>) -> tensor<?x?xi64>
    # CHECK-NEXT: return %[[BACK]], %[[P]] : tensor<?x?xf64>, tensor<?x?xi64>
