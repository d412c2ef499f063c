// RUN: kiln-opt %s -p 'func.func(stablehlo-legalize-to-linalg)' | filecheck %s

// Upstream StableHLO lowering on dynamic shapes: elementwise ops become
// linalg.generic over a tensor.empty sized from the operand at run time.

// CHECK: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK: #[[SWAP:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: tensor<?xf64>, %[[Y:.*]]: tensor<?xf64>) -> tensor<?xf64>
func.func @elementwise(%x: tensor<?xf64>, %y: tensor<?xf64>) -> tensor<?xf64> {
  // The size comes from shape.shape_of until canonicalize folds it to tensor.dim.
  // CHECK: %[[SHAPE:.*]] = shape.shape_of %[[X]]
  // CHECK: %[[N:.*]] = tensor.extract %[[SHAPE]]
  // CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?xf64>
  // CHECK: %[[EXP:.*]] = linalg.generic
  // CHECK-SAME: indexing_maps = [#[[ID]], #[[ID]]]
  // CHECK-SAME: iterator_types = ["parallel"]
  // CHECK-SAME: ins(%[[X]] : tensor<?xf64>) outs(%[[INIT]] : tensor<?xf64>)
  // CHECK: math.exp
  // CHECK: linalg.yield
  %0 = stablehlo.exponential %x : tensor<?xf64>
  // CHECK: %[[SUM:.*]] = linalg.generic
  // CHECK-SAME: ins(%[[EXP]], %[[Y]] : tensor<?xf64>, tensor<?xf64>)
  // CHECK: arith.addf
  %1 = stablehlo.add %0, %y : tensor<?xf64>
  // CHECK: return %[[SUM]] : tensor<?xf64>
  return %1 : tensor<?xf64>
}

// CHECK-LABEL: func.func @transpose_2d
func.func @transpose_2d(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // CHECK: %[[D0:.*]] = tensor.dim %{{.*}}, %c0
  // CHECK: %[[D1:.*]] = tensor.dim %{{.*}}, %c1
  // CHECK: tensor.from_elements %[[D1]], %[[D0]] : tensor<2xindex>
  // CHECK: tensor.empty({{.*}}) : tensor<?x?xf32>
  // CHECK: linalg.generic
  // CHECK-SAME: indexing_maps = [#[[SWAP]], #[[ID2]]]
  // CHECK-SAME: iterator_types = ["parallel", "parallel"]
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @reduce_sum
func.func @reduce_sum(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4xf32>)
  // CHECK: linalg.generic
  // CHECK-SAME: indexing_maps = [#[[SWAP]], #[[ROW]]]
  // CHECK-SAME: iterator_types = ["parallel", "reduction"]
  // CHECK-SAME: outs(%[[INIT]] : tensor<4xf32>)
  // CHECK: arith.addf
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// The pass leaves dynamic broadcasts alone: kiln-legalize-dynamic lowers them.
// CHECK-LABEL: func.func @dynamic_broadcast_left
func.func @dynamic_broadcast_left(%x: tensor<?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  // CHECK: stablehlo.dynamic_broadcast_in_dim
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [1] : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
