// RUN: kiln-opt %s -p immut-to-stablehlo | filecheck %s

// Every immut Access/Assign op becomes StableHLO.
// CHECK-NOT: immut.

// CHECK-LABEL: func.func @slices
// CHECK-SAME: (%[[X:.*]]: tensor<?xf64>, %[[S:.*]]: tensor<1xi64>, %[[N:.*]]: tensor<1xi64>, %[[V:.*]]: tensor<?xf64>)
func.func @slices(%x: tensor<?xf64>, %s: tensor<1xi64>, %n: tensor<1xi64>, %v: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  // Unit strides: limits = starts + sizes.
  // CHECK: %[[ONE:.*]] = stablehlo.constant dense<1> : tensor<1xi64>
  // CHECK-NEXT: %[[LIM:.*]] = stablehlo.add %[[S]], %[[N]] : tensor<1xi64>
  // CHECK-NEXT: %[[A:.*]] = stablehlo.real_dynamic_slice %[[X]], %[[S]], %[[LIM]], %[[ONE]]
  %a = "immut.slice"(%x, %s, %n) {strides = array<i64: 1>} : (tensor<?xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf64>
  // Strided: limits = starts + max(sizes * strides - (strides - 1), 0).
  // CHECK: %[[TWO:.*]] = stablehlo.constant dense<2> : tensor<1xi64>
  // CHECK-NEXT: %[[SPAN:.*]] = stablehlo.multiply %[[N]], %[[TWO]]
  // CHECK: stablehlo.subtract %[[SPAN]]
  // CHECK: stablehlo.maximum
  // CHECK: %[[B:.*]] = stablehlo.real_dynamic_slice %[[X]], %[[S]], %{{.*}}, %[[TWO]]
  %b = "immut.slice"(%x, %s, %n) {strides = array<i64: 2>} : (tensor<?xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf64>
  // Unit strides: an update slice at the start.
  // CHECK: %[[START:.*]] = stablehlo.reshape %{{.*}} : (tensor<1xi64>) -> tensor<i64>
  // CHECK-NEXT: %[[C:.*]] = stablehlo.dynamic_update_slice %[[X]], %[[V]], %[[START]]
  %c = "immut.slice_rev"(%x, %v, %s, %n) {strides = array<i64: 1>} : (tensor<?xf64>, tensor<?xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf64>
  // Strided: the indices start + 3 * iota, read (gather), written, put back (scatter).
  // CHECK: %[[IOTA:.*]] = stablehlo.dynamic_iota
  // CHECK: %[[THREE:.*]] = stablehlo.constant dense<3> : tensor<i64>
  // CHECK: %[[IDX:.*]] = stablehlo.add
  // CHECK: %[[ROWS:.*]] = "stablehlo.dynamic_gather"(%[[X]], %[[IDX]],
  // CHECK: %[[ROWS1:.*]] = stablehlo.dynamic_update_slice %[[ROWS]], %[[V]],
  // CHECK-NEXT: %[[D:.*]] = "stablehlo.scatter"(%[[X]], %[[IDX]], %[[ROWS1]])
  // CHECK: stablehlo.return %{{.*}} : tensor<f64>
  %d = "immut.slice_rev"(%x, %v, %s, %n) {strides = array<i64: 3>} : (tensor<?xf64>, tensor<?xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf64>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
  return %a, %b, %c, %d : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}

// CHECK-LABEL: func.func @shapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<?x?xf32>, %[[SHAPE:.*]]: tensor<1xi64>, %[[T:.*]]: tensor<3x2xf32>, %[[F:.*]]: tensor<?xf32>)
func.func @shapes(%x: tensor<2x3xf32>, %y: tensor<?x?xf32>, %shape: tensor<1xi64>, %t: tensor<3x2xf32>, %f: tensor<?xf32>) -> (tensor<6xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %static = stablehlo.constant dense<6> : tensor<1xi64>
  // CHECK: %[[R:.*]] = stablehlo.reshape %[[X]] : (tensor<2x3xf32>) -> tensor<6xf32>
  %r = "immut.reshape"(%x, %static) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  // CHECK-NEXT: %[[RD:.*]] = stablehlo.dynamic_reshape %[[Y]], %[[SHAPE]]
  %rd = "immut.reshape"(%y, %shape) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  // reshape_rev: the value back to the base's shape, read with get_dimension_size.
  // CHECK-NEXT: stablehlo.get_dimension_size %[[Y]], dim = 0
  // CHECK: stablehlo.get_dimension_size %[[Y]], dim = 1
  // CHECK: %[[YSHAPE:.*]] = stablehlo.concatenate
  // CHECK-NEXT: %[[RR:.*]] = stablehlo.dynamic_reshape %[[F]], %[[YSHAPE]] : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %rr = "immut.reshape_rev"(%y, %f) : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  // CHECK-NEXT: %[[TR:.*]] = stablehlo.transpose %[[X]], dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %tr = "immut.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // transpose_rev applies the inverse permutation to the value.
  // CHECK-NEXT: %[[TRR:.*]] = stablehlo.transpose %[[T]], dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %trr = "immut.transpose_rev"(%x, %t) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[RV:.*]] = stablehlo.reverse %[[X]], dims = [1]
  %rv = "immut.reverse"(%x) {dimensions = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[RVR:.*]] = stablehlo.reverse %[[RV]], dims = [0]
  %rvr = "immut.reverse_rev"(%x, %rv) {dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: return %[[R]], %[[RD]], %[[RR]], %[[TR]], %[[TRR]], %[[RV]], %[[RVR]]
  return %r, %rd, %rr, %tr, %trr, %rv, %rvr : tensor<6xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @scatter_assign
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xi32>, %[[IDX:.*]]: tensor<2x2xi64>, %[[UPD:.*]]: tensor<2x2x4xi32>, %[[I1:.*]]: tensor<3xi64>, %[[U1:.*]]: tensor<3x4xi32>, %[[S:.*]]: tensor<f64>)
func.func @scatter_assign(%x: tensor<?x4xi32>, %idx: tensor<2x2xi64>, %upd: tensor<2x2x4xi32>, %i1: tensor<3xi64>, %u1: tensor<3x4xi32>, %s: tensor<f64>) -> (tensor<?x4xi32>, tensor<?x4xi32>, tensor<?x4xi32>) {
  // One index per row along axis 0; the update region returns the new value (replace).
  // CHECK: %[[A:.*]] = "stablehlo.scatter"(%[[X]], %[[I1]], %[[U1]]) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  // CHECK-NEXT: ^bb0(%{{.*}}: tensor<i32>, %[[NEWV:.*]]: tensor<i32>):
  // CHECK-NEXT: stablehlo.return %[[NEWV]] : tensor<i32>
  %a = "immut.scatter"(%x, %i1, %u1) {axis = 0 : i64} : (tensor<?x4xi32>, tensor<3xi64>, tensor<3x4xi32>) -> tensor<?x4xi32>
  // Index arrays of rank > 1 are flattened in C order (the last write still wins).
  // CHECK: %[[FLATI:.*]] = stablehlo.reshape %[[IDX]] : (tensor<2x2xi64>) -> tensor<4xi64>
  // CHECK: %[[FLATU:.*]] = stablehlo.reshape %[[UPD]] : (tensor<2x2x4xi32>) -> tensor<4x4xi32>
  // CHECK-NEXT: %[[B:.*]] = "stablehlo.scatter"(%[[X]], %[[FLATI]], %[[FLATU]])
  %b = "immut.scatter"(%x, %idx, %upd) {axis = 0 : i64} : (tensor<?x4xi32>, tensor<2x2xi64>, tensor<2x2x4xi32>) -> tensor<?x4xi32>
  // assign: convert, then broadcast to the target's (dynamic) shape.
  // CHECK: %[[CONV:.*]] = stablehlo.convert %[[S]] : (tensor<f64>) -> tensor<i32>
  // CHECK-NEXT: %[[D0:.*]] = stablehlo.get_dimension_size %[[X]], dim = 0
  // CHECK: %[[XSHAPE:.*]] = stablehlo.concatenate
  // CHECK-NEXT: %[[C:.*]] = stablehlo.dynamic_broadcast_in_dim %[[CONV]], %[[XSHAPE]], dims = [] : (tensor<i32>, tensor<2xi64>) -> tensor<?x4xi32>
  %c = "immut.assign"(%s, %x) : (tensor<f64>, tensor<?x4xi32>) -> tensor<?x4xi32>
  // CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
  return %a, %b, %c : tensor<?x4xi32>, tensor<?x4xi32>, tensor<?x4xi32>
}

// A write through a transposed view (`X.T[0] = v`) writes the permuted box
// of X itself: v is transposed (a row becomes a column) and updated into X
// at the permuted starts; no transpose of X, and nothing transposed back.
// CHECK-LABEL: func.func @write_through_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf64>, %[[V:.*]]: tensor<1x?xf64>, %[[S:.*]]: tensor<2xi64>, %[[Z:.*]]: tensor<2xi64>)
func.func @write_through_transpose(%x: tensor<?x?xf64>, %v: tensor<1x?xf64>, %starts: tensor<2xi64>, %sizes: tensor<2xi64>) -> tensor<?x?xf64> {
  // CHECK-NOT: stablehlo.transpose %[[X]]
  // CHECK: %[[COLUMN:.*]] = stablehlo.transpose %[[V]], dims = [1, 0] : (tensor<1x?xf64>) -> tensor<?x1xf64>
  // CHECK: %[[S1:.*]] = stablehlo.slice %[[S]] [1:2]
  // CHECK: %[[S0:.*]] = stablehlo.slice %[[S]] [0:1]
  // CHECK: %[[NEW:.*]] = stablehlo.dynamic_update_slice %[[X]], %[[COLUMN]]
  // CHECK-NOT: stablehlo.transpose
  // CHECK: return %[[NEW]]
  %t = "immut.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<?x?xf64>) -> tensor<?x?xf64>
  %u = "immut.slice_rev"(%t, %v, %starts, %sizes) {strides = array<i64: 1, 1>} : (tensor<?x?xf64>, tensor<1x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf64>
  %r = "immut.transpose_rev"(%x, %u) {permutation = array<i64: 1, 0>} : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}
