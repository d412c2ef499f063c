// RUN: kiln-opt %s -p kiln-fold-into-gemm | filecheck %s

#s = affine_map<(d0, d1) -> ()>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// gemm's `C[:] = alpha * A @ B + beta * C`: the added term `beta * C` is
// computed on its own, into C (a written argument read by nothing later),
// and the matmul accumulates into it; the scaling `alpha * A` sits right
// before the matmul (kiln-linalg-to-blas passes both factors to the call).
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: %[[C:[a-z0-9]+]]: tensor<?x?xf64> {bufferization.writable = true}
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[C]] : tensor<f64>, tensor<?x?xf64>) outs(%[[C]] : tensor<?x?xf64>)
// CHECK:   arith.mulf
// CHECK-NOT: arith.addf
// CHECK: %[[SA:.*]] = linalg.generic
// CHECK:   arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = linalg.matmul ins(%[[SA]], %{{.*}} : tensor<?x?xf64>, tensor<?x?xf64>) outs(%[[Z]] : tensor<?x?xf64>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @gemm(%alpha: tensor<f64>, %beta: tensor<f64>, %c: tensor<?x?xf64> {bufferization.writable = true},
                %a: tensor<?x?xf64> {bufferization.writable = false}, %b: tensor<?x?xf64> {bufferization.writable = false}) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %al = tensor.extract %alpha[] : tensor<f64>
  %be = tensor.extract %beta[] : tensor<f64>
  %m = tensor.dim %a, %c0 : tensor<?x?xf64>
  %k = tensor.dim %a, %c1 : tensor<?x?xf64>
  %n = tensor.dim %b, %c1 : tensor<?x?xf64>
  %ea = tensor.empty(%m, %k) : tensor<?x?xf64>
  %sa = linalg.generic {indexing_maps = [#s, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%alpha, %a : tensor<f64>, tensor<?x?xf64>) outs(%ea : tensor<?x?xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %p = arith.mulf %al, %y : f64
    linalg.yield %p : f64
  } -> tensor<?x?xf64>
  %e = tensor.empty(%m, %n) : tensor<?x?xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<?x?xf64>) -> tensor<?x?xf64>
  %t = linalg.matmul ins(%sa, %b : tensor<?x?xf64>, tensor<?x?xf64>) outs(%f : tensor<?x?xf64>) -> tensor<?x?xf64>
  %r = linalg.generic {indexing_maps = [#id, #s, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %beta, %c : tensor<?x?xf64>, tensor<f64>, tensor<?x?xf64>) outs(%t : tensor<?x?xf64>) {
  ^bb0(%x: f64, %y: f64, %z: f64, %o: f64):
    %q = arith.mulf %be, %z : f64
    %s = arith.addf %x, %q : f64
    linalg.yield %s : f64
  } -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

// A bias `x @ W + b` (b broadcast along rows): the matmul accumulates into
// the broadcast bias, written into the fill's fresh tensor.
// CHECK-LABEL: func.func @bias
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?xf32>) outs(%[[E]] : tensor<?x?xf32>)
// CHECK: %[[R:.*]] = linalg.matmul ins({{.*}}) outs(%[[Z]] : tensor<?x?xf32>)
// CHECK: return %[[R]]
func.func @bias(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %h = tensor.dim %w, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%n, %h) : tensor<?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %t = linalg.matmul ins(%x, %w : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  %e2 = tensor.empty(%n, %h) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %q, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// The product is read again (or not simply added): nothing changes.
// CHECK-LABEL: func.func @not_an_epilogue
// CHECK: %[[T:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[T]], %[[T]]
// CHECK:   arith.mulf
// CHECK:   arith.addf
func.func @not_an_epilogue(%x: tensor<?x?xf64>, %w: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %x, %c0 : tensor<?x?xf64>
  %h = tensor.dim %w, %c1 : tensor<?x?xf64>
  %e = tensor.empty(%n, %h) : tensor<?x?xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<?x?xf64>) -> tensor<?x?xf64>
  %t = linalg.matmul ins(%x, %w : tensor<?x?xf64>, tensor<?x?xf64>) outs(%f : tensor<?x?xf64>) -> tensor<?x?xf64>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %t : tensor<?x?xf64>, tensor<?x?xf64>) outs(%e : tensor<?x?xf64>) {
  ^bb0(%p: f64, %q: f64, %o: f64):
    %m = arith.mulf %p, %q : f64
    %s = arith.addf %m, %p : f64
    linalg.yield %s : f64
  } -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}
