// RUN: not kiln-opt %s --split-input-file -p kiln-lower-checks 2>&1 | filecheck %s

// A kiln.check reports at most two values (IRDL cannot bound a variadic
// operand's count, so the pass checks it).

func.func @three_values(%ok: tensor<i1>, %v: tensor<i64>) {
  // CHECK: kiln-lower-checks-invalid.mlir:[[# @LINE + 1]]:3: error: kiln-lower-checks: kiln.check reports at most 2 values, got 3; put the rest into the message
  "kiln.check"(%ok, %v, %v, %v) {kind = "ValueError", message = "{} {} {}"} : (tensor<i1>, tensor<i64>, tensor<i64>, tensor<i64>) -> ()
  return
}
