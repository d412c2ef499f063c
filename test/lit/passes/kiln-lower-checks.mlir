// RUN: kiln-opt %s -p kiln-lower-checks | filecheck %s
// RUN: kiln-opt %s -p kiln-lower-checks,kiln-lower-checks | filecheck %s --check-prefix=TWICE

// Each `kiln.check` custom call becomes a branch on the negated condition
// that calls the runtime's failure hook with the check id and up to two
// values; one private declaration of the hook is added to the module.

// CHECK: func.func private @kiln_check_failed(i64, i64, i64)
// CHECK-NOT: @kiln_check_failed(i64, i64, i64)
// TWICE: func.func private @kiln_check_failed
// TWICE-NOT: func.func private @kiln_check_failed

// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[A:.*]]: tensor<i64>, %[[B:.*]]: tensor<i64>, %[[X:.*]]: tensor<?xf64>)
func.func @checks(%a: tensor<i64>, %b: tensor<i64>, %x: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: %[[OK:.*]] = stablehlo.compare EQ, %[[A]], %[[B]]
  %ok = stablehlo.compare EQ, %a, %b, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
  // CHECK-NEXT: %[[C:.*]] = tensor.extract %[[OK]][] : tensor<i1>
  // CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
  // CHECK-NEXT: %[[BAD:.*]] = arith.xori %[[C]], %[[TRUE]] : i1
  // CHECK-NEXT: scf.if %[[BAD]] {
  // CHECK-DAG: %[[VA:.*]] = tensor.extract %[[A]][] : tensor<i64>
  // CHECK-DAG: %[[VB:.*]] = tensor.extract %[[B]][] : tensor<i64>
  // CHECK-DAG: %[[ID7:.*]] = arith.constant 7 : i64
  // CHECK: func.call @kiln_check_failed(%[[ID7]], %[[VA]], %[[VB]]) : (i64, i64, i64) -> ()
  // CHECK-NEXT: }
  stablehlo.custom_call @kiln.check(%ok, %a, %b) {backend_config = "7", has_side_effect = true} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
  // Missing values are passed as zeros.
  // CHECK: scf.if
  // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
  // CHECK-DAG: %[[ID8:.*]] = arith.constant 8 : i64
  // CHECK: func.call @kiln_check_failed(%[[ID8]], %[[ZERO]], %[[ZERO]])
  stablehlo.custom_call @kiln.check(%ok) {backend_config = "8", has_side_effect = true} : (tensor<i1>) -> ()
  // Other custom calls stay.
  // CHECK-NOT: @kiln.check
  // CHECK: stablehlo.custom_call @other(%[[X]])
  %0 = stablehlo.custom_call @other(%x) : (tensor<?xf64>) -> tensor<?xf64>
  return %0 : tensor<?xf64>
}

// CHECK-LABEL: func.func @no_checks
func.func @no_checks(%x: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK-NEXT: return
  return %x : tensor<?xf64>
}
