// RUN: kiln-opt %s -p kiln-hoist-loop-checks | filecheck %s

// Loop-invariant shape arithmetic and run-time checks leave the loop body:
// the checks run once before the loop, guarded by "the loop runs at least
// once"; a check after something that may fail or print stays in place.

func.func private @kiln_check_failed(i64, !llvm.ptr, i64, i64) attributes {llvm.passthrough = ["noreturn", "cold"]}
func.func private @kiln_print_emit(!llvm.ptr)
llvm.mlir.global private constant @kiln_check_message_0("sizes differ\00") {addr_space = 0 : i32}

// CHECK-LABEL: func.func @time_loop
// CHECK-SAME: (%[[N:.*]]: i64, %[[A:.*]]: memref<?xf64>, %[[B:.*]]: memref<?xf64>)
func.func @time_loop(%n: i64, %a: memref<?xf64>, %b: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1_i64 = arith.constant 1 : i64
  %cst = arith.constant 2.0 : f64
  %msg = llvm.mlir.addressof @kiln_check_message_0 : !llvm.ptr
  // The size arithmetic and the check come first, before the loop:
  // CHECK: %[[DA:.*]] = memref.dim %[[A]]
  // CHECK: %[[DB:.*]] = memref.dim %[[B]]
  // CHECK: %[[BAD:.*]] = arith.cmpi ne
  // CHECK: %[[RUNS:.*]] = arith.cmpi slt, %{{.*}}, %[[N]] : i64
  // CHECK: %[[GUARD:.*]] = arith.andi %[[RUNS]], %[[BAD]] : i1
  // CHECK: scf.if %[[GUARD]] {
  // CHECK-NEXT: func.call @kiln_check_failed
  // CHECK: scf.while
  %r = scf.while (%t = %c1_i64) : (i64) -> i64 {
    %go = arith.cmpi slt, %t, %n : i64
    scf.condition(%go) %t : i64
  } do {
  ^bb0(%t: i64):
    // CHECK: } do {
    // CHECK-NOT: memref.dim
    // CHECK-NOT: kiln_check_failed
    // CHECK: scf.parallel
    %da = memref.dim %a, %c0 : memref<?xf64>
    %db = memref.dim %b, %c0 : memref<?xf64>
    %bad = arith.cmpi ne, %da, %db : index
    %dai = arith.index_cast %da : index to i64
    %dbi = arith.index_cast %db : index to i64
    scf.if %bad {
      func.call @kiln_check_failed(%c1_i64, %msg, %dai, %dbi) : (i64, !llvm.ptr, i64, i64) -> ()
    }
    scf.parallel (%i) = (%c0) to (%da) step (%c1) {
      %x = memref.load %a[%i] : memref<?xf64>
      %y = arith.mulf %x, %cst : f64
      memref.store %y, %b[%i] : memref<?xf64>
      scf.reduce
    }
    %next = arith.addi %t, %c1_i64 : i64
    scf.yield %next : i64
  }
  return
}

// A check that depends on the iteration stays; so does an invariant check
// after a call (a print, here) that must happen first; a division stays too
// (a zero divisor would be undefined behaviour if the loop does not run).
// CHECK-LABEL: func.func @kept
func.func @kept(%n: index, %a: memref<?xf64>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1_i64 = arith.constant 1 : i64
  %msg = llvm.mlir.addressof @kiln_check_message_0 : !llvm.ptr
  %d = memref.dim %a, %c0 : memref<?xf64>
  // CHECK: scf.for
  // CHECK: arith.cmpi sge
  // CHECK: kiln_check_failed
  // CHECK: kiln_print_emit
  // CHECK: arith.divsi
  // CHECK: kiln_check_failed
  // CHECK: return
  scf.for %i = %c0 to %n step %c1 {
    %out = arith.cmpi sge, %i, %d : index
    scf.if %out {
      func.call @kiln_check_failed(%c1_i64, %msg, %c1_i64, %c1_i64) : (i64, !llvm.ptr, i64, i64) -> ()
    }
    func.call @kiln_print_emit(%msg) : (!llvm.ptr) -> ()
    %q = arith.divsi %d, %k : index
    %bad = arith.cmpi eq, %q, %c0 : index
    scf.if %bad {
      func.call @kiln_check_failed(%c1_i64, %msg, %c1_i64, %c1_i64) : (i64, !llvm.ptr, i64, i64) -> ()
    }
  }
  return
}

// Arithmetic on a value loaded in the loop stays in the loop (memory may
// change between iterations; loads are never hoisted).
// CHECK-LABEL: func.func @loaded
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: memref.store
func.func @loaded(%a: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%c0] : memref<?xf64>
    %y = arith.addf %x, %x : f64
    %z = arith.mulf %y, %y : f64
    memref.store %z, %a[%c1] : memref<?xf64>
  }
  return
}
