// RUN: not kiln-opt %s --split-input-file 2>&1 | filecheck %s

// The kiln ops are declared in IRDL: the verifier checks operand types,
// that `kind` names one of the exceptions a check can raise, that `combiner`
// is a known one, that `reverse` is a bool and that a scan keeps its
// operand's type, and that `kiln.elementwise` names a known function
// and keeps its operand's type. Each chunk fails alone.

func.func @check_unknown_kind(%ok: tensor<i1>) {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:3: error: '"KeyError"' does not satisfy the constraint
  "kiln.check"(%ok) {kind = "KeyError", message = "m"} : (tensor<i1>) -> ()
  return
}

// -----

func.func @check_without_message(%ok: tensor<i1>) {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:3: error: 'kiln.check' op attribute "message" is expected but not provided
  "kiln.check"(%ok) {kind = "ValueError"} : (tensor<i1>) -> ()
  return
}

// -----

func.func @check_on_a_vector(%ok: tensor<2xi1>) {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:3: error: expected 'tensor<i1>' but got 'tensor<2xi1>'
  "kiln.check"(%ok) {kind = "ValueError", message = "m"} : (tensor<2xi1>) -> ()
  return
}

// -----

func.func @check_value_not_i64(%ok: tensor<i1>, %v: tensor<i32>) {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:3: error: expected 'tensor<i64>' but got 'tensor<i32>'
  "kiln.check"(%ok, %v) {kind = "IndexError", message = "{}"} : (tensor<i1>, tensor<i32>) -> ()
  return
}

// -----

func.func @scan_unknown_combiner(%x: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:8: error: '"cumsum"' does not satisfy the constraint
  %y = "kiln.scan"(%x) {combiner = "cumsum", axis = 0 : i64, reverse = false} : (tensor<?xf64>) -> tensor<?xf64>
  return %y : tensor<?xf64>
}

// -----

func.func @scan_reverse_not_bool(%x: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:8: error: '1 : i64' does not satisfy the constraint
  %y = "kiln.scan"(%x) {combiner = "add", axis = 0 : i64, reverse = 1} : (tensor<?xf64>) -> tensor<?xf64>
  return %y : tensor<?xf64>
}

// -----

func.func @scan_changes_type(%x: tensor<?xf64>) -> tensor<?xf32> {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:8: error: expected 'tensor<?xf64>' but got 'tensor<?xf32>'
  %y = "kiln.scan"(%x) {combiner = "add", axis = 0 : i64, reverse = false} : (tensor<?xf64>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

func.func @scan_without_axis(%x: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:8: error: 'kiln.scan' op attribute "axis" is expected but not provided
  %y = "kiln.scan"(%x) {combiner = "add", reverse = false} : (tensor<?xf64>) -> tensor<?xf64>
  return %y : tensor<?xf64>
}

// -----

func.func @flatnonzero_static_positions(%mask: tensor<4xi1>) -> tensor<4xi64> {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:12: error: expected 'tensor<?xi64>' but got 'tensor<4xi64>'
  %n, %p = "kiln.flatnonzero"(%mask) : (tensor<4xi1>) -> (tensor<i64>, tensor<4xi64>)
  return %p : tensor<4xi64>
}

// -----

func.func @random_unknown_method(%s: tensor<6xi64>, %n: tensor<i64>, %p: tensor<f64>) {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:13: error: '"gauss"' does not satisfy the constraint
  %s2, %v = "kiln.random"(%s, %n, %n, %n, %p, %p, %p) {method = "gauss", bit_generator = "pcg64"} : (tensor<6xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>, tensor<f64>) -> (tensor<6xi64>, tensor<?xf64>)
  return
}

// -----

func.func @elementwise_unknown_function(%x: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:8: error: '"gamma"' does not satisfy the constraint
  %y = "kiln.elementwise"(%x) {fn = "gamma"} : (tensor<?xf64>) -> tensor<?xf64>
  return %y : tensor<?xf64>
}

// -----

func.func @random_float_count(%s: tensor<6xi64>, %n: tensor<f64>, %i: tensor<i64>) {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:13: error: expected 'tensor<i64>' but got 'tensor<f64>'
  %s2, %v = "kiln.random"(%s, %n, %i, %i, %n, %n, %n) {method = "random", bit_generator = "pcg64"} : (tensor<6xi64>, tensor<f64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>, tensor<f64>) -> (tensor<6xi64>, tensor<?xf64>)
  return
}

// -----

func.func @elementwise_changes_type(%x: tensor<?xf64>) -> tensor<?xf32> {
  // CHECK: kiln-invalid.mlir:[[# @LINE + 1]]:8: error: expected 'tensor<?xf64>' but got 'tensor<?xf32>'
  %y = "kiln.elementwise"(%x) {fn = "erf"} : (tensor<?xf64>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
