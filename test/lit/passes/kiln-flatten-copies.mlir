// RUN: kiln-opt %s -p kiln-flatten-copies | filecheck %s

// Copies between contiguous buffers of rank >= 2 run over one flat
// dimension; strided views and 1-d copies stay as they are.

// CHECK-LABEL: func.func @image
// CHECK-SAME: (%[[A:.*]]: memref<?x?x?xf32>, %[[B:.*]]: memref<?x?x?xf32>)
func.func @image(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>) {
  // CHECK-NEXT: %[[FA:.*]] = memref.collapse_shape %[[A]] {{\[}}[0, 1, 2]] : memref<?x?x?xf32> into memref<?xf32>
  // CHECK-NEXT: %[[FB:.*]] = memref.collapse_shape %[[B]] {{\[}}[0, 1, 2]] : memref<?x?x?xf32> into memref<?xf32>
  // CHECK-NEXT: memref.copy %[[FA]], %[[FB]] : memref<?xf32> to memref<?xf32>
  memref.copy %a, %b : memref<?x?x?xf32> to memref<?x?x?xf32>
  return
}

// CHECK-LABEL: func.func @static
func.func @static(%a: memref<4x5xf64>, %b: memref<4x5xf64>) {
  // CHECK: memref.copy %{{.*}}, %{{.*}} : memref<20xf64> to memref<20xf64>
  memref.copy %a, %b : memref<4x5xf64> to memref<4x5xf64>
  return
}

// CHECK-LABEL: func.func @kept
func.func @kept(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %b: memref<?x?xf32>, %c: memref<?xf32>, %d: memref<?xf32>) {
  // CHECK-NOT: memref.collapse_shape
  // CHECK: memref.copy %{{.*}}, %{{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32>
  // CHECK: memref.copy %{{.*}}, %{{.*}} : memref<?xf32> to memref<?xf32>
  memref.copy %a, %b : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32>
  memref.copy %c, %d : memref<?xf32> to memref<?xf32>
  return
}
