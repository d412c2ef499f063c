// RUN: kiln-opt %s -p 'kiln-parallelize{min-work=1},kiln-dedup-parallel-bodies' | filecheck %s

// Outlined bodies whose texts are equal but for their names become one:
// the first is kept and every reference to the others names it.

// The same copy twice (in two functions) and a different nest.
// CHECK-LABEL: func.func @first
// CHECK: llvm.mlir.addressof @first_parallel0
// CHECK: llvm.mlir.addressof @first_parallel1
// CHECK: llvm.func @first_parallel1
// CHECK: arith.negf
// CHECK: llvm.func @first_parallel0
// CHECK: memref.load
// CHECK-NEXT: memref.store
// CHECK-LABEL: func.func @second
// CHECK: llvm.mlir.addressof @first_parallel0
// CHECK-NOT: @second_parallel0
func.func @first(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %b[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.negf %x : f32
    memref.store %y, %b[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

func.func @second(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %b, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %b[%i] : memref<?xf32>
    memref.store %x, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
