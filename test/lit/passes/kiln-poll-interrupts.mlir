// RUN: kiln-opt %s -p kiln-poll-interrupts | filecheck %s

// The flag and the poll function are declared once; they are defined in the
// support code linked into every library (runtime/support.c, "Interrupts").
// CHECK: llvm.mlir.global external @kiln_interrupt_flag() {addr_space = 0 : i32} : i32
// CHECK-NEXT: func.func private @kiln_poll()

// Each loop body starts with a volatile load of the flag (a load LLVM may not
// hoist out of the loop) and calls kiln_poll only when it is set.
// CHECK-LABEL: func.func @count
func.func @count(%n: i64) -> i64 {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  // CHECK: scf.while
  %r = scf.while (%i = %c0) : (i64) -> i64 {
    %more = arith.cmpi slt, %i, %n : i64
    // CHECK: scf.condition
    scf.condition(%more) %i : i64
  } do {
  ^bb0(%i: i64):
    // CHECK: %[[ADDRESS:.*]] = llvm.mlir.addressof @kiln_interrupt_flag : !llvm.ptr
    // CHECK-NEXT: %[[FLAG:.*]] = llvm.load volatile %[[ADDRESS]] {alignment = 4 : i64} : !llvm.ptr -> i32
    // CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
    // CHECK-NEXT: %[[RAISED:.*]] = arith.cmpi ne, %[[FLAG]], %[[ZERO]] : i32
    // CHECK-NEXT: scf.if %[[RAISED]] {
    // CHECK-NEXT: func.call @kiln_poll() : () -> ()
    // CHECK-NEXT: }
    // CHECK-NEXT: arith.addi
    %next = arith.addi %i, %c1 : i64
    scf.yield %next : i64
  }
  return %r : i64
}

// A function without loops is left alone (and declares nothing).
// CHECK-LABEL: func.func @straight
// CHECK-NOT: kiln_poll
func.func @straight(%x: i64) -> i64 {
  return %x : i64
}
