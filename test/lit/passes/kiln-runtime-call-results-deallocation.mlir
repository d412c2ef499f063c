// RUN: kiln-opt %s -p 'kiln-runtime-call-results,func.func(buffer-loop-hoisting),buffer-deallocation-pipeline' | filecheck %s

// Why kiln-runtime-call-results runs right after one-shot-bufferize, before
// buffer-loop-hoisting and buffer-deallocation-pipeline (compiler/pipeline.py).
// buffer-deallocation-pipeline takes a call's memref result for a fresh buffer
// the caller owns and frees it; a runtime routine's result is its output
// argument. With the result still there, the positions buffer below, hoisted
// out of the loop, was freed by every iteration and once more after the loop
// (np.unique(a, axis=0): an argsort per column; glibc aborted on the double
// free). Without it, the hoisted buffer is freed once, after the loop.
func.func private @kiln_argsort_i64(memref<?x?xi64> {bufferization.access = "read"}, memref<?x?xi64> {bufferization.access = "write"}, memref<?xi64> {bufferization.access = "read"}) -> memref<?x?xi64> attributes {kiln.returns_argument = 1 : i64}

// CHECK-LABEL: func.func @argsort_per_column
func.func @argsort_per_column(%in: memref<1x4xi64>, %k: memref<?xi64>, %out: memref<4xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[POSITIONS:.*]] = memref.alloc() : memref<1x4xi64>
  // CHECK-NEXT: scf.for
  // CHECK: %[[OUT:.*]] = memref.cast %[[POSITIONS]]
  // CHECK: func.call @kiln_argsort_i64(%{{.*}}, %[[OUT]], %{{.*}}) : (memref<?x?xi64>, memref<?x?xi64>, memref<?xi64>) -> (){{$}}
  // CHECK-NOT: memref.dealloc
  // CHECK-NOT: bufferization.dealloc
  // CHECK: memref.store
  // CHECK-NEXT: }
  // CHECK-NEXT: memref.dealloc %[[POSITIONS]] : memref<1x4xi64>
  // CHECK-NOT: memref.dealloc
  // CHECK: return
  scf.for %i = %c0 to %n step %c1 {
    %positions = memref.alloc() : memref<1x4xi64>
    %a = memref.cast %in : memref<1x4xi64> to memref<?x?xi64>
    %p = memref.cast %positions : memref<1x4xi64> to memref<?x?xi64>
    %r = func.call @kiln_argsort_i64(%a, %p, %k) : (memref<?x?xi64>, memref<?x?xi64>, memref<?xi64>) -> memref<?x?xi64>
    %v = memref.load %r[%c0, %i] : memref<?x?xi64>
    memref.store %v, %out[%i] : memref<4xi64>
  }
  return
}
