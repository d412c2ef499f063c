// RUN: kiln-opt %s -p kiln-forward-loop-buffers | filecheck %s

// The body only reads the buffer the condition hands it (loads, views,
// dims, copies out of it) and yields a new one: the condition forwards its
// own argument, without the copy.
// CHECK-LABEL: func.func @reads_only
// CHECK: scf.while (%[[I:.*]] = %{{.*}}, %[[A:.*]] = %{{.*}})
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: scf.condition(%{{.*}}) %[[I]], %[[A]] : i64, memref<?xf64>
// CHECK: } do {
// CHECK: memref.copy %{{.*}}, %[[NEXT:.*]] :
// CHECK: scf.yield %{{.*}}, %[[NEXT]]
func.func @reads_only(%init: memref<?xf64>, %n: i64) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %r:2 = scf.while (%i = %z, %a = %init) : (i64, memref<?xf64>) -> (i64, memref<?xf64>) {
    %go = arith.cmpi slt, %i, %n : i64
    %d = memref.dim %a, %c0 : memref<?xf64>
    %fresh = memref.alloc(%d) : memref<?xf64>
    memref.copy %a, %fresh : memref<?xf64> to memref<?xf64>
    scf.condition(%go) %i, %fresh : i64, memref<?xf64>
  } do {
  ^bb0(%i: i64, %b: memref<?xf64>):
    %d = memref.dim %b, %c0 : memref<?xf64>
    %next = memref.alloc(%d) : memref<?xf64>
    memref.copy %b, %next : memref<?xf64> to memref<?xf64>
    %m = arith.subi %d, %c1 : index
    %tail = memref.subview %b[1] [%m] [1] : memref<?xf64> to memref<?xf64, strided<[1], offset: 1>>
    %x = memref.load %tail[%c0] : memref<?xf64, strided<[1], offset: 1>>
    memref.store %x, %next[%c0] : memref<?xf64>
    %j = arith.addi %i, %one : i64
    scf.yield %j, %next : i64, memref<?xf64>
  }
  return %r#1 : memref<?xf64>
}

// The body writes into the buffer: the copy stays.
// CHECK-LABEL: func.func @writes
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK: scf.condition
func.func @writes(%init: memref<?xf64>, %n: i64) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %v = arith.constant 2.0 : f64
  %r:2 = scf.while (%i = %z, %a = %init) : (i64, memref<?xf64>) -> (i64, memref<?xf64>) {
    %go = arith.cmpi slt, %i, %n : i64
    %d = memref.dim %a, %c0 : memref<?xf64>
    %fresh = memref.alloc(%d) : memref<?xf64>
    memref.copy %a, %fresh : memref<?xf64> to memref<?xf64>
    scf.condition(%go) %i, %fresh : i64, memref<?xf64>
  } do {
  ^bb0(%i: i64, %b: memref<?xf64>):
    memref.store %v, %b[%c0] : memref<?xf64>
    %j = arith.addi %i, %one : i64
    scf.yield %j, %b : i64, memref<?xf64>
  }
  return %r#1 : memref<?xf64>
}

// A view of the buffer that a branch yields is written: the copy stays.
// CHECK-LABEL: func.func @writes_through_a_branch
// CHECK: memref.copy
// CHECK: scf.condition
func.func @writes_through_a_branch(%init: memref<?xf64>, %n: i64, %p: i1) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %v = arith.constant 2.0 : f64
  %r:2 = scf.while (%i = %z, %a = %init) : (i64, memref<?xf64>) -> (i64, memref<?xf64>) {
    %go = arith.cmpi slt, %i, %n : i64
    %d = memref.dim %a, %c0 : memref<?xf64>
    %fresh = memref.alloc(%d) : memref<?xf64>
    memref.copy %a, %fresh : memref<?xf64> to memref<?xf64>
    scf.condition(%go) %i, %fresh : i64, memref<?xf64>
  } do {
  ^bb0(%i: i64, %b: memref<?xf64>):
    %d = memref.dim %b, %c0 : memref<?xf64>
    %other = memref.alloc(%d) : memref<?xf64>
    %chosen = scf.if %p -> memref<?xf64> {
      scf.yield %b : memref<?xf64>
    } else {
      scf.yield %other : memref<?xf64>
    }
    memref.store %v, %chosen[%c0] : memref<?xf64>
    %j = arith.addi %i, %one : i64
    scf.yield %j, %other : i64, memref<?xf64>
  }
  return %r#1 : memref<?xf64>
}

// The body writes the loop's initial buffer (the first iteration's): the copy stays.
// CHECK-LABEL: func.func @writes_the_initial_buffer
// CHECK: memref.copy
// CHECK: scf.condition
func.func @writes_the_initial_buffer(%init: memref<?xf64>, %n: i64) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %r:2 = scf.while (%i = %z, %a = %init) : (i64, memref<?xf64>) -> (i64, memref<?xf64>) {
    %go = arith.cmpi slt, %i, %n : i64
    %d = memref.dim %a, %c0 : memref<?xf64>
    %fresh = memref.alloc(%d) : memref<?xf64>
    memref.copy %a, %fresh : memref<?xf64> to memref<?xf64>
    scf.condition(%go) %i, %fresh : i64, memref<?xf64>
  } do {
  ^bb0(%i: i64, %b: memref<?xf64>):
    %x = memref.load %b[%c0] : memref<?xf64>
    memref.store %x, %init[%c0] : memref<?xf64>
    %d = memref.dim %b, %c0 : memref<?xf64>
    %next = memref.alloc(%d) : memref<?xf64>
    %j = arith.addi %i, %one : i64
    scf.yield %j, %next : i64, memref<?xf64>
  }
  return %r#1 : memref<?xf64>
}

// Something between the copy and the condition: the copy stays.
// CHECK-LABEL: func.func @store_after_the_copy
// CHECK: memref.copy
// CHECK: memref.store
// CHECK: scf.condition
func.func @store_after_the_copy(%init: memref<?xf64>, %n: i64) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %v = arith.constant 2.0 : f64
  %r:2 = scf.while (%i = %z, %a = %init) : (i64, memref<?xf64>) -> (i64, memref<?xf64>) {
    %go = arith.cmpi slt, %i, %n : i64
    %d = memref.dim %a, %c0 : memref<?xf64>
    %fresh = memref.alloc(%d) : memref<?xf64>
    memref.copy %a, %fresh : memref<?xf64> to memref<?xf64>
    memref.store %v, %a[%c0] : memref<?xf64>
    scf.condition(%go) %i, %fresh : i64, memref<?xf64>
  } do {
  ^bb0(%i: i64, %b: memref<?xf64>):
    %d = memref.dim %b, %c0 : memref<?xf64>
    %next = memref.alloc(%d) : memref<?xf64>
    memref.copy %b, %next : memref<?xf64> to memref<?xf64>
    %j = arith.addi %i, %one : i64
    scf.yield %j, %next : i64, memref<?xf64>
  }
  return %r#1 : memref<?xf64>
}

// The body writes a buffer from outside the loop and yields it: in the next
// iteration the body reads that buffer while writing it again, so the copy
// stays (np.intersect1d's binary search loop).
// CHECK-LABEL: func.func @yields_a_buffer_it_writes
// CHECK: memref.copy
// CHECK: scf.condition
func.func @yields_a_buffer_it_writes(%init: memref<?xf64>, %scratch: memref<?xf64>, %n: i64) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %r:2 = scf.while (%i = %z, %a = %init) : (i64, memref<?xf64>) -> (i64, memref<?xf64>) {
    %go = arith.cmpi slt, %i, %n : i64
    %d = memref.dim %a, %c0 : memref<?xf64>
    %fresh = memref.alloc(%d) : memref<?xf64>
    memref.copy %a, %fresh : memref<?xf64> to memref<?xf64>
    scf.condition(%go) %i, %fresh : i64, memref<?xf64>
  } do {
  ^bb0(%i: i64, %b: memref<?xf64>):
    %x = memref.load %b[%c0] : memref<?xf64>
    %y = arith.addf %x, %x : f64
    memref.store %y, %scratch[%c0] : memref<?xf64>
    %j = arith.addi %i, %one : i64
    scf.yield %j, %scratch : i64, memref<?xf64>
  }
  return %r#1 : memref<?xf64>
}
