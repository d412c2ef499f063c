// RUN: kiln-opt %s -p 'kiln-outline-serial-loops{min-ops=1},kiln-dedup-parallel-bodies' | filecheck %s
// RUN: kiln-opt %s -p kiln-outline-serial-loops | filecheck %s --check-prefix=SMALL

// In a function of at least min-ops ops, each outermost loop nest that
// makes no call (but a check's failure or an interrupt poll) and no
// allocation becomes `llvm.func @<func>_serial<N>(%ctx: !llvm.ptr)`, run
// whole on the calling thread: the values it reads from outside are stored
// in one context buffer (an llvm.alloca in the entry block as large as the
// largest nest's fields, shared by all the calls), its scalar results
// stored there by the body and loaded back after the call. A loop that
// calls a body stays; the nest inside it is outlined. Equal nests end up
// as one body (kiln-dedup-parallel-bodies).

// Below min-ops (1000 by default) nothing changes.
// SMALL-NOT: _serial
// SMALL-NOT: llvm.alloca

// A combine loop after a parallel reduction (a body already outlined), a
// reduction into a scalar whose result the caller uses, the same copy
// twice, and a loop that calls a body (kept; the nest inside it is outlined).
func.func private @kiln_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
func.func private @kiln_check_failed(i64, !llvm.ptr, i64, i64)
llvm.func @glue_parallel0(%ctx: !llvm.ptr, %lo: i64, %hi: i64) {
  llvm.return
}
// CHECK-LABEL: func.func @glue
// CHECK-SAME: (%[[A:[^:]*]]: memref<?xf64>, %[[B:[^:]*]]: memref<?xf64>, %[[P:[^:]*]]: memref<?xf64>, %[[OUT:[^:]*]]: memref<f64>
// The context: 10 words (two rank-1 descriptors, 5 words each).
// CHECK: %[[CTX:.*]] = llvm.alloca %{{.*}} x !llvm.array<10 x i64> {alignment = 16 : i64}
// The combine loop: the partial sums' and the output's descriptors, then the call.
// CHECK: %[[PD:.*]] = builtin.unrealized_conversion_cast %[[P]] : memref<?xf64> to !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK: llvm.store %[[PD]], %[[F0]]
// CHECK: %[[OD:.*]] = builtin.unrealized_conversion_cast %[[OUT]] : memref<f64> to !llvm.struct<(ptr, ptr, i64)>
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK: llvm.store %[[OD]], %[[F1]]
// CHECK: llvm.call @glue_serial0(%[[CTX]]) {no_inline} : (!llvm.ptr) -> ()
// The reduction into a scalar: its result is loaded from field 1 after the call.
// CHECK: llvm.call @glue_serial1(%[[CTX]]) {no_inline}
// CHECK-NEXT: %[[R:.*]] = llvm.getelementptr %[[CTX]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, f64)>
// CHECK-NEXT: %[[SUM:.*]] = llvm.load %[[R]] : !llvm.ptr -> f64
// The same copy twice: one body, called twice.
// CHECK: llvm.call @glue_serial3(%[[CTX]]) {no_inline}
// CHECK: llvm.call @glue_serial3(%[[CTX]]) {no_inline}
// CHECK-NOT: @glue_serial2
// The loop that calls a body stays; the checked loop in it is outlined.
// CHECK: scf.for
// CHECK: func.call @kiln_parallel_for
// CHECK: llvm.call @glue_serial4(%[[CTX]]) {no_inline}
// CHECK: return %[[SUM]] : f64

// The checked loop, with its check's call, in its body.
// CHECK-LABEL: llvm.func @glue_serial4(%{{.*}}: !llvm.ptr)
// CHECK: scf.for
// CHECK: func.call @kiln_check_failed
// The copy (an scf.parallel run serially: a function that calls BLAS).
// CHECK-LABEL: llvm.func @glue_serial3(%{{.*}}: !llvm.ptr)
// CHECK: scf.parallel
// The reduction: loads a's descriptor, runs the loop, stores its result.
// CHECK-LABEL: llvm.func @glue_serial1(
// CHECK-SAME: %[[C1:[^:]*]]: !llvm.ptr)
// CHECK: %[[AD:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[AM:.*]] = builtin.unrealized_conversion_cast %[[AD]] {{.*}} to memref<?xf64>
// CHECK: %[[LOOP:.*]] = scf.for {{.*}} iter_args
// CHECK: memref.load %[[AM]]
// CHECK: %[[RF:.*]] = llvm.getelementptr %[[C1]][0, 1]
// CHECK-NEXT: llvm.store %[[LOOP]], %[[RF]] : f64, !llvm.ptr
// CHECK-NEXT: llvm.return
// The combine loop.
// CHECK-LABEL: llvm.func @glue_serial0(%{{.*}}: !llvm.ptr)
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: memref.store
func.func @glue(%a: memref<?xf64>, %b: memref<?xf64>, %partial: memref<?xf64>, %out: memref<f64>, %t: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %a, %c0 : memref<?xf64>
  %m = memref.dim %partial, %c0 : memref<?xf64>
  scf.for %i = %c0 to %m step %c1 {
    %p = memref.load %partial[%i] : memref<?xf64>
    %s = memref.load %out[] : memref<f64>
    %r = arith.addf %s, %p : f64
    memref.store %r, %out[] : memref<f64>
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %x = memref.load %a[%i] : memref<?xf64>
    %y = arith.addf %acc, %x : f64
    scf.yield %y : f64
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf64>
    memref.store %x, %b[%i] : memref<?xf64>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf64>
    memref.store %x, %b[%i] : memref<?xf64>
    scf.reduce
  }
  scf.for %k = %c0 to %t step %c1 {
    %f = llvm.mlir.addressof @glue_parallel0 : !llvm.ptr
    %ctx = llvm.mlir.zero : !llvm.ptr
    %z = arith.constant 0 : i64
    func.call @kiln_parallel_for(%f, %ctx, %z, %z, %z) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %b[%i] : memref<?xf64>
      %bad = arith.cmpf olt, %x, %zero : f64
      scf.if %bad {
        %msg = llvm.mlir.zero : !llvm.ptr
        %one = arith.constant 1 : i64
        func.call @kiln_check_failed(%one, %msg, %z, %z) : (i64, !llvm.ptr, i64, i64) -> ()
      }
    }
  }
  return %sum : f64
}
