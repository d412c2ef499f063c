// RUN: kiln-opt %s -p kiln-pair-matvecs | filecheck %s

// mvt / BiCG: `A @ x` and `u @ A` of one matrix become one call of
// runtime/matvec.c, which reads each row of A once for both products. The
// reshape of `u` that sits between the two products moves up before the call.

// CHECK-LABEL: func.func @pair
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf64>, %[[X:.*]]: tensor<?xf64>, %[[U:.*]]: tensor<?xf64>)
func.func @pair(%a: tensor<?x?xf64>, %x: tensor<?xf64>, %u: tensor<?xf64>) -> (tensor<?x1xf64>, tensor<1x?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = tensor.dim %a, %c0 : tensor<?x?xf64>
  %n = tensor.dim %a, %c1 : tensor<?x?xf64>
  %nx = tensor.dim %x, %c0 : tensor<?xf64>
  // CHECK: %[[XC:.*]] = tensor.expand_shape %[[X]]
  %xc = tensor.expand_shape %x [[0, 1]] output_shape [%nx, 1] : tensor<?xf64> into tensor<?x1xf64>
  // CHECK: %[[UR:.*]] = tensor.expand_shape %[[U]]
  // CHECK: %[[Y:.*]] = memref.alloc(%{{.*}}) : memref<?x1xf64>
  // CHECK: %[[V:.*]] = memref.alloc(%{{.*}}) : memref<1x?xf64>
  // CHECK-DAG: bufferization.to_buffer %[[A]] read_only
  // CHECK-DAG: bufferization.to_buffer %[[XC]] read_only
  // CHECK-DAG: bufferization.to_buffer %[[UR]] read_only
  // CHECK: call @kiln_matvec_pair_f64(
  // CHECK-DAG: %[[YT:.*]] = bufferization.to_tensor %[[Y]] restrict writable
  // CHECK-DAG: %[[VT:.*]] = bufferization.to_tensor %[[V]] restrict writable
  // CHECK-NOT: linalg.matmul
  // CHECK: return %[[YT]], %[[VT]]
  %e1 = tensor.empty(%m) : tensor<?x1xf64>
  %f1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %y = linalg.matmul ins(%a, %xc : tensor<?x?xf64>, tensor<?x1xf64>) outs(%f1 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %nu = tensor.dim %u, %c0 : tensor<?xf64>
  %ur = tensor.expand_shape %u [[0, 1]] output_shape [1, %nu] : tensor<?xf64> into tensor<1x?xf64>
  %e2 = tensor.empty(%n) : tensor<1x?xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<1x?xf64>) -> tensor<1x?xf64>
  %v = linalg.matmul ins(%ur, %a : tensor<1x?xf64>, tensor<?x?xf64>) outs(%f2 : tensor<1x?xf64>) -> tensor<1x?xf64>
  return %y, %v : tensor<?x1xf64>, tensor<1x?xf64>
}

// The second product's vector is the first product, reshaped (`(A @ x) @ A`,
// atax): one call of the chain, which reads each row of A once, computes y
// and then v; the reshapes of y are left reading the call's y (dead here).
// CHECK-LABEL: func.func @dependent
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf32>, %[[XC:.*]]: tensor<?x1xf32>)
// CHECK-NOT: kiln_matvec_pair
// CHECK: %[[Y:.*]] = memref.alloc(%{{.*}}) : memref<?x1xf32>
// CHECK: %[[V:.*]] = memref.alloc(%{{.*}}) : memref<1x?xf32>
// CHECK-DAG: bufferization.to_buffer %[[A]] read_only
// CHECK-DAG: bufferization.to_buffer %[[XC]] read_only
// CHECK: call @kiln_matvec_chain_f32(
// CHECK-NOT: linalg.matmul
// CHECK: %[[VT:.*]] = bufferization.to_tensor %[[V]] restrict writable
// CHECK-NOT: linalg.matmul
// CHECK: return %[[VT]]
func.func @dependent(%a: tensor<?x?xf32>, %xc: tensor<?x1xf32>) -> tensor<1x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %a, %c1 : tensor<?x?xf32>
  %e1 = tensor.empty(%m) : tensor<?x1xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %y = linalg.matmul ins(%a, %xc : tensor<?x?xf32>, tensor<?x1xf32>) outs(%f1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %yr = tensor.collapse_shape %y [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
  %ur = tensor.expand_shape %yr [[0, 1]] output_shape [1, %m] : tensor<?xf32> into tensor<1x?xf32>
  %e2 = tensor.empty(%n) : tensor<1x?xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x?xf32>) -> tensor<1x?xf32>
  %v = linalg.matmul ins(%ur, %a : tensor<1x?xf32>, tensor<?x?xf32>) outs(%f2 : tensor<1x?xf32>) -> tensor<1x?xf32>
  return %v : tensor<1x?xf32>
}

// A product that accumulates into something other than zeros (or of another
// matrix) is left alone.
// CHECK-LABEL: func.func @accumulating
// CHECK-NOT: kiln_matvec_pair
func.func @accumulating(%a: tensor<?x?xf64>, %xc: tensor<?x1xf64>, %ur: tensor<1x?xf64>, %acc: tensor<?x1xf64>) -> (tensor<?x1xf64>, tensor<1x?xf64>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %a, %c1 : tensor<?x?xf64>
  %y = linalg.matmul ins(%a, %xc : tensor<?x?xf64>, tensor<?x1xf64>) outs(%acc : tensor<?x1xf64>) -> tensor<?x1xf64>
  %e2 = tensor.empty(%n) : tensor<1x?xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<1x?xf64>) -> tensor<1x?xf64>
  %v = linalg.matmul ins(%ur, %a : tensor<1x?xf64>, tensor<?x?xf64>) outs(%f2 : tensor<1x?xf64>) -> tensor<1x?xf64>
  return %y, %v : tensor<?x1xf64>, tensor<1x?xf64>
}

// The second product's vector is computed from the first by arithmetic
// (`(2 * (A @ x)) @ A`): not a reshape, so neither a pair nor a chain.
// CHECK-LABEL: func.func @scaled_dependent
// CHECK-NOT: kiln_matvec
// CHECK: linalg.matmul
// CHECK: linalg.matmul
func.func @scaled_dependent(%a: tensor<?x?xf64>, %xc: tensor<?x1xf64>) -> tensor<1x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = tensor.dim %a, %c0 : tensor<?x?xf64>
  %n = tensor.dim %a, %c1 : tensor<?x?xf64>
  %e1 = tensor.empty(%m) : tensor<?x1xf64>
  %f1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %y = linalg.matmul ins(%a, %xc : tensor<?x?xf64>, tensor<?x1xf64>) outs(%f1 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %y2 = arith.addf %y, %y : tensor<?x1xf64>
  %yr = tensor.collapse_shape %y2 [[0, 1]] : tensor<?x1xf64> into tensor<?xf64>
  %ur = tensor.expand_shape %yr [[0, 1]] output_shape [1, %m] : tensor<?xf64> into tensor<1x?xf64>
  %e2 = tensor.empty(%n) : tensor<1x?xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<1x?xf64>) -> tensor<1x?xf64>
  %v = linalg.matmul ins(%ur, %a : tensor<1x?xf64>, tensor<?x?xf64>) outs(%f2 : tensor<1x?xf64>) -> tensor<1x?xf64>
  return %v : tensor<1x?xf64>
}

// `A.T @ (A @ x)`: the second product is a column product of A's
// transposing copy (a generic reading its input transposed), which is
// `(A @ x) @ A` laid out as a column: the chain, its (1, n) result reshaped
// to (n, 1); the transposing copy is left unused.
// CHECK-LABEL: func.func @transposed_chain
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf64>, %[[XC:.*]]: tensor<?x1xf64>)
// CHECK: call @kiln_matvec_chain_f64(
// CHECK-NOT: linalg.matmul
// CHECK: %[[VT:.*]] = bufferization.to_tensor %{{.*}} restrict writable : memref<1x?xf64> to tensor<1x?xf64>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[VT]] {{\[\[}}0, 1]] : tensor<1x?xf64> into tensor<?xf64>
// CHECK: %[[COL:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [%{{.*}}, 1] : tensor<?xf64> into tensor<?x1xf64>
// CHECK-NOT: linalg.matmul
// CHECK: return %[[COL]]
#transposed = affine_map<(d0, d1) -> (d1, d0)>
#identity = affine_map<(d0, d1) -> (d0, d1)>
func.func @transposed_chain(%a: tensor<?x?xf64>, %xc: tensor<?x1xf64>) -> tensor<?x1xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = tensor.dim %a, %c0 : tensor<?x?xf64>
  %n = tensor.dim %a, %c1 : tensor<?x?xf64>
  %et = tensor.empty(%n, %m) : tensor<?x?xf64>
  %at = linalg.generic {indexing_maps = [#transposed, #identity], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x?xf64>) outs(%et : tensor<?x?xf64>) {
  ^bb0(%in: f64, %out: f64):
    linalg.yield %in : f64
  } -> tensor<?x?xf64>
  %e1 = tensor.empty(%m) : tensor<?x1xf64>
  %f1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %y = linalg.matmul ins(%a, %xc : tensor<?x?xf64>, tensor<?x1xf64>) outs(%f1 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %e2 = tensor.empty(%n) : tensor<?x1xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %v = linalg.matmul ins(%at, %y : tensor<?x?xf64>, tensor<?x1xf64>) outs(%f2 : tensor<?x1xf64>) -> tensor<?x1xf64>
  return %v : tensor<?x1xf64>
}

// A transposed product whose vector is not the first product (`A.T @ u`
// beside `A @ x`): not a chain, and not a pair either (the pair kernel
// takes its row vector as a row): two products.
// CHECK-LABEL: func.func @transposed_not_chain
// CHECK-NOT: kiln_matvec
// CHECK: linalg.matmul
// CHECK: linalg.matmul
func.func @transposed_not_chain(%a: tensor<?x?xf64>, %xc: tensor<?x1xf64>, %uc: tensor<?x1xf64>) -> (tensor<?x1xf64>, tensor<?x1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = tensor.dim %a, %c0 : tensor<?x?xf64>
  %n = tensor.dim %a, %c1 : tensor<?x?xf64>
  %et = tensor.empty(%n, %m) : tensor<?x?xf64>
  %at = linalg.generic {indexing_maps = [#transposed, #identity], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x?xf64>) outs(%et : tensor<?x?xf64>) {
  ^bb0(%in: f64, %out: f64):
    linalg.yield %in : f64
  } -> tensor<?x?xf64>
  %e1 = tensor.empty(%m) : tensor<?x1xf64>
  %f1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %y = linalg.matmul ins(%a, %xc : tensor<?x?xf64>, tensor<?x1xf64>) outs(%f1 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %e2 = tensor.empty(%n) : tensor<?x1xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<?x1xf64>) -> tensor<?x1xf64>
  %v = linalg.matmul ins(%at, %uc : tensor<?x?xf64>, tensor<?x1xf64>) outs(%f2 : tensor<?x1xf64>) -> tensor<?x1xf64>
  return %y, %v : tensor<?x1xf64>, tensor<?x1xf64>
}
