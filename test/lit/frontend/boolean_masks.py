# RUN: %PYTHON %s | filecheck %s
"""Stages "jaxpr" and "mlir" of boolean-mask indexing: the `flatnonzero`
primitive gives the positions of the true elements and their count, an
implicit result whose value is only known at run time; the selection is a
gather at those positions, the write a scatter to them."""

import numpy as np

import kiln


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


@kiln.qjit
def positives(x):
    return x[x > 0]


positives(np.ones((2, 3)))


# The count `f` is the dim of the positions and of the result, and a result
# of the function (implicit: the caller gets an array of that length).
# CHECK-LABEL: TEST: read_jaxpr
@run
def read_jaxpr():
    print(positives.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:i64[] c:f64[a,b]. let
    # CHECK-NEXT:     d:f64[a,b] = broadcast_in_dim[broadcast_dimensions=() shape=(None,None)] 0.0 a b
    # CHECK-NEXT:     e:bool[a,b] = gt c d
    # CHECK-NEXT:     f:i64[] g:i64[f] = flatnonzero e
    # CHECK-NEXT:     h:i64[] = mul a b
    # CHECK-NEXT:     i:f64[h] = reshape[new_sizes=(None,)] c h
    # CHECK-NEXT:     j:f64[f] = gather[axis=0] i g
    # CHECK-NEXT:   in (f j) }


# StableHLO has no op whose result size is data: the positions come from
# `kiln.flatnonzero` (lowered to loops by kiln-legalize-dynamic).
# CHECK-LABEL: TEST: read_mlir
@run
def read_mlir():
    print(positives.mlir)
    # CHECK: func.func @positives({{.*}}) -> (tensor<i64>, tensor<?xf64>)
    # CHECK: %[[MASK:.*]] = stablehlo.compare GT, %arg2, %{{.*}}, FLOAT : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xi1>
    # CHECK: %[[P:.*]]:2 = "kiln.flatnonzero"(%[[MASK]]) : (tensor<?x?xi1>) -> (tensor<i64>, tensor<?xi64>)
    # CHECK: %[[FLAT:.*]] = stablehlo.dynamic_reshape %arg2, %{{.*}} : (tensor<?x?xf64>, tensor<1xi64>) -> tensor<?xf64>
    # CHECK: %[[R:.*]] = "stablehlo.gather"(%[[FLAT]], %[[P]]#1)
    # CHECK: return %[[P]]#0, %[[R]] : tensor<i64>, tensor<?xf64>


@kiln.qjit
def squash(z, c):
    inside = np.abs(z) < 2.0
    z[inside] = z[inside] ** 2 + c[inside]


squash(np.zeros(4), np.ones(4))


# The mask's positions are found once: the two reads and the write share
# them, so the write needs no check that the value has `count` elements
# (the one check is NumPy's: c's length must be the mask's).
# CHECK-LABEL: TEST: write_jaxpr
@run
def write_jaxpr():
    print(squash.jaxpr)
    # CHECK:      g:bool[a] = lt e f
    # CHECK-NEXT: h:i64[] i:i64[h] = flatnonzero g
    # CHECK-NEXT: j:f64[h] = gather[axis=0] c i
    # CHECK-NEXT: k:f64[h] = mul j j
    # CHECK-NEXT: l:bool[] = eq b a
    # CHECK-NEXT: _ = check[kind=IndexError message=boolean index did not match indexed array along axis 0; size of axis is {} but size of corresponding boolean axis is {}] l b a
    # CHECK-NEXT: m:f64[h] = gather[axis=0] d i
    # CHECK-NEXT: n:f64[h] = add k m
    # CHECK-NEXT: _ = scatter[axis=0] c i n
    # CHECK-NEXT: in (c) }
