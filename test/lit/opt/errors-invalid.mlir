// RUN: not kiln-opt %s --split-input-file -p canonicalize 2>&1 | filecheck %s

// Every chunk fails on its own; each failure is reported with its line in
// this file, and the exit status is 1.

func.func @type_mismatch(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.add %x, %x : tensor<?xf32>
  // CHECK: errors-invalid.mlir:[[# @LINE + 1]]:10: error: use of value '%0' expects different type than prior uses: 'tensor<?xi32>' vs 'tensor<?xf32>'
  return %0 : tensor<?xi32>
}

// -----

func.func @unknown_dialect() {
  // CHECK: errors-invalid.mlir:[[# @LINE + 1]]:3: error: Dialect `nosuch' not found for custom op 'nosuch.op'
  nosuch.op
  return
}

// -----

func.func @unknown_op() {
  // CHECK: errors-invalid.mlir:[[# @LINE + 1]]:3: error: custom op 'stablehlo.nosuch' is unknown
  stablehlo.nosuch
  return
}

// -----

func.func @verifier() {
  // CHECK: errors-invalid.mlir:[[# @LINE + 2]]:8: error: 'tensor.empty' op incorrect number of dynamic sizes, has 0, expected 1
  // CHECK-NEXT: errors-invalid.mlir:[[# @LINE + 1]]:8: note: see current operation
  %0 = "tensor.empty"() : () -> tensor<?xf32>
  return
}

// -----

// CHECK: errors-invalid.mlir:[[# @LINE + 1]]:21: error: expected ')'
func.func @g(%x: f32<) {
  return
}
