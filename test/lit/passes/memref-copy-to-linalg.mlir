// RUN: kiln-opt %s -p memref-copy-to-linalg | filecheck %s
// RUN: kiln-opt %s -p 'memref-copy-to-linalg,func.func(convert-linalg-to-loops)' | filecheck %s --check-prefix=LOOPS

// memref.copy becomes linalg.copy (then plain loops), since the bindings'
// wheel has no `memrefCopy` runtime function.
// CHECK-NOT: memref.copy
// LOOPS-NOT: memref.copy
// LOOPS-NOT: linalg.copy

// CHECK-LABEL: func.func @copy_1d
// CHECK-SAME: (%[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>)
// LOOPS-LABEL: func.func @copy_1d
func.func @copy_1d(%a: memref<?xf32>, %b: memref<?xf32>) {
  // CHECK-NEXT: linalg.copy {{.*}}ins(%[[A]] : memref<?xf32>) outs(%[[B]] : memref<?xf32>)
  // CHECK-NEXT: return
  // LOOPS: %[[N:.*]] = memref.dim
  // LOOPS: scf.for %[[I:.*]] = %{{.*}} to %[[N]]
  // LOOPS-NEXT: %[[V:.*]] = memref.load %{{.*}}[%[[I]]] : memref<?xf32>
  // LOOPS-NEXT: memref.store %[[V]], %{{.*}}[%[[I]]] : memref<?xf32>
  memref.copy %a, %b : memref<?xf32> to memref<?xf32>
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
