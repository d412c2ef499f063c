// RUN: kiln-opt %s -p tensorssa-rename | filecheck %s

// Every use of `old` after `tensorssa.update(new, old)` (later ops of the
// block and ops nested in them) reads `new`; uses before it are kept.
// Updates are handled in program order, so versions chain.

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4xf64>, %[[A:.*]]: tensor<4xf64>, %[[B:.*]]: tensor<4xf64>)
func.func @chain(%x: tensor<4xf64>, %a: tensor<4xf64>, %b: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  // CHECK: %[[R0:.*]] = stablehlo.add %[[X]], %[[X]]
  %r0 = stablehlo.add %x, %x : tensor<4xf64>
  // CHECK-NEXT: %[[X1:.*]] = "immut.assign"(%[[A]], %[[X]])
  %x1 = "immut.assign"(%a, %x) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  // CHECK-NEXT: "tensorssa.update"(%[[X1]], %[[X]])
  "tensorssa.update"(%x1, %x) : (tensor<4xf64>, tensor<4xf64>) -> ()
  // CHECK-NEXT: %[[R1:.*]] = stablehlo.add %[[X1]], %[[X1]]
  %r1 = stablehlo.add %x, %x : tensor<4xf64>
  // The second write's old version is renamed too: it reads x1.
  // CHECK-NEXT: %[[X2:.*]] = "immut.assign"(%[[B]], %[[X1]])
  %x2 = "immut.assign"(%b, %x) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  // CHECK-NEXT: "tensorssa.update"(%[[X2]], %[[X1]])
  "tensorssa.update"(%x2, %x) : (tensor<4xf64>, tensor<4xf64>) -> ()
  // CHECK-NEXT: return %[[R0]], %[[R1]], %[[X2]]
  return %r0, %r1, %x : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}

// The loop of `b[i] = b[i] + 1` after tensorssa-block-propagation: the body
// returns the version written in it, and uses after the loop read the loop's
// result.
// CHECK-LABEL: func.func @row_update
// CHECK-SAME: (%[[N:.*]]: tensor<i64>, %[[M:.*]]: tensor<i64>, %[[B:.*]]: tensor<?x?xf64>)
func.func @row_update(%n: tensor<i64>, %m: tensor<i64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %zero = stablehlo.constant dense<0> : tensor<1xi64>
  %one = stablehlo.constant dense<1> : tensor<1xi64>
  %cst = stablehlo.constant dense<1.000000e+00> : tensor<f64>
  %m1 = stablehlo.reshape %m : (tensor<i64>) -> tensor<1xi64>
  %sizes = stablehlo.concatenate %one, %m1, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // CHECK: %[[LOOP:.*]]:2 = stablehlo.while(%{{.*}} = %{{.*}}, %[[BB:.*]] = %[[B]])
  %loop:2 = stablehlo.while(%i = %c0, %bb = %b) : tensor<i64>, tensor<?x?xf64>
  cond {
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %i1 = stablehlo.reshape %i : (tensor<i64>) -> tensor<1xi64>
    %starts = stablehlo.concatenate %i1, %zero, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %row = "immut.slice"(%bb, %starts, %sizes) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x?xf64>
    %ones = stablehlo.dynamic_broadcast_in_dim %cst, %sizes, dims = [] : (tensor<f64>, tensor<2xi64>) -> tensor<1x?xf64>
    %new = stablehlo.add %row, %ones : tensor<1x?xf64>
    %dst = "immut.slice"(%bb, %starts, %sizes) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x?xf64>
    %upd = "immut.assign"(%new, %dst) : (tensor<1x?xf64>, tensor<1x?xf64>) -> tensor<1x?xf64>
    // CHECK: %[[B1:.*]] = "immut.slice_rev"(%[[BB]],
    %b1 = "immut.slice_rev"(%bb, %upd, %starts, %sizes) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<1x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf64>
    "tensorssa.update"(%b1, %bb) : (tensor<?x?xf64>, tensor<?x?xf64>) -> ()
    %next = stablehlo.add %i, %c1 : tensor<i64>
    // CHECK: stablehlo.return %{{.*}}, %[[B1]] : tensor<i64>, tensor<?x?xf64>
    stablehlo.return %next, %bb : tensor<i64>, tensor<?x?xf64>
  }
  "tensorssa.update"(%loop#1, %b) : (tensor<?x?xf64>, tensor<?x?xf64>) -> ()
  // CHECK: return %[[LOOP]]#1
  return %b : tensor<?x?xf64>
}

// Inside a branch, uses after the update (and the branch's results) read
// the new version; the other branch keeps the old one.
// CHECK-LABEL: func.func @branch_write
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<8xf64>)
func.func @branch_write(%p: tensor<i1>, %x: tensor<8xf64>) -> tensor<8xf64> {
  %s0 = stablehlo.constant dense<0> : tensor<1xi64>
  %n1 = stablehlo.constant dense<1> : tensor<1xi64>
  %fifty = stablehlo.constant dense<5.000000e+01> : tensor<1xf64>
  // CHECK: %[[IF:.*]] = "stablehlo.if"(%[[P]])
  %if = "stablehlo.if"(%p) ({
    %e = "immut.slice"(%x, %s0, %n1) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xf64>
    %e1 = "immut.assign"(%fifty, %e) : (tensor<1xf64>, tensor<1xf64>) -> tensor<1xf64>
    // CHECK: %[[X1:.*]] = "immut.slice_rev"(%[[X]],
    %x1 = "immut.slice_rev"(%x, %e1, %s0, %n1) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<8xf64>
    "tensorssa.update"(%x1, %x) : (tensor<8xf64>, tensor<8xf64>) -> ()
    // CHECK: stablehlo.return %[[X1]] : tensor<8xf64>
    stablehlo.return %x : tensor<8xf64>
  }, {
    // CHECK: stablehlo.return %[[X]] : tensor<8xf64>
    stablehlo.return %x : tensor<8xf64>
  }) : (tensor<i1>) -> tensor<8xf64>
  "tensorssa.update"(%if, %x) : (tensor<8xf64>, tensor<8xf64>) -> ()
  // CHECK: %[[R:.*]] = stablehlo.add %[[IF]], %[[IF]]
  %r = stablehlo.add %x, %x : tensor<8xf64>
  return %r : tensor<8xf64>
}
