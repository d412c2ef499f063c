// RUN: kiln-opt %s -p kiln-parallelize | filecheck %s
// RUN: kiln-opt %s -p 'kiln-parallelize{min-work=1}' | filecheck %s --check-prefix=MIN

// Each outermost scf.parallel is outlined into
// `llvm.func @<func>_parallel<N>(%ctx: !llvm.ptr, %lo: i64, %hi: i64)`,
// which runs the nest for [lo, hi) of its first dim; the values it uses
// from outside are stored in a context struct (llvm.alloca in the entry
// block) and loaded back in the body; constants and index values are
// recomputed there. The loop becomes stores and a call to
// @kiln_parallel_for(body, ctx, lb0, ub0, work); inside an scf.for or
// scf.while, the stores and `scf.if (work >= threshold) { that call } else
// { llvm.call @body(ctx, lb0, ub0) }` (the same body, run directly: no
// second, inline copy of the nest), the threshold read once at the
// function's entry (@kiln_parallel_min_work). Both runtime functions are
// declared once.

// CHECK-DAG: func.func private @kiln_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
// CHECK-DAG: func.func private @kiln_parallel_min_work() -> i64
// CHECK-NOT: func.func private @kiln_parallel_for

// Struct fields (in the order the nest uses them): a's descriptor, s, b's
// descriptor. Field k is stored in the caller and loaded in the body with
// the same type and used for the same value.
// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[A:[^:]*]]: memref<?x?xf32>, %[[B:[^:]*]]: memref<?x?xf32>, %[[S:[^:]*]]: f32)
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[CTX:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, f32, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)> {alignment = 16 : i64} : (i64) -> !llvm.ptr
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[N:.*]] = memref.dim %[[A]], %[[C0]] : memref<?x?xf32>
// CHECK-DAG: %[[M:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x?xf32>
// work = (n - 0) * (m - 0); outside loops there is no inline copy
// (kiln_parallel_for runs small work serially itself).
// CHECK: %[[R0:.*]] = arith.subi %[[N]], %[[C0]] : index
// CHECK-NEXT: %[[R1:.*]] = arith.subi %[[M]], %[[C0]] : index
// CHECK-NEXT: %[[WORK:.*]] = arith.muli %[[R0]], %[[R1]] : index
// CHECK-NEXT: %[[W:.*]] = arith.index_cast %[[WORK]] : index to i64
// CHECK-NEXT: %[[DA:.*]] = builtin.unrealized_conversion_cast %[[A]] : memref<?x?xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-NEXT: %[[P0:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK-NEXT: llvm.store %[[DA]], %[[P0]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, !llvm.ptr
// CHECK-NEXT: %[[P1:.*]] = llvm.getelementptr %[[CTX]][0, 1]
// CHECK-NEXT: llvm.store %[[S]], %[[P1]] : f32, !llvm.ptr
// CHECK-NEXT: %[[DB:.*]] = builtin.unrealized_conversion_cast %[[B]] : memref<?x?xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-NEXT: %[[P2:.*]] = llvm.getelementptr %[[CTX]][0, 2]
// CHECK-NEXT: llvm.store %[[DB]], %[[P2]]
// CHECK-NEXT: %[[LB:.*]] = arith.index_cast %[[C0]] : index to i64
// CHECK-NEXT: %[[UB:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT: %[[FN:.*]] = llvm.mlir.addressof @scale_parallel0 : !llvm.ptr
// CHECK-NEXT: call @kiln_parallel_for(%[[FN]], %[[CTX]], %[[LB]], %[[UB]], %[[W]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// CHECK-NEXT: return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @scale_parallel0(%[[BCTX:[^:]*]]: !llvm.ptr, %[[LO:[^:]*]]: i64, %[[HI:[^:]*]]: i64) {
// CHECK-NEXT: %[[Q0:.*]] = llvm.getelementptr %[[BCTX]][0, 0]
// CHECK-NEXT: %[[L0:.*]] = llvm.load %[[Q0]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-NEXT: %[[BA:.*]] = builtin.unrealized_conversion_cast %[[L0]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<?x?xf32>
// CHECK-NEXT: %[[Q1:.*]] = llvm.getelementptr %[[BCTX]][0, 1]
// CHECK-NEXT: %[[BS:.*]] = llvm.load %[[Q1]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[Q2:.*]] = llvm.getelementptr %[[BCTX]][0, 2]
// CHECK-NEXT: %[[L2:.*]] = llvm.load %[[Q2]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-NEXT: %[[BB:.*]] = builtin.unrealized_conversion_cast %[[L2]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<?x?xf32>
// The constants and the inner bound (dim 1 of a) are recomputed in the body.
// CHECK-DAG: %[[BC0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[BC1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[BM:.*]] = memref.dim %[[BA]], %[[BC1]] : memref<?x?xf32>
// CHECK: %[[I0:.*]] = arith.index_cast %[[LO]] : i64 to index
// CHECK-NEXT: %[[I1:.*]] = arith.index_cast %[[HI]] : i64 to index
// CHECK-NEXT: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[I0]], %[[BC0]]) to (%[[I1]], %[[BM]]) step (%[[BC1]], %[[BC1]]) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[BA]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[X]], %[[BS]] : f32
// CHECK-NEXT: memref.store %[[Y]], %[[BB]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: llvm.return
func.func @scale(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %b[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// A nest inside a loop: the context is allocated once, in the entry block,
// and filled before each call; an index is stored as i64; the work counts
// the trip count of an inner loop with outside bounds: (n - 1) * max(k - 0, 1).
// CHECK-LABEL: func.func @in_loop
// CHECK-SAME: (%[[A:[^:]*]]: memref<?xf64>, %[[T:[^:]*]]: index, %[[K:[^:]*]]: index)
// The threshold is read once, at the entry, not once per iteration:
// CHECK-NEXT: %[[THRESH:.*]] = call @kiln_parallel_min_work() : () -> i64
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[CTX:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(i64, struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>)>
// CHECK-NOT: llvm.alloca
// CHECK: %[[N:.*]] = memref.dim %[[A]]
// CHECK-NEXT: scf.for
// CHECK-NEXT: %[[OUTER:.*]] = arith.subi %[[N]], %[[C1:.*]] : index
// CHECK-NEXT: %[[TRIP:.*]] = arith.subi %[[K]], %{{.*}} : index
// CHECK-NEXT: %[[ATLEAST1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[INNER:.*]] = arith.maxsi %[[TRIP]], %[[ATLEAST1]] : index
// CHECK-NEXT: %[[WORK:.*]] = arith.muli %[[OUTER]], %[[INNER]] : index
// CHECK-NEXT: %[[W:.*]] = arith.index_cast %[[WORK]] : index to i64
// CHECK-NEXT: %[[K64:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT: %[[P0:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK-NEXT: llvm.store %[[K64]], %[[P0]] : i64, !llvm.ptr
// CHECK: llvm.store %{{.*}}, %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, !llvm.ptr
// CHECK-NEXT: %[[LB:.*]] = arith.index_cast %[[C1]] : index to i64
// CHECK-NEXT: %[[UB:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT: %[[BIG:.*]] = arith.cmpi sge, %[[W]], %[[THRESH]] : i64
// CHECK-NEXT: scf.if %[[BIG]] {
// CHECK-NEXT: %[[FN:.*]] = llvm.mlir.addressof @in_loop_parallel0
// CHECK-NEXT: func.call @kiln_parallel_for(%[[FN]], %[[CTX]], %[[LB]], %[[UB]], %[[W]])
// CHECK-NEXT: } else {
// Small work runs the same body directly, over the whole range, and
// no_inline keeps LLVM from inlining it back (the copy this replaced):
// CHECK-NEXT: llvm.call @in_loop_parallel0(%[[CTX]], %[[LB]], %[[UB]]) {no_inline} : (!llvm.ptr, i64, i64) -> ()
// CHECK-NEXT: }
// No inline copy of the nest is left in the caller:
// CHECK-NOT: scf.parallel
// CHECK: return
// CHECK: llvm.func @in_loop_parallel0(%[[BCTX:[^:]*]]: !llvm.ptr, %[[LO:[^:]*]]: i64, %[[HI:[^:]*]]: i64)
// CHECK-NEXT: %[[Q0:.*]] = llvm.getelementptr %[[BCTX]][0, 0]
// CHECK-NEXT: %[[BK64:.*]] = llvm.load %[[Q0]] : !llvm.ptr -> i64
// CHECK-NEXT: %[[BK:.*]] = arith.index_cast %[[BK64]] : i64 to index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[BK]] step
func.func @in_loop(%a: memref<?xf64>, %t: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf64>
  scf.for %it = %c0 to %t step %c1 {
    scf.parallel (%i) = (%c1) to (%n) step (%c1) {
      %s = scf.for %q = %c0 to %k step %c1 iter_args(%acc = %c0) -> index {
        %r = arith.addi %acc, %q : index
        scf.yield %r : index
      }
      %x = memref.load %a[%s] : memref<?xf64>
      %y = arith.addf %x, %x : f64
      memref.store %y, %a[%i] : memref<?xf64>
      scf.reduce
    }
  }
  return
}

// Views and index arithmetic are recomputed in the body from the stored
// buffers and scalars (so LLVM sees the view's base): the context holds a,
// off and b, not the subview or m = dim(a) - off. The body also reads m,
// the first dim's upper bound, through its recomputed value.
// CHECK-LABEL: func.func @views_sunk
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>, i64, struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>)>
// CHECK: %[[M:.*]] = arith.subi
// CHECK: %[[UB:.*]] = arith.index_cast %[[M]] : index to i64
// CHECK: call @kiln_parallel_for(%{{.*}}, %{{.*}}, %{{.*}}, %[[UB]], %{{.*}})
// CHECK: llvm.func @views_sunk_parallel0(
// CHECK: %[[BA:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<?xf64>
// CHECK: %[[BOFF64:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK-NEXT: %[[BOFF:.*]] = arith.index_cast %[[BOFF64]] : i64 to index
// CHECK: %[[BB:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<?xf64>
// CHECK-DAG: %[[BC0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[BN:.*]] = memref.dim %[[BA]], %[[BC0]] : memref<?xf64>
// CHECK: %[[BM:.*]] = arith.subi %[[BN]], %[[BOFF]] : index
// CHECK-NEXT: %[[BSV:.*]] = memref.subview %[[BB]][%[[BOFF]]] [%[[BM]]] [1]
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: %[[J:.*]] = arith.subi %[[BM]], %[[I]] : index
// CHECK: memref.load %[[BA]]
// CHECK-NEXT: memref.store %{{.*}}, %[[BSV]][%[[I]]]
func.func @views_sunk(%a: memref<?xf64>, %b: memref<?xf64>, %off: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf64>
  %m = arith.subi %n, %off : index
  %sv = memref.subview %b[%off] [%m] [1] : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %j = arith.subi %m, %i : index
    %k = arith.subi %j, %c1 : index
    %x = memref.load %a[%k] : memref<?xf64>
    memref.store %x, %sv[%i] : memref<?xf64, strided<[1], offset: ?>>
    scf.reduce
  }
  return
}

// Constant bounds: 64 x 63 = 4032 iterations (< 4096) stay inline, 64 x 64
// are outlined. The float constant is cloned into the body: the context
// holds a's descriptor only. With min-work=1 both nests are outlined.
// CHECK-LABEL: func.func @small_and_large
// CHECK-SAME: (%[[A:[^:]*]]: memref<64x64xf32>, %[[B:[^:]*]]: memref<64x63xf32>)
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
// CHECK-DAG: %[[C63:.*]] = arith.constant 63 : index
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[C64]], %[[C63]])
// CHECK-NEXT: memref.store %{{.*}}, %[[B]][{{.*}}] : memref<64x63xf32>
// CHECK-NOT: scf.parallel
// CHECK: builtin.unrealized_conversion_cast %[[A]]
// CHECK-NOT: scf.parallel
// CHECK: call @kiln_parallel_for(
// CHECK-NOT: @small_and_large_parallel1
// CHECK: llvm.func @small_and_large_parallel0(
// CHECK: %[[BA:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<64x64xf32>
// CHECK: %[[CST:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: scf.parallel
// CHECK-NEXT: memref.store %[[CST]], %[[BA]]
// CHECK-NOT: @small_and_large_parallel1
// With min-work=1 both nests are outlined.
// MIN-LABEL: func.func @small_and_large
// MIN-NOT: scf.parallel
// MIN-COUNT-2: call @kiln_parallel_for(
// MIN-NOT: scf.parallel
// MIN: return
// MIN-DAG: llvm.func @small_and_large_parallel0(
// MIN-DAG: llvm.func @small_and_large_parallel1(
func.func @small_and_large(%a: memref<64x64xf32>, %b: memref<64x63xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c63) step (%c1, %c1) {
    memref.store %cst, %b[%i, %j] : memref<64x63xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    memref.store %cst, %a[%i, %j] : memref<64x64xf32>
    scf.reduce
  }
  return
}

// Stay serial: a body that calls a function (a failing check would unwind
// on a worker thread), a body that allocates, and a nest with results.
// CHECK-LABEL: func.func @serial
// CHECK-NOT: llvm.alloca
// CHECK: scf.parallel
// CHECK-NEXT: memref.load
// CHECK-NEXT: func.call @opaque
// CHECK: scf.parallel
// CHECK-NEXT: memref.alloc
// CHECK: scf.parallel {{.*}} -> f64
// CHECK-NOT: kiln_parallel_for
// CHECK: return
// CHECK-NEXT: }
// CHECK-NOT: @serial_parallel
func.func @serial(%a: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %a, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf64>
    %y = func.call @opaque(%x) : (f64) -> f64
    memref.store %y, %a[%i] : memref<?xf64>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %tmp = memref.alloc() : memref<4xf64>
    memref.dealloc %tmp : memref<4xf64>
    scf.reduce
  }
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f64 {
    %x = memref.load %a[%i] : memref<?xf64>
    scf.reduce(%x : f64) {
    ^bb0(%l: f64, %r: f64):
      %s = arith.addf %l, %r : f64
      scf.reduce.return %s : f64
    }
  }
  return %sum : f64
}
func.func private @opaque(f64) -> f64

// A function that calls BLAS keeps all its loops serial (OpenBLAS threads
// keep spinning after the call).
// CHECK-LABEL: func.func @with_blas
// CHECK-NOT: llvm.alloca
// CHECK: call @cblas_dscal
// CHECK: scf.parallel
// CHECK-NOT: kiln_parallel_for
// CHECK: return
// CHECK-NEXT: }
// CHECK-NOT: @with_blas_parallel
func.func @with_blas(%a: memref<?xf64>, %p: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf64>
  %n32 = arith.index_cast %n : index to i32
  %two = arith.constant 2.0 : f64
  %one = arith.constant 1 : i32
  func.call @cblas_dscal(%n32, %two, %p, %one) : (i32, f64, !llvm.ptr, i32) -> ()
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf64>
    %y = arith.addf %x, %x : f64
    memref.store %y, %a[%i] : memref<?xf64>
    scf.reduce
  }
  return
}
func.func private @cblas_dscal(i32, f64, !llvm.ptr, i32)

// A LAPACK kernel of runtime/lapack.c counts as BLAS (OpenBLAS runs it).
// CHECK-LABEL: func.func @with_lapack
// CHECK: call @kiln_lapack_solve_f64
// CHECK: scf.parallel
// CHECK-NOT: kiln_parallel_for
// CHECK: return
// CHECK-NEXT: }
// CHECK-NOT: @with_lapack_parallel
func.func @with_lapack(%a: memref<?x?x?xf64>, %b: memref<?x?x?xf64>, %x: memref<?x?x?xf64>, %info: memref<?xi64>,
                       %v: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %v, %c0 : memref<?xf64>
  func.call @kiln_lapack_solve_f64(%a, %b, %x, %info)
    : (memref<?x?x?xf64>, memref<?x?x?xf64>, memref<?x?x?xf64>, memref<?xi64>) -> ()
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %y = memref.load %v[%i] : memref<?xf64>
    %z = arith.addf %y, %y : f64
    memref.store %z, %v[%i] : memref<?xf64>
    scf.reduce
  }
  return
}
func.func private @kiln_lapack_solve_f64(memref<?x?x?xf64>, memref<?x?x?xf64>, memref<?x?x?xf64>, memref<?xi64>)

// Nests inside the outlined nest (kiln-block-rows's blocks of rows) run
// serially in the body. The work counts their iterations: a dim from %s to
// min(%s + %k, %n) with %k and %n from outside counts min(%k, %n), so
// work = blocks * (min(k, n) * m + min(k, n)).
// CHECK-LABEL: func.func @blocks
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x?xf32>, %[[T:[^:]*]]: memref<?x?xf32>, %[[K:[^:]*]]: index)
// CHECK: %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK-NEXT: %[[M:.*]] = memref.dim %[[X]], %c1
// CHECK-NEXT: %[[BLOCKS:.*]] = arith.ceildivsi
// CHECK-NEXT: %[[OUTER:.*]] = arith.subi %[[BLOCKS]], %[[C0:.*]] : index
// CHECK-NEXT: %[[ROWS1:.*]] = arith.minsi %[[K]], %[[N]] : index
// CHECK-NEXT: %[[J:.*]] = arith.subi %[[M]], %[[C0]] : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[ROWS1]], %[[J]] : index
// CHECK-NEXT: %[[ROWS2:.*]] = arith.minsi %[[K]], %[[N]] : index
// CHECK-NEXT: %[[BOTH:.*]] = arith.addi %[[FIRST]], %[[ROWS2]] : index
// CHECK: %[[PER_BLOCK:.*]] = arith.maxsi %[[BOTH]]
// CHECK-NEXT: %[[WORK:.*]] = arith.muli %[[OUTER]], %[[PER_BLOCK]] : index
// CHECK: call @kiln_parallel_for(
// CHECK: llvm.func @blocks_parallel0(
// CHECK: scf.parallel (%[[B:.*]]) =
// CHECK-NEXT: %[[START:.*]] = arith.muli %[[B]]
// CHECK-NEXT: arith.addi %[[START]]
// CHECK-NEXT: %[[STOP:.*]] = arith.minsi
// CHECK-NEXT: scf.parallel (%{{.*}}, %{{.*}}) = (%[[START]], %{{.*}}) to (%[[STOP]], %{{.*}})
// CHECK: scf.parallel (%{{.*}}) = (%[[START]]) to (%[[STOP]])
func.func @blocks(%x: memref<?x?xf32>, %t: memref<?x?xf32>, %rows_per_block: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %blocks = arith.ceildivsi %n, %rows_per_block : index
  scf.parallel (%b) = (%c0) to (%blocks) step (%c1) {
    %start = arith.muli %b, %rows_per_block : index
    %end = arith.addi %start, %rows_per_block : index
    %stop = arith.minsi %end, %n : index
    scf.parallel (%i, %j) = (%start, %c0) to (%stop, %m) step (%c1, %c1) {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      memref.store %v, %t[%i, %j] : memref<?x?xf32>
      scf.reduce
    }
    scf.parallel (%i) = (%start) to (%stop) step (%c1) {
      %v = memref.load %t[%i, %c0] : memref<?x?xf32>
      memref.store %v, %x[%i, %c0] : memref<?x?xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// kiln-block-sums's row sums: per block of rows, a nest over the row's
// whole 4096-element chunks (each an scf.for of 4096) and one over the
// rest. Each loop counts its own iterations times its body's: a row of 61
// elements has no whole chunk (%chunks is 0), so the work is
// rows * (min(k, n) * chunks * 4096 + min(k, n) * rest), about n * 61, not
// n * (4096 + 61) (the sum of the inner trip counts times the row count,
// which sent channel_flow's sums of 61 x 61 elements to the thread pool at
// every step of its time loop).
// CHECK-LABEL: func.func @chunked_rows
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x?x4096xf64>, %[[R:[^:]*]]: memref<?x?xf64>, %[[S:[^:]*]]: memref<?xf64>, %[[K:[^:]*]]: index, %[[CHUNKS:[^:]*]]: index, %[[REST:[^:]*]]: index)
// CHECK: %[[N:.*]] = memref.dim %[[R]], %c0
// CHECK: %[[ROWS1:.*]] = arith.minsi %[[K]], %[[N]] : index
// CHECK-NEXT: %[[C:.*]] = arith.subi %[[CHUNKS]], %c0
// CHECK-NEXT: %[[DIMS:.*]] = arith.muli %[[ROWS1]], %[[C]]
// CHECK-NEXT: %[[INNER:.*]] = arith.subi %c4096, %c0
// CHECK: %[[CHUNKED:.*]] = arith.muli %[[DIMS]], %{{.*}}
// CHECK-NEXT: %[[ROWS2:.*]] = arith.minsi %[[K]], %[[N]] : index
// CHECK-NEXT: %[[TAIL:.*]] = arith.subi %[[REST]], %c0
// CHECK: %[[TAILED:.*]] = arith.muli %[[ROWS2]], %{{.*}}
// CHECK-NEXT: arith.addi %[[CHUNKED]], %[[TAILED]]
// CHECK: call @kiln_parallel_for(
func.func @chunked_rows(%x: memref<?x?x4096xf64>, %r: memref<?x?xf64>, %s: memref<?xf64>, %rows_per_block: index,
                        %chunks: index, %rest: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %n = memref.dim %r, %c0 : memref<?x?xf64>
  %blocks = arith.ceildivsi %n, %rows_per_block : index
  scf.parallel (%b) = (%c0) to (%blocks) step (%c1) {
    %start = arith.muli %b, %rows_per_block : index
    %end = arith.addi %start, %rows_per_block : index
    %stop = arith.minsi %end, %n : index
    scf.parallel (%i, %j) = (%start, %c0) to (%stop, %chunks) step (%c1, %c1) {
      scf.for %k = %c0 to %c4096 step %c1 {
        %v = memref.load %x[%i, %j, %k] : memref<?x?x4096xf64>
        %acc = memref.load %r[%i, %j] : memref<?x?xf64>
        %sum = arith.addf %acc, %v : f64
        memref.store %sum, %r[%i, %j] : memref<?x?xf64>
      }
      scf.reduce
    }
    scf.parallel (%i) = (%start) to (%stop) step (%c1) {
      scf.for %k = %c0 to %rest step %c1 {
        %v = memref.load %r[%i, %k] : memref<?x?xf64>
        %acc = memref.load %s[%i] : memref<?xf64>
        %sum = arith.addf %acc, %v : f64
        memref.store %sum, %s[%i] : memref<?xf64>
      }
      scf.reduce
    }
    scf.reduce
  }
  return
}
