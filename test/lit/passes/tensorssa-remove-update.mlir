// RUN: kiln-opt %s -p 'tensorssa-rewrite-mutation,tensorssa-block-propagation,tensorssa-rename,tensorssa-remove-update' | filecheck %s
// RUN: kiln-opt %s -p 'tensorssa-rewrite-mutation,tensorssa-block-propagation,tensorssa-rename' | filecheck %s --check-prefix=BEFORE
// RUN: not kiln-opt %s -p tensorssa-remove-update 2>&1 | filecheck %s --check-prefix=LEFT

// The four functionalization passes in sequence, on programs with reference
// semantics. tensorssa-remove-update, last, erases the tensorssa.update
// markers once tensorssa-rename has pointed every later use at the new
// version; no tensorssa op is left. Run alone on views and writes it reports
// them as a bug of the earlier passes.

// BEFORE: tensorssa.update
// LEFT: tensorssa ops left after functionalization: ['tensorssa.copy', 'tensorssa.reshape', 'tensorssa.reverse', 'tensorssa.slice', 'tensorssa.transpose']
// CHECK-NOT: tensorssa.

// `b[i] = b[i] + 1` in a loop: b becomes a loop-carried version updated by
// immut.slice_rev, and the function returns the loop's final version.
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
  // CHECK: %[[LOOP:.*]]:2 = stablehlo.while(%{{.*}} = %{{.*}}, %[[BB:.*]] = %[[B]]) : tensor<i64>, tensor<?x?xf64>
  %last = stablehlo.while(%i = %c0) : tensor<i64>
  cond {
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %i1 = stablehlo.reshape %i : (tensor<i64>) -> tensor<1xi64>
    %starts = stablehlo.concatenate %i1, %zero, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    // CHECK: %[[ROW:.*]] = "immut.slice"(%[[BB]], %[[STARTS:.*]], %[[SIZES:.*]]) {strides = array<i64: 1, 1>}
    %row = "tensorssa.slice"(%b, %starts, %sizes) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x?xf64>
    %ones = stablehlo.dynamic_broadcast_in_dim %cst, %sizes, dims = [] : (tensor<f64>, tensor<2xi64>) -> tensor<1x?xf64>
    // CHECK: %[[NEW:.*]] = stablehlo.add %[[ROW]], %{{.*}} : tensor<1x?xf64>
    %new = stablehlo.add %row, %ones : tensor<1x?xf64>
    // CHECK: %[[DST:.*]] = "immut.slice"(%[[BB]], %[[STARTS]], %[[SIZES]])
    %dst = "tensorssa.slice"(%b, %starts, %sizes) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x?xf64>
    // CHECK-NEXT: %[[ROW1:.*]] = "immut.assign"(%[[NEW]], %[[DST]])
    // CHECK-NEXT: %[[B1:.*]] = "immut.slice_rev"(%[[BB]], %[[ROW1]], %[[STARTS]], %[[SIZES]]) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<1x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf64>
    "tensorssa.copy"(%dst, %new) : (tensor<1x?xf64>, tensor<1x?xf64>) -> ()
    %next = stablehlo.add %i, %c1 : tensor<i64>
    // CHECK: stablehlo.return %{{.*}}, %[[B1]] : tensor<i64>, tensor<?x?xf64>
    stablehlo.return %next : tensor<i64>
  }
  // CHECK: return %[[LOOP]]#1 : tensor<?x?xf64>
  return %b : tensor<?x?xf64>
}

// A write in one branch of an if to an array whose view %v was made before
// the if: both leave the if as results; the other branch returns the
// versions it was given, and the add after the if reads the if's view result.
// CHECK-LABEL: func.func @branch_write
// CHECK-SAME: (%[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<8xf64>)
func.func @branch_write(%p: tensor<i1>, %x: tensor<8xf64>) -> tensor<7xf64> {
  %s1 = stablehlo.constant dense<1> : tensor<1xi64>
  %n7 = stablehlo.constant dense<7> : tensor<1xi64>
  // CHECK: %[[V:.*]] = "immut.slice"(%[[X]],
  %v = "tensorssa.slice"(%x, %s1, %n7) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<7xf64>
  // CHECK: %[[IF:.*]]:2 = "stablehlo.if"(%[[P]]) ({
  "stablehlo.if"(%p) ({
    %s0 = stablehlo.constant dense<0> : tensor<1xi64>
    %n1 = stablehlo.constant dense<1> : tensor<1xi64>
    // CHECK: %[[E:.*]] = "immut.slice"(%[[X]],
    %e = "tensorssa.slice"(%x, %s0, %n1) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xf64>
    %fifty = stablehlo.constant dense<5.000000e+01> : tensor<1xf64>
    // CHECK: %[[E1:.*]] = "immut.assign"(%{{.*}}, %[[E]])
    // CHECK-NEXT: %[[X1:.*]] = "immut.slice_rev"(%[[X]], %[[E1]],
    // CHECK: %[[V1:.*]] = "immut.slice"(%[[X1]], {{.*}} -> tensor<7xf64>
    "tensorssa.copy"(%e, %fifty) : (tensor<1xf64>, tensor<1xf64>) -> ()
    // CHECK: stablehlo.return %[[X1]], %[[V1]] : tensor<8xf64>, tensor<7xf64>
    stablehlo.return
  }, {
    // CHECK: stablehlo.return %[[X]], %[[V]] : tensor<8xf64>, tensor<7xf64>
    stablehlo.return
  }) : (tensor<i1>) -> ()
  // CHECK: %[[R:.*]] = stablehlo.add %[[IF]]#1, %[[IF]]#1 : tensor<7xf64>
  %r = stablehlo.add %v, %v : tensor<7xf64>
  // CHECK-NEXT: return %[[R]]
  return %r : tensor<7xf64>
}

// The normalize program: copy an image, swap channels 0 and 2 through
// slices (with a copy of channel 0), subtract the mean and divide by the
// standard deviation in place.
// CHECK-LABEL: func.func @normalize
// CHECK-SAME: (%[[IMG:.*]]: tensor<4x4x3xf32>, %[[MEAN:.*]]: tensor<4x4x3xf32>, %[[STD:.*]]: tensor<4x4x3xf32>)
func.func @normalize(%img: tensor<4x4x3xf32>, %mean: tensor<4x4x3xf32>, %std: tensor<4x4x3xf32>) -> tensor<4x4x3xf32> {
  // CHECK: %[[OUT:.*]] = "immut.assign"(%[[IMG]], %[[IMG]])
  %out = "immut.assign"(%img, %img) : (tensor<4x4x3xf32>, tensor<4x4x3xf32>) -> tensor<4x4x3xf32>
  // CHECK-DAG: %[[S0:.*]] = stablehlo.constant dense<0> : tensor<3xi64>
  // CHECK-DAG: %[[S2:.*]] = stablehlo.constant dense<[0, 0, 2]> : tensor<3xi64>
  // CHECK-DAG: %[[N:.*]] = stablehlo.constant dense<[4, 4, 1]> : tensor<3xi64>
  %s0 = stablehlo.constant dense<[0, 0, 0]> : tensor<3xi64>
  %s2 = stablehlo.constant dense<[0, 0, 2]> : tensor<3xi64>
  %n = stablehlo.constant dense<[4, 4, 1]> : tensor<3xi64>
  // CHECK: %[[C0:.*]] = "immut.slice"(%[[OUT]], %[[S0]], %[[N]])
  %c0 = "tensorssa.slice"(%out, %s0, %n) {strides = array<i64: 1, 1, 1>} : (tensor<4x4x3xf32>, tensor<3xi64>, tensor<3xi64>) -> tensor<4x4x1xf32>
  // CHECK-NEXT: %[[C2:.*]] = "immut.slice"(%[[OUT]], %[[S2]], %[[N]])
  %c2 = "tensorssa.slice"(%out, %s2, %n) {strides = array<i64: 1, 1, 1>} : (tensor<4x4x3xf32>, tensor<3xi64>, tensor<3xi64>) -> tensor<4x4x1xf32>
  // CHECK-NEXT: %[[TMP:.*]] = "immut.assign"(%[[C0]], %[[C0]])
  %tmp = "immut.assign"(%c0, %c0) : (tensor<4x4x1xf32>, tensor<4x4x1xf32>) -> tensor<4x4x1xf32>
  // out[..., 0] = out[..., 2]
  // CHECK-NEXT: %[[NEW0:.*]] = "immut.assign"(%[[C2]], %[[C0]])
  // CHECK-NEXT: %[[OUT1:.*]] = "immut.slice_rev"(%[[OUT]], %[[NEW0]], %[[S0]], %[[N]])
  "tensorssa.copy"(%c0, %c2) : (tensor<4x4x1xf32>, tensor<4x4x1xf32>) -> ()
  // out[..., 2] = tmp, into the version written above
  // CHECK: %[[C2B:.*]] = "immut.slice"(%[[OUT1]], %[[S2]], %[[N]])
  // CHECK: %[[NEW2:.*]] = "immut.assign"(%[[TMP]], %[[C2B]])
  // CHECK-NEXT: %[[OUT2:.*]] = "immut.slice_rev"(%[[OUT1]], %[[NEW2]], %[[S2]], %[[N]])
  "tensorssa.copy"(%c2, %tmp) : (tensor<4x4x1xf32>, tensor<4x4x1xf32>) -> ()
  // CHECK: %[[CENTERED:.*]] = stablehlo.subtract %[[OUT2]], %[[MEAN]]
  %centered = stablehlo.subtract %out, %mean : tensor<4x4x3xf32>
  // CHECK-NEXT: %[[OUT3:.*]] = "immut.assign"(%[[CENTERED]], %[[OUT2]])
  "tensorssa.copy"(%out, %centered) : (tensor<4x4x3xf32>, tensor<4x4x3xf32>) -> ()
  // CHECK: %[[SCALED:.*]] = stablehlo.divide %[[OUT3]], %[[STD]]
  %scaled = stablehlo.divide %out, %std : tensor<4x4x3xf32>
  // CHECK-NEXT: %[[OUT4:.*]] = "immut.assign"(%[[SCALED]], %[[OUT3]])
  "tensorssa.copy"(%out, %scaled) : (tensor<4x4x3xf32>, tensor<4x4x3xf32>) -> ()
  // CHECK: return %[[OUT4]]
  return %out : tensor<4x4x3xf32>
}

// A transposed view read after a write through a reversed view.
// CHECK-LABEL: func.func @reverse_then_transpose
func.func @reverse_then_transpose(%x: tensor<2x3xf64>, %v: tensor<f64>) -> tensor<3x2xf64> {
  // CHECK: %[[T:.*]] = "immut.transpose"(%[[X:.*]]) {permutation = array<i64: 1, 0>}
  %t = "tensorssa.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf64>) -> tensor<3x2xf64>
  %shape = stablehlo.constant dense<6> : tensor<1xi64>
  %flat = "tensorssa.reshape"(%x, %shape) : (tensor<2x3xf64>, tensor<1xi64>) -> tensor<6xf64>
  %r = "tensorssa.reverse"(%flat) {dimensions = array<i64: 0>} : (tensor<6xf64>) -> tensor<6xf64>
  // CHECK: %[[R1:.*]] = "immut.assign"
  // CHECK-NEXT: %[[F1:.*]] = "immut.reverse_rev"(%{{.*}}, %[[R1]])
  // CHECK-NEXT: %[[X1:.*]] = "immut.reshape_rev"(%[[X]], %[[F1]])
  "tensorssa.copy"(%r, %v) : (tensor<6xf64>, tensor<f64>) -> ()
  // CHECK: %[[T1:.*]] = "immut.transpose"(%[[X1]])
  // CHECK: %[[SUM:.*]] = stablehlo.add %[[T1]], %[[T1]]
  %sum = stablehlo.add %t, %t : tensor<3x2xf64>
  return %sum : tensor<3x2xf64>
}
