// RUN: kiln-opt %s -p kiln-runtime-call-results | filecheck %s

// A call of a routine marked `kiln.returns_argument = K` loses its result:
// its uses take the K-th operand, and the declaration returns nothing (the
// routine's C signature then takes only the memrefs' expanded fields).

// CHECK: func.func private @kiln_sort_f64(memref<?x?xf64> {bufferization.access = "read"}, memref<?x?xf64> {bufferization.access = "write"}, memref<?xi64> {bufferization.access = "read"}){{$}}
// CHECK-NOT: kiln.returns_argument
func.func private @kiln_sort_f64(memref<?x?xf64> {bufferization.access = "read"}, memref<?x?xf64> {bufferization.access = "write"}, memref<?xi64> {bufferization.access = "read"}) -> memref<?x?xf64> attributes {kiln.returns_argument = 1 : i64}
// An unmarked callee keeps its result.
// CHECK: func.func private @other(memref<?xf64>) -> memref<?xf64>
func.func private @other(memref<?xf64>) -> memref<?xf64>

// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[IN:.*]]: memref<?x?xf64>, %[[OUT:.*]]: memref<?x?xf64>, %[[K:.*]]: memref<?xi64>, %[[V:.*]]: memref<?xf64>)
func.func @caller(%in: memref<?x?xf64>, %out: memref<?x?xf64>, %k: memref<?xi64>, %v: memref<?xf64>) -> (memref<?x?xf64>, memref<?xf64>) {
  // CHECK: call @kiln_sort_f64(%[[IN]], %[[OUT]], %[[K]]) : (memref<?x?xf64>, memref<?x?xf64>, memref<?xi64>) -> (){{$}}
  %r = call @kiln_sort_f64(%in, %out, %k) : (memref<?x?xf64>, memref<?x?xf64>, memref<?xi64>) -> memref<?x?xf64>
  // CHECK: %[[W:.*]] = call @other(%[[V]]) : (memref<?xf64>) -> memref<?xf64>
  %w = call @other(%v) : (memref<?xf64>) -> memref<?xf64>
  // CHECK: return %[[OUT]], %[[W]]
  return %r, %w : memref<?x?xf64>, memref<?xf64>
}
