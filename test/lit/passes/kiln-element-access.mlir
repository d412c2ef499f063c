// RUN: kiln-opt %s -p kiln-element-access,canonicalize | filecheck %s
// RUN: kiln-opt %s -p 'kiln-element-access,canonicalize,one-shot-bufferize{bufferize-function-boundaries}' | filecheck %s --check-prefix=BUF

// `for j in range(1, n): A[i, j] = A[i, j] + A[i, j - 1]` as the StableHLO
// legalization leaves it: each element read is a 1x1 extract_slice collapsed
// to 0-d and extracted, the write a 1x1 from_elements inserted as a slice.
// After the pass they are tensor.extract / tensor.insert on A itself, and the
// bufferized loop body loads and stores A's buffer: no allocation, no copy.

// CHECK-LABEL: func.func @row_scan
// BUF-LABEL: func.func @row_scan
func.func @row_scan(%a0: tensor<?x?xf64>, %i: index, %n: index) -> tensor<?x?xf64> {
  %c1 = arith.constant 1 : index
  // CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}})
  // BUF: scf.for
  // BUF-NOT: memref.alloc
  // BUF-NOT: memref.copy
  // BUF: memref.load
  // BUF: memref.load
  // BUF: memref.store
  // BUF-NOT: memref.alloc
  // BUF: scf.yield
  %r = scf.for %j = %c1 to %n step %c1 iter_args(%a = %a0) -> tensor<?x?xf64> {
    %jm1 = arith.subi %j, %c1 : index
    // CHECK-NOT: tensor.extract_slice
    // CHECK: %[[X:.*]] = tensor.extract %[[A]][%{{.*}}, %[[J]]] : tensor<?x?xf64>
    %s0 = tensor.extract_slice %a[%i, %j] [1, 1] [1, 1] : tensor<?x?xf64> to tensor<1x1xf64>
    %c0d = tensor.collapse_shape %s0 [] : tensor<1x1xf64> into tensor<f64>
    %x = tensor.extract %c0d[] : tensor<f64>
    // CHECK: %[[Y:.*]] = tensor.extract %[[A]][%{{.*}}, %{{.*}}] : tensor<?x?xf64>
    %s1 = tensor.extract_slice %a[%i, %jm1] [1, 1] [1, 1] : tensor<?x?xf64> to tensor<1x1xf64>
    %c1d = tensor.collapse_shape %s1 [] : tensor<1x1xf64> into tensor<f64>
    %y = tensor.extract %c1d[] : tensor<f64>
    // CHECK: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f64
    %s = arith.addf %x, %y : f64
    // CHECK-NOT: tensor.from_elements
    // CHECK: %[[W:.*]] = tensor.insert %[[S]] into %[[A]][%{{.*}}, %[[J]]] : tensor<?x?xf64>
    // CHECK-NEXT: scf.yield %[[W]]
    %e = tensor.from_elements %s : tensor<1x1xf64>
    %w = tensor.insert_slice %e into %a[%i, %j] [1, 1] [1, 1] : tensor<1x1xf64> into tensor<?x?xf64>
    scf.yield %w : tensor<?x?xf64>
  }
  return %r : tensor<?x?xf64>
}

// A one-element value that is not a from_elements is written as its element;
// static offsets become constants. Slices of more than one element stay slices.
// CHECK-LABEL: func.func @kept_and_static
func.func @kept_and_static(%a: tensor<4x?xf32>, %v: tensor<1x1xf32>, %row: tensor<1x?xf32>, %k: index) -> (tensor<4x?xf32>, tensor<1x?xf32>) {
  // CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
  // CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
  // CHECK: %[[E:.*]] = tensor.extract %{{.*}}[%[[C0]], %[[C0]]] : tensor<1x1xf32>
  // CHECK: %[[W:.*]] = tensor.insert %[[E]] into %{{.*}}[%[[C2]], %{{.*}}] : tensor<4x?xf32>
  %w = tensor.insert_slice %v into %a[2, %k] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<4x?xf32>
  // CHECK: tensor.insert_slice %{{.*}} into %[[W]][1, 0]
  %c1 = arith.constant 1 : index
  %d = tensor.dim %row, %c1 : tensor<1x?xf32>
  %w2 = tensor.insert_slice %row into %w[1, 0] [1, %d] [1, 1] : tensor<1x?xf32> into tensor<4x?xf32>
  // CHECK: tensor.extract_slice
  %s = tensor.extract_slice %w2[3, 0] [1, %d] [1, 1] : tensor<4x?xf32> to tensor<1x?xf32>
  return %w2, %s : tensor<4x?xf32>, tensor<1x?xf32>
}
