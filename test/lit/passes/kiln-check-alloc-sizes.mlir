// RUN: kiln-opt %s -p kiln-check-alloc-sizes | filecheck %s

// Each alloc with dynamic sizes is guarded: a negative dim (code -2) or more
// than 2**62 bytes (code -1; the product taken in f64, which cannot wrap)
// calls kiln_check_failed with kind -1 and no message; the runtime raises
// ValueError or MemoryError.
// CHECK: func.func private @kiln_check_failed(i64, !llvm.ptr, i64, i64)

// CHECK-LABEL: func.func @dynamic_2d
func.func @dynamic_2d(%n: index, %m: index) -> memref<?x4x?xf64> {
  // CHECK: %[[BYTES:.*]] = arith.constant 3.200000e+01 : f64
  // CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : index to i64
  // CHECK: arith.cmpi slt, %[[N]]
  // CHECK: arith.sitofp %[[N]] : i64 to f64
  // CHECK: arith.mulf %[[BYTES]]
  // CHECK: arith.cmpi slt
  // CHECK: %[[TOTAL:.*]] = arith.mulf
  // CHECK: %[[BIG:.*]] = arith.cmpf ogt, %[[TOTAL]], %{{.*}} : f64
  // CHECK: scf.if %[[NEG:.*]] {
  // CHECK-NEXT: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
  // CHECK-NEXT: %[[CODE:.*]] = arith.constant -2 : i64
  // CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: %[[KIND:.*]] = arith.constant -1 : i64
  // CHECK-NEXT: func.call @kiln_check_failed(%[[KIND]], %[[NULL]], %[[CODE]], %[[ZERO]])
  // CHECK: scf.if %[[BIG]] {
  // CHECK-NEXT: %[[NULL2:.*]] = llvm.mlir.zero : !llvm.ptr
  // CHECK-NEXT: %[[CODE2:.*]] = arith.constant -1 : i64
  // CHECK-NEXT: %[[ZERO2:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: %[[KIND2:.*]] = arith.constant -1 : i64
  // CHECK-NEXT: func.call @kiln_check_failed(%[[KIND2]], %[[NULL2]], %[[CODE2]], %[[ZERO2]])
  // CHECK: memref.alloc
  %0 = memref.alloc(%n, %m) : memref<?x4x?xf64>
  return %0 : memref<?x4x?xf64>
}

// A static alloc of a sane size is left alone.
// CHECK-LABEL: func.func @static_small
func.func @static_small() -> memref<8xi32> {
  // CHECK-NOT: kiln_check_failed
  // CHECK: memref.alloc() : memref<8xi32>
  %0 = memref.alloc() : memref<8xi32>
  return %0 : memref<8xi32>
}

// A static alloc larger than 2**62 bytes always reports.
// CHECK-LABEL: func.func @static_huge
func.func @static_huge() -> memref<1099511627776x1048576xf64> {
  // CHECK: call @kiln_check_failed
  // CHECK: memref.alloc
  %0 = memref.alloc() : memref<1099511627776x1048576xf64>
  return %0 : memref<1099511627776x1048576xf64>
}
