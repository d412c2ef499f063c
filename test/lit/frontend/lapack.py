# RUN: %PYTHON %s | filecheck %s
"""Stages "jaxpr" and "mlir" of np.linalg through LAPACK: one `lapack`
equation per call on the matrices as one batch axis (computed in float64),
its `info` checked with NumPy's LinAlgError message; in MLIR one
`kiln.lapack_<kernel>` op whose trailing operands are its results' dims."""

import numpy as np

import kiln


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


# A stack of float32 matrices: converted to float64, flattened to (a*b, c, c),
# inverted by the kernel, checked, cast back and unflattened.
# CHECK-LABEL: TEST: inv_of_a_stack
@run
def inv_of_a_stack():
    f = kiln.qjit(lambda a: np.linalg.inv(a))
    print(f(np.stack([np.eye(3, dtype=np.float32) * 2] * 4).reshape(2, 2, 3, 3))[1, 1, 0])
    # CHECK-NEXT: [0.5 0.  0. ]
    print(f.jaxpr)
    # CHECK: lambda ; a:i64[] b:i64[] c:i64[] d:i64[] e:f32[a,b,c,d]. let
    # CHECK: [[X:[a-z]+]]:f64[a,b,c,d] = convert_element_type[new_dtype=f64 weak_type=False] e
    # CHECK: [[FLAT:[a-z]+]]:f64{{\[}}[[B:[a-z]+]],c,d] = reshape[new_sizes=(None,None,None)] [[X]]
    # CHECK-NEXT: [[INV:[a-z]+]]:f64{{\[}}[[B]],c,d] {{[a-z]+}}:i64{{\[}}[[B]]] = lapack[dtypes=(float64,int64) kernel=inv options=() shapes=((None,None,None),(None,))] [[FLAT]] [[B]] c d [[B]]
    # CHECK: check[kind=LinAlgError message=Singular matrix]
    # CHECK: convert_element_type[new_dtype=f32 weak_type=False]
    print(f.mlir)
    # CHECK: "kiln.lapack_inv"(%{{.*}}, %{{.*}}, %arg2, %arg3, %{{.*}}) {options = array<i64>} : (tensor<?x?x?xf64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<?x?x?xf64>, tensor<?xi64>)


# svd without vectors: u and vt are empty placeholders; options (full, uv) = (0, 0).
# CHECK-LABEL: TEST: singular_values
@run
def singular_values():
    f = kiln.qjit(lambda a: np.linalg.svd(a, compute_uv=False))
    print(f(np.diag([3.0, 4.0])))
    # CHECK-NEXT: [4. 3.]
    print(f.mlir)
    # CHECK: "kiln.lapack_svd"(%{{.*}}, %{{.*}}) {options = array<i64: 0, 0>} : (tensor<1x?x?xf64>, tensor<i64>) -> (tensor<1x0x0xf64>, tensor<1x?xf64>, tensor<1x0x0xf64>, tensor<1xi64>)
