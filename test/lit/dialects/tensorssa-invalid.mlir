// RUN: not kiln-opt %s --split-input-file 2>&1 | filecheck %s

// The tensorssa ops are declared in IRDL: the verifier checks operand
// counts, operand kinds and required attributes. Each chunk fails alone.

func.func @copy_one_operand(%x: tensor<4xf64>) {
  // CHECK: tensorssa-invalid.mlir:[[# @LINE + 1]]:3: error: op expects exactly 2 operands, but got 1
  "tensorssa.copy"(%x) : (tensor<4xf64>) -> ()
  return
}

// -----

func.func @slice_missing_sizes(%x: tensor<4xf64>, %s: tensor<1xi64>) -> tensor<2xf64> {
  // CHECK: tensorssa-invalid.mlir:[[# @LINE + 1]]:8: error: op expects exactly 3 operands, but got 2
  %v = "tensorssa.slice"(%x, %s) {strides = array<i64: 1>} : (tensor<4xf64>, tensor<1xi64>) -> tensor<2xf64>
  return %v : tensor<2xf64>
}

// -----

func.func @reshape_no_shape(%x: tensor<4xf64>) -> tensor<2x2xf64> {
  // CHECK: tensorssa-invalid.mlir:[[# @LINE + 1]]:8: error: op expects exactly 2 operands, but got 1
  %v = "tensorssa.reshape"(%x) : (tensor<4xf64>) -> tensor<2x2xf64>
  return %v : tensor<2x2xf64>
}

// -----

func.func @scatter_four_operands(%x: tensor<4xf64>, %i: tensor<2xi64>, %u: tensor<2xf64>) {
  // CHECK: tensorssa-invalid.mlir:[[# @LINE + 1]]:3: error: op expects exactly 3 operands, but got 4
  "tensorssa.scatter"(%x, %i, %u, %u) {axis = 0 : i64} : (tensor<4xf64>, tensor<2xi64>, tensor<2xf64>, tensor<2xf64>) -> ()
  return
}

// -----

func.func @scatter_no_axis(%x: tensor<4xf64>, %i: tensor<2xi64>, %u: tensor<2xf64>) {
  // CHECK: tensorssa-invalid.mlir:[[# @LINE + 1]]:3: error: 'tensorssa.scatter' op attribute "axis" is expected but not provided
  "tensorssa.scatter"(%x, %i, %u) : (tensor<4xf64>, tensor<2xi64>, tensor<2xf64>) -> ()
  return
}

// -----

func.func @update_three(%x: tensor<4xf64>) {
  // CHECK: tensorssa-invalid.mlir:[[# @LINE + 1]]:3: error: op expects exactly 2 operands, but got 3
  "tensorssa.update"(%x, %x, %x) : (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) -> ()
  return
}

// -----

func.func @transpose_of_scalar(%x: f64) -> tensor<f64> {
  // CHECK: tensorssa-invalid.mlir:[[# @LINE + 1]]:8: error: expected base type 'builtin.tensor' but got 'builtin.f64'
  %v = "tensorssa.transpose"(%x) {permutation = array<i64>} : (f64) -> tensor<f64>
  return %v : tensor<f64>
}
