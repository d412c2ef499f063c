// RUN: kiln-opt %s -p kiln-store-written-arguments | filecheck %s

// `X[-1] += 1` after one-shot bufferization with X writable: the row is
// updated in the argument's own buffer and the final value of X is X
// itself. The written result is dropped and nothing is copied: no whole-
// argument copy in or out.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf64>, %[[ROW:.*]]: memref<1x?xf64>, %[[I:.*]]: index) {
func.func @in_place(%x: memref<?x?xf64>, %row: memref<1x?xf64>, %i: index) -> (memref<?x?xf64> {kiln.written_argument = 0 : i64}) {
  %c1 = arith.constant 1 : index
  %d = memref.dim %x, %c1 : memref<?x?xf64>
  // CHECK: %[[DST:.*]] = memref.subview %[[X]]
  %dst = memref.subview %x[%i, 0] [1, %d] [1, 1] : memref<?x?xf64> to memref<1x?xf64, strided<[?, 1], offset: ?>>
  // CHECK-NEXT: memref.copy %[[ROW]], %[[DST]]
  memref.copy %row, %dst : memref<1x?xf64> to memref<1x?xf64, strided<[?, 1], offset: ?>>
  // CHECK-NOT: memref.copy
  // CHECK-NOT: memref.alloc
  // CHECK: return{{$}}
  return %x : memref<?x?xf64>
}

// The final value was computed in another buffer (a read of the old value
// needed a copy): it is copied into the argument at the return, unless it
// is the argument's buffer after all (a loop result that bufferized onto
// it). A kept result that may view the argument (%x, the old value here)
// is copied before that store, so that it keeps its value; a fresh result
// is not.
// CHECK-LABEL: func.func @out_of_place
// CHECK-SAME: (%[[X:.*]]: memref<?xf64>, %[[N:.*]]: index) -> (memref<?xf64>, memref<?xf64>)
func.func @out_of_place(%x: memref<?xf64>, %n: index) -> (memref<?xf64>, memref<?xf64>, memref<?xf64> {kiln.written_argument = 0 : i64}) {
  // CHECK: %[[NEW:.*]] = memref.alloc
  %new = memref.alloc(%n) : memref<?xf64>
  // CHECK: %[[FRESH:.*]] = memref.alloc
  %fresh = memref.alloc(%n) : memref<?xf64>
  // CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[NEW]]
  // CHECK: %[[Q:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
  // CHECK: %[[DIFFER:.*]] = arith.cmpi ne, %[[P]], %[[Q]]
  // CHECK: %[[OLD:.*]] = scf.if %[[DIFFER]] -> (memref<?xf64>) {
  // CHECK:   %[[SAVED:.*]] = memref.alloc
  // CHECK:   memref.copy %[[X]], %[[SAVED]]
  // CHECK:   scf.yield %[[SAVED]]
  // CHECK: } else {
  // CHECK:   scf.yield %[[X]]
  // CHECK: scf.if %[[DIFFER]] {
  // CHECK:   memref.copy %[[NEW]], %[[X]]
  // CHECK: return %[[OLD]], %[[FRESH]] : memref<?xf64>, memref<?xf64>
  return %x, %fresh, %new : memref<?xf64>, memref<?xf64>, memref<?xf64>
}

// Results without the attribute are left alone.
// CHECK-LABEL: func.func @no_writes
// CHECK-SAME: -> memref<?xf64>
// CHECK-NEXT: return %arg0
func.func @no_writes(%x: memref<?xf64>) -> memref<?xf64> {
  return %x : memref<?xf64>
}
