// RUN: not kiln-opt %s --split-input-file -p kiln-lower-checks 2>&1 | filecheck %s

// A kiln.check must carry its check id as a decimal string.

func.func @no_id(%ok: tensor<i1>) {
  // CHECK: kiln-lower-checks-invalid.mlir:[[# @LINE + 1]]:3: error: kiln-lower-checks: a kiln.check custom call needs backend_config = "<check id>" (a decimal integer), got none
  stablehlo.custom_call @kiln.check(%ok) : (tensor<i1>) -> ()
  return
}

// -----

func.func @bad_id(%ok: tensor<i1>) {
  // CHECK: kiln-lower-checks-invalid.mlir:[[# @LINE + 1]]:3: error: kiln-lower-checks: {{.*}} got "seven"
  stablehlo.custom_call @kiln.check(%ok) {backend_config = "seven"} : (tensor<i1>) -> ()
  return
}
