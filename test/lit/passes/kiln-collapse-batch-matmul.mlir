// RUN: kiln-opt %s -p kiln-collapse-batch-matmul | filecheck %s

// doitgen's `reshape(A, (NR, NQ, 1, NP)) @ C4`: a matmul batched on its left
// operand only is one 2-d matmul of the collapsed batch-and-row dims, which
// kiln-linalg-to-blas turns into one gemm instead of a naive loop nest.

#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d4, d3)>
#y = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @four_d
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x1x?xf64>, %[[W:.*]]: tensor<?x?xf64>, %[[INIT:.*]]: tensor<?x?x1x?xf64>)
func.func @four_d(%x: tensor<?x?x1x?xf64>, %w: tensor<?x?xf64>, %init: tensor<?x?x1x?xf64>) -> tensor<?x?x1x?xf64> {
  // CHECK: %[[CX:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2], [3]] : tensor<?x?x1x?xf64> into tensor<?x?xf64>
  // CHECK: %[[CI:.*]] = tensor.collapse_shape %[[INIT]] {{\[}}[0, 1, 2], [3]] : tensor<?x?x1x?xf64> into tensor<?x?xf64>
  // CHECK: %[[M:.*]] = linalg.matmul ins(%[[CX]], %[[W]] : tensor<?x?xf64>, tensor<?x?xf64>) outs(%[[CI]] : tensor<?x?xf64>)
  // CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1, 2], [3]] output_shape [%{{.*}}, %{{.*}}, 1, %{{.*}}] : tensor<?x?xf64> into tensor<?x?x1x?xf64>
  // CHECK-NOT: linalg.generic
  // CHECK: return %[[R]]
  %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?x1x?xf64>, tensor<?x?xf64>) outs(%init : tensor<?x?x1x?xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  } -> tensor<?x?x1x?xf64>
  return %r : tensor<?x?x1x?xf64>
}

// 3-d `x @ w`: a batch_matmul of `w` broadcast along the batch reads `w` itself.
#w2 = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcast_right
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?xf32>, %[[W:.*]]: tensor<?x?xf32>
func.func @broadcast_right(%x: tensor<?x?x?xf32>, %w: tensor<?x?xf32>, %e: tensor<?x?x?xf32>, %init: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %b = linalg.generic {indexing_maps = [#w2, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<?x?xf32>) outs(%e : tensor<?x?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<?x?x?xf32>
  // CHECK: %[[CX:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]]
  // CHECK: linalg.matmul ins(%[[CX]], %[[W]] : tensor<?x?xf32>, tensor<?x?xf32>)
  // CHECK-NOT: linalg.batch_matmul
  %r = linalg.batch_matmul ins(%x, %b : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%init : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// A batch_matmul of two batched operands, and a generic that is no
// multiply-accumulate, stay as they are.
// CHECK-LABEL: func.func @kept
func.func @kept(%x: tensor<?x?x?xf32>, %y: tensor<?x?x?xf32>, %init: tensor<?x?x?xf32>,
                %a: tensor<?x?x1x?xf64>, %w: tensor<?x?xf64>, %i4: tensor<?x?x1x?xf64>) -> (tensor<?x?x?xf32>, tensor<?x?x1x?xf64>) {
  // CHECK: linalg.batch_matmul
  %r = linalg.batch_matmul ins(%x, %y : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%init : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  // CHECK: linalg.generic
  %m = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<?x?x1x?xf64>, tensor<?x?xf64>) outs(%i4 : tensor<?x?x1x?xf64>) {
  ^bb0(%p: f64, %q: f64, %acc: f64):
    %t = arith.maximumf %p, %q : f64
    %s = arith.addf %acc, %t : f64
    linalg.yield %s : f64
  } -> tensor<?x?x1x?xf64>
  return %r, %m : tensor<?x?x?xf32>, tensor<?x?x1x?xf64>
}
