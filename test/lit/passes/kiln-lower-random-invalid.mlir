// RUN: not kiln-opt %s -p kiln-lower-random 2>&1 | filecheck %s

// A state of the wrong size for its bit generator is refused, naming the fix.
// CHECK: kiln-lower-random: {{.*}}a pcg64 state has 6 words, got tensor<5xi64>; pass the state words as one 1-D i64 tensor
func.func @short_state(%s: tensor<5xi64>, %n: tensor<i64>, %a: tensor<i64>, %p: tensor<f64>) -> tensor<?xf64> {
  %s2, %v = "kiln.random"(%s, %n, %a, %a, %p, %p, %p) {method = "random", bit_generator = "pcg64"} : (tensor<5xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>, tensor<f64>) -> (tensor<5xi64>, tensor<?xf64>)
  return %v : tensor<?xf64>
}
