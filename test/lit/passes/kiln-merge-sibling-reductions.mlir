// RUN: kiln-opt %s -p kiln-merge-sibling-reductions | filecheck %s

// `a.min()` and `a.max()` (np.histogram's range): two passes over `a`
// become one loop carrying both as scalars. The max's init, filled after
// the min, moves before it. A sum of the same data stays alone.

#id = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @min_max
func.func @min_max(%a: tensor<?xf64>) -> (f64, f64, f64) {
  %inf = arith.constant 0x7FF0000000000000 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<f64>
  // CHECK: %[[LOW0:.*]] = linalg.fill
  // CHECK: %[[HIGH0:.*]] = linalg.fill
  // CHECK: %[[L:.*]] = tensor.extract %[[LOW0]][]
  // CHECK: %[[H:.*]] = tensor.extract %[[HIGH0]][]
  // CHECK: %[[R:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[LO:.*]] = %[[L]], %[[HI:.*]] = %[[H]]) -> (f64, f64)
  // CHECK-NEXT: %[[IN:.*]] = tensor.extract %{{.*}}[%[[I]]] : tensor<?xf64>
  // CHECK-NEXT: %[[MIN:.*]] = arith.minimumf %[[LO]], %[[IN]] : f64
  // CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[HI]], %[[IN]] : f64
  // CHECK-NEXT: scf.yield %[[MIN]], %[[MAX]] : f64, f64
  // CHECK: %[[T0:.*]] = tensor.from_elements %[[R]]#0
  // CHECK: %[[T1:.*]] = tensor.from_elements %[[R]]#1
  // CHECK: tensor.extract %[[T0]][]
  // CHECK: linalg.generic
  // CHECK: arith.addf
  // CHECK: tensor.extract %[[T1]][]
  %low0 = linalg.fill ins(%inf : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %low = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]} ins(%a : tensor<?xf64>) outs(%low0 : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.minimumf %out, %in : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  %lo = tensor.extract %low[] : tensor<f64>
  %sum0 = linalg.fill ins(%zero : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %sum = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]} ins(%a : tensor<?xf64>) outs(%sum0 : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.addf %out, %in : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  %su = tensor.extract %sum[] : tensor<f64>
  %high0 = linalg.fill ins(%ninf : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %high = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]} ins(%a : tensor<?xf64>) outs(%high0 : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.maximumf %out, %in : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  %hi = tensor.extract %high[] : tensor<f64>
  return %lo, %su, %hi : f64, f64, f64
}

// Reductions of different data, or whose init is computed from the first
// one's result, stay apart.
// CHECK-LABEL: func.func @not_siblings
func.func @not_siblings(%a: tensor<?xf64>, %b: tensor<?xf64>) -> (f64, f64, f64) {
  %inf = arith.constant 0x7FF0000000000000 : f64
  %e = tensor.empty() : tensor<f64>
  // CHECK-COUNT-3: linalg.generic
  %i0 = linalg.fill ins(%inf : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %ra = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]} ins(%a : tensor<?xf64>) outs(%i0 : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.minimumf %out, %in : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  %rb = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]} ins(%b : tensor<?xf64>) outs(%i0 : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.minimumf %out, %in : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  %x = tensor.extract %ra[] : tensor<f64>
  %i1 = linalg.fill ins(%x : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %rc = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]} ins(%a : tensor<?xf64>) outs(%i1 : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.maximumf %out, %in : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  %y = tensor.extract %rb[] : tensor<f64>
  %z = tensor.extract %rc[] : tensor<f64>
  return %x, %y, %z : f64, f64, f64
}
