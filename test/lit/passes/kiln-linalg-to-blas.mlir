// RUN: kiln-opt %s -p kiln-linalg-to-blas | filecheck %s

// Row-major f32/f64 matmuls become CBLAS gemm calls into NumPy's OpenBLAS;
// a zero fill right before the matmul is dropped in favour of beta = 0.
// CHECK-DAG: func.func private @scipy_cblas_sgemm64_(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-DAG: func.func private @scipy_cblas_dgemm64_(i32, i32, i32, i64, i64, i64, f64, !llvm.ptr, i64, !llvm.ptr, i64, f64, !llvm.ptr, i64)

// CHECK-LABEL: func.func @zero_filled
func.func @zero_filled(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  // CHECK-NOT: linalg.fill
  // CHECK: %[[ROW:.*]] = arith.constant 101 : i32
  // CHECK-NEXT: %[[NT:.*]] = arith.constant 111 : i32
  // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NOT: linalg.fill
  // CHECK: call @scipy_cblas_sgemm64_(%[[ROW]], %[[NT]], %[[NT]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %{{.*}}, %{{.*}})
  // CHECK-NOT: linalg.
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// Without a zero fill the call accumulates (beta = 1); views with a unit
// inner stride pass their offset and leading dimension.
// CHECK-LABEL: func.func @accumulate_view
func.func @accumulate_view(%a: memref<?x?xf64, strided<[?, 1], offset: ?>>, %b: memref<?x?xf64>, %c: memref<?x?xf64>) {
  // CHECK: memref.extract_strided_metadata
  // CHECK: memref.extract_aligned_pointer_as_index
  // CHECK: llvm.inttoptr
  // CHECK: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f64
  // CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f64
  // CHECK: call @scipy_cblas_dgemm64_({{.*}}, %[[ALPHA]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BETA]], %{{.*}}, %{{.*}})
  linalg.matmul ins(%a, %b : memref<?x?xf64, strided<[?, 1], offset: ?>>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  return
}

// Column-strided operands and integer matmuls stay as they are.
// CHECK-LABEL: func.func @kept
func.func @kept(%a: memref<?x?xf32, strided<[1, ?], offset: ?>>, %b: memref<?x?xf32>, %c: memref<?x?xf32>,
                %i: memref<?x?xi32>) {
  // CHECK: linalg.matmul
  // CHECK: linalg.matmul
  linalg.matmul ins(%a, %b : memref<?x?xf32, strided<[1, ?], offset: ?>>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%i, %i : memref<?x?xi32>, memref<?x?xi32>) outs(%i : memref<?x?xi32>)
  return
}

// Matrix-vector products call gemv: `A @ x` (B of one column, stepping by its
// row stride) without transposing, `x @ A` (A of one row) with B transposed.
// The zero fill stays: gemv leaves y alone when the inner dimension is 0.
// CHECK-LABEL: func.func @matrix_vector
func.func @matrix_vector(%a: memref<?x?xf64>, %x: memref<?x1xf64, strided<[?, 1], offset: ?>>, %y: memref<?x1xf64>,
                         %row: memref<1x?xf32>, %b: memref<?x?xf32>, %out: memref<1x?xf32>) {
  // CHECK: linalg.fill
  // CHECK: %[[ROW_MAJOR:.*]] = arith.constant 101 : i32
  // CHECK: %[[NT:.*]] = arith.constant 111 : i32
  // CHECK: call @scipy_cblas_dgemv64_(%[[ROW_MAJOR]], %[[NT]], {{.*}}) : (i32, i32, i64, i64, f64, !llvm.ptr, i64, !llvm.ptr, i64, f64, !llvm.ptr, i64) -> ()
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%y : memref<?x1xf64>)
  linalg.matmul ins(%a, %x : memref<?x?xf64>, memref<?x1xf64, strided<[?, 1], offset: ?>>) outs(%y : memref<?x1xf64>)
  // CHECK: %[[T:.*]] = arith.constant 112 : i32
  // CHECK: call @scipy_cblas_sgemv64_(%{{.*}}, %[[T]], {{.*}})
  linalg.matmul ins(%row, %b : memref<1x?xf32>, memref<?x?xf32>) outs(%out : memref<1x?xf32>)
  return
}

// gemm's `alpha * A @ B + beta * C` as kiln-fold-into-gemm leaves it: a
// scaled copy of A right before the matmul and `C = beta * C` in place
// before that. The call reads A itself and C with alpha and beta; each
// scaling still runs, and the call then reads its result with a factor of
// 1, only when its factor is 0 (BLAS would skip the term, where NumPy's
// `0 * nan` is nan).
#s = affine_map<(d0, d1) -> ()>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @scaled
// CHECK-SAME: (%[[ALPHA:.*]]: f64, %[[BETA:.*]]: f64, %[[A:.*]]: memref<?x?xf64>, %[[B:.*]]: memref<?x?xf64>, %[[C:.*]]: memref<?x?xf64>)
func.func @scaled(%alpha: f64, %beta: f64, %a: memref<?x?xf64>, %b: memref<?x?xf64>, %c: memref<?x?xf64>) {
  // CHECK: %[[BZ:.*]] = arith.cmpf oeq, %[[BETA]]
  // CHECK: %[[BF:.*]] = arith.select %[[BZ]], %{{.*}}, %[[BETA]] : f64
  // CHECK: scf.if %[[BZ]] {
  // CHECK-NEXT: linalg.generic {{.*}} outs(%[[C]]
  // CHECK: %[[AZ:.*]] = arith.cmpf oeq, %[[ALPHA]]
  // CHECK: %[[AF:.*]] = arith.select %[[AZ]], %{{.*}}, %[[ALPHA]] : f64
  // CHECK: scf.if %[[AZ]] {
  // CHECK-NEXT: linalg.generic
  // CHECK: %[[PA:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr
  // CHECK: call @scipy_cblas_dgemm64_(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[AF]], %[[PA]], %{{.*}}, %{{.*}}, %{{.*}}, %[[BF]], %{{.*}}, %{{.*}})
  // CHECK-NOT: linalg.matmul
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf64>
  %k = memref.dim %a, %c1 : memref<?x?xf64>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<?x?xf64>) outs(%c : memref<?x?xf64>) {
  ^bb0(%x: f64, %o: f64):
    %p = arith.mulf %beta, %x : f64
    linalg.yield %p : f64
  }
  %sa = memref.alloc(%m, %k) : memref<?x?xf64>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x?xf64>) outs(%sa : memref<?x?xf64>) {
  ^bb0(%x: f64, %o: f64):
    %p = arith.mulf %alpha, %x : f64
    linalg.yield %p : f64
  }
  linalg.matmul ins(%sa, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  memref.dealloc %sa : memref<?x?xf64>
  return
}

// `x.T @ y`: the transposed copy of x (made only for this product) is
// dropped, with its buffer; gemm reads x with CblasTrans (112).

#tr = affine_map<(d0, d1) -> (d1, d0)>

// CHECK-LABEL: func.func @transposed_left
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf64>, %[[Y:.*]]: memref<?x?xf64>)
// CHECK-NOT: linalg.generic
// CHECK: memref.alloc(%{{.*}}, %{{.*}}) {alignment = 64 : i64}
// CHECK: memref.extract_strided_metadata %[[X]]
// CHECK: %[[T:.*]] = arith.constant 112 : i32
// CHECK: %[[NT:.*]] = arith.constant 111 : i32
// CHECK: call @scipy_cblas_dgemm64_(%{{.*}}, %[[T]], %[[NT]], %{{.*}}
// CHECK-NOT: memref.dealloc
func.func @transposed_left(%x: memref<?x?xf64>, %y: memref<?x?xf64>) -> memref<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %r = memref.dim %x, %c0 : memref<?x?xf64>
  %n = memref.dim %x, %c1 : memref<?x?xf64>
  %k = memref.dim %y, %c1 : memref<?x?xf64>
  %xt = memref.alloc(%n, %r) : memref<?x?xf64>
  linalg.generic {indexing_maps = [#tr, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x?xf64>) outs(%xt : memref<?x?xf64>) {
  ^bb0(%in: f64, %o: f64):
    linalg.yield %in : f64
  }
  %c = memref.alloc(%n, %k) {alignment = 64 : i64} : memref<?x?xf64>
  linalg.fill ins(%zero : f64) outs(%c : memref<?x?xf64>)
  linalg.matmul ins(%xt, %y : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  memref.dealloc %xt : memref<?x?xf64>
  return %c : memref<?x?xf64>
}

// `x.T @ x` into a fresh zero-filled result: syrk (upper triangle, trans)
// and runtime/matvec.c's mirror of the triangle; no gemm, no copy.

// CHECK-LABEL: func.func @gram
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.fill
// CHECK: call @scipy_cblas_ssyrk64_(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C:.*]], %[[LD:.*]]) : (i32, i32, i32, i64, i64, f32, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
// CHECK-NEXT: call @kiln_mirror_upper_f32(%[[C]], %{{.*}}, %[[LD]])
// CHECK-NOT: gemm
func.func @gram(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %xt = memref.alloc(%n, %r) : memref<?x?xf32>
  linalg.transpose ins(%x : memref<?x?xf32>) outs(%xt : memref<?x?xf32>) permutation = [1, 0]
  %c = memref.alloc(%n, %n) : memref<?x?xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
  linalg.matmul ins(%xt, %x : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  memref.dealloc %xt : memref<?x?xf32>
  return %c : memref<?x?xf32>
}

// x is written between its transposed copy and the product: the copy stays.

// CHECK-LABEL: func.func @written_between
// CHECK: linalg.transpose
// CHECK: linalg.fill
// CHECK: call @scipy_cblas_dgemm64_(%{{.*}}, %[[NT:.*]], %[[NT]],
func.func @written_between(%x: memref<?x?xf64>) -> memref<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %r = memref.dim %x, %c0 : memref<?x?xf64>
  %n = memref.dim %x, %c1 : memref<?x?xf64>
  %xt = memref.alloc(%n, %r) : memref<?x?xf64>
  linalg.transpose ins(%x : memref<?x?xf64>) outs(%xt : memref<?x?xf64>) permutation = [1, 0]
  linalg.fill ins(%one : f64) outs(%x : memref<?x?xf64>)
  %c = memref.alloc(%n, %n) : memref<?x?xf64>
  linalg.fill ins(%zero : f64) outs(%c : memref<?x?xf64>)
  linalg.matmul ins(%xt, %x : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  memref.dealloc %xt : memref<?x?xf64>
  return %c : memref<?x?xf64>
}

// An f32 gemm whose A has at most 8 rows calls kiln_gemm_small_m_f32
// (runtime/matvec.c: it reads B once, where sgemm packs it first): a
// static count directly, a dynamic one behind a test of the count at run
// time, with sgemm for more rows. f64, and A of more rows, call gemm.
// CHECK-LABEL: func.func @few_rows
func.func @few_rows(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>,
                    %a4: memref<4x?xf32>, %c4: memref<4x?xf32>, %a9: memref<9x?xf32>, %c9: memref<9x?xf32>,
                    %d: memref<?x?xf64>, %dc: memref<?x?xf64>) {
  // CHECK: %[[EIGHT:.*]] = arith.constant 8 : i64
  // CHECK-NEXT: %[[FEW:.*]] = arith.cmpi sle, %[[M:.*]], %[[EIGHT]] : i64
  // CHECK-NEXT: scf.if %[[FEW]] {
  // CHECK-NEXT: func.call @kiln_gemm_small_m_f32(%[[M]], {{.*}}) : (i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
  // CHECK-NEXT: } else {
  // CHECK-NEXT: func.call @scipy_cblas_sgemm64_(
  // CHECK-NEXT: }
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  // CHECK-NOT: scf.if
  // CHECK: call @kiln_gemm_small_m_f32(
  // CHECK-NOT: scf.if
  linalg.matmul ins(%a4, %b : memref<4x?xf32>, memref<?x?xf32>) outs(%c4 : memref<4x?xf32>)
  // CHECK-NOT: kiln_gemm_small_m
  // CHECK: call @scipy_cblas_sgemm64_(
  linalg.matmul ins(%a9, %b : memref<9x?xf32>, memref<?x?xf32>) outs(%c9 : memref<9x?xf32>)
  // CHECK-NOT: kiln_gemm_small_m
  // CHECK: call @scipy_cblas_dgemm64_(
  // CHECK-NOT: kiln_gemm_small_m
  linalg.matmul ins(%d, %d : memref<?x?xf64>, memref<?x?xf64>) outs(%dc : memref<?x?xf64>)
  return
}
