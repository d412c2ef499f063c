# RUN: %PYTHON %s | filecheck %s
"""Stages "jaxpr" and "mlir" of the `bitcast_convert` primitive (`x.view(dtype)`,
the sign and exponent bits of floats): the same bits read as a dtype of the
same width, lowered to `stablehlo.bitcast_convert`."""

import numpy as np

import kiln


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


@kiln.qjit
def f(x):
    return x.view(np.int64)


f(np.zeros(3))


# CHECK-LABEL: TEST: jaxpr
@run
def jaxpr():
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a]. let
    # CHECK-NEXT:     c:i64[a] = bitcast_convert[new_dtype=i64] b
    # CHECK-NEXT:   in (c) }


# CHECK-LABEL: TEST: mlir
@run
def mlir():
    print(kiln.get_compilation_stage(f, "mlir"))
    # CHECK: %[[R:.*]] = stablehlo.bitcast_convert %arg1 : (tensor<?xf64>) -> tensor<?xi64>
    # CHECK-NEXT: return %[[R]] : tensor<?xi64>
