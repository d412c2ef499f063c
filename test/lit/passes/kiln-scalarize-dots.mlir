// RUN: kiln-opt %s -p kiln-scalarize-dots,canonicalize | filecheck %s
// RUN: kiln-opt %s -p 'kiln-scalarize-dots,canonicalize,one-shot-bufferize{bufferize-function-boundaries}' | filecheck %s --check-prefix=BUF

// trisolv's `x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]`: the product of a
// 1xK row and a Kx1 column is one element. It becomes a scalar loop whose
// float sum may be reassociated (so it vectorizes); no 1x1 buffer is
// allocated and no BLAS call made per outer iteration.

// CHECK-LABEL: func.func @row_times_column
// BUF-LABEL: func.func @row_times_column
func.func @row_times_column(%row: tensor<1x?xf64>, %col: tensor<?x1xf64>) -> f64 {
  // CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
  // CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
  // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
  // CHECK: %[[K:.*]] = tensor.dim %{{.*}}, %[[C1]] : tensor<1x?xf64>
  // CHECK: %[[SUM:.*]] = scf.for %[[I:.*]] = %[[C0]] to %[[K]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f64) {
  // CHECK-NEXT: %[[A:.*]] = tensor.extract %{{.*}}[%[[C0]], %[[I]]] : tensor<1x?xf64>
  // CHECK-NEXT: %[[B:.*]] = tensor.extract %{{.*}}[%[[I]], %[[C0]]] : tensor<?x1xf64>
  // CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] fastmath<reassoc,contract> : f64
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] fastmath<reassoc,contract> : f64
  // CHECK-NEXT: scf.yield %[[S]] : f64
  // CHECK-NOT: linalg.matmul
  // CHECK: return %[[SUM]] : f64
  // BUF-NOT: memref.alloc
  // BUF: return
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x1xf64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<1x1xf64>) -> tensor<1x1xf64>
  %p = linalg.matmul ins(%row, %col : tensor<1x?xf64>, tensor<?x1xf64>) outs(%init : tensor<1x1xf64>) -> tensor<1x1xf64>
  %c = tensor.collapse_shape %p [] : tensor<1x1xf64> into tensor<f64>
  %v = tensor.extract %c[] : tensor<f64>
  return %v : f64
}

// A 1-d integer dot accumulates onto its init without fastmath.
// CHECK-LABEL: func.func @int_dot
func.func @int_dot(%a: tensor<?xi64>, %b: tensor<?xi64>, %init: tensor<i64>) -> tensor<i64> {
  // CHECK: %[[START:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
  // CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[START]]) -> (i64)
  // CHECK: arith.muli
  // CHECK-NEXT: arith.addi %[[ACC]]
  // CHECK: tensor.from_elements
  %r = linalg.dot ins(%a, %b : tensor<?xi64>, tensor<?xi64>) outs(%init : tensor<i64>) -> tensor<i64>
  return %r : tensor<i64>
}

// A bool dot is an or of ands (NumPy's `np.dot` on bools), as linalg's i1 arithmetic.
// CHECK-LABEL: func.func @bool_dot
func.func @bool_dot(%a: tensor<?xi1>, %b: tensor<?xi1>, %init: tensor<i1>) -> tensor<i1> {
  // CHECK: scf.for {{.*}} -> (i1)
  // CHECK: %[[AND:.*]] = arith.andi
  // CHECK-NEXT: arith.ori %{{.*}}, %[[AND]] : i1
  %r = linalg.dot ins(%a, %b : tensor<?xi1>, tensor<?xi1>) outs(%init : tensor<i1>) -> tensor<i1>
  return %r : tensor<i1>
}

// Products with more than one element, and transposed matmuls, stay as they are.
// CHECK-LABEL: func.func @kept
func.func @kept(%a: tensor<2x?xf64>, %b: tensor<?x1xf64>, %init: tensor<2x1xf64>, %t: tensor<?x1xf64>, %one: tensor<1x1xf64>) -> (tensor<2x1xf64>, tensor<1x1xf64>) {
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x?xf64>, tensor<?x1xf64>)
  %r = linalg.matmul ins(%a, %b : tensor<2x?xf64>, tensor<?x1xf64>) outs(%init : tensor<2x1xf64>) -> tensor<2x1xf64>
  // CHECK: linalg.matmul indexing_maps
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%t, %b : tensor<?x1xf64>, tensor<?x1xf64>) outs(%one : tensor<1x1xf64>) -> tensor<1x1xf64>
  return %r, %s : tensor<2x1xf64>, tensor<1x1xf64>
}
