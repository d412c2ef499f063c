// RUN: kiln-opt %s -p kiln-wide-vectors | filecheck %s
// RUN: kiln-opt %s -p "kiln-wide-vectors{width=0}" | filecheck %s --check-prefix=OFF
// RUN: kiln-opt %s -p kiln-expand-exp,kiln-wide-vectors | filecheck %s --check-prefix=EXP

// A function holding vector math (an op kiln-expand-exp marked) asks LLVM
// for 512-bit vectors; the others are left alone. width=0 asks nothing.
// OFF-LABEL: func.func @marked
// OFF-NOT: passthrough
// OFF: return

// CHECK-LABEL: func.func @marked
// CHECK-SAME: llvm.passthrough = {{\[\[}}"prefer-vector-width", "512"]]
func.func @marked(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %nan = arith.cmpf uno, %x, %x : f32
    %y = arith.select %nan, %x, %x {kiln.vector_math} : f32
    memref.store %y, %a[%i] : memref<?xf32>
  }
  return
}

// CHECK-LABEL: func.func @plain
// CHECK-NOT: passthrough
// CHECK: return
func.func @plain(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%i] : memref<?xf32>
  }
  return
}

// An outlined body (llvm.func) gets `passthrough`; an entry there already
// stays, and a width already asked is replaced, not repeated.
// CHECK-LABEL: llvm.func @body
// CHECK-SAME: passthrough = ["nounwind", {{\[}}"prefer-vector-width", "512"]]
llvm.func @body(%p: !llvm.ptr) attributes {passthrough = ["nounwind", ["prefer-vector-width", "256"]]} {
  %x = llvm.load %p : !llvm.ptr -> f64
  %true = llvm.mlir.constant(true) : i1
  %y = arith.select %true, %x, %x {kiln.vector_math} : f64
  llvm.store %y, %p : f64, !llvm.ptr
  llvm.return
}

// A declaration has no body to widen.
// CHECK-LABEL: func.func private @declared
// CHECK-NOT: passthrough
func.func private @declared(f32) -> f32

// The two passes together: exp in a parallel loop widens its function.
// EXP-LABEL: func.func @softmax_like
// EXP-SAME: llvm.passthrough = {{\[\[}}"prefer-vector-width", "512"]]
func.func @softmax_like(%a: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf64>
    %y = math.exp %x : f64
    memref.store %y, %a[%i] : memref<?xf64>
    scf.reduce
  }
  return
}
