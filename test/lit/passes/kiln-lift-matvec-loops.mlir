// RUN: kiln-opt %s -p kiln-lift-matvec-loops | filecheck %s

// covariance: `for i in range(n): out[i, i:] = x[:, i] @ x[:, i:]`. The
// product `x.T @ x` is computed once before the loop, under the estimate
// "the contracted ranges agree, the loop reads at least an eighth of the
// product, and the product is not much larger than its operands"; each iteration
// reads its row of it, or computes its own product when the estimate says no.

// CHECK-LABEL: func.func @triangle
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf64>, %[[N:.*]]: i64)
// CHECK: %[[TRIPS:.*]] = arith.maxsi
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi sle
// CHECK: %[[G:.*]] = scf.if %[[WORTH:.*]] -> (tensor<?x?xf64>) {
// CHECK:   %[[XR:.*]] = tensor.extract_slice %[[X]][%{{.*}}, 0]
// CHECK:   %[[T:.*]] = linalg.transpose ins(%[[XR]] : tensor<?x?xf64>)
// CHECK:   %[[P:.*]] = linalg.matmul ins(%[[T]], %{{.*}} : tensor<?x?xf64>, tensor<?x?xf64>)
// CHECK:   scf.yield %[[P]]
// CHECK: } else {
// CHECK:   tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf64>
// CHECK: scf.while
// CHECK: %[[ROW:.*]] = scf.if %[[WORTH]] -> (tensor<1x?xf64>) {
// CHECK:   %[[PICK:.*]] = tensor.extract_slice %[[G]][%{{.*}}, %{{.*}}] [1, %{{.*}}] [1, 1] : tensor<?x?xf64> to tensor<1x?xf64>
// CHECK:   scf.yield %[[PICK]]
// CHECK: } else {
// CHECK:   linalg.fill
// CHECK:   %[[OWN:.*]] = linalg.matmul
// CHECK:   scf.yield %[[OWN]]
// CHECK: tensor.insert_slice %[[ROW]]
func.func @triangle(%x: tensor<?x?xf64>, %n: i64) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f64
  %rows = tensor.dim %x, %c0 : tensor<?x?xf64>
  %cols = tensor.dim %x, %c1 : tensor<?x?xf64>
  %e = tensor.empty(%cols, %cols) : tensor<?x?xf64>
  %out0 = linalg.fill ins(%zero : f64) outs(%e : tensor<?x?xf64>) -> tensor<?x?xf64>
  %r:2 = scf.while (%i = %c0_i64, %out = %out0) : (i64, tensor<?x?xf64>) -> (i64, tensor<?x?xf64>) {
    %go = arith.cmpi slt, %i, %n : i64
    scf.condition(%go) %i, %out : i64, tensor<?x?xf64>
  } do {
  ^bb0(%i: i64, %out: tensor<?x?xf64>):
    %ii = arith.index_cast %i : i64 to index
    %width = arith.subi %cols, %ii : index
    %column = tensor.extract_slice %x[0, %ii] [%rows, 1] [1, 1] : tensor<?x?xf64> to tensor<?x1xf64>
    %block = tensor.extract_slice %x[0, %ii] [%rows, %width] [1, 1] : tensor<?x?xf64> to tensor<?x?xf64>
    %flat = tensor.collapse_shape %column [[0, 1]] : tensor<?x1xf64> into tensor<?xf64>
    %row = tensor.expand_shape %flat [[0, 1]] output_shape [1, %rows] : tensor<?xf64> into tensor<1x?xf64>
    %re = tensor.empty(%width) : tensor<1x?xf64>
    %rf = linalg.fill ins(%zero : f64) outs(%re : tensor<1x?xf64>) -> tensor<1x?xf64>
    %p = linalg.matmul ins(%row, %block : tensor<1x?xf64>, tensor<?x?xf64>) outs(%rf : tensor<1x?xf64>) -> tensor<1x?xf64>
    %next = tensor.insert_slice %p into %out[%ii, %ii] [1, %width] [1, 1] : tensor<1x?xf64> into tensor<?x?xf64>
    %i1 = arith.addi %i, %c1_i64 : i64
    scf.yield %i1, %next : i64, tensor<?x?xf64>
  }
  return %r#1 : tensor<?x?xf64>
}

// A matrix product written row by row, `C[i, :] = A[i, :] @ B` with B
// whole: G = A @ B (no transpose), row i read in the body.

// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf32>, %[[B:.*]]: tensor<?x?xf32>
// CHECK: %[[G:.*]] = scf.if %[[WORTH:.*]] -> (tensor<?x?xf32>) {
// CHECK-NOT: linalg.transpose
// CHECK:   %[[AP:.*]] = tensor.extract_slice %[[A]][0, %{{.*}}]
// CHECK:   %[[BP:.*]] = tensor.extract_slice %[[B]][%{{.*}}, 0]
// CHECK:   linalg.matmul ins(%[[AP]], %[[BP]] : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK: scf.while
// CHECK: scf.if %[[WORTH]] -> (tensor<1x?xf32>) {
// CHECK:   tensor.extract_slice %[[G]][%{{.*}}, %{{.*}}] [1, %{{.*}}] [1, 1] : tensor<?x?xf32> to tensor<1x?xf32>
func.func @rows(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %n: i64) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %inner = tensor.dim %a, %c1 : tensor<?x?xf32>
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %k = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %k) : tensor<?x?xf32>
  %r:2 = scf.while (%i = %c0_i64, %out = %e) : (i64, tensor<?x?xf32>) -> (i64, tensor<?x?xf32>) {
    %go = arith.cmpi slt, %i, %n : i64
    scf.condition(%go) %i, %out : i64, tensor<?x?xf32>
  } do {
  ^bb0(%i: i64, %out: tensor<?x?xf32>):
    %ii = arith.index_cast %i : i64 to index
    %row = tensor.extract_slice %a[%ii, 0] [1, %inner] [1, 1] : tensor<?x?xf32> to tensor<1x?xf32>
    %re = tensor.empty(%k) : tensor<1x?xf32>
    %rf = linalg.fill ins(%zero : f32) outs(%re : tensor<1x?xf32>) -> tensor<1x?xf32>
    %p = linalg.matmul ins(%row, %b : tensor<1x?xf32>, tensor<?x?xf32>) outs(%rf : tensor<1x?xf32>) -> tensor<1x?xf32>
    %next = tensor.insert_slice %p into %out[%ii, 0] [1, %k] [1, 1] : tensor<1x?xf32> into tensor<?x?xf32>
    %i1 = arith.addi %i, %c1_i64 : i64
    scf.yield %i1, %next : i64, tensor<?x?xf32>
  }
  return %r#1 : tensor<?x?xf32>
}

// Column by column, `C[:, j] = A @ B[:, j]`: the vector on the right;
// G = A @ B, column j read in the body.

// CHECK-LABEL: func.func @columns
// CHECK: %[[G:.*]] = scf.if %[[WORTH:.*]] -> (tensor<?x?xf64>) {
// CHECK-NOT: linalg.transpose
// CHECK:   linalg.matmul
// CHECK: scf.while
// CHECK: scf.if %[[WORTH]] -> (tensor<?x1xf64>) {
// CHECK:   tensor.extract_slice %[[G]][%{{.*}}, %{{.*}}] [%{{.*}}, 1] [1, 1] : tensor<?x?xf64> to tensor<?x1xf64>
func.func @columns(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %n: i64) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f64
  %m = tensor.dim %a, %c0 : tensor<?x?xf64>
  %inner = tensor.dim %b, %c0 : tensor<?x?xf64>
  %k = tensor.dim %b, %c1 : tensor<?x?xf64>
  %e = tensor.empty(%m, %k) : tensor<?x?xf64>
  %r:2 = scf.while (%j = %c0_i64, %out = %e) : (i64, tensor<?x?xf64>) -> (i64, tensor<?x?xf64>) {
    %go = arith.cmpi slt, %j, %n : i64
    scf.condition(%go) %j, %out : i64, tensor<?x?xf64>
  } do {
  ^bb0(%j: i64, %out: tensor<?x?xf64>):
    %jj = arith.index_cast %j : i64 to index
    %col = tensor.extract_slice %b[0, %jj] [%inner, 1] [1, 1] : tensor<?x?xf64> to tensor<?x1xf64>
    %ce = tensor.empty(%m) : tensor<?x1xf64>
    %cf = linalg.fill ins(%zero : f64) outs(%ce : tensor<?x1xf64>) -> tensor<?x1xf64>
    %p = linalg.matmul ins(%a, %col : tensor<?x?xf64>, tensor<?x1xf64>) outs(%cf : tensor<?x1xf64>) -> tensor<?x1xf64>
    %next = tensor.insert_slice %p into %out[0, %jj] [%m, 1] [1, 1] : tensor<?x1xf64> into tensor<?x?xf64>
    %j1 = arith.addi %j, %c1_i64 : i64
    scf.yield %j1, %next : i64, tensor<?x?xf64>
  }
  return %r#1 : tensor<?x?xf64>
}

// The matrix is carried by the loop (written in it): no product is lifted.

// CHECK-LABEL: func.func @carried
// CHECK-NOT: linalg.transpose
// CHECK: scf.while
// CHECK-NOT: scf.if
// CHECK: linalg.matmul
func.func @carried(%x0: tensor<?x?xf64>, %n: i64) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f64
  %rows = tensor.dim %x0, %c0 : tensor<?x?xf64>
  %cols = tensor.dim %x0, %c1 : tensor<?x?xf64>
  %r:2 = scf.while (%i = %c0_i64, %x = %x0) : (i64, tensor<?x?xf64>) -> (i64, tensor<?x?xf64>) {
    %go = arith.cmpi slt, %i, %n : i64
    scf.condition(%go) %i, %x : i64, tensor<?x?xf64>
  } do {
  ^bb0(%i: i64, %x: tensor<?x?xf64>):
    %ii = arith.index_cast %i : i64 to index
    %column = tensor.extract_slice %x[0, %ii] [%rows, 1] [1, 1] : tensor<?x?xf64> to tensor<?x1xf64>
    %block = tensor.extract_slice %x[0, 0] [%rows, %cols] [1, 1] : tensor<?x?xf64> to tensor<?x?xf64>
    %flat = tensor.collapse_shape %column [[0, 1]] : tensor<?x1xf64> into tensor<?xf64>
    %row = tensor.expand_shape %flat [[0, 1]] output_shape [1, %rows] : tensor<?xf64> into tensor<1x?xf64>
    %re = tensor.empty(%cols) : tensor<1x?xf64>
    %rf = linalg.fill ins(%zero : f64) outs(%re : tensor<1x?xf64>) -> tensor<1x?xf64>
    %p = linalg.matmul ins(%row, %block : tensor<1x?xf64>, tensor<?x?xf64>) outs(%rf : tensor<1x?xf64>) -> tensor<1x?xf64>
    %next = tensor.insert_slice %p into %x[%ii, 0] [1, %cols] [1, 1] : tensor<1x?xf64> into tensor<?x?xf64>
    %i1 = arith.addi %i, %c1_i64 : i64
    scf.yield %i1, %next : i64, tensor<?x?xf64>
  }
  return %r#1 : tensor<?x?xf64>
}

// Integer products stay (BLAS has none).

// CHECK-LABEL: func.func @integers
// CHECK-NOT: linalg.transpose
// CHECK: scf.while
// CHECK-NOT: scf.if
// CHECK: linalg.matmul
func.func @integers(%x: tensor<?x?xi64>, %n: i64, %acc: tensor<1x?xi64>) -> tensor<1x?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %rows = tensor.dim %x, %c0 : tensor<?x?xi64>
  %cols = tensor.dim %x, %c1 : tensor<?x?xi64>
  %r:2 = scf.while (%i = %c0_i64, %a = %acc) : (i64, tensor<1x?xi64>) -> (i64, tensor<1x?xi64>) {
    %go = arith.cmpi slt, %i, %n : i64
    scf.condition(%go) %i, %a : i64, tensor<1x?xi64>
  } do {
  ^bb0(%i: i64, %a: tensor<1x?xi64>):
    %ii = arith.index_cast %i : i64 to index
    %column = tensor.extract_slice %x[0, %ii] [%rows, 1] [1, 1] : tensor<?x?xi64> to tensor<?x1xi64>
    %flat = tensor.collapse_shape %column [[0, 1]] : tensor<?x1xi64> into tensor<?xi64>
    %row = tensor.expand_shape %flat [[0, 1]] output_shape [1, %rows] : tensor<?xi64> into tensor<1x?xi64>
    %re = tensor.empty(%cols) : tensor<1x?xi64>
    %rf = linalg.fill ins(%c0_i64 : i64) outs(%re : tensor<1x?xi64>) -> tensor<1x?xi64>
    %block = tensor.extract_slice %x[0, %ii] [%rows, %cols] [1, 1] : tensor<?x?xi64> to tensor<?x?xi64>
    %p = linalg.matmul ins(%row, %block : tensor<1x?xi64>, tensor<?x?xi64>) outs(%rf : tensor<1x?xi64>) -> tensor<1x?xi64>
    %i1 = arith.addi %i, %c1_i64 : i64
    scf.yield %i1, %p : i64, tensor<1x?xi64>
  }
  return %r#1 : tensor<1x?xi64>
}

// The triple loop `for i: for j: C[i, j] = np.dot(A[i, :], B[:, j])`: the
// (1, 1) dot in the inner loop reads G = A @ B, computed before the outer
// loop (the inner bounds and both matrices are invariant in it).

// CHECK-LABEL: func.func @nest
// CHECK: %[[G:.*]] = scf.if %[[WORTH:.*]] -> (tensor<?x?xf64>) {
// CHECK:   linalg.matmul
// CHECK: scf.while
// CHECK: scf.while
// CHECK: scf.if %[[WORTH]] -> (tensor<1x1xf64>) {
// CHECK:   tensor.extract_slice %[[G]][%{{.*}}, %{{.*}}] [1, 1] [1, 1] : tensor<?x?xf64> to tensor<1x1xf64>
func.func @nest(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %n: i64, %m: i64, %c: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f64
  %inner = tensor.dim %a, %c1 : tensor<?x?xf64>
  %r:2 = scf.while (%i = %c0_i64, %out = %c) : (i64, tensor<?x?xf64>) -> (i64, tensor<?x?xf64>) {
    %go = arith.cmpi slt, %i, %n : i64
    scf.condition(%go) %i, %out : i64, tensor<?x?xf64>
  } do {
  ^bb0(%i: i64, %out: tensor<?x?xf64>):
    %ii = arith.index_cast %i : i64 to index
    %row = tensor.extract_slice %a[%ii, 0] [1, %inner] [1, 1] : tensor<?x?xf64> to tensor<1x?xf64>
    %s:2 = scf.while (%j = %c0_i64, %o = %out) : (i64, tensor<?x?xf64>) -> (i64, tensor<?x?xf64>) {
      %go = arith.cmpi slt, %j, %m : i64
      scf.condition(%go) %j, %o : i64, tensor<?x?xf64>
    } do {
    ^bb0(%j: i64, %o: tensor<?x?xf64>):
      %jj = arith.index_cast %j : i64 to index
      %col = tensor.extract_slice %b[0, %jj] [%inner, 1] [1, 1] : tensor<?x?xf64> to tensor<?x1xf64>
      %e = tensor.empty() : tensor<1x1xf64>
      %f = linalg.fill ins(%zero : f64) outs(%e : tensor<1x1xf64>) -> tensor<1x1xf64>
      %p = linalg.matmul ins(%row, %col : tensor<1x?xf64>, tensor<?x1xf64>) outs(%f : tensor<1x1xf64>) -> tensor<1x1xf64>
      %next = tensor.insert_slice %p into %o[%ii, %jj] [1, 1] [1, 1] : tensor<1x1xf64> into tensor<?x?xf64>
      %j1 = arith.addi %j, %c1_i64 : i64
      scf.yield %j1, %next : i64, tensor<?x?xf64>
    }
    %i1 = arith.addi %i, %c1_i64 : i64
    scf.yield %i1, %s#1 : i64, tensor<?x?xf64>
  }
  return %r#1 : tensor<?x?xf64>
}
