// RUN: kiln-opt %s -p kiln-rank-reducing-slices | filecheck %s

// `a[:, j]` read and written: the unit-dim reshapes of the slices fold
// into rank-reducing slices (strided views after bufferization, where the
// reshape of a `?x1` view was a copy).

// CHECK-LABEL: func.func @column
func.func @column(%a: tensor<?x?xf64>, %v: tensor<?xf64>, %j: index, %n: index) -> (tensor<?xf64>, tensor<?x?xf64>) {
  %c0 = arith.constant 0 : index
  // CHECK: %[[COL:.*]] = tensor.extract_slice %arg0[0, %arg2] [%arg3, 1] [1, 1] : tensor<?x?xf64> to tensor<?xf64>
  // CHECK-NOT: tensor.collapse_shape
  %s = tensor.extract_slice %a[0, %j] [%n, 1] [1, 1] : tensor<?x?xf64> to tensor<?x1xf64>
  %col = tensor.collapse_shape %s [[0, 1]] : tensor<?x1xf64> into tensor<?xf64>
  // CHECK: %[[W:.*]] = tensor.insert_slice %arg1 into %arg0[0, %arg2] [%arg3, 1] [1, 1] : tensor<?xf64> into tensor<?x?xf64>
  // CHECK-NOT: tensor.expand_shape
  %e = tensor.expand_shape %v [[0, 1]] output_shape [%n, 1] : tensor<?xf64> into tensor<?x1xf64>
  %w = tensor.insert_slice %e into %a[0, %j] [%n, 1] [1, 1] : tensor<?x1xf64> into tensor<?x?xf64>
  // CHECK: return %[[COL]], %[[W]]
  return %col, %w : tensor<?xf64>, tensor<?x?xf64>
}

// A plane of a 3-d array (`b[::2, k, :]`) keeps its reshape (one copy into
// a contiguous buffer): a strided plane read by several loops cost vadv 3x.
// CHECK-LABEL: func.func @plane
func.func @plane(%b: tensor<?x?x?xf32>, %k: index, %n: index, %m: index) -> tensor<?x?xf32> {
  // CHECK: tensor.extract_slice %arg0[0, %arg1, 0] [%arg2, 1, %arg3] [2, 1, 1] : tensor<?x?x?xf32> to tensor<?x1x?xf32>
  // CHECK: tensor.collapse_shape
  %s = tensor.extract_slice %b[0, %k, 0] [%n, 1, %m] [2, 1, 1] : tensor<?x?x?xf32> to tensor<?x1x?xf32>
  %p = tensor.collapse_shape %s [[0, 1], [2]] : tensor<?x1x?xf32> into tensor<?x?xf32>
  return %p : tensor<?x?xf32>
}

// Left alone: a reshape that merges two dims that are not 1 (a real
// collapse), an expand that splits a dim, and a slice of 1s only (which
// of its 1s a rank-reduced view would keep decides its stride).
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%a: tensor<?x?xf64>, %v: tensor<6xf64>, %n: index, %m: index) -> (tensor<?xf64>, tensor<?x?xf64>, tensor<1xf64>) {
  // CHECK: tensor.collapse_shape
  %s = tensor.extract_slice %a[0, 0] [%n, %m] [1, 1] : tensor<?x?xf64> to tensor<?x?xf64>
  %flat = tensor.collapse_shape %s [[0, 1]] : tensor<?x?xf64> into tensor<?xf64>
  // CHECK: tensor.expand_shape
  %e = tensor.expand_shape %v [[0, 1]] output_shape [2, 3] : tensor<6xf64> into tensor<2x3xf64>
  %w = tensor.insert_slice %e into %a[0, 0] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<?x?xf64>
  // CHECK: tensor.extract_slice %arg0[0, %arg2] [1, 1] [1, 2] : tensor<?x?xf64> to tensor<1x1xf64>
  // CHECK: tensor.collapse_shape
  %u = tensor.extract_slice %a[0, %n] [1, 1] [1, 2] : tensor<?x?xf64> to tensor<1x1xf64>
  %one = tensor.collapse_shape %u [[0, 1]] : tensor<1x1xf64> into tensor<1xf64>
  return %flat, %w, %one : tensor<?xf64>, tensor<?x?xf64>, tensor<1xf64>
}
