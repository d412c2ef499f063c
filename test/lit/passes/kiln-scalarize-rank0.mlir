// RUN: kiln-opt %s -p kiln-scalarize-rank0,canonicalize | filecheck %s

// A counted loop as kiln-legalize-control-flow and stablehlo-legalize-to-linalg
// leave it: the index and the accumulator are 0-d tensors, and every scalar
// op is a 0-d linalg.generic. After the pass (and canonicalize) the loop
// carries i64 and f64 and its body is plain arith.
#map = affine_map<() -> ()>
// The loop bound, a read of the 0-d argument, is made once at the entry.
// CHECK-LABEL: func.func @count
// CHECK-SAME: (%[[N:.*]]: tensor<i64>)
func.func @count(%n: tensor<i64>) -> tensor<f64> {
  // CHECK-DAG: %[[END:.*]] = tensor.extract %[[N]][] : tensor<i64>
  // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
  // CHECK-DAG: %[[ACC0:.*]] = arith.constant 0.000000e+00 : f64
  // CHECK: %[[W:.*]]:2 = scf.while (%[[I:.*]] = %[[ZERO]], %[[ACC:.*]] = %[[ACC0]]) : (i64, f64) -> (i64, f64)
  // CHECK-NEXT: %[[P:.*]] = arith.cmpi slt, %[[I]], %[[END]] : i64
  // CHECK-NEXT: scf.condition(%[[P]]) %[[I]], %[[ACC]] : i64, f64
  // CHECK: ^bb0(%[[I2:.*]]: i64, %[[ACC2:.*]]: f64):
  // CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[I2]] : i64 to f64
  // CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ACC2]], %[[F]] : f64
  // CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[I2]], %{{.*}} : i64
  // CHECK-NEXT: scf.yield %[[NEXT]], %[[SUM]] : i64, f64
  // CHECK-NOT: linalg.generic
  // CHECK: %[[R:.*]] = tensor.from_elements %[[W]]#1 : tensor<f64>
  // CHECK-NEXT: return %[[R]]
  %one = arith.constant 1 : i64
  %zero = arith.constant dense<0> : tensor<i64>
  %acc0 = arith.constant dense<0.0> : tensor<f64>
  %r:2 = scf.while (%i = %zero, %acc = %acc0) : (tensor<i64>, tensor<f64>) -> (tensor<i64>, tensor<f64>) {
    %e = tensor.empty() : tensor<i1>
    %p = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []}
        ins(%i, %n : tensor<i64>, tensor<i64>) outs(%e : tensor<i1>) {
    ^bb0(%a: i64, %b: i64, %out: i1):
      %c = arith.cmpi slt, %a, %b : i64
      linalg.yield %c : i1
    } -> tensor<i1>
    %pred = tensor.extract %p[] : tensor<i1>
    scf.condition(%pred) %i, %acc : tensor<i64>, tensor<f64>
  } do {
  ^bb0(%i: tensor<i64>, %acc: tensor<f64>):
    %e = tensor.empty() : tensor<f64>
    %s = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = []}
        ins(%acc, %i : tensor<f64>, tensor<i64>) outs(%e : tensor<f64>) {
    ^bb0(%a: f64, %b: i64, %out: f64):
      %f = arith.sitofp %b : i64 to f64
      %t = arith.addf %a, %f : f64
      linalg.yield %t : f64
    } -> tensor<f64>
    %e2 = tensor.empty() : tensor<i64>
    %next = linalg.generic {indexing_maps = [#map, #map], iterator_types = []}
        ins(%i : tensor<i64>) outs(%e2 : tensor<i64>) {
    ^bb0(%a: i64, %out: i64):
      %t = arith.addi %a, %one : i64
      linalg.yield %t : i64
    } -> tensor<i64>
    scf.yield %next, %s : tensor<i64>, tensor<f64>
  }
  return %r#1 : tensor<f64>
}

// A 0-d generic outside loops is inlined too; one with a ranked operand is
// left alone.
// CHECK-LABEL: func.func @mixed
func.func @mixed(%x: tensor<f64>, %v: tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>) {
  // CHECK: %[[X:.*]] = tensor.extract %{{.*}}[] : tensor<f64>
  // CHECK-NEXT: %[[N:.*]] = arith.negf %[[X]] : f64
  // CHECK-NEXT: tensor.from_elements %[[N]] : tensor<f64>
  // CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]
  %e = tensor.empty() : tensor<f64>
  %n = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%x : tensor<f64>) outs(%e : tensor<f64>) {
  ^bb0(%a: f64, %out: f64):
    %t = arith.negf %a : f64
    linalg.yield %t : f64
  } -> tensor<f64>
  %e4 = tensor.empty() : tensor<4xf64>
  %w = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%v : tensor<4xf64>) outs(%e4 : tensor<4xf64>) {
  ^bb0(%a: f64, %out: f64):
    %t = arith.negf %a : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  return %n, %w : tensor<f64>, tensor<4xf64>
}

// A traced `if` on scalars (crc16's `crc = (crc >> 1) ^ poly if ... else crc >> 1`)
// yields the element, not a 0-d tensor: after canonicalize no tensor is left
// in the loop, so bufferization allocates no 0-d buffer per iteration.
// CHECK-LABEL: func.func @branch
// CHECK-SAME: (%[[P:.*]]: i1, %[[C:.*]]: i64, %[[POLY:.*]]: tensor<i64>)
func.func @branch(%p: i1, %crc: i64, %poly: tensor<i64>) -> i64 {
  // The read of the 0-d argument leaves the branch (no load under a condition).
  // CHECK: %[[Q:.*]] = tensor.extract %[[POLY]][] : tensor<i64>
  // CHECK: %[[R:.*]] = scf.if %[[P]] -> (i64) {
  // CHECK-NEXT: %[[S:.*]] = arith.shrsi %[[C]]
  // CHECK-NEXT: %[[X:.*]] = arith.xori %[[S]], %[[Q]] : i64
  // CHECK-NEXT: scf.yield %[[X]] : i64
  // CHECK-NEXT: } else {
  // CHECK-NEXT: %[[S2:.*]] = arith.shrsi %[[C]]
  // CHECK-NEXT: scf.yield %[[S2]] : i64
  // CHECK-NOT: tensor.from_elements
  // CHECK: return %[[R]] : i64
  %one = arith.constant 1 : i64
  %r = scf.if %p -> (tensor<i64>) {
    %s = arith.shrsi %crc, %one : i64
    %q = tensor.extract %poly[] : tensor<i64>
    %x = arith.xori %s, %q : i64
    %t = tensor.from_elements %x : tensor<i64>
    scf.yield %t : tensor<i64>
  } else {
    %s = arith.shrsi %crc, %one : i64
    %t = tensor.from_elements %s : tensor<i64>
    scf.yield %t : tensor<i64>
  }
  %v = tensor.extract %r[] : tensor<i64>
  return %v : i64
}
