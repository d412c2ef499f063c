// RUN: not kiln-opt %s --split-input-file 2>&1 | filecheck %s

// The immut ops are declared in IRDL: the verifier checks operand counts,
// operand kinds, required attributes and that each assign op (`*_rev`,
// `scatter`, `assign`) returns the type of its base. Each chunk fails alone.

func.func @slice_rev_without_value(%x: tensor<4xf64>, %s: tensor<1xi64>, %n: tensor<1xi64>) -> tensor<4xf64> {
  // CHECK: immut-invalid.mlir:[[# @LINE + 1]]:8: error: op expects exactly 4 operands, but got 3
  %r = "immut.slice_rev"(%x, %s, %n) {strides = array<i64: 1>} : (tensor<4xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

func.func @assign_three(%x: tensor<4xf64>) -> tensor<4xf64> {
  // CHECK: immut-invalid.mlir:[[# @LINE + 1]]:8: error: op expects exactly 2 operands, but got 3
  %r = "immut.assign"(%x, %x, %x) : (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

func.func @gather_no_indices(%x: tensor<4xf64>) -> tensor<2xf64> {
  // CHECK: immut-invalid.mlir:[[# @LINE + 1]]:8: error: op expects exactly 2 operands, but got 1
  %r = "immut.gather"(%x) {axis = 0 : i64} : (tensor<4xf64>) -> tensor<2xf64>
  return %r : tensor<2xf64>
}

// -----

func.func @transpose_rev_no_permutation(%x: tensor<2x3xf64>, %v: tensor<3x2xf64>) -> tensor<2x3xf64> {
  // CHECK: immut-invalid.mlir:[[# @LINE + 1]]:8: error: 'immut.transpose_rev' op attribute "permutation" is expected but not provided
  %r = "immut.transpose_rev"(%x, %v) : (tensor<2x3xf64>, tensor<3x2xf64>) -> tensor<2x3xf64>
  return %r : tensor<2x3xf64>
}

// -----

func.func @slice_rev_wrong_result(%x: tensor<4xf64>, %v: tensor<2xf64>, %s: tensor<1xi64>, %n: tensor<1xi64>) -> tensor<2xf64> {
  // CHECK: immut-invalid.mlir:[[# @LINE + 1]]:8: error: expected 'tensor<4xf64>' but got 'tensor<2xf64>'
  %r = "immut.slice_rev"(%x, %v, %s, %n) {strides = array<i64: 1>} : (tensor<4xf64>, tensor<2xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf64>
  return %r : tensor<2xf64>
}

// -----

func.func @reverse_no_result(%x: tensor<4xf64>) {
  // CHECK: immut-invalid.mlir:[[# @LINE + 1]]:3: error: op expects exactly 1 results, but got 0
  "immut.reverse"(%x) {dimensions = array<i64: 0>} : (tensor<4xf64>) -> ()
  return
}
