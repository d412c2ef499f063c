// RUN: kiln-opt %s -p kiln-flatten-parallel-nests | filecheck %s

// An elementwise nest whose indices are exactly its induction variables,
// over contiguous buffers whose dims are the bounds, becomes one loop over
// the product of the bounds, on the buffers collapsed to one dimension.

// An (H, W, C) image times 2 into a buffer allocated with its dims.
// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[IMG:[^:]*]]: memref<?x?x?xf32>)
// CHECK: %[[H:.*]] = memref.dim %[[IMG]], %{{.*}}
// CHECK: %[[W:.*]] = memref.dim %[[IMG]], %{{.*}}
// CHECK: %[[C:.*]] = memref.dim %[[IMG]], %{{.*}}
// CHECK: %[[OUT:.*]] = memref.alloc(%[[H]], %[[W]], %[[C]])
// CHECK: %[[HW:.*]] = arith.muli %[[H]], %[[W]] : index
// CHECK-NEXT: %[[N:.*]] = arith.muli %[[HW]], %[[C]] : index
// CHECK-DAG: %[[IMG1:.*]] = memref.collapse_shape %[[IMG]] {{\[}}[0, 1, 2]] : memref<?x?x?xf32> into memref<?xf32>
// CHECK-DAG: %[[OUT1:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0, 1, 2]] : memref<?x?x?xf32> into memref<?xf32>
// CHECK: %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: scf.parallel (%[[F:.*]]) = (%[[Z]]) to (%[[N]]) step (%[[ONE]]) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[IMG1]][%[[F]]] : memref<?xf32>
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK-NEXT: memref.store %[[Y]], %[[OUT1]][%[[F]]] : memref<?xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NOT: scf.parallel
// CHECK: return %[[OUT]]
func.func @scale(%img: memref<?x?x?xf32>) -> memref<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %two = arith.constant 2.0 : f32
  %h = memref.dim %img, %c0 : memref<?x?x?xf32>
  %w = memref.dim %img, %c1 : memref<?x?x?xf32>
  %ch = memref.dim %img, %c2 : memref<?x?x?xf32>
  %out = memref.alloc(%h, %w, %ch) : memref<?x?x?xf32>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%h, %w, %ch) step (%c1, %c1, %c1) {
    %x = memref.load %img[%i, %j, %k] : memref<?x?x?xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %out[%i, %j, %k] : memref<?x?x?xf32>
    scf.reduce
  }
  return %out : memref<?x?x?xf32>
}

// A fill of static and dynamic dims, and an access inside a branch of the body.
// CHECK-LABEL: func.func @fill_and_branch
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<?x4xf32> into memref<?xf32>
// CHECK: scf.parallel (%[[F:.*]]) =
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[F]]] : memref<?xf32>
// A static nest runs to the constant product.
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT: memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<2x4xf32> into memref<8xf32>
// CHECK: scf.parallel (%[[G:.*]]) = (%{{.*}}) to (%[[EIGHT]])
// CHECK: scf.if
// CHECK-NEXT: memref.load %{{.*}}[%[[G]]] : memref<8xf32>
func.func @fill_and_branch(%a: memref<?x4xf32>, %b: memref<2x4xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %a, %c0 : memref<?x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %c4) step (%c1, %c1) {
    memref.store %zero, %a[%i, %j] : memref<?x4xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    scf.if %flag {
      %x = memref.load %b[%i, %j] : memref<2x4xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %b[%i, %j] : memref<2x4xf32>
    }
    scf.reduce
  }
  return
}

// Two arguments with their own dims, compared by run-time checks before
// the nest (`kiln_check_failed` does not return): their dims are the bounds.
// A check inside a branch proves nothing after the branch.
// CHECK-LABEL: func.func @checked_dims
// CHECK: scf.if
// CHECK: memref.collapse_shape
// CHECK: scf.parallel (%{{[^,]*}}) =
// CHECK: func.call @kiln_check_failed
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: scf.if
// CHECK-NOT: memref.collapse_shape
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK: return
func.func private @kiln_check_failed(i64, !llvm.ptr, i64, i64)
func.func @checked_dims(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %code = arith.constant 1 : i64
  %null = llvm.mlir.zero : !llvm.ptr
  %a0 = memref.dim %a, %c0 : memref<?x?xf32>
  %a1 = memref.dim %a, %c1 : memref<?x?xf32>
  %b0 = memref.dim %b, %c0 : memref<?x?xf32>
  %b1 = memref.dim %b, %c1 : memref<?x?xf32>
  %a0i = arith.index_cast %a0 : index to i64
  %b0i = arith.index_cast %b0 : index to i64
  %ne0 = arith.cmpi ne, %a0i, %b0i : i64
  scf.if %ne0 {
    func.call @kiln_check_failed(%code, %null, %a0i, %b0i) : (i64, !llvm.ptr, i64, i64) -> ()
  }
  %a1i = arith.index_cast %a1 : index to i64
  %b1i = arith.index_cast %b1 : index to i64
  %ne1 = arith.cmpi ne, %a1i, %b1i : i64
  scf.if %ne1 {
    func.call @kiln_check_failed(%code, %null, %a1i, %b1i) : (i64, !llvm.ptr, i64, i64) -> ()
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%a0, %a1) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    %y = memref.load %b[%i, %j] : memref<?x?xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  %c0d = memref.dim %c, %c0 : memref<?x?xf32>
  %c1d = memref.dim %c, %c1 : memref<?x?xf32>
  %c0i = arith.index_cast %c0d : index to i64
  %ne3 = arith.cmpi ne, %a0i, %c0i : i64
  scf.if %ne3 {
    func.call @kiln_check_failed(%code, %null, %a0i, %c0i) : (i64, !llvm.ptr, i64, i64) -> ()
  }
  %c1i = arith.index_cast %c1d : index to i64
  %ne2 = arith.cmpi ne, %a1i, %c1i : i64
  scf.if %flag {
    scf.if %ne2 {
      func.call @kiln_check_failed(%code, %null, %a1i, %c1i) : (i64, !llvm.ptr, i64, i64) -> ()
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%a0, %a1) step (%c1, %c1) {
    %x = memref.load %c[%i, %j] : memref<?x?xf32>
    memref.store %x, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// Left alone: a per-channel vector read at one index, a broadcast read
// (`[%i, %j, %c0]`), transposed indices, a strided view, bounds that are
// not the buffer's dims, a non-zero lower bound, a nest with a reduction
// loop inside, and a single loop.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.collapse_shape
// CHECK-COUNT-8: scf.parallel
// CHECK-NOT: memref.collapse_shape
// CHECK: return
func.func @kept(%a: memref<?x?xf32>, %mean: memref<?xf32>, %b: memref<?x?x1xf32>,
                %s: memref<?x?xf32, strided<[?, 1]>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %a, %c0 : memref<?x?xf32>
  %cols = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %m = memref.load %mean[%j] : memref<?xf32>
    memref.store %m, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %m = memref.load %b[%i, %j, %c0] : memref<?x?x1xf32>
    memref.store %m, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %m = memref.load %a[%j, %i] : memref<?x?xf32>
    memref.store %m, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  %srows = memref.dim %s, %c0 : memref<?x?xf32, strided<[?, 1]>>
  %scols = memref.dim %s, %c1 : memref<?x?xf32, strided<[?, 1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%srows, %scols) step (%c1, %c1) {
    %m = memref.load %s[%i, %j] : memref<?x?xf32, strided<[?, 1]>>
    %d = arith.addf %m, %m : f32
    memref.store %d, %s[%i, %j] : memref<?x?xf32, strided<[?, 1]>>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %n) step (%c1, %c1) {
    %m = memref.load %a[%i, %j] : memref<?x?xf32>
    memref.store %m, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c1, %c0) to (%rows, %cols) step (%c1, %c1) {
    %m = memref.load %a[%i, %j] : memref<?x?xf32>
    memref.store %m, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    scf.for %k = %c0 to %n step %c1 {
      %m = memref.load %a[%i, %k] : memref<?x?xf32>
      memref.store %m, %a[%i, %j] : memref<?x?xf32>
    }
    scf.reduce
  }
  scf.parallel (%k) = (%c0) to (%cols) step (%c1) {
    %x = memref.load %mean[%k] : memref<?xf32>
    memref.store %x, %mean[%k] : memref<?xf32>
    scf.reduce
  }
  return
}
