// RUN: kiln-opt %s -p tensorssa-block-propagation | filecheck %s

// A tensorssa.update inside a stablehlo.while / stablehlo.if whose old
// version is defined outside the op makes that version leave the op:
// a while carries it (new operand, block arguments in both regions, returned
// by the body; uses inside the loop read the block argument), an if returns
// it from every branch. After the op, an update of the outer version by the
// new result. The input is `b[i] = b[i] + 1` in a loop after
// tensorssa-rewrite-mutation.

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
  // The written array becomes a loop-carried value.
  // CHECK: %[[LOOP:.*]]:2 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[BB:.*]] = %[[B]]) : tensor<i64>, tensor<?x?xf64>
  %last = stablehlo.while(%i = %c0) : tensor<i64>
  cond {
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %i1 = stablehlo.reshape %i : (tensor<i64>) -> tensor<1xi64>
    %starts = stablehlo.concatenate %i1, %zero, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    // Reads inside the loop read the carried version.
    // CHECK: %[[ROW:.*]] = "immut.slice"(%[[BB]],
    %row = "immut.slice"(%b, %starts, %sizes) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x?xf64>
    %ones = stablehlo.dynamic_broadcast_in_dim %cst, %sizes, dims = [] : (tensor<f64>, tensor<2xi64>) -> tensor<1x?xf64>
    %new = stablehlo.add %row, %ones : tensor<1x?xf64>
    // CHECK: %[[DST:.*]] = "immut.slice"(%[[BB]],
    %dst = "immut.slice"(%b, %starts, %sizes) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x?xf64>
    %upd = "immut.assign"(%new, %dst) : (tensor<1x?xf64>, tensor<1x?xf64>) -> tensor<1x?xf64>
    // CHECK: %[[B1:.*]] = "immut.slice_rev"(%[[BB]],
    %b1 = "immut.slice_rev"(%b, %upd, %starts, %sizes) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<1x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf64>
    // CHECK-NEXT: "tensorssa.update"(%[[B1]], %[[BB]])
    "tensorssa.update"(%b1, %b) : (tensor<?x?xf64>, tensor<?x?xf64>) -> ()
    %next = stablehlo.add %i, %c1 : tensor<i64>
    // The body returns the carried version; tensorssa-rename makes it the new one.
    // CHECK: stablehlo.return %{{.*}}, %[[BB]] : tensor<i64>, tensor<?x?xf64>
    stablehlo.return %next : tensor<i64>
  }
  // CHECK: "tensorssa.update"(%[[LOOP]]#1, %[[B]])
  // CHECK-NEXT: return %[[B]]
  return %b : tensor<?x?xf64>
}

// A write in one branch of an if to an array (and a view of it) made before it.
// CHECK-LABEL: func.func @branch_write
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<8xf64>)
func.func @branch_write(%p: tensor<i1>, %x: tensor<8xf64>) -> tensor<7xf64> {
  %s1 = stablehlo.constant dense<1> : tensor<1xi64>
  %n7 = stablehlo.constant dense<7> : tensor<1xi64>
  // CHECK: %[[V:.*]] = "immut.slice"(%[[X]],
  %v = "immut.slice"(%x, %s1, %n7) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<7xf64>
  // CHECK: %[[IF:.*]]:2 = "stablehlo.if"(%[[P]]) ({
  "stablehlo.if"(%p) ({
    %s0 = stablehlo.constant dense<0> : tensor<1xi64>
    %n1 = stablehlo.constant dense<1> : tensor<1xi64>
    %e = "immut.slice"(%x, %s0, %n1) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xf64>
    %fifty = stablehlo.constant dense<5.000000e+01> : tensor<1xf64>
    %e1 = "immut.assign"(%fifty, %e) : (tensor<1xf64>, tensor<1xf64>) -> tensor<1xf64>
    %x1 = "immut.slice_rev"(%x, %e1, %s0, %n1) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<8xf64>
    "tensorssa.update"(%x1, %x) : (tensor<8xf64>, tensor<8xf64>) -> ()
    %v1 = "immut.slice"(%x1, %s1, %n7) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<7xf64>
    "tensorssa.update"(%v1, %v) : (tensor<7xf64>, tensor<7xf64>) -> ()
    // Each branch returns the outer versions (renamed later to its own).
    // CHECK: stablehlo.return %[[X]], %[[V]] : tensor<8xf64>, tensor<7xf64>
    stablehlo.return
  }, {
    // CHECK: stablehlo.return %[[X]], %[[V]] : tensor<8xf64>, tensor<7xf64>
    stablehlo.return
  // CHECK-NEXT: }) : (tensor<i1>) -> (tensor<8xf64>, tensor<7xf64>)
  }) : (tensor<i1>) -> ()
  // CHECK-DAG: "tensorssa.update"(%[[IF]]#0, %[[X]])
  // CHECK-DAG: "tensorssa.update"(%[[IF]]#1, %[[V]])
  %r = stablehlo.add %v, %v : tensor<7xf64>
  return %r : tensor<7xf64>
}
