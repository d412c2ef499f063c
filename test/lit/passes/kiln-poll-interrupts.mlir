// RUN: kiln-opt %s -p kiln-poll-interrupts | filecheck %s
// RUN: kiln-opt %s -p 'kiln-poll-interrupts{block=1 heavy-block=1}' | filecheck %s --check-prefix=EVERY
// RUN: kiln-opt %s -p 'kiln-poll-interrupts{heavy-block=16}' | filecheck %s --check-prefix=HEAVY

// The flag and the poll function are declared once; they are defined in the
// support code linked into every library (runtime/support.c, "Interrupts").
// CHECK: llvm.mlir.global external @kiln_interrupt_flag() {addr_space = 0 : i32} : i32
// CHECK-NEXT: func.func private @kiln_poll()

// A counted loop with a few instructions per iteration polls once per block
// of 16384 iterations: an outer loop over the blocks polls (a volatile load of
// the flag, which LLVM may not hoist, and a call only when it is set) and runs
// the loop itself, unchanged and without a poll, from the block's start to
// its end. Its counter's range stays plain arithmetic, so LLVM vectorizes it.
// Beyond 2**63 values of the counter (the `else`) it runs as it was, polling
// every iteration.
// CHECK-LABEL: func.func @count
func.func @count(%n: i64) -> i64 {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  // CHECK-DAG: %[[SPAN:.*]] = arith.constant 16384 : i64
  // CHECK: %[[DISTANCE:.*]] = arith.subi %[[N:.*]], %[[INIT:.*]] : i64
  // CHECK: %[[NONEMPTY:.*]] = arith.cmpi slt, %[[INIT]], %[[N]] : i64
  // CHECK: %[[WHOLE:.*]] = arith.divui %[[DISTANCE]], %[[SPAN]] : i64
  // CHECK: %[[BLOCKS:.*]] = arith.select %[[NONEMPTY]]
  // CHECK: %[[FITS:.*]] = arith.cmpi sge, %[[DISTANCE]]
  // CHECK: scf.if %[[FITS]] -> (i64, i64) {
  // CHECK: scf.while (%[[Q0:.*]] = %{{.*}}, %{{.*}} = %[[INIT]], %{{.*}} = %{{.*}}) : (i64, i64, i64) -> (i64, i64, i64) {
  // CHECK-NEXT: %[[MORE:.*]] = arith.cmpi ult, %{{.*}}, %[[BLOCKS]] : i64
  // CHECK: ^bb0(%[[Q:.*]]: i64, %{{.*}}: i64, %[[SUM:.*]]: i64):
  // CHECK-NEXT: llvm.mlir.addressof @kiln_interrupt_flag
  // CHECK-NEXT: llvm.load volatile
  // CHECK-NEXT: arith.constant 0 : i32
  // CHECK-NEXT: arith.cmpi ne
  // CHECK-NEXT: scf.if
  // CHECK-NEXT: func.call @kiln_poll() : () -> ()
  // CHECK-NEXT: }
  // CHECK-NEXT: %[[OFFSET:.*]] = arith.muli %[[Q]], %[[SPAN]] overflow<nsw, nuw> : i64
  // CHECK-NEXT: %[[START:.*]] = arith.addi %[[INIT]], %[[OFFSET]] : i64
  // CHECK-NEXT: %[[LEFT:.*]] = arith.subi %[[N]], %[[START]] : i64
  // CHECK-NEXT: %[[LENGTH:.*]] = arith.minui %[[LEFT]], %[[SPAN]] : i64
  // CHECK-NEXT: %[[END:.*]] = arith.addi %[[START]], %[[LENGTH]] overflow<nsw> : i64
  // CHECK-NEXT: %[[NEXT_Q:.*]] = arith.addi %[[Q]], %{{.*}} overflow<nsw, nuw> : i64
  // CHECK-NEXT: %[[BLOCK:.*]]:2 = scf.while (%[[I:.*]] = %[[START]], %{{.*}} = %[[SUM]]) : (i64, i64) -> (i64, i64) {
  // CHECK-NEXT: arith.cmpi slt, %[[I]], %[[END]] : i64
  // CHECK-NOT: kiln_poll
  // CHECK: scf.yield %[[NEXT_Q]], %[[BLOCK]]#0, %[[BLOCK]]#1 : i64, i64, i64
  // CHECK: } else {
  // CHECK: scf.while
  // CHECK: func.call @kiln_poll() : () -> ()
  // EVERY-LABEL: func.func @count
  // EVERY-NOT: scf.if {{.*}} -> (i64, i64)
  // EVERY: scf.while
  // EVERY-NOT: scf.while
  // EVERY: func.call @kiln_poll() : () -> ()
  // EVERY-NEXT: }
  // EVERY-NEXT: arith.addi
  %r:2 = scf.while (%i = %c0, %s = %c0) : (i64, i64) -> (i64, i64) {
    %more = arith.cmpi slt, %i, %n : i64
    scf.condition(%more) %i, %s : i64, i64
  } do {
  ^bb0(%i: i64, %s: i64):
    %t = arith.addi %s, %i : i64
    %next = arith.addi %i, %c1 : i64
    scf.yield %next, %t : i64, i64
  }
  return %r#1 : i64
}

// A counted loop whose body runs a loop polls every iteration by default
// (next to the inner loop the poll costs nothing measurable); with
// `heavy-block=16` once per 16 iterations, here counting down by 2 (blocks of
// 32 values). Nothing is cloned: the counter's exact range matters to loops
// inside the body only.
// CHECK-LABEL: func.func @down
// CHECK: scf.while
// CHECK: ^bb0(%{{.*}}: index):
// CHECK-NEXT: llvm.mlir.addressof @kiln_interrupt_flag
// CHECK: func.call @kiln_poll() : () -> ()
// CHECK-NEXT: }
// CHECK-NEXT: memref.dim
// HEAVY-LABEL: func.func @down
func.func @down(%n: index, %m: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %cm2 = arith.constant -2 : index
  // HEAVY-DAG: %[[SPAN:.*]] = arith.constant 32 : index
  // HEAVY: %[[NONEMPTY:.*]] = arith.cmpi sgt, %[[N:.*]], %[[BOUND:.*]] : index
  // HEAVY-NOT: scf.if
  // HEAVY: scf.while
  // HEAVY: func.call @kiln_poll() : () -> ()
  // HEAVY: %[[OFFSET:.*]] = arith.muli %{{.*}}, %[[SPAN]] overflow<nuw> : index
  // HEAVY-NEXT: %[[START:.*]] = arith.subi %[[N]], %[[OFFSET]] : index
  // HEAVY-NEXT: %[[LEFT:.*]] = arith.subi %[[START]], %[[BOUND]] : index
  // HEAVY-NEXT: %[[LENGTH:.*]] = arith.minui %[[LEFT]], %[[SPAN]] : index
  // HEAVY-NEXT: %[[END:.*]] = arith.subi %[[START]], %[[LENGTH]] overflow<nsw> : index
  // HEAVY: scf.while (%[[I:.*]] = %[[START]]) : (index) -> index {
  // HEAVY-NEXT: arith.cmpi sgt, %[[I]], %[[END]] : index
  // HEAVY-NOT: kiln_poll
  // HEAVY: scf.for
  // HEAVY-LABEL: func.func @eight
  %r = scf.while (%i = %n) : (index) -> index {
    %more = arith.cmpi sgt, %i, %c0 : index
    scf.condition(%more) %i : index
  } do {
  ^bb0(%i: index):
    %d = memref.dim %m, %c0 : memref<?xf64>
    scf.for %j = %c0 to %d step %i {
      %v = memref.load %m[%j] : memref<?xf64>
      memref.store %v, %m[%j] : memref<?xf64>
    }
    %next = arith.addi %cm2, %i : index
    scf.yield %next : index
  }
  return
}

// A few instructions a constant number of times (at most a block) is bounded
// like an array operation: no poll (crc16's loop over the 8 bits of a byte
// stays a loop LLVM unrolls).
// CHECK-NOT: kiln_poll
// CHECK-LABEL: func.func @converge
func.func @eight(%x: i64) -> i64 {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c8 = arith.constant 8 : i64
  %r:2 = scf.while (%i = %c0, %s = %x) : (i64, i64) -> (i64, i64) {
    %more = arith.cmpi slt, %i, %c8 : i64
    scf.condition(%more) %i, %s : i64, i64
  } do {
  ^bb0(%i: i64, %s: i64):
    %t = arith.shrui %s, %c1 : i64
    %next = arith.addi %i, %c1 : i64
    scf.yield %next, %t : i64, i64
  }
  return %r#1 : i64
}

// A loop that does not count (its condition is data) polls every iteration.
// CHECK: scf.while
// CHECK: ^bb0(%{{.*}}: f64):
// CHECK-NEXT: llvm.mlir.addressof @kiln_interrupt_flag
// CHECK-NEXT: llvm.load volatile
// CHECK-NEXT: arith.constant 0 : i32
// CHECK-NEXT: arith.cmpi ne
// CHECK-NEXT: scf.if
// CHECK-NEXT: func.call @kiln_poll() : () -> ()
// CHECK-NEXT: }
// CHECK-NEXT: arith.mulf
func.func @converge(%x: f64) -> f64 {
  %half = arith.constant 0.5 : f64
  %eps = arith.constant 1.0e-9 : f64
  %r = scf.while (%v = %x) : (f64) -> f64 {
    %more = arith.cmpf ogt, %v, %eps : f64
    scf.condition(%more) %v : f64
  } do {
  ^bb0(%v: f64):
    %next = arith.mulf %v, %half : f64
    scf.yield %next : f64
  }
  return %r : f64
}

// A function without loops is left alone.
// CHECK-LABEL: func.func @straight
// CHECK-NOT: kiln_poll
func.func @straight(%x: i64) -> i64 {
  return %x : i64
}
