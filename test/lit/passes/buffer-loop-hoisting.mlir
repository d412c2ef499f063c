// RUN: kiln-opt %s -p 'canonicalize,func.func(loop-invariant-code-motion),func.func(buffer-loop-hoisting)' | filecheck %s

// How the bufferized stage takes loop-invariant temporaries out of loops
// (compiler/pipeline.py, right after one-shot-bufferize): syrk's
// `C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]` in `for k` made a row
// temporary per k, sized by a `memref.dim` of a view of the loop's buffer.
// canonicalize folds that dim into the view's size (%n), LICM moves the size
// out, buffer-loop-hoisting the allocation: one buffer for the whole loop.
// (This runs before buffer-deallocation-pipeline: no `memref.dealloc` exists
// yet, which buffer-loop-hoisting would leave inside the loop.)
// CHECK-LABEL: func.func @row_update
// CHECK-SAME: (%[[C:.*]]: memref<?x?xf64>, %[[N:.*]]: index, %[[K:.*]]: index)
func.func @row_update(%c: memref<?x?xf64>, %n: index, %k: index) -> memref<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[T:.*]] = memref.alloc(%[[N]]) : memref<?xf64>
  // CHECK-NEXT: scf.for
  // CHECK-NOT: memref.alloc
  // CHECK: memref.copy %{{.*}}, %[[T]]
  // CHECK: memref.copy %[[T]], %{{.*}}
  %r = scf.for %i = %c0 to %k step %c1 iter_args(%b = %c) -> memref<?x?xf64> {
    %row = memref.subview %b[%i, 0] [1, %n] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
    %size = memref.dim %row, %c0 : memref<?xf64, strided<[1], offset: ?>>
    %t = memref.alloc(%size) : memref<?xf64>
    memref.copy %row, %t : memref<?xf64, strided<[1], offset: ?>> to memref<?xf64>
    memref.copy %t, %row : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
    scf.yield %b : memref<?x?xf64>
  }
  return %r : memref<?x?xf64>
}

// A buffer an iteration yields (the next iteration reads it) stays in the
// loop, as does one whose size changes per iteration.
// CHECK-LABEL: func.func @stays
func.func @stays(%a: memref<?xf64>, %n: index, %k: index, %out_of_range: memref<?xf64>) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for
  // CHECK: memref.alloc(%{{.*}}) : memref<?xf64>
  // CHECK: memref.alloc(%{{.*}}) : memref<?xf64>
  // CHECK: scf.yield
  %r = scf.for %i = %c0 to %k step %c1 iter_args(%b = %a) -> memref<?xf64> {
    %next = memref.alloc(%n) : memref<?xf64>
    memref.copy %b, %next : memref<?xf64> to memref<?xf64>
    %grow = memref.alloc(%i) : memref<?xf64>
    memref.copy %grow, %out_of_range : memref<?xf64> to memref<?xf64>
    scf.yield %next : memref<?xf64>
  }
  return %r : memref<?xf64>
}

// A temporary of a parallel loop's body is one per thread: it stays.
// CHECK-LABEL: func.func @parallel_body
func.func @parallel_body(%out: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.parallel
  // CHECK-NEXT: memref.alloc() : memref<4xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.alloc() : memref<4xf64>
    %v = memref.load %t[%c0] : memref<4xf64>
    memref.store %v, %out[%i] : memref<?xf64>
    scf.reduce
  }
  return
}
