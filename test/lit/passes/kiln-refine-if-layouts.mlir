// RUN: kiln-opt %s -p kiln-refine-if-layouts | filecheck %s
// RUN: kiln-opt %s -p kiln-refine-if-layouts,canonicalize | filecheck %s --check-prefix=CANON

// A subview of stride 1 in one branch, a fresh buffer in the other: both
// have stride 1, so the result keeps it (the offset differs: dynamic); the
// users read it through a cast back to the old type, which canonicalize
// folds into the load.
// CHECK-LABEL: func.func @versioned
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (memref<?xf64, strided<[1], offset: ?>>) {
// CHECK: scf.yield %{{.*}} : memref<?xf64, strided<[1], offset: ?>>
// CHECK: } else {
// CHECK: %[[C:.*]] = memref.cast %{{.*}} : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
// CHECK-NEXT: scf.yield %[[C]] : memref<?xf64, strided<[1], offset: ?>>
// CHECK: %[[BACK:.*]] = memref.cast %[[R]] : memref<?xf64, strided<[1], offset: ?>> to memref<?xf64, strided<[?], offset: ?>>
// CHECK: memref.load %[[BACK]]
// CANON-LABEL: func.func @versioned
// CANON: memref.load %{{.*}}[%{{.*}}] : memref<?xf64, strided<[1], offset: ?>>
func.func @versioned(%x: memref<?xf64>, %c: i1, %n: index, %i: index) -> f64 {
  %r = scf.if %c -> (memref<?xf64, strided<[?], offset: ?>>) {
    %v = memref.subview %x[1] [%n] [1] : memref<?xf64> to memref<?xf64, strided<[1], offset: 1>>
    %cv = memref.cast %v : memref<?xf64, strided<[1], offset: 1>> to memref<?xf64, strided<[?], offset: ?>>
    scf.yield %cv : memref<?xf64, strided<[?], offset: ?>>
  } else {
    %a = memref.alloc(%n) : memref<?xf64>
    %ca = memref.cast %a : memref<?xf64> to memref<?xf64, strided<[?], offset: ?>>
    scf.yield %ca : memref<?xf64, strided<[?], offset: ?>>
  }
  %e = memref.load %r[%i] : memref<?xf64, strided<[?], offset: ?>>
  return %e : f64
}

// Branches that agree on nothing more keep the result as it is.
// CHECK-LABEL: func.func @nothing_to_refine
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (memref<?xf64, strided<[?], offset: ?>>)
// CHECK-NOT: memref.cast %[[R]]
// CHECK: return %[[R]]
func.func @nothing_to_refine(%x: memref<?xf64>, %c: i1, %n: index) -> memref<?xf64, strided<[?], offset: ?>> {
  %r = scf.if %c -> (memref<?xf64, strided<[?], offset: ?>>) {
    %v = memref.subview %x[0] [%n] [2] : memref<?xf64> to memref<?xf64, strided<[2]>>
    %cv = memref.cast %v : memref<?xf64, strided<[2]>> to memref<?xf64, strided<[?], offset: ?>>
    scf.yield %cv : memref<?xf64, strided<[?], offset: ?>>
  } else {
    %v = memref.subview %x[1] [%n] [3] : memref<?xf64> to memref<?xf64, strided<[3], offset: 1>>
    %cv = memref.cast %v : memref<?xf64, strided<[3], offset: 1>> to memref<?xf64, strided<[?], offset: ?>>
    scf.yield %cv : memref<?xf64, strided<[?], offset: ?>>
  }
  return %r : memref<?xf64, strided<[?], offset: ?>>
}
