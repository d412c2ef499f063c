# RUN: %PYTHON %s | filecheck %s
"""Stages "jaxpr" and "mlir" of an elementwise function of two dynamic
vectors: each argument gets its own dim, checked equal at run time; and of
scipy.special.erfc, which StableHLO lacks."""

import numpy as np
import scipy.special

import kiln
import kiln.numpy as knp


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


@kiln.qjit
def f(x, y):
    return knp.exp(x) * 2.0 + y - knp.sqrt(x)


f(np.ones(4), np.ones(4))


# Implicit dims a and b come first; `y` is matched to `x`'s dim after a check.
# CHECK-LABEL: TEST: jaxpr
@run
def jaxpr():
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:i64[] c:f64[a] d:f64[b]. let
    # CHECK-NEXT:     e:f64[a] = exp c
    # CHECK-NEXT:     f:f64[a] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] 2.0 a
    # CHECK-NEXT:     g:f64[a] = mul e f
    # CHECK-NEXT:     h:bool[] = eq a b
    # CHECK-NEXT:     _ = check[kind=ValueError message=np.add: operands could not be broadcast together with shapes (?,) (?,) (axis -1: sizes {} and {}); reshape an operand or index fewer dimensions.] h a b
    # CHECK-NEXT:     i:f64[a] = match_dims[shape=(None,)] d a
    # CHECK-NEXT:     j:f64[a] = add g i
    # CHECK-NEXT:     k:f64[a] = sqrt c
    # CHECK-NEXT:     l:f64[a] = sub j k
    # CHECK-NEXT:   in (l) }


# Dims are tensor<i64> arguments that name the array dim they are
# (`kiln.dim_of = [argument, axis]`, read by kiln-dims-from-shapes); the scalar is broadcast to the dynamic size
# read from the dim argument; the check is a `kiln.check` op.
# CHECK-LABEL: TEST: mlir
@run
def mlir():
    print(kiln.get_compilation_stage(f, "mlir"))
    # CHECK-NEXT: module {
    # CHECK-NEXT: func.func @f(%arg0: tensor<i64> {{{[^}]*}}kiln.dim_of = array<i64: 2, 0>}, %arg1: tensor<i64> {{{[^}]*}}kiln.dim_of = array<i64: 3, 0>}, %arg2: tensor<?xf64>{{[^,]*}}, %arg3: tensor<?xf64>{{[^,]*}}) -> tensor<?xf64>
    # CHECK-SAME: attributes {llvm.emit_c_interface} {
    # CHECK-NEXT:   %0 = stablehlo.exponential %arg2 : tensor<?xf64>
    # CHECK-NEXT:   %cst = stablehlo.constant dense<2.000000e+00> : tensor<f64>
    # CHECK-NEXT:   %1 = stablehlo.reshape %arg0 : (tensor<i64>) -> tensor<1xi64>
    # CHECK-NEXT:   %2 = stablehlo.dynamic_broadcast_in_dim %cst, %1, dims = [] : (tensor<f64>, tensor<1xi64>) -> tensor<?xf64>
    # CHECK-NEXT:   %3 = stablehlo.multiply %0, %2 : tensor<?xf64>
    # CHECK-NEXT:   %4 = stablehlo.compare EQ, %arg0, %arg1, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    # CHECK-NEXT:   "kiln.check"(%4, %arg0, %arg1) {kind = "ValueError", message = "np.add: operands could not be broadcast together with shapes (?,) (?,) (axis -1: sizes {} and {}){{.*}}"} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
    # CHECK-NEXT:   %5 = stablehlo.add %3, %arg3 : tensor<?xf64>
    # CHECK-NEXT:   %6 = stablehlo.sqrt %arg2 : tensor<?xf64>
    # CHECK-NEXT:   %7 = stablehlo.subtract %5, %6 : tensor<?xf64>
    # CHECK-NEXT:   return %7 : tensor<?xf64>
    # CHECK-NEXT: }
    # CHECK-NEXT: }


@kiln.qjit
def error_function(x):
    return scipy.special.erfc(x.astype(np.float32))


error_function(np.ones(3, dtype=np.int32))


# scipy.special.erfc of a float32 array is one `erfc` equation; StableHLO has
# no erf, so it lowers to `kiln.elementwise` (no CHLO), which
# kiln-legalize-dynamic turns into a linalg.generic around math.erfc.
# CHECK-LABEL: TEST: erfc_jaxpr_and_mlir
@run
def erfc_jaxpr_and_mlir():
    print(error_function.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:i32[a]. let
    # CHECK-NEXT:     c:f32[a] = convert_element_type[new_dtype=f32 weak_type=False] b
    # CHECK-NEXT:     d:f32[a] = erfc c
    # CHECK-NEXT:   in (d) }
    print(kiln.get_compilation_stage(error_function, "mlir"))
    # CHECK: %[[C:.*]] = stablehlo.convert %arg1 : (tensor<?xi32>) -> tensor<?xf32>
    # CHECK-NEXT: %[[E:.*]] = "kiln.elementwise"(%[[C]]) {fn = "erfc"} : (tensor<?xf32>) -> tensor<?xf32>
    # CHECK-NEXT: return %[[E]] : tensor<?xf32>
    print(kiln.get_compilation_stage(error_function, "linalg"))
    # CHECK: linalg.generic
    # CHECK: math.erfc %{{.*}} : f32
