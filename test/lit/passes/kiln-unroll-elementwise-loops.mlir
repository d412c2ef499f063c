// RUN: kiln-opt %s -p kiln-unroll-elementwise-loops | filecheck %s
// RUN: kiln-opt %s -p "kiln-unroll-elementwise-loops,func.func(linalg-fuse-elementwise-ops),canonicalize,cse" | filecheck %s --check-prefix=FUSED

// A short counted loop whose body only computes elementwise is repeated in
// straight-line code, so that elementwise fusion makes one pass over memory.

#id = affine_map<(d0) -> (d0)>
#bcast = affine_map<(d0) -> ()>
#scalar = affine_map<() -> ()>

// `for _ in range(3): a = a * s` as kiln-legalize-control-flow leaves it:
// an scf.while whose counter is a 0-d tensor.
// CHECK-LABEL: func.func @rebound
// CHECK-NOT: scf.while
// CHECK-COUNT-3: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: return
// FUSED-LABEL: func.func @rebound
// FUSED-NOT: scf.while
// FUSED: linalg.generic
// FUSED-COUNT-3: arith.mulf
// FUSED-NEXT: linalg.yield
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @rebound(%a0: tensor<?xf64>, %s: tensor<f64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : i64
  %c1 = arith.constant 1 : i64
  %zero = arith.constant dense<0> : tensor<i64>
  %r:2 = scf.while (%i = %zero, %a = %a0) : (tensor<i64>, tensor<?xf64>) -> (tensor<i64>, tensor<?xf64>) {
    %iv = tensor.extract %i[] : tensor<i64>
    %go = arith.cmpi slt, %iv, %c3 : i64
    scf.condition(%go) %i, %a : tensor<i64>, tensor<?xf64>
  } do {
  ^bb0(%i: tensor<i64>, %a: tensor<?xf64>):
    %d = tensor.dim %a, %c0 : tensor<?xf64>
    %e = tensor.empty(%d) : tensor<?xf64>
    %b = linalg.generic {indexing_maps = [#id, #bcast, #id], iterator_types = ["parallel"]}
        ins(%a, %s : tensor<?xf64>, tensor<f64>) outs(%e : tensor<?xf64>) {
    ^bb0(%x: f64, %y: f64, %out: f64):
      %m = arith.mulf %x, %y : f64
      linalg.yield %m : f64
    } -> tensor<?xf64>
    %iv = tensor.extract %i[] : tensor<i64>
    %next = arith.addi %iv, %c1 : i64
    %t = tensor.from_elements %next : tensor<i64>
    scf.yield %t, %b : tensor<i64>, tensor<?xf64>
  }
  return %r#1 : tensor<?xf64>
}

// The counter read in the body becomes a constant per copy (i = 2, 4).
// CHECK-LABEL: func.func @counter_used
// CHECK-NOT: scf.for
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: arith.index_cast %[[C2]]
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: arith.index_cast %[[C4]]
// CHECK-NOT: arith.constant 6 : index
// CHECK: return
func.func @counter_used(%a0: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %r = scf.for %i = %c2 to %c6 step %c2 iter_args(%a = %a0) -> tensor<?xf64> {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %d = tensor.dim %a, %c0 : tensor<?xf64>
    %e = tensor.empty(%d) : tensor<?xf64>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
    ^bb0(%x: f64, %out: f64):
      %m = arith.addf %x, %f : f64
      linalg.yield %m : f64
    } -> tensor<?xf64>
    scf.yield %b : tensor<?xf64>
  }
  return %r : tensor<?xf64>
}

// Zero iterations: the loop's results are its initial values.
// CHECK-LABEL: func.func @no_trips
// CHECK-SAME: (%[[A0:.*]]: tensor<?xf64>)
// CHECK-NOT: scf.for
// CHECK: return %[[A0]]
func.func @no_trips(%a0: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c1 to %c0 step %c1 iter_args(%a = %a0) -> tensor<?xf64> {
    %d = tensor.dim %a, %c0 : tensor<?xf64>
    %e = tensor.empty(%d) : tensor<?xf64>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
    ^bb0(%x: f64, %out: f64):
      %m = arith.negf %x : f64
      linalg.yield %m : f64
    } -> tensor<?xf64>
    scf.yield %b : tensor<?xf64>
  }
  return %r : tensor<?xf64>
}

// Loops stay loops: too many iterations (max-trips is 16), a bound known only
// at run time, and a body that reduces (not elementwise).
// CHECK-LABEL: func.func @kept
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: return
func.func @kept(%a0: tensor<?xf64>, %n: index) -> (tensor<?xf64>, tensor<?xf64>, tensor<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c17 = arith.constant 17 : index
  %r1 = scf.for %i = %c0 to %c17 step %c1 iter_args(%a = %a0) -> tensor<?xf64> {
    %d = tensor.dim %a, %c0 : tensor<?xf64>
    %e = tensor.empty(%d) : tensor<?xf64>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
    ^bb0(%x: f64, %out: f64):
      %m = arith.negf %x : f64
      linalg.yield %m : f64
    } -> tensor<?xf64>
    scf.yield %b : tensor<?xf64>
  }
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %a0) -> tensor<?xf64> {
    %d = tensor.dim %a, %c0 : tensor<?xf64>
    %e = tensor.empty(%d) : tensor<?xf64>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
    ^bb0(%x: f64, %out: f64):
      %m = arith.negf %x : f64
      linalg.yield %m : f64
    } -> tensor<?xf64>
    scf.yield %b : tensor<?xf64>
  }
  %z = arith.constant dense<0.0> : tensor<f64>
  %r3 = scf.for %i = %c0 to %c1 step %c1 iter_args(%s = %z) -> tensor<f64> {
    %t = linalg.generic {indexing_maps = [#id, #bcast], iterator_types = ["reduction"]}
        ins(%a0 : tensor<?xf64>) outs(%s : tensor<f64>) {
    ^bb0(%x: f64, %acc: f64):
      %m = arith.addf %x, %acc : f64
      linalg.yield %m : f64
    } -> tensor<f64>
    scf.yield %t : tensor<f64>
  }
  return %r1, %r2, %r3 : tensor<?xf64>, tensor<?xf64>, tensor<f64>
}
