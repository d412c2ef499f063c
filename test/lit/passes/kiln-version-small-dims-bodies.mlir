// RUN: kiln-opt %s -p 'kiln-parallelize{min-work=1},kiln-version-small-dims{bodies=true}' | filecheck %s
// RUN: kiln-opt %s -p 'kiln-parallelize{min-work=1},kiln-version-small-dims{bodies=true body-budget=1}' | filecheck %s --check-prefix=BUDGET

// `bodies=true`: a parallel body that reads columns of an (n, ?) array
// (subviews whose row stride is the array's dynamic last dim) gets versions
// for a last dim of 3 and 4. In each, the columns are viewed with a
// static row stride (memref.reinterpret_cast of their own metadata), so
// LLVM sees both columns at constant distances from one base and loads a
// row with one interleaved vector load. The original loop is the last
// fallback.

// CHECK-LABEL: llvm.func @cols_parallel0
// CHECK: %[[X:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<?x?xf32>
// CHECK: %[[COL0:.*]] = memref.subview %[[X]][0, 0]
// CHECK: %[[COL2:.*]] = memref.subview %[[X]][0, 2]
// CHECK: %[[C:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x?xf32>
// CHECK: %[[IS3:.*]] = arith.cmpi eq, %[[C]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[IS3]] {
// CHECK: %[[V0:.*]] = memref.reinterpret_cast %[[COL0]] to offset: [0], sizes: [%{{.*}}, 1], strides: [3, 1] : memref<?x1xf32, strided<[?, 1]>> to memref<?x1xf32, strided<[3, 1]>>
// CHECK: %[[V2:.*]] = memref.reinterpret_cast %[[COL2]] to offset: [2], sizes: [%{{.*}}, 1], strides: [3, 1] : memref<?x1xf32, strided<[?, 1], offset: 2>> to memref<?x1xf32, strided<[3, 1], offset: 2>>
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %[[V0]]
// CHECK-NEXT: memref.load %[[V2]]
// CHECK: } else {
// CHECK: arith.cmpi eq, %[[C]], %{{.*}} : index
// CHECK: strides: [4, 1]
// CHECK: } else {
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: memref.load %[[COL0]]
// CHECK-NEXT: memref.load %[[COL2]]
func.func @cols(%arg0: memref<?x?xf32>, %arg1: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %arg0, %c0 : memref<?x?xf32>
  %col0 = memref.subview %arg0[0, 0] [%n, 1] [1, 1] : memref<?x?xf32> to memref<?x1xf32, strided<[?, 1]>>
  %col2 = memref.subview %arg0[0, 2] [%n, 1] [1, 1] : memref<?x?xf32> to memref<?x1xf32, strided<[?, 1], offset: 2>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %a = memref.load %col0[%i, %c0] : memref<?x1xf32, strided<[?, 1]>>
    %b = memref.load %col2[%i, %c0] : memref<?x1xf32, strided<[?, 1], offset: 2>>
    %s = arith.addf %a, %b : f32
    memref.store %s, %arg1[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// A body reading whole rows of a contiguous array (no column views) is
// left alone.
// CHECK-LABEL: llvm.func @rows_parallel0
// CHECK-NOT: scf.if
// CHECK: llvm.return
func.func @rows(%arg0: memref<?x?xf32>, %arg1: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %arg0, %c0 : memref<?x?xf32>
  %m = memref.dim %arg0, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    %a = memref.load %arg0[%i, %j] : memref<?x?xf32>
    memref.store %a, %arg1[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// A body reading slices with a dynamic last size (a stencil's
// `a[1:-1, 1:-1]`: contiguous runs, not columns) is left alone: a version
// would only copy the body for LLVM to compile again.
// CHECK-LABEL: llvm.func @stencil_parallel0
// CHECK-NOT: scf.if
// CHECK-NOT: memref.reinterpret_cast
// CHECK: llvm.return
func.func @stencil(%arg0: memref<?x?xf32>, %arg1: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %arg0, %c0 : memref<?x?xf32>
  %m = memref.dim %arg0, %c1 : memref<?x?xf32>
  %n2 = arith.subi %n, %c2 : index
  %m2 = arith.subi %m, %c2 : index
  %mid = memref.subview %arg0[1, 1] [%n2, %m2] [1, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  %left = memref.subview %arg0[1, 0] [%n2, %m2] [1, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n2, %m2) step (%c1, %c1) {
    %a = memref.load %mid[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    %b = memref.load %left[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
    %s = arith.addf %a, %b : f32
    memref.store %s, %arg1[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// A body that only copies a column (no arithmetic on the elements) is left
// alone: it is bound by memory, and a version would only copy it.
// CHECK-LABEL: llvm.func @copy_column_parallel0
// CHECK-NOT: scf.if
// CHECK-NOT: memref.reinterpret_cast
// CHECK: llvm.return
func.func @copy_column(%arg0: memref<?x?xf32>, %arg1: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %arg0, %c0 : memref<?x?xf32>
  %col = memref.subview %arg0[0, 2] [%n, 1] [1, 1] : memref<?x?xf32> to memref<?x1xf32, strided<[?, 1], offset: 2>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %a = memref.load %col[%i, %c0] : memref<?x1xf32, strided<[?, 1], offset: 2>>
    memref.store %a, %arg1[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// At most `body-budget` bodies per module are versioned, in program order:
// with the default (4) both @cols and @more_cols are; with a budget of 1
// only @cols.
// CHECK-LABEL: llvm.func @more_cols_parallel0
// CHECK: scf.if
// CHECK: memref.reinterpret_cast
// BUDGET-LABEL: llvm.func @cols_parallel0
// BUDGET: scf.if
// BUDGET: memref.reinterpret_cast
// BUDGET-LABEL: llvm.func @more_cols_parallel0
// BUDGET-NOT: scf.if
// BUDGET-NOT: memref.reinterpret_cast
// BUDGET: llvm.return
func.func @more_cols(%arg0: memref<?x?xf32>, %arg1: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %arg0, %c0 : memref<?x?xf32>
  %col1 = memref.subview %arg0[0, 1] [%n, 1] [1, 1] : memref<?x?xf32> to memref<?x1xf32, strided<[?, 1], offset: 1>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %a = memref.load %col1[%i, %c0] : memref<?x1xf32, strided<[?, 1], offset: 1>>
    %s = arith.mulf %a, %a : f32
    memref.store %s, %arg1[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
