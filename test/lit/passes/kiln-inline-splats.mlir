// RUN: kiln-opt %s -p kiln-inline-splats | filecheck %s
// RUN: kiln-opt %s -p 'kiln-inline-splats,func.func(linalg-fuse-elementwise-ops),one-shot-bufferize{bufferize-function-boundaries}' | filecheck %s --check-prefix=BUF

// `0.5 * x` and `0.5 * y` after cse: one splat of 0.5 read by two generics.
// Elementwise fusion leaves a splat with two readers alone, so it would be a
// buffer filled at every call. The readers use the scalar itself instead;
// the splat is then dead and nothing is allocated for it.

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @shared_splat
// BUF-LABEL: func.func @shared_splat
func.func @shared_splat(%x: tensor<?xf64>, %y: tensor<?xf64>, %n: index) -> (tensor<?xf64>, tensor<?xf64>) {
  // CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
  %half = arith.constant 0.5 : f64
  %e = tensor.empty(%n) : tensor<?xf64>
  %splat = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%e : tensor<?xf64>) {
  ^bb0(%out: f64):
    linalg.yield %half : f64
  } -> tensor<?xf64>
  // CHECK: linalg.generic
  // CHECK: ^bb0(%[[X:.*]]: f64, %{{.*}}: f64):
  // CHECK-NEXT: arith.mulf %[[HALF]], %[[X]] : f64
  // BUF-COUNT-2: memref.alloc
  // BUF-NOT: memref.alloc
  // BUF: return
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%splat, %x : tensor<?xf64>, tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%s: f64, %v: f64, %out: f64):
    %m = arith.mulf %s, %v : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  // CHECK: linalg.generic
  // CHECK: ^bb0(%[[Y:.*]]: f64, %{{.*}}: f64):
  // CHECK-NEXT: arith.mulf %[[HALF]], %[[Y]] : f64
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%splat, %y : tensor<?xf64>, tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%s: f64, %v: f64, %out: f64):
    %m = arith.mulf %s, %v : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  return %a, %b : tensor<?xf64>, tensor<?xf64>
}

// A linalg.fill is a splat too.
// CHECK-LABEL: func.func @fill
func.func @fill(%x: tensor<?xf64>, %c: f64, %n: index) -> tensor<?xf64> {
  %e = tensor.empty(%n) : tensor<?xf64>
  %splat = linalg.fill ins(%c : f64) outs(%e : tensor<?xf64>) -> tensor<?xf64>
  // CHECK: ^bb0(%[[X:.*]]: f64, %{{.*}}: f64):
  // CHECK-NEXT: arith.addf %arg1, %[[X]] : f64
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%splat, %x : tensor<?xf64>, tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%s: f64, %v: f64, %out: f64):
    %m = arith.addf %s, %v : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  return %a : tensor<?xf64>
}

// A generic whose body computes per element is no splat: its readers keep it.
// CHECK-LABEL: func.func @not_a_splat
func.func @not_a_splat(%x: tensor<?xf64>, %n: index) -> tensor<?xf64> {
  %e = tensor.empty(%n) : tensor<?xf64>
  %iota = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%e : tensor<?xf64>) {
  ^bb0(%out: f64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    linalg.yield %f : f64
  } -> tensor<?xf64>
  // CHECK: ^bb0(%[[I:.*]]: f64, %[[X:.*]]: f64, %{{.*}}: f64):
  // CHECK-NEXT: arith.addf %[[I]], %[[X]] : f64
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%iota, %x : tensor<?xf64>, tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%s: f64, %v: f64, %out: f64):
    %m = arith.addf %s, %v : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  return %a : tensor<?xf64>
}

// A 0-d tensor read by an elementwise generic is a scalar: the body reads
// `tensor.extract` of it, taken before the generic (or the element itself
// when the tensor is a `tensor.from_elements`), so `%lo - %hi` is computed
// from values defined outside the loop. A generic that only broadcasts a
// 0-d tensor then yields a value defined outside it: a splat, inlined into
// its reader, which no longer reads the broadcast.
#scalar = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @rank0_operands
func.func @rank0_operands(%x: tensor<?xf64>, %lo: tensor<f64>, %hi: f64, %n: index) -> (tensor<?xf64>, tensor<?xf64>) {
  %e = tensor.empty(%n) : tensor<?xf64>
  %hi_t = tensor.from_elements %hi : tensor<f64>
  // CHECK: %[[LO:.*]] = tensor.extract %arg1[] : tensor<f64>
  // CHECK: linalg.generic
  // CHECK-NEXT: ^bb0(%{{.*}}: f64):
  // CHECK-NEXT: linalg.yield %[[LO]] : f64
  %b = linalg.generic {indexing_maps = [#scalar, #id], iterator_types = ["parallel"]}
      ins(%lo : tensor<f64>) outs(%e : tensor<?xf64>) {
  ^bb0(%s: f64, %out: f64):
    linalg.yield %s : f64
  } -> tensor<?xf64>
  // CHECK: %[[LO2:.*]] = tensor.extract %arg1[] : tensor<f64>
  // CHECK: linalg.generic
  // CHECK-NEXT: ^bb0(%[[X:.*]]: f64, %{{.*}}: f64):
  // CHECK-NEXT: %[[W:.*]] = arith.subf %arg2, %[[LO2]] : f64
  // CHECK-NEXT: %[[D:.*]] = arith.subf %[[X]], %[[LO]] : f64
  // CHECK-NEXT: arith.divf %[[D]], %[[W]] : f64
  %r = linalg.generic {indexing_maps = [#id, #id, #scalar, #scalar, #id], iterator_types = ["parallel"]}
      ins(%x, %b, %lo, %hi_t : tensor<?xf64>, tensor<?xf64>, tensor<f64>, tensor<f64>) outs(%e : tensor<?xf64>) {
  ^bb0(%v: f64, %first: f64, %l: f64, %h: f64, %out: f64):
    %w = arith.subf %h, %l : f64
    %d = arith.subf %v, %first : f64
    %q = arith.divf %d, %w : f64
    linalg.yield %q : f64
  } -> tensor<?xf64>
  return %r, %b : tensor<?xf64>, tensor<?xf64>
}
