// RUN: kiln-opt %s --split-input-file -p 'kiln-legalize-dynamic, func.func(stablehlo-legalize-to-linalg,canonicalize)' | filecheck %s
// RUN: kiln-opt --split-input-file --pass-pipeline='builtin.module(kiln-legalize-dynamic,func.func(stablehlo-legalize-to-linalg,canonicalize))' < %s | filecheck %s
// RUN: kiln-opt - --split-input-file --stage linalg -o %t < %s && filecheck %s --input-file %t
// RUN: %PYTHON -m kiln.compiler.opt %s --split-input-file --stage linalg | filecheck %s

// Chunks are processed on their own and printed joined by the same marker.

// CHECK-LABEL: func.func @first
// CHECK: linalg.generic
// CHECK: math.exp
func.func @first(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.exponential %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// CHECK: // -----
// -----

// CHECK-LABEL: func.func @second
// CHECK: tensor.reshape
func.func @second(%x: tensor<?x?xf32>, %shape: tensor<1xi64>) -> tensor<?xf32> {
  %0 = stablehlo.dynamic_reshape %x, %shape : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// RUN: kiln-opt --list-passes | filecheck %s --check-prefix=LIST
// LIST: kiln passes:
// LIST-DAG: kiln-legalize-dynamic
// LIST-DAG: kiln-lower-checks
// LIST-DAG: memref-copy-to-linalg
// LIST: Stages of the default pipeline
// LIST: linalg
