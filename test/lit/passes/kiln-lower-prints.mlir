// RUN: kiln-opt %s -p kiln-lower-prints | filecheck %s

// Each `kiln.print` becomes calls into the runtime support code: begin a
// record, push its words (per value: rank, dims, then each element in
// row-major order as an i64: floats by their bits, unsigned widened by
// StableHLO's convert, complex as real then imaginary), emit it with the
// address of a private global holding the dtype names, a newline and the
// format. The tuple that carried the values is erased.

// CHECK-DAG: func.func private @kiln_print_begin()
// CHECK-DAG: func.func private @kiln_print_word(i64)
// CHECK-DAG: func.func private @kiln_print_emit(!llvm.ptr)

// CHECK-LABEL: func.func @prints
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>, %[[N:.*]]: tensor<ui8>, %[[Z:.*]]: tensor<?xcomplex<f64>>)
func.func @prints(%x: tensor<?x3xf32>, %n: tensor<ui8>, %z: tensor<?xcomplex<f64>>) {
  // CHECK-NOT: stablehlo.tuple
  // CHECK: call @kiln_print_begin()
  // CHECK-NEXT: %[[XBITS:.*]] = stablehlo.bitcast_convert %[[X]] : (tensor<?x3xf32>) -> tensor<?x3xi32>
  // CHECK-NEXT: %[[XWORDS:.*]] = stablehlo.convert %[[XBITS]] : (tensor<?x3xi32>) -> tensor<?x3xi64>
  // CHECK: %[[ROWS:.*]] = tensor.dim %[[XWORDS]], %{{.*}} : tensor<?x3xi64>
  // CHECK: %[[COLS:.*]] = tensor.dim %[[XWORDS]], %{{.*}} : tensor<?x3xi64>
  // CHECK: %[[RANK:.*]] = arith.constant 2 : i64
  // CHECK-NEXT: call @kiln_print_word(%[[RANK]])
  // CHECK-NEXT: %[[ROWS64:.*]] = arith.index_cast %[[ROWS]] : index to i64
  // CHECK-NEXT: call @kiln_print_word(%[[ROWS64]])
  // CHECK-NEXT: %[[COLS64:.*]] = arith.index_cast %[[COLS]] : index to i64
  // CHECK-NEXT: call @kiln_print_word(%[[COLS64]])
  // CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[ROWS]]
  // CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[COLS]]
  // CHECK-NEXT: %[[E:.*]] = tensor.extract %[[XWORDS]][%[[I]], %[[J]]] : tensor<?x3xi64>
  // CHECK-NEXT: func.call @kiln_print_word(%[[E]])
  // A 0-d value: rank 0, no dims, one element.
  // CHECK: %[[NWORDS:.*]] = stablehlo.convert %[[N]] : (tensor<ui8>) -> tensor<i64>
  // CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: call @kiln_print_word(%[[ZERO]])
  // CHECK-NEXT: %[[NE:.*]] = tensor.extract %[[NWORDS]][] : tensor<i64>
  // CHECK-NEXT: call @kiln_print_word(%[[NE]])
  // CHECK-NEXT: %[[TEXT0:.*]] = llvm.mlir.addressof @kiln_print_text_0 : !llvm.ptr
  // CHECK-NEXT: call @kiln_print_emit(%[[TEXT0]])
  %t = stablehlo.tuple %x, %n : tuple<tensor<?x3xf32>, tensor<ui8>>
  "kiln.print"(%t) {format = "x = {0}, n = {1}", dtypes = ["float32", "uint8"]} : (tuple<tensor<?x3xf32>, tensor<ui8>>) -> ()
  // CHECK: call @kiln_print_begin()
  // CHECK-NEXT: %[[RE:.*]] = stablehlo.real %[[Z]]
  // CHECK-NEXT: %[[REW:.*]] = stablehlo.bitcast_convert %[[RE]] : (tensor<?xf64>) -> tensor<?xi64>
  // CHECK-NEXT: %[[IM:.*]] = stablehlo.imag %[[Z]]
  // CHECK-NEXT: %[[IMW:.*]] = stablehlo.bitcast_convert %[[IM]] : (tensor<?xf64>) -> tensor<?xi64>
  // CHECK: scf.for %[[K:.*]] =
  // CHECK-NEXT: %[[R:.*]] = tensor.extract %[[REW]][%[[K]]]
  // CHECK-NEXT: func.call @kiln_print_word(%[[R]])
  // CHECK-NEXT: %[[M:.*]] = tensor.extract %[[IMW]][%[[K]]]
  // CHECK-NEXT: func.call @kiln_print_word(%[[M]])
  // CHECK: llvm.mlir.addressof @kiln_print_text_1
  %u = stablehlo.tuple %z : tuple<tensor<?xcomplex<f64>>>
  "kiln.print"(%u) {format = "z = {0}", dtypes = ["complex128"]} : (tuple<tensor<?xcomplex<f64>>>) -> ()
  // No values: an empty record. The same text reuses its global.
  // CHECK: call @kiln_print_begin()
  // CHECK-NEXT: %[[TEXT2:.*]] = llvm.mlir.addressof @kiln_print_text_2 : !llvm.ptr
  // CHECK-NEXT: call @kiln_print_emit(%[[TEXT2]])
  // CHECK: llvm.mlir.addressof @kiln_print_text_2
  %e = stablehlo.tuple : tuple<>
  "kiln.print"(%e) {format = "hello", dtypes = []} : (tuple<>) -> ()
  "kiln.print"(%e) {format = "hello", dtypes = []} : (tuple<>) -> ()
  // CHECK-NOT: kiln.print
  return
}

// CHECK: llvm.mlir.global private constant @kiln_print_text_0("float32 uint8\0Ax = {0}, n = {1}\00")
// CHECK: llvm.mlir.global private constant @kiln_print_text_1("complex128\0Az = {0}\00")
// CHECK: llvm.mlir.global private constant @kiln_print_text_2("\0Ahello\00")
