// RUN: kiln-opt %s -p kiln-lower-checks | filecheck %s
// RUN: kiln-opt %s -p kiln-lower-checks,kiln-lower-checks | filecheck %s --check-prefix=TWICE

// Each `kiln.check` becomes a branch on the negated condition that calls the
// runtime's failure hook with the kind's code (1 + its position in
// ValueError, IndexError, OverflowError), the address of the message and up
// to two values. The message is a private global of the module: the check's
// text plus the source line of its location; equal texts share one global.
// One private declaration of the hook is added to the module.

// CHECK: func.func private @kiln_check_failed(i64, !llvm.ptr, i64, i64)
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
  // CHECK-DAG: %[[MSG0:.*]] = llvm.mlir.addressof @kiln_check_message_0 : !llvm.ptr
  // CHECK-DAG: %[[VA:.*]] = tensor.extract %[[A]][] : tensor<i64>
  // CHECK-DAG: %[[VB:.*]] = tensor.extract %[[B]][] : tensor<i64>
  // CHECK-DAG: %[[VALUE:.*]] = arith.constant 1 : i64
  // CHECK-NOT: arith.constant 0
  // CHECK: func.call @kiln_check_failed(%[[VALUE]], %[[MSG0]], %[[VA]], %[[VB]]) : (i64, !llvm.ptr, i64, i64) -> ()
  // CHECK-NEXT: }
  "kiln.check"(%ok, %a, %b) {kind = "ValueError", message = "dims {} and {} differ"} : (tensor<i1>, tensor<i64>, tensor<i64>) -> () loc("my_script.py":12:4)
  // The same text at the same line reuses the global.
  // CHECK: llvm.mlir.addressof @kiln_check_message_0
  "kiln.check"(%ok, %b, %a) {kind = "ValueError", message = "dims {} and {} differ"} : (tensor<i1>, tensor<i64>, tensor<i64>) -> () loc("my_script.py":12:9)
  // Missing values are passed as zeros; a check without a file location
  // has just its message.
  // CHECK: scf.if
  // CHECK-DAG: %[[MSG1:.*]] = llvm.mlir.addressof @kiln_check_message_1 : !llvm.ptr
  // CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
  // CHECK-DAG: %[[INDEX:.*]] = arith.constant 2 : i64
  // CHECK: func.call @kiln_check_failed(%[[INDEX]], %[[MSG1]], %[[ZERO]], %[[ZERO]])
  "kiln.check"(%ok) {kind = "IndexError", message = "index {} is out of bounds"} : (tensor<i1>) -> () loc(unknown)
  // CHECK-NOT: kiln.check
  // CHECK: return %[[X]]
  return %x : tensor<?xf64>
}

// CHECK-LABEL: func.func @no_checks
func.func @no_checks(%x: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK-NEXT: return
  return %x : tensor<?xf64>
}

// The messages follow the functions.
// CHECK: llvm.mlir.global private constant @kiln_check_message_0("dims {} and {} differ (at my_script.py:12)\00") {addr_space = 0 : i32}
// CHECK-NEXT: llvm.mlir.global private constant @kiln_check_message_1("index {} is out of bounds\00") {addr_space = 0 : i32}
// CHECK-NEXT: }
