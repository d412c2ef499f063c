// RUN: not kiln-opt %s --split-input-file -p kiln-lower-prints 2>&1 | filecheck %s

// The runtime decodes each value by its NumPy dtype name: one per value,
// each a name NumPy knows (IRDL checks only that `dtypes` is an array).

func.func @missing_dtype(%x: tensor<?xf64>) {
  %t = stablehlo.tuple %x : tuple<tensor<?xf64>>
  // CHECK: kiln-lower-prints-invalid.mlir:[[# @LINE + 1]]:3: error: kiln-lower-prints: kiln.print has 1 values but 0 dtypes; give one NumPy dtype name per value
  "kiln.print"(%t) {format = "{0}", dtypes = []} : (tuple<tensor<?xf64>>) -> ()
  return
}

// -----

func.func @unknown_dtype(%x: tensor<?xf64>) {
  %t = stablehlo.tuple %x : tuple<tensor<?xf64>>
  // CHECK: kiln-lower-prints-invalid.mlir:[[# @LINE + 1]]:3: error: kiln-lower-prints: 'decimal' is not a NumPy dtype name
  "kiln.print"(%t) {format = "{0}", dtypes = ["decimal"]} : (tuple<tensor<?xf64>>) -> ()
  return
}
