# RUN: %PYTHON %s | filecheck %s
"""Stages "jaxpr" and "mlir" of kiln.debug_print: one effectful equation
whose format numbers one field per traced value (untraced arguments are
rendered into it), lowered to `kiln.print` of a tuple of the values with
their NumPy dtypes; the output of the compiled call comes in order."""

import numpy as np

import kiln


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


# CHECK-LABEL: TEST: fields_and_static_arguments
@run
def fields_and_static_arguments():
    @kiln.qjit
    def f(x, n):
        kiln.debug_print("x = {0}, n = {n:>3}, tag = {tag}, again {0}", x, n=n, tag="<t>")
        return x

    f(np.array([1, 2], dtype=np.uint8), np.float32(2.5))
    # CHECK-NEXT: x = [1 2], n = 2.5, tag = <t>, again [1 2]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:u8[a] c:f32[]. let
    # CHECK-NEXT:     _ = debug_print[format=x = {0}, n = {1:>3}, tag = <t>, again {0}] b c
    # CHECK-NEXT:   in (b) }
    print(f.mlir)
    # CHECK: %[[T:.*]] = stablehlo.tuple %arg1, %arg2 : tuple<tensor<?xui8>, tensor<f32>>
    # CHECK-NEXT: "kiln.print"(%[[T]]) {dtypes = ["uint8", "float32"], format = "x = {0}, n = {1:>3}, tag = <t>, again {0}"} : (tuple<tensor<?xui8>, tensor<f32>>) -> ()


# The print stays in the loop body (effectful: never hoisted or removed)
# and runs once per iteration.
# CHECK-LABEL: TEST: inside_a_loop
@run
def inside_a_loop():
    @kiln.qjit
    def f(x):
        @kiln.for_loop(0, 3, 1)
        def loop(i, acc):
            kiln.debug_print("{} {}", i, acc)
            return acc * 2

        loop(x)
        return x

    f(np.ones(2))
    # CHECK-NEXT: 0 [1. 1.]
    # CHECK-NEXT: 1 [2. 2.]
    # CHECK-NEXT: 2 [4. 4.]
    print(f.jaxpr)
    # CHECK: for_loop[
    # CHECK: debug_print[format={0} {1}]
