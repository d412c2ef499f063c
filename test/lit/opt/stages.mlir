// `--stage NAME` runs the default pipeline up to and including NAME, from
// an `mlir`-stage module (what the lowering of `x[1:] = 2.0; return x * 3.0`
// produces). Each stage removes the dialects the one before it had.
// RUN: kiln-opt %s --stage mlir | filecheck %s --check-prefix=MLIR
// RUN: kiln-opt %s --stage functionalized | filecheck %s --check-prefix=FUNC
// RUN: kiln-opt %s --stage stablehlo | filecheck %s --check-prefix=HLO
// RUN: kiln-opt %s --stage linalg | filecheck %s --check-prefix=LINALG
// RUN: kiln-opt %s --stage bufferized | filecheck %s --check-prefix=BUF
// RUN: kiln-opt %s --pipeline | filecheck %s --check-prefix=LLVM

// MLIR: "tensorssa.slice"
// MLIR: "tensorssa.copy"

// FUNC-NOT: tensorssa.
// FUNC: immut.
// FUNC-NOT: tensorssa.

// HLO-NOT: immut.
// HLO-NOT: tensorssa.
// HLO: stablehlo.multiply
// HLO-NOT: immut.
// HLO-NOT: tensorssa.

// LINALG-NOT: stablehlo.
// LINALG: linalg.generic
// LINALG-NOT: stablehlo.

// BUF-NOT: tensor<
// BUF: memref.alloc
// BUF-NOT: tensor<

// LLVM-NOT: func.func
// LLVM: llvm.func @g
// LLVM-NOT: memref.
// LLVM-NOT: func.func

func.func @g(%arg0: tensor<i64> {bufferization.writable = false}, %arg1: tensor<?xf64> {bufferization.writable = false}) -> (tensor<?xf64>, tensor<?xf64>) attributes {llvm.emit_c_interface} {
  %c = stablehlo.constant dense<1> : tensor<i64>
  %0 = stablehlo.minimum %c, %arg0 : tensor<i64>
  %c_0 = stablehlo.constant dense<1> : tensor<i64>
  %1 = stablehlo.subtract %arg0, %c_0 : tensor<i64>
  %c_1 = stablehlo.constant dense<0> : tensor<i64>
  %2 = stablehlo.maximum %1, %c_1 : tensor<i64>
  %3 = stablehlo.reshape %0 : (tensor<i64>) -> tensor<1xi64>
  %4 = stablehlo.reshape %2 : (tensor<i64>) -> tensor<1xi64>
  %5 = "tensorssa.slice"(%arg1, %3, %4) {strides = array<i64: 1>} : (tensor<?xf64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf64>
  %cst = stablehlo.constant dense<2.000000e+00> : tensor<f64>
  %6 = stablehlo.reshape %2 : (tensor<i64>) -> tensor<1xi64>
  %7 = stablehlo.dynamic_broadcast_in_dim %cst, %6, dims = [] : (tensor<f64>, tensor<1xi64>) -> tensor<?xf64>
  "tensorssa.copy"(%5, %7) : (tensor<?xf64>, tensor<?xf64>) -> ()
  %cst_2 = stablehlo.constant dense<3.000000e+00> : tensor<f64>
  %8 = stablehlo.reshape %arg0 : (tensor<i64>) -> tensor<1xi64>
  %9 = stablehlo.dynamic_broadcast_in_dim %cst_2, %8, dims = [] : (tensor<f64>, tensor<1xi64>) -> tensor<?xf64>
  %10 = stablehlo.multiply %arg1, %9 : tensor<?xf64>
  return %10, %arg1 : tensor<?xf64>, tensor<?xf64>
}
