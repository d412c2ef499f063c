// RUN: not kiln-opt %s --split-input-file -p kiln-lower-random 2>&1 | filecheck %s

// A state of the wrong size for its bit generator is refused, naming the fix.
// CHECK: kiln-lower-random: {{.*}}a pcg64 state has 6 words, got tensor<5xi64>; pass the state words as one 1-D i64 tensor
func.func @short_state(%s: tensor<5xi64>, %n: tensor<i64>, %a: tensor<i64>, %p: tensor<f64>) -> tensor<?xf64> {
  %s2, %v = "kiln.random"(%s, %n, %a, %a, %p, %p, %p) {method = "random", bit_generator = "pcg64"} : (tensor<5xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>, tensor<f64>) -> (tensor<5xi64>, tensor<?xf64>)
  return %v : tensor<?xf64>
}

// -----

// Parameters are i64 (a, b) and f64 (p, q, r), scalars or 1-D.
// CHECK: kiln-lower-random: {{.*}}parameter %p must be a f64 scalar tensor or a 1-D tensor of one f64 per draw, got tensor<2x2xf64>
func.func @matrix_parameter(%s: tensor<6xi64>, %n: tensor<i64>, %a: tensor<i64>, %p: tensor<2x2xf64>, %q: tensor<f64>) -> tensor<?xf64> {
  %s2, %v = "kiln.random"(%s, %n, %a, %a, %p, %q, %q) {method = "normal", bit_generator = "pcg64"} : (tensor<6xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<2x2xf64>, tensor<f64>, tensor<f64>) -> (tensor<6xi64>, tensor<?xf64>)
  return %v : tensor<?xf64>
}
