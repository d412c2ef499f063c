// RUN: kiln-opt %s -p kiln-scale-vector-operand | filecheck %s

// gesummv's `alpha * A @ x`: the scalar moves from the matrix onto the
// vector, whose shape comes from the matrix's (its contracting dim) and a 1;
// no matrix-sized multiply is left.
// CHECK-LABEL: func.func @matrix_vector
// CHECK-SAME: (%[[S:.*]]: tensor<f64>, %[[A:.*]]: tensor<?x?xf64>, %[[X:.*]]: tensor<?x1xf64>, %[[SHAPE:.*]]: tensor<2xi64>)
func.func @matrix_vector(%s: tensor<f64>, %a: tensor<?x?xf64>, %x: tensor<?x1xf64>, %shape: tensor<2xi64>) -> tensor<?x1xf64> {
  // CHECK: %[[K:.*]] = stablehlo.slice %[[SHAPE]] [1:2]
  // CHECK: %[[ONE:.*]] = stablehlo.constant dense<1> : tensor<1xi64>
  // CHECK: %[[VSHAPE:.*]] = stablehlo.concatenate %[[K]], %[[ONE]], dim = 0
  // CHECK: %[[SV:.*]] = stablehlo.dynamic_broadcast_in_dim %[[S]], %[[VSHAPE]], dims = [] : (tensor<f64>, tensor<2xi64>) -> tensor<?x1xf64>
  // CHECK: %[[SX:.*]] = stablehlo.multiply %[[SV]], %[[X]] : tensor<?x1xf64>
  // CHECK: %[[R:.*]] = stablehlo.dot_general %[[A]], %[[SX]], contracting_dims = [1] x [0]
  // CHECK-NOT: stablehlo.multiply
  // CHECK: return %[[R]]
  %sa = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [] : (tensor<f64>, tensor<2xi64>) -> tensor<?x?xf64>
  %m = stablehlo.multiply %sa, %a : tensor<?x?xf64>
  %r = stablehlo.dot_general %m, %x, contracting_dims = [1] x [0] : (tensor<?x?xf64>, tensor<?x1xf64>) -> tensor<?x1xf64>
  return %r : tensor<?x1xf64>
}

// `x @ (A * s)` (the matrix on the right, the scalar second): the vector is
// the lhs and its contracting dim is the matrix's dim 0.
// CHECK-LABEL: func.func @vector_matrix
// CHECK-SAME: (%[[S:.*]]: tensor<f32>, %[[A:.*]]: tensor<?x?xf32>, %[[X:.*]]: tensor<1x?xf32>, %[[SHAPE:.*]]: tensor<2xi64>)
func.func @vector_matrix(%s: tensor<f32>, %a: tensor<?x?xf32>, %x: tensor<1x?xf32>, %shape: tensor<2xi64>) -> tensor<1x?xf32> {
  // CHECK: %[[ONE:.*]] = stablehlo.constant dense<1> : tensor<1xi64>
  // CHECK: %[[K:.*]] = stablehlo.slice %[[SHAPE]] [0:1]
  // CHECK: %[[VSHAPE:.*]] = stablehlo.concatenate %[[ONE]], %[[K]], dim = 0
  // CHECK: %[[SV:.*]] = stablehlo.dynamic_broadcast_in_dim %[[S]], %[[VSHAPE]], dims = []
  // CHECK: %[[SX:.*]] = stablehlo.multiply %[[SV]], %[[X]] : tensor<1x?xf32>
  // CHECK: stablehlo.dot_general %[[SX]], %[[A]], contracting_dims = [1] x [0]
  %sa = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [] : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>
  %m = stablehlo.multiply %a, %sa : tensor<?x?xf32>
  %r = stablehlo.dot_general %x, %m, contracting_dims = [1] x [0] : (tensor<1x?xf32>, tensor<?x?xf32>) -> tensor<1x?xf32>
  return %r : tensor<1x?xf32>
}

// Static shapes: the scalar broadcasts statically onto the vector.
// CHECK-LABEL: func.func @static_shapes
func.func @static_shapes(%s: tensor<f64>, %a: tensor<3x4xf64>, %x: tensor<4x1xf64>) -> tensor<3x1xf64> {
  // CHECK: %[[SV:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f64>) -> tensor<4x1xf64>
  // CHECK: %[[SX:.*]] = stablehlo.multiply %[[SV]], %{{.*}} : tensor<4x1xf64>
  // CHECK: stablehlo.dot_general %{{.*}}, %[[SX]]
  %sa = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f64>) -> tensor<3x4xf64>
  %m = stablehlo.multiply %sa, %a : tensor<3x4xf64>
  %r = stablehlo.dot_general %m, %x, contracting_dims = [1] x [0] : (tensor<3x4xf64>, tensor<4x1xf64>) -> tensor<3x1xf64>
  return %r : tensor<3x1xf64>
}

// Left alone: a matrix-matrix product (the result is as large as the scaled
// operand) and a scaled matrix that has another reader (it is made anyway).
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%s: tensor<f64>, %a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %x: tensor<?x1xf64>,
                      %shape: tensor<2xi64>) -> (tensor<?x?xf64>, tensor<?x1xf64>, tensor<?x?xf64>) {
  // CHECK: %[[SA:.*]] = stablehlo.dynamic_broadcast_in_dim
  // CHECK: %[[M:.*]] = stablehlo.multiply %[[SA]], %{{.*}} : tensor<?x?xf64>
  // CHECK: stablehlo.dot_general %[[M]], %{{.*}} : (tensor<?x?xf64>, tensor<?x?xf64>)
  // CHECK: stablehlo.dot_general %[[M]], %{{.*}} : (tensor<?x?xf64>, tensor<?x1xf64>)
  %sa = stablehlo.dynamic_broadcast_in_dim %s, %shape, dims = [] : (tensor<f64>, tensor<2xi64>) -> tensor<?x?xf64>
  %m = stablehlo.multiply %sa, %a : tensor<?x?xf64>
  %mm = stablehlo.dot_general %m, %b, contracting_dims = [1] x [0] : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  %mv = stablehlo.dot_general %m, %x, contracting_dims = [1] x [0] : (tensor<?x?xf64>, tensor<?x1xf64>) -> tensor<?x1xf64>
  return %mm, %mv, %m : tensor<?x?xf64>, tensor<?x1xf64>, tensor<?x?xf64>
}
