// RUN: kiln-opt %s -p kiln-block-arg-reductions | filecheck %s
// RUN: kiln-opt %s -p 'kiln-block-arg-reductions{block=64}' | filecheck %s --check-prefix=BLOCK

// An argmax / argmin marked by the lowering, over the last axis, becomes a
// blocked search: a loop over blocks carrying (best value, block start) as
// scalars, an inner min/max reduction per block (which LLVM vectorizes), a
// strict "better" test (a NaN beats numbers, not an earlier NaN), then a
// search of the winning block for the first position of the best value.

// CHECK-LABEL: func.func @argmax_f32
// BLOCK-LABEL: func.func @argmax_f32
func.func @argmax_f32(%x: tensor<?xf32>, %iota: tensor<?xi64>) -> tensor<i64> {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<9223372036854775807> : tensor<i64>
  // CHECK-NOT: stablehlo.reduce
  // CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?xf32>
  // CHECK: linalg.generic {{.*}}iterator_types = []{{.*}} outs(%{{.*}} : tensor<i64>)
  // CHECK: %[[B:.*]] = arith.constant 512 : index
  // BLOCK: arith.constant 64 : index
  // CHECK: %[[BEST:.*]]:2 = scf.for %[[S:.*]] = %{{.*}} to %[[N]] step %[[B]] iter_args(%[[V:.*]] = %{{.*}}, %[[AT:.*]] = %{{.*}}) -> (f32, index)
  // CHECK: %[[END:.*]] = arith.minsi
  // CHECK: %[[M:.*]] = scf.for %[[J:.*]] = %[[S]] to %[[END]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
  // CHECK-NEXT: %[[E:.*]] = tensor.extract %{{.*}}[%[[J]]] : tensor<?xf32>
  // CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[ACC]], %[[E]] : f32
  // CHECK-NEXT: scf.yield %[[MAX]] : f32
  // CHECK: arith.cmpf ogt, %[[M]], %[[V]] : f32
  // CHECK: arith.cmpf uno, %[[M]], %[[M]] : f32
  // CHECK: arith.cmpf ord, %[[V]], %[[V]] : f32
  // CHECK: %[[WINS:.*]] = arith.ori
  // CHECK: arith.select %[[WINS]], %[[M]], %[[V]] : f32
  // CHECK: arith.select %[[WINS]], %[[S]], %[[AT]] : index
  // CHECK: %[[LAST:.*]] = arith.minsi
  // CHECK: %[[LEN:.*]] = arith.subi %[[LAST]], %[[BEST]]#1 : index
  // CHECK: %[[LIMIT:.*]] = arith.index_cast %[[LEN]] : index to i32
  // CHECK: %[[FOUND:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[LEN]] step %{{.*}} iter_args(%[[F:.*]] = %[[LIMIT]]) -> (i32)
  // CHECK: %[[AT_K:.*]] = arith.addi %[[BEST]]#1, %[[K]] : index
  // CHECK: %[[X_K:.*]] = tensor.extract %{{.*}}[%[[AT_K]]] : tensor<?xf32>
  // CHECK: arith.cmpf oeq, %[[X_K]], %[[BEST]]#0
  // CHECK: %[[HIT:.*]] = arith.ori
  // CHECK: %[[K32:.*]] = arith.index_cast %[[K]] : index to i32
  // CHECK: %[[CAND:.*]] = arith.select %[[HIT]], %[[K32]], %[[LIMIT]] : i32
  // CHECK: arith.minsi %[[F]], %[[CAND]] : i32
  // CHECK: %[[OFF:.*]] = arith.index_cast %[[FOUND]] : i32 to index
  // CHECK: %[[POS:.*]] = arith.addi %[[BEST]]#1, %[[OFF]] : index
  // CHECK: %[[I:.*]] = arith.index_cast %[[POS]] : index to i64
  // CHECK-NEXT: linalg.yield %[[I]] : i64
  %r:2 = stablehlo.reduce(%x init: %cst), (%iota init: %c) across dimensions = [0] {kiln.arg_reduce = "max"} : (tensor<?xf32>, tensor<?xi64>, tensor<f32>, tensor<i64>) -> (tensor<f32>, tensor<i64>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%i: tensor<i64>, %j: tensor<i64>)  {
      %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %1 = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %2 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.not %3 : tensor<i1>
      %5 = stablehlo.and %2, %4 : tensor<i1>
      %6 = stablehlo.or %0, %5 : tensor<i1>
      %7 = stablehlo.and %2, %3 : tensor<i1>
      %8 = stablehlo.or %1, %7 : tensor<i1>
      %9 = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %10 = stablehlo.and %8, %9 : tensor<i1>
      %11 = stablehlo.or %6, %10 : tensor<i1>
      %12 = stablehlo.select %11, %a, %b : tensor<i1>, tensor<f32>
      %13 = stablehlo.select %11, %i, %j : tensor<i1>, tensor<i64>
      stablehlo.return %12, %13 : tensor<f32>, tensor<i64>
    }
  return %r#1 : tensor<i64>
}

// Rows of a matrix: one row per iteration of a parallel generic; signed
// integers compare with slt.
// CHECK-LABEL: func.func @argmin_i32_rows
func.func @argmin_i32_rows(%x: tensor<?x?xi32>, %iota: tensor<?x?xi64>) -> tensor<?xi64> {
  %cst = stablehlo.constant dense<2147483647> : tensor<i32>
  %c = stablehlo.constant dense<9223372036854775807> : tensor<i64>
  // CHECK-NOT: stablehlo.reduce
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} outs(%{{.*}} : tensor<?xi64>)
  // CHECK: %[[ROW:.*]] = linalg.index 0 : index
  // CHECK: tensor.extract %{{.*}}[%[[ROW]], %{{.*}}] : tensor<?x?xi32>
  // CHECK-NEXT: arith.minsi %{{.*}}, %{{.*}} : i32
  // CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i32
  // CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
  %r:2 = stablehlo.reduce(%x init: %cst), (%iota init: %c) across dimensions = [1] {kiln.arg_reduce = "min"} : (tensor<?x?xi32>, tensor<?x?xi64>, tensor<i32>, tensor<i64>) -> (tensor<?xi32>, tensor<?xi64>)
     reducer(%a: tensor<i32>, %b: tensor<i32>) (%i: tensor<i64>, %j: tensor<i64>)  {
      %0 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %1 = stablehlo.compare EQ, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %2 = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %3 = stablehlo.and %1, %2 : tensor<i1>
      %4 = stablehlo.or %0, %3 : tensor<i1>
      %5 = stablehlo.select %4, %a, %b : tensor<i1>, tensor<i32>
      %6 = stablehlo.select %4, %i, %j : tensor<i1>, tensor<i64>
      stablehlo.return %5, %6 : tensor<i32>, tensor<i64>
    }
  return %r#1 : tensor<?xi64>
}

// Bools: the block's extreme is an `or` (argmax) and true beats false (ugt).
// CHECK-LABEL: func.func @argmax_bool
func.func @argmax_bool(%x: tensor<?xi1>, %iota: tensor<?xi64>) -> tensor<i64> {
  %cst = stablehlo.constant dense<false> : tensor<i1>
  %c = stablehlo.constant dense<9223372036854775807> : tensor<i64>
  // CHECK: arith.ori %{{.*}}, %{{.*}} : i1
  // CHECK: arith.cmpi ugt
  %r:2 = stablehlo.reduce(%x init: %cst), (%iota init: %c) across dimensions = [0] {kiln.arg_reduce = "max"} : (tensor<?xi1>, tensor<?xi64>, tensor<i1>, tensor<i64>) -> (tensor<i1>, tensor<i64>)
     reducer(%a: tensor<i1>, %b: tensor<i1>) (%i: tensor<i64>, %j: tensor<i64>)  {
      %0 = stablehlo.compare GT, %a, %b, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %1 = stablehlo.compare EQ, %a, %b, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %2 = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %3 = stablehlo.and %1, %2 : tensor<i1>
      %4 = stablehlo.or %0, %3 : tensor<i1>
      %5 = stablehlo.select %4, %a, %b : tensor<i1>, tensor<i1>
      %6 = stablehlo.select %4, %i, %j : tensor<i1>, tensor<i64>
      stablehlo.return %5, %6 : tensor<i1>, tensor<i64>
    }
  return %r#1 : tensor<i64>
}

// Left alone: a reduction over another axis than the last (the strided
// search would not vectorize), one whose value result is used, and an
// unmarked one.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%x: tensor<?x?xf64>, %iota: tensor<?x?xi64>) -> (tensor<?xi64>, tensor<?xf64>, tensor<?xi64>) {
  %cst = stablehlo.constant dense<0xFFF0000000000000> : tensor<f64>
  %c = stablehlo.constant dense<9223372036854775807> : tensor<i64>
  // CHECK: stablehlo.reduce{{.*}}across dimensions = [0] {kiln.arg_reduce = "max"}
  %r:2 = stablehlo.reduce(%x init: %cst), (%iota init: %c) across dimensions = [0] {kiln.arg_reduce = "max"} : (tensor<?x?xf64>, tensor<?x?xi64>, tensor<f64>, tensor<i64>) -> (tensor<?xf64>, tensor<?xi64>)
     reducer(%a: tensor<f64>, %b: tensor<f64>) (%i: tensor<i64>, %j: tensor<i64>)  {
      %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %1 = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %2 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %3 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %4 = stablehlo.not %3 : tensor<i1>
      %5 = stablehlo.and %2, %4 : tensor<i1>
      %6 = stablehlo.or %0, %5 : tensor<i1>
      %7 = stablehlo.and %2, %3 : tensor<i1>
      %8 = stablehlo.or %1, %7 : tensor<i1>
      %9 = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %10 = stablehlo.and %8, %9 : tensor<i1>
      %11 = stablehlo.or %6, %10 : tensor<i1>
      %12 = stablehlo.select %11, %a, %b : tensor<i1>, tensor<f64>
      %13 = stablehlo.select %11, %i, %j : tensor<i1>, tensor<i64>
      stablehlo.return %12, %13 : tensor<f64>, tensor<i64>
    }
  // CHECK: stablehlo.reduce{{.*}}across dimensions = [1] {kiln.arg_reduce = "max"}
  %s:2 = stablehlo.reduce(%x init: %cst), (%iota init: %c) across dimensions = [1] {kiln.arg_reduce = "max"} : (tensor<?x?xf64>, tensor<?x?xi64>, tensor<f64>, tensor<i64>) -> (tensor<?xf64>, tensor<?xi64>)
     reducer(%a: tensor<f64>, %b: tensor<f64>) (%i: tensor<i64>, %j: tensor<i64>)  {
      %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %1 = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %2 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %3 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %4 = stablehlo.not %3 : tensor<i1>
      %5 = stablehlo.and %2, %4 : tensor<i1>
      %6 = stablehlo.or %0, %5 : tensor<i1>
      %7 = stablehlo.and %2, %3 : tensor<i1>
      %8 = stablehlo.or %1, %7 : tensor<i1>
      %9 = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %10 = stablehlo.and %8, %9 : tensor<i1>
      %11 = stablehlo.or %6, %10 : tensor<i1>
      %12 = stablehlo.select %11, %a, %b : tensor<i1>, tensor<f64>
      %13 = stablehlo.select %11, %i, %j : tensor<i1>, tensor<i64>
      stablehlo.return %12, %13 : tensor<f64>, tensor<i64>
    }
  // CHECK: stablehlo.reduce{{.*}}across dimensions = [1] :
  %t:2 = stablehlo.reduce(%x init: %cst), (%iota init: %c) across dimensions = [1] : (tensor<?x?xf64>, tensor<?x?xi64>, tensor<f64>, tensor<i64>) -> (tensor<?xf64>, tensor<?xi64>)
     reducer(%a: tensor<f64>, %b: tensor<f64>) (%i: tensor<i64>, %j: tensor<i64>)  {
      %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %1 = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %2 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %3 = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f64>, tensor<f64>) -> tensor<i1>
      %4 = stablehlo.not %3 : tensor<i1>
      %5 = stablehlo.and %2, %4 : tensor<i1>
      %6 = stablehlo.or %0, %5 : tensor<i1>
      %7 = stablehlo.and %2, %3 : tensor<i1>
      %8 = stablehlo.or %1, %7 : tensor<i1>
      %9 = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      %10 = stablehlo.and %8, %9 : tensor<i1>
      %11 = stablehlo.or %6, %10 : tensor<i1>
      %12 = stablehlo.select %11, %a, %b : tensor<i1>, tensor<f64>
      %13 = stablehlo.select %11, %i, %j : tensor<i1>, tensor<i64>
      stablehlo.return %12, %13 : tensor<f64>, tensor<i64>
    }
  // CHECK-NOT: scf.for
  return %r#1, %s#0, %t#1 : tensor<?xi64>, tensor<?xf64>, tensor<?xi64>
}
