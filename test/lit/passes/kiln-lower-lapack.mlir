// RUN: kiln-opt %s -p kiln-lower-lapack | filecheck %s
// RUN: kiln-opt %s -p kiln-lower-lapack,cse | filecheck %s --check-prefix=CSE

// A LAPACK kernel becomes a call of runtime/lapack.c on buffers: each result
// a fresh allocation of its `?` dims (the dim operands, in order) handed back
// as a tensor; each array operand its own buffer, read-only, any strides (no
// copy: the runtime copies matrices into LAPACK's scratch), made directly
// before the call; the kernel's options follow as i64 constants.
// CHECK-DAG: func.func private @kiln_lapack_solve_f64(memref<?x?x?xf64, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf64, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf64>, memref<?xi64>)
// CHECK-DAG: func.func private @kiln_lapack_svd_c128(memref<?x?x?xcomplex<f64>, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xcomplex<f64>>, memref<?x?xf64>, memref<?x?x?xcomplex<f64>>, memref<?xi64>, i64, i64)

// CHECK-LABEL: func.func @solve
func.func @solve(%a: tensor<?x?x?xf64>, %b: tensor<?x?x?xf64>, %n: tensor<i64>, %k: tensor<i64>, %c: tensor<i64>) -> (tensor<?x?x?xf64>, tensor<?xi64>) {
  // CHECK-NOT: kiln.lapack
  // CHECK-NOT: materialize_in_destination
  // CHECK: %[[C0:.*]] = tensor.extract %arg4[]
  // CHECK: %[[C:.*]] = arith.index_cast %[[C0]]
  // CHECK: %[[N0:.*]] = tensor.extract %arg2[]
  // CHECK: %[[N:.*]] = arith.index_cast %[[N0]]
  // CHECK: %[[K0:.*]] = tensor.extract %arg3[]
  // CHECK: %[[K:.*]] = arith.index_cast %[[K0]]
  // CHECK: %[[X:.*]] = memref.alloc(%[[C]], %[[N]], %[[K]]) : memref<?x?x?xf64>
  // CHECK: %[[INFO:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
  // CHECK-NEXT: %[[A:.*]] = bufferization.to_buffer %arg0 read_only {kiln.lapack_operand = 0 : i64} : tensor<?x?x?xf64> to memref<?x?x?xf64, strided<[?, ?, ?], offset: ?>>
  // CHECK-NEXT: %[[B:.*]] = bufferization.to_buffer %arg1 read_only {kiln.lapack_operand = 1 : i64}
  // CHECK-NEXT: call @kiln_lapack_solve_f64(%[[A]], %[[B]], %[[X]], %[[INFO]])
  // CHECK: %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict writable
  // CHECK: %[[IT:.*]] = bufferization.to_tensor %[[INFO]] restrict writable
  // CHECK: return %[[XT]], %[[IT]]
  %x, %info = "kiln.lapack_solve"(%a, %b, %c, %n, %k, %c) {options = array<i64>} : (tensor<?x?x?xf64>, tensor<?x?x?xf64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<?x?x?xf64>, tensor<?xi64>)
  return %x, %info : tensor<?x?x?xf64>, tensor<?xi64>
}

// Static shapes are cast to the kernel's dynamic signature; options
// (full = 0, uv = 0) are passed after the buffers.
// CHECK-LABEL: func.func @svd_values_static
func.func @svd_values_static(%a: tensor<2x3x4xcomplex<f64>>) -> tensor<2x3xf64> {
  // CHECK: %[[S:.*]] = memref.alloc() : memref<2x3xf64>
  // CHECK: %[[SC:.*]] = memref.cast %[[S]] : memref<2x3xf64> to memref<?x?xf64>
  // CHECK: %[[A:.*]] = bufferization.to_buffer %arg0 read_only {kiln.lapack_operand = {{[0-9]+}} : i64} : tensor<2x3x4xcomplex<f64>> to memref<2x3x4xcomplex<f64>, strided<[?, ?, ?], offset: ?>>
  // CHECK: %[[AC:.*]] = memref.cast %[[A]] : memref<2x3x4xcomplex<f64>, strided<[?, ?, ?], offset: ?>> to memref<?x?x?xcomplex<f64>, strided<[?, ?, ?], offset: ?>>
  // CHECK: %[[F:.*]] = arith.constant 0 : i64
  // CHECK: call @kiln_lapack_svd_c128(%[[AC]], %{{.*}}, %[[SC]], %{{.*}}, %{{.*}}, %[[F]], %{{.*}})
  // CHECK: %[[ST:.*]] = bufferization.to_tensor %[[S]] restrict writable : memref<2x3xf64> to tensor<2x3xf64>
  // CHECK: return %[[ST]]
  %u, %s, %vt, %info = "kiln.lapack_svd"(%a) {options = array<i64: 0, 0>} : (tensor<2x3x4xcomplex<f64>>) -> (tensor<2x0x0xcomplex<f64>>, tensor<2x3xf64>, tensor<2x0x0xcomplex<f64>>, tensor<2xi64>)
  return %s : tensor<2x3xf64>
}

// Two calls reading the same operand keep one `to_buffer` each, right before
// each call, even through cse (merged, the tensor's last use would be the
// first call's and one-shot-bufferize could reuse its buffer before the
// second call reads it).
// CSE-LABEL: func.func @shared_operand
func.func @shared_operand(%a: tensor<?x?x?xf64>, %b: tensor<?x?x?xf64>, %n: tensor<i64>, %k: tensor<i64>, %c: tensor<i64>) -> (tensor<?x?x?xf64>, tensor<?x?x?xf64>) {
  // CSE: %[[A1:.*]] = bufferization.to_buffer %arg0 read_only {kiln.lapack_operand = [[N1:[0-9]+]] : i64}
  // CSE: call @kiln_lapack_solve_f64(%[[A1]],
  // CSE: %[[A2:.*]] = bufferization.to_buffer %arg0 read_only {kiln.lapack_operand = {{[0-9]+}} : i64}
  // CSE-NEXT: call @kiln_lapack_inv_f64(%[[A2]],
  %x, %info = "kiln.lapack_solve"(%a, %b, %c, %n, %k, %c) {options = array<i64>} : (tensor<?x?x?xf64>, tensor<?x?x?xf64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<?x?x?xf64>, tensor<?xi64>)
  %y, %info2 = "kiln.lapack_inv"(%a, %c, %n, %n, %c) {options = array<i64>} : (tensor<?x?x?xf64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<?x?x?xf64>, tensor<?xi64>)
  return %x, %y : tensor<?x?x?xf64>, tensor<?x?x?xf64>
}
