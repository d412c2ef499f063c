// RUN: kiln-opt %s -p kiln-dedup-checks | filecheck %s

// A check of a condition that an earlier check in the same block, or in a
// block around it, already tested is erased; checks in sibling regions and
// checks of other conditions stay.

func.func private @kiln_check_failed(i64, !llvm.ptr, i64, i64) attributes {llvm.passthrough = ["noreturn", "cold"]}
llvm.mlir.global private constant @kiln_check_message_0("sizes differ\00") {addr_space = 0 : i32}
llvm.mlir.global private constant @kiln_check_message_1("sizes differ again\00") {addr_space = 0 : i32}

// CHECK-LABEL: func.func @dedup
// CHECK-SAME: (%[[N:.*]]: index, %[[M:.*]]: index, %[[FLAG:.*]]: i1, %[[S:.*]]: index)
func.func @dedup(%n: index, %m: index, %flag: i1, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant -1 : i64
  %z = arith.constant 0 : i64
  %msg = llvm.mlir.addressof @kiln_check_message_0 : !llvm.ptr
  %msg1 = llvm.mlir.addressof @kiln_check_message_1 : !llvm.ptr
  %neg = arith.cmpi slt, %n, %c0 : index
  %ne = arith.cmpi ne, %n, %m : index
  // The first check of each condition stays:
  // CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[N]]
  // CHECK: %[[NE:.*]] = arith.cmpi ne, %[[N]], %[[M]]
  // CHECK: scf.if %[[NEG]] {
  // CHECK-NEXT: func.call @kiln_check_failed
  scf.if %neg {
    func.call @kiln_check_failed(%k, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
  }
  // The same condition again, with another message: erased.
  // CHECK-NOT: scf.if %[[NEG]]
  // CHECK: memref.alloc
  scf.if %neg {
    func.call @kiln_check_failed(%k, %msg1, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
  }
  %a = memref.alloc(%n) : memref<?xf64>
  // CHECK: scf.if %[[FLAG]] {
  scf.if %flag {
    // Inside a branch, a check made before the branch: erased; a new
    // condition is checked once, and in this branch only.
    // CHECK-NOT: scf.if %[[NEG]]
    // CHECK: scf.if %[[NE]] {
    // CHECK-NEXT: func.call @kiln_check_failed
    // CHECK-NOT: scf.if %[[NE]]
    // CHECK: } else {
    scf.if %neg {
      func.call @kiln_check_failed(%k, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
    }
    scf.if %ne {
      func.call @kiln_check_failed(%k, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
    }
    scf.if %ne {
      func.call @kiln_check_failed(%k, %msg1, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
    }
  } else {
    // The sibling branch did not run before this one: its check stays.
    // CHECK: scf.if %[[NE]] {
    // CHECK-NEXT: func.call @kiln_check_failed
    scf.if %ne {
      func.call @kiln_check_failed(%k, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
    }
  }
  // Nor did it run before the code after the branch: this check stays too.
  // CHECK: scf.for
  // CHECK-NEXT: scf.if %[[NE]] {
  // CHECK-NEXT: func.call @kiln_check_failed
  // A check of a loop body made before the loop: erased.
  // CHECK-NOT: scf.if %[[NEG]]
  // CHECK: memref.store
  scf.for %i = %c0 to %s step %c1 {
    scf.if %ne {
      func.call @kiln_check_failed(%k, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
    }
    scf.if %neg {
      func.call @kiln_check_failed(%k, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
    }
    %x = arith.constant 1.0 : f64
    memref.store %x, %a[%i] : memref<?xf64>
  }
  // A check inside the loop body ran only when the loop ran: the one after
  // the loop stays.
  // CHECK: scf.if %[[NE]] {
  // CHECK-NEXT: func.call @kiln_check_failed
  scf.if %ne {
    func.call @kiln_check_failed(%k, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
  }
  memref.dealloc %a : memref<?xf64>
  return
}

// CHECK-LABEL: func.func @not_a_check
// An scf.if that does more than fail is no check: it stays, and does not
// make a later check redundant.
func.func @not_a_check(%bad: i1, %a: memref<?xf64>) {
  %k = arith.constant -1 : i64
  %z = arith.constant 0 : i64
  %c0 = arith.constant 0 : index
  %msg = llvm.mlir.addressof @kiln_check_message_0 : !llvm.ptr
  // CHECK: scf.if
  // CHECK: memref.store
  // CHECK: func.call @kiln_check_failed
  // CHECK: scf.if
  // CHECK-NEXT: func.call @kiln_check_failed
  scf.if %bad {
    %x = arith.constant 1.0 : f64
    memref.store %x, %a[%c0] : memref<?xf64>
    func.call @kiln_check_failed(%k, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
  }
  scf.if %bad {
    func.call @kiln_check_failed(%k, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
  }
  return
}
