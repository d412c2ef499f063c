# RUN: %PYTHON %s | filecheck %s
"""Stages "jaxpr", "mlir" and "linalg" of `D[:, k:k+1] + D[k:k+1, :]`: the
slice sizes may be 1 when the program runs, so they broadcast as in NumPy
(a checked `expanding` axis), and the compiled code is versioned: the slice
itself when its size is the result's, a broadcast reading index 0
otherwise."""

import numpy as np

import kiln


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


@kiln.qjit
def f(D, k):
    return D[:, k:k + 1] + D[k:k + 1, :]


f(np.ones((3, 3)), 1)


# Axis 0: the row slice's size (g) may be 1, the argument dim (a) is never 1
# (size-1 argument dims are specialized): the result takes a, after a check
# that g is a or 1; the same on axis 1 for the column slice's size.
# CHECK-LABEL: TEST: jaxpr
@run
def jaxpr():
    print(f.jaxpr)
    # CHECK: _ = check[kind=ValueError message=np.add: operands could not be broadcast together with shapes (?,?) (?,?) (axis -2: sizes {} and {}); reshape an operand or index fewer dimensions.]
    # CHECK: _ = check[kind=ValueError message=np.add: operands could not be broadcast together with shapes (?,?) (?,?) (axis -1: sizes {} and {}); reshape an operand or index fewer dimensions.]
    # CHECK: {{[a-z]+}}:f64[a,b] = broadcast_in_dim[broadcast_dimensions=(0,1) expanding=(1,) shape=(None,None)] r a b
    # CHECK: {{[a-z]+}}:f64[a,b] = broadcast_in_dim[broadcast_dimensions=(0,1) expanding=(0,) shape=(None,None)] af a b
    # CHECK: add


# The expanding axis is the one missing from known_nonexpanding_dimensions.
# CHECK-LABEL: TEST: mlir
@run
def mlir():
    print(f.mlir)
    # CHECK: stablehlo.dynamic_broadcast_in_dim {{.*}} dims = [0, 1] {known_nonexpanding_dimensions = array<i64: 0>}
    # CHECK: stablehlo.dynamic_broadcast_in_dim {{.*}} dims = [0, 1] {known_nonexpanding_dimensions = array<i64: 1>}
    # CHECK: stablehlo.add


# Each broadcast is an scf.if on "the slice's size is the result's": then the
# slice itself, else (the size is 1) one call of runtime/broadcast.c copying
# the slice's buffer, read with stride 0 along that dim; one fused add reads
# both.
# CHECK-LABEL: TEST: linalg
@run
def linalg():
    print(kiln.get_compilation_stage(f, "linalg"))
    # CHECK: %[[COL:.*]] = scf.if %{{.*}} -> (tensor<?x?xf64>) {
    # CHECK-NEXT: scf.yield %[[COLSLICE:.*]] : tensor<?x?xf64>
    # CHECK-NEXT: } else {
    # CHECK-NEXT: bufferization.to_buffer %[[COLSLICE]] read_only
    # CHECK-NOT: linalg.generic
    # CHECK: func.call @kiln_broadcast_copy_2d
    # CHECK: %[[ROW:.*]] = scf.if %{{.*}} -> (tensor<?x?xf64>) {
    # CHECK-NEXT: scf.yield %[[ROWSLICE:.*]] : tensor<?x?xf64>
    # CHECK-NEXT: } else {
    # CHECK-NEXT: bufferization.to_buffer %[[ROWSLICE]] read_only
    # CHECK-NOT: linalg.generic
    # CHECK: func.call @kiln_broadcast_copy_2d
    # CHECK: linalg.generic {{.*}} ins(%[[COL]], %[[ROW]] : tensor<?x?xf64>, tensor<?x?xf64>)
    # CHECK: arith.addf
