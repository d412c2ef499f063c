// RUN: kiln-opt %s -p tensorssa-rewrite-mutation | filecheck %s

// Each write (tensorssa.copy / tensorssa.scatter) becomes, at its place, the
// written view's new value (immut.assign / immut.scatter), passed up to the
// root through the assign op of every view on the way (immut.*_rev), then a
// tensorssa.update of the root; every other view of the root visible there
// is re-read from the new root (pass down) with an update of its own.
// Remaining views become immut access ops.

// CHECK-LABEL: func.func @view_of_view
// CHECK-SAME: (%[[X:.*]]: tensor<8xf64>, %[[VAL:.*]]: tensor<3xf64>)
func.func @view_of_view(%x: tensor<8xf64>, %val: tensor<3xf64>) -> (tensor<6xf64>, tensor<3xf64>) {
  // CHECK-DAG: %[[S1:.*]] = stablehlo.constant dense<1> : tensor<1xi64>
  // CHECK-DAG: %[[N6:.*]] = stablehlo.constant dense<6> : tensor<1xi64>
  // CHECK-DAG: %[[N3:.*]] = stablehlo.constant dense<3> : tensor<1xi64>
  %s1 = stablehlo.constant dense<1> : tensor<1xi64>
  %n6 = stablehlo.constant dense<6> : tensor<1xi64>
  %n3 = stablehlo.constant dense<3> : tensor<1xi64>
  // CHECK: %[[V:.*]] = "immut.slice"(%[[X]], %[[S1]], %[[N6]]) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<6xf64>
  %v = "tensorssa.slice"(%x, %s1, %n6) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<6xf64>
  // CHECK-NEXT: %[[W:.*]] = "immut.slice"(%[[V]], %[[S1]], %[[N3]]) {strides = array<i64: 2>}
  %w = "tensorssa.slice"(%v, %s1, %n3) {strides = array<i64: 2>} : (tensor<6xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf64>
  // Pass up: w's new value, then v's, then x's.
  // CHECK-NEXT: %[[W1:.*]] = "immut.assign"(%[[VAL]], %[[W]]) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK-NEXT: %[[V1:.*]] = "immut.slice_rev"(%[[V]], %[[W1]], %[[S1]], %[[N3]]) {strides = array<i64: 2>} : (tensor<6xf64>, tensor<3xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<6xf64>
  // CHECK-NEXT: %[[X1:.*]] = "immut.slice_rev"(%[[X]], %[[V1]], %[[S1]], %[[N6]]) {strides = array<i64: 1>}
  // CHECK-NEXT: "tensorssa.update"(%[[X1]], %[[X]])
  // Pass down: the views of x re-read from its new version.
  // CHECK-NEXT: %[[V2:.*]] = "immut.slice"(%[[X1]], %[[S1]], %[[N6]]) {strides = array<i64: 1>}
  // CHECK-NEXT: "tensorssa.update"(%[[V2]], %[[V]])
  // CHECK-NEXT: %[[W2:.*]] = "immut.slice"(%[[V2]], %[[S1]], %[[N3]]) {strides = array<i64: 2>}
  // CHECK-NEXT: "tensorssa.update"(%[[W2]], %[[W]])
  // CHECK-NOT: tensorssa.copy
  "tensorssa.copy"(%w, %val) : (tensor<3xf64>, tensor<3xf64>) -> ()
  // CHECK: return %[[V]], %[[W]]
  return %v, %w : tensor<6xf64>, tensor<3xf64>
}

// Only views that may be read after the write get a new version: here %v
// is read after it (in the add), %w only before it.
// CHECK-LABEL: func.func @unread_view
func.func @unread_view(%x: tensor<8xf64>, %val: tensor<8xf64>) -> (tensor<6xf64>, tensor<3xf64>) {
  %s1 = stablehlo.constant dense<1> : tensor<1xi64>
  %n6 = stablehlo.constant dense<6> : tensor<1xi64>
  %n3 = stablehlo.constant dense<3> : tensor<1xi64>
  // CHECK: %[[V:.*]] = "immut.slice"(%[[X:.*]], %{{.*}}, %{{.*}}) {{.*}} -> tensor<6xf64>
  %v = "tensorssa.slice"(%x, %s1, %n6) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<6xf64>
  // CHECK-NEXT: %[[W:.*]] = "immut.slice"(%[[X]], {{.*}} -> tensor<3xf64>
  %w = "tensorssa.slice"(%x, %s1, %n3) {strides = array<i64: 1>} : (tensor<8xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf64>
  // CHECK-NEXT: %[[SUM:.*]] = stablehlo.add %[[W]], %[[W]]
  %sum = stablehlo.add %w, %w : tensor<3xf64>
  // CHECK-NEXT: %[[X1:.*]] = "immut.assign"(%{{.*}}, %[[X]])
  // CHECK-NEXT: "tensorssa.update"(%[[X1]], %[[X]])
  // CHECK-NEXT: %[[V1:.*]] = "immut.slice"(%[[X1]], {{.*}} -> tensor<6xf64>
  // CHECK-NEXT: "tensorssa.update"(%[[V1]], %[[V]])
  // CHECK-NOT: "tensorssa.update"({{.*}}, %[[W]])
  "tensorssa.copy"(%x, %val) : (tensor<8xf64>, tensor<8xf64>) -> ()
  %v2 = stablehlo.add %v, %v : tensor<6xf64>
  return %v2, %sum : tensor<6xf64>, tensor<3xf64>
}

// CHECK-LABEL: func.func @transpose_and_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[VAL:.*]]: tensor<f32>)
func.func @transpose_and_reshape(%x: tensor<2x3xf32>, %val: tensor<f32>) -> (tensor<3x2xf32>, tensor<6xf32>) {
  // CHECK: %[[T:.*]] = "immut.transpose"(%[[X]]) {permutation = array<i64: 1, 0>}
  %t = "tensorssa.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %shape = stablehlo.constant dense<6> : tensor<1xi64>
  // CHECK: %[[R:.*]] = "immut.reshape"(%[[X]], %{{.*}}) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  %r = "tensorssa.reshape"(%x, %shape) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  // A scalar value broadcasts to the target.
  // CHECK-NEXT: %[[T1:.*]] = "immut.assign"(%[[VAL]], %[[T]]) : (tensor<f32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  // CHECK-NEXT: %[[X1:.*]] = "immut.transpose_rev"(%[[X]], %[[T1]]) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: "tensorssa.update"(%[[X1]], %[[X]])
  // Every view of x read later is re-read from the new version, in the
  // order the views were made.
  // CHECK-NEXT: %[[T2:.*]] = "immut.transpose"(%[[X1]])
  // CHECK-NEXT: "tensorssa.update"(%[[T2]], %[[T]])
  // CHECK-NEXT: %[[R2:.*]] = "immut.reshape"(%[[X1]], %{{.*}})
  // CHECK-NEXT: "tensorssa.update"(%[[R2]], %[[R]])
  "tensorssa.copy"(%t, %val) : (tensor<3x2xf32>, tensor<f32>) -> ()
  return %t, %r : tensor<3x2xf32>, tensor<6xf32>
}

// CHECK-LABEL: func.func @scatter_through_reverse
// CHECK-SAME: (%[[X:.*]]: tensor<?xi32>, %[[IDX:.*]]: tensor<2xi64>, %[[UPD:.*]]: tensor<2xi32>)
func.func @scatter_through_reverse(%x: tensor<?xi32>, %idx: tensor<2xi64>, %upd: tensor<2xi32>) -> tensor<?xi32> {
  // CHECK: %[[R:.*]] = "immut.reverse"(%[[X]]) {dimensions = array<i64: 0>}
  %r = "tensorssa.reverse"(%x) {dimensions = array<i64: 0>} : (tensor<?xi32>) -> tensor<?xi32>
  // CHECK-NEXT: %[[R1:.*]] = "immut.scatter"(%[[R]], %[[IDX]], %[[UPD]]) {axis = 0 : i64} : (tensor<?xi32>, tensor<2xi64>, tensor<2xi32>) -> tensor<?xi32>
  // CHECK-NEXT: %[[X1:.*]] = "immut.reverse_rev"(%[[X]], %[[R1]]) {dimensions = array<i64: 0>}
  // CHECK-NEXT: "tensorssa.update"(%[[X1]], %[[X]])
  // CHECK-NEXT: %[[R2:.*]] = "immut.reverse"(%[[X1]])
  // CHECK-NEXT: "tensorssa.update"(%[[R2]], %[[R]])
  // CHECK-NOT: tensorssa.scatter
  "tensorssa.scatter"(%r, %idx, %upd) {axis = 0 : i64} : (tensor<?xi32>, tensor<2xi64>, tensor<2xi32>) -> ()
  return %r : tensor<?xi32>
}

// A view made after the write is not re-read there (it sees the new value
// once tensorssa-rename points it at the new root).
// CHECK-LABEL: func.func @later_view
func.func @later_view(%x: tensor<4xf64>, %val: tensor<4xf64>) -> tensor<2xf64> {
  %s = stablehlo.constant dense<0> : tensor<1xi64>
  %n = stablehlo.constant dense<2> : tensor<1xi64>
  // CHECK: %[[X1:.*]] = "immut.assign"
  // CHECK-NEXT: "tensorssa.update"(%[[X1]], %[[X:.*]]) :
  // CHECK-NEXT: "immut.slice"(%[[X]],
  "tensorssa.copy"(%x, %val) : (tensor<4xf64>, tensor<4xf64>) -> ()
  %v = "tensorssa.slice"(%x, %s, %n) {strides = array<i64: 1>} : (tensor<4xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf64>
  return %v : tensor<2xf64>
}

// A view made outside a loop and viewed again inside it, where the write
// is: the next iteration makes the inner view again from it, so it is read
// after the write and re-read from the new root (`v = b[1:]; for k: v[k] = c`).
// CHECK-LABEL: func.func @view_viewed_again_in_a_loop
func.func @view_viewed_again_in_a_loop(%x: tensor<5xf64>, %val: tensor<1xf64>) -> tensor<5xf64> {
  %s1 = stablehlo.constant dense<1> : tensor<1xi64>
  %n4 = stablehlo.constant dense<4> : tensor<1xi64>
  %n1 = stablehlo.constant dense<1> : tensor<1xi64>
  %k0 = stablehlo.constant dense<0> : tensor<i64>
  // CHECK: %[[V:.*]] = "immut.slice"(%[[X:.*]], %{{.*}}, %{{.*}}) {strides = array<i64: 1>} : (tensor<5xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf64>
  %v = "tensorssa.slice"(%x, %s1, %n4) {strides = array<i64: 1>} : (tensor<5xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf64>
  %r = stablehlo.while(%k = %k0) : tensor<i64>
  cond {
    %lim = stablehlo.constant dense<3> : tensor<i64>
    %go = stablehlo.compare LT, %k, %lim, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %go : tensor<i1>
  } do {
    %start = stablehlo.reshape %k : (tensor<i64>) -> tensor<1xi64>
    // CHECK: %[[E:.*]] = "immut.slice"(%[[V]],
    %e = "tensorssa.slice"(%v, %start, %n1) {strides = array<i64: 1>} : (tensor<4xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xf64>
    // CHECK: %[[X1:.*]] = "immut.slice_rev"(%[[X]],
    // CHECK-NEXT: "tensorssa.update"(%[[X1]], %[[X]])
    // CHECK-NEXT: %[[V2:.*]] = "immut.slice"(%[[X1]],
    // CHECK-NEXT: "tensorssa.update"(%[[V2]], %[[V]])
    "tensorssa.copy"(%e, %val) : (tensor<1xf64>, tensor<1xf64>) -> ()
    %one = stablehlo.constant dense<1> : tensor<i64>
    %next = stablehlo.add %k, %one : tensor<i64>
    stablehlo.return %next : tensor<i64>
  }
  return %x : tensor<5xf64>
}
