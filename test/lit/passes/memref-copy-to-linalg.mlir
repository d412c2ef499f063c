// RUN: kiln-opt %s -p memref-copy-to-linalg | filecheck %s
// RUN: kiln-opt %s -p 'memref-copy-to-linalg,func.func(convert-linalg-to-loops)' | filecheck %s --check-prefix=LOOPS

// memref.copy of strided views becomes linalg.copy (then plain loops),
// since the bindings' wheel has no `memrefCopy` runtime function; a copy
// between contiguous buffers stays (finalize-memref-to-llvm makes it one
// llvm.intr.memcpy).
// LOOPS-NOT: linalg.copy

// CHECK-LABEL: func.func @copy_1d
// CHECK-SAME: (%[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>)
// LOOPS-LABEL: func.func @copy_1d
func.func @copy_1d(%a: memref<?xf32>, %b: memref<?xf32>) {
  // CHECK-NEXT: memref.copy %[[A]], %[[B]] : memref<?xf32> to memref<?xf32>
  // CHECK-NEXT: return
  // LOOPS-NOT: scf.for
  // LOOPS: memref.copy
  memref.copy %a, %b : memref<?xf32> to memref<?xf32>
  return
}

// Contiguous buffers of any rank and static or dynamic sizes: kept.
// CHECK-LABEL: func.func @copy_contiguous
func.func @copy_contiguous(%a: memref<?x3xf64>, %b: memref<?x3xf64>, %c: memref<2x4xf32>, %d: memref<2x4xf32>) {
  // CHECK-NEXT: memref.copy %{{.*}}, %{{.*}} : memref<?x3xf64> to memref<?x3xf64>
  // CHECK-NEXT: memref.copy %{{.*}}, %{{.*}} : memref<2x4xf32> to memref<2x4xf32>
  // CHECK-NEXT: return
  memref.copy %a, %b : memref<?x3xf64> to memref<?x3xf64>
  memref.copy %c, %d : memref<2x4xf32> to memref<2x4xf32>
  return
}

// Strided views (from subviews) keep their layout.
// CHECK-LABEL: func.func @copy_strided
// LOOPS-LABEL: func.func @copy_strided
func.func @copy_strided(%a: memref<4x?xf64, strided<[?, 1], offset: ?>>, %b: memref<4x?xf64>) {
  // CHECK-NEXT: linalg.copy {{.*}}ins(%{{.*}} : memref<4x?xf64, strided<[?, 1], offset: ?>>) outs(%{{.*}} : memref<4x?xf64>)
  // LOOPS: scf.for
  // LOOPS: scf.for
  // LOOPS: memref.load {{.*}} : memref<4x?xf64, strided<[?, 1], offset: ?>>
  // LOOPS-NEXT: memref.store {{.*}} : memref<4x?xf64>
  memref.copy %a, %b : memref<4x?xf64, strided<[?, 1], offset: ?>> to memref<4x?xf64>
  return
}

// A copy of a window of a buffer onto the same window (what bufferization
// leaves for a slice computed in place, kiln-compute-into-destination) is no
// copy: dropped. A copy between different windows stays.
// CHECK-LABEL: func.func @copy_onto_itself
func.func @copy_onto_itself(%a: memref<?x?xf64>, %i: index, %n: index) {
  // CHECK-NOT: linalg.copy
  // CHECK: %[[S:.*]] = memref.subview %{{.*}}[%{{.*}}, 2]
  // CHECK: %[[T:.*]] = memref.subview %{{.*}}[%{{.*}}, 1]
  // CHECK-NEXT: linalg.copy {{.*}}ins(%[[S]] : {{.*}}) outs(%[[T]] :
  // CHECK-NEXT: return
  %s = memref.subview %a[%i, 1] [%n, %n] [1, 1] : memref<?x?xf64> to memref<?x?xf64, strided<[?, 1], offset: ?>>
  %t = memref.subview %a[%i, 1] [%n, %n] [1, 1] : memref<?x?xf64> to memref<?x?xf64, strided<[?, 1], offset: ?>>
  memref.copy %s, %t : memref<?x?xf64, strided<[?, 1], offset: ?>> to memref<?x?xf64, strided<[?, 1], offset: ?>>
  memref.copy %a, %a : memref<?x?xf64> to memref<?x?xf64>
  %u = memref.subview %a[%i, 2] [%n, %n] [1, 1] : memref<?x?xf64> to memref<?x?xf64, strided<[?, 1], offset: ?>>
  %v = memref.subview %a[%i, 1] [%n, %n] [1, 1] : memref<?x?xf64> to memref<?x?xf64, strided<[?, 1], offset: ?>>
  memref.copy %u, %v : memref<?x?xf64, strided<[?, 1], offset: ?>> to memref<?x?xf64, strided<[?, 1], offset: ?>>
  return
}
