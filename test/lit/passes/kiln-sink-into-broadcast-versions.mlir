// RUN: kiln-opt %s -p kiln-sink-into-broadcast-versions | filecheck %s
// RUN: kiln-opt %s -p kiln-sink-into-broadcast-versions,canonicalize,cse,"func.func(linalg-fuse-elementwise-ops)" | filecheck %s --check-prefix=FUSED

// A window of x broadcast along its last axis (versioned by
// kiln-legalize-dynamic: the then branch reads x with a map, the else
// branch stands for the run-time copy), multiplied by w and summed over the
// window. The multiply and the sum are copied into both branches (one sink
// each; the scf.if yields every value it yielded before too, which
// canonicalize drops), with the sizes and the tensors they need (w's
// conversion to f64, and a size read from it, copied with it); the index
// arithmetic that reads no branch result moves before the scf.if.

#bcast_in = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#w = affine_map<(d0, d1, d2) -> (d1, d2)>
#w3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#acc = affine_map<(d0, d1, d2) -> (d0, d2)>

// CHECK-LABEL: func.func @window
// CHECK: %[[K:.*]] = arith.addi
// CHECK: %[[R:.*]]:3 = scf.if %{{.*}} -> (tensor<?x?xf64>, tensor<?x?x?xf64>, tensor<?x?x?xf64>) {
// CHECK:   %[[B:.*]] = linalg.generic
// CHECK:   %[[WIDE:.*]] = linalg.generic
// CHECK:     arith.extf
// CHECK:   tensor.dim %[[WIDE]]
// CHECK:   %[[M:.*]] = linalg.generic {{.*}} ins(%[[B]], %{{.*}} : tensor<?x?x?xf64>, tensor<?x?x?xf64>)
// CHECK:     arith.mulf
// CHECK:   %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[M]] :
// CHECK:   scf.yield %[[S]], %[[M]], %[[B]]
// CHECK: } else {
// CHECK:   %[[F:.*]] = linalg.fill
// CHECK:   linalg.generic {{.*}} ins(%[[F]], %{{.*}} : tensor<?x?x?xf64>, tensor<?x?x?xf64>)
// CHECK:   scf.yield
// CHECK: } {kiln.broadcast_version}
// CHECK: return %[[R]]#0

// After fusion the then branch is one loop nest reading x itself (no
// broadcast copy): its only generic reads x with the broadcast map.
// FUSED-DAG: #[[BX:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// FUSED-LABEL: func.func @window
// FUSED: scf.if
// FUSED-NEXT: tensor.empty
// FUSED-NEXT: linalg.fill
// FUSED-NEXT: linalg.generic {indexing_maps = [#[[BX]], {{.*}} ins(%arg0, %arg1 : tensor<?x?x1xf64>, tensor<?x?xf32>)
// FUSED: } else {
func.func @window(%x: tensor<?x?x1xf64>, %w: tensor<?x?xf32>, %n: index, %k0: index, %c: index, %same: i1) -> tensor<?x?xf64> {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = scf.if %same -> (tensor<?x?x?xf64>) {
    %e = tensor.empty(%n, %k0, %c) : tensor<?x?x?xf64>
    %g = linalg.generic {indexing_maps = [#bcast_in, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x : tensor<?x?x1xf64>) outs(%e : tensor<?x?x?xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<?x?x?xf64>
    scf.yield %g : tensor<?x?x?xf64>
  } else {
    %e = tensor.empty(%n, %k0, %c) : tensor<?x?x?xf64>
    %f = linalg.fill ins(%zero : f64) outs(%e : tensor<?x?x?xf64>) -> tensor<?x?x?xf64>
    scf.yield %f : tensor<?x?x?xf64>
  } {kiln.broadcast_version}
  %k = arith.addi %k0, %c0 : index
  %we = tensor.empty(%n, %k, %c) : tensor<?x?x?xf64>
  %wide = linalg.generic {indexing_maps = [#w, #w3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<?x?xf32>) outs(%we : tensor<?x?x?xf64>) {
  ^bb0(%in: f32, %out: f64):
    %v = arith.extf %in : f32 to f64
    linalg.yield %v : f64
  } -> tensor<?x?x?xf64>
  %d0 = tensor.dim %b, %c0 : tensor<?x?x?xf64>
  %d1 = tensor.dim %wide, %c1 : tensor<?x?x?xf64>
  %d2 = tensor.dim %b, %c2 : tensor<?x?x?xf64>
  %pe = tensor.empty(%d0, %d1, %d2) : tensor<?x?x?xf64>
  %p = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b, %wide : tensor<?x?x?xf64>, tensor<?x?x?xf64>) outs(%pe : tensor<?x?x?xf64>) {
  ^bb0(%in: f64, %wv: f64, %out: f64):
    %m = arith.mulf %in, %wv : f64
    linalg.yield %m : f64
  } -> tensor<?x?x?xf64>
  %acc0 = tensor.empty(%d0, %d2) : tensor<?x?xf64>
  %acc = linalg.fill ins(%zero : f64) outs(%acc0 : tensor<?x?xf64>) -> tensor<?x?xf64>
  %r = linalg.generic {indexing_maps = [#id3, #acc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%p : tensor<?x?x?xf64>) outs(%acc : tensor<?x?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %s = arith.addf %out, %in : f64
    linalg.yield %s : f64
  } -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

// Left alone: an scf.if without the mark, and a marked one whose
// broadcast has a second reader (it stays materialized either way).
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.if %{{.*}} -> (tensor<?x?x?xf64>)
// CHECK: scf.if %{{.*}} -> (tensor<?x?x?xf64>)
// CHECK: return
func.func @left_alone(%x: tensor<?x?x1xf64>, %n: index, %k: index, %c: index, %same: i1) -> (tensor<?x?x?xf64>, tensor<?x?x?xf64>, tensor<?x?x?xf64>) {
  %zero = arith.constant 0.0 : f64
  %b = scf.if %same -> (tensor<?x?x?xf64>) {
    %e = tensor.empty(%n, %k, %c) : tensor<?x?x?xf64>
    %g = linalg.generic {indexing_maps = [#bcast_in, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x : tensor<?x?x1xf64>) outs(%e : tensor<?x?x?xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<?x?x?xf64>
    scf.yield %g : tensor<?x?x?xf64>
  } else {
    %e = tensor.empty(%n, %k, %c) : tensor<?x?x?xf64>
    %f = linalg.fill ins(%zero : f64) outs(%e : tensor<?x?x?xf64>) -> tensor<?x?x?xf64>
    scf.yield %f : tensor<?x?x?xf64>
  } {kiln.broadcast_version}
  %e2 = tensor.empty(%n, %k, %c) : tensor<?x?x?xf64>
  %twice = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<?x?x?xf64>) outs(%e2 : tensor<?x?x?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %t = arith.addf %in, %in : f64
    linalg.yield %t : f64
  } -> tensor<?x?x?xf64>
  %u = scf.if %same -> (tensor<?x?x?xf64>) {
    %e = tensor.empty(%n, %k, %c) : tensor<?x?x?xf64>
    %g = linalg.generic {indexing_maps = [#bcast_in, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x : tensor<?x?x1xf64>) outs(%e : tensor<?x?x?xf64>) {
    ^bb0(%in: f64, %out: f64):
      linalg.yield %in : f64
    } -> tensor<?x?x?xf64>
    scf.yield %g : tensor<?x?x?xf64>
  } else {
    %e = tensor.empty(%n, %k, %c) : tensor<?x?x?xf64>
    scf.yield %e : tensor<?x?x?xf64>
  }
  %e3 = tensor.empty(%n, %k, %c) : tensor<?x?x?xf64>
  %neg = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%u : tensor<?x?x?xf64>) outs(%e3 : tensor<?x?x?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %t = arith.negf %in : f64
    linalg.yield %t : f64
  } -> tensor<?x?x?xf64>
  return %b, %twice, %neg : tensor<?x?x?xf64>, tensor<?x?x?xf64>, tensor<?x?x?xf64>
}
