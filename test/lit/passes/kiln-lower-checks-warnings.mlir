// RUN: kiln-opt %s -p kiln-lower-checks | filecheck %s

// A check of a warning kind (RuntimeWarning: an integer division by zero)
// does not fail the call: its branch calls the runtime's `kiln_warn` with the
// message, which the runtime warns with once, after the call returns. Only
// the hook a module uses is declared.
// CHECK: func.func private @kiln_warn(!llvm.ptr)
// CHECK-NOT: @kiln_check_failed(

// CHECK-LABEL: func.func @divide
func.func @divide(%x: tensor<i64>, %y: tensor<i64>) -> tensor<i64> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %ok = stablehlo.compare NE, %y, %zero, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
  // CHECK: %[[OK:.*]] = tensor.extract
  // CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
  // CHECK-NEXT: %[[BAD:.*]] = arith.xori %[[OK]], %[[TRUE]] : i1
  // CHECK-NEXT: scf.if %[[BAD]] {
  // CHECK-NEXT: %[[MSG:.*]] = llvm.mlir.addressof @kiln_check_message_0 : !llvm.ptr
  // CHECK-NEXT: func.call @kiln_warn(%[[MSG]]) : (!llvm.ptr) -> ()
  // CHECK-NEXT: }
  "kiln.check"(%ok) {kind = "RuntimeWarning", message = "divide by zero encountered in floor_divide"} : (tensor<i1>) -> () loc("my_script.py":3:11)
  %q = stablehlo.divide %x, %y : tensor<i64>
  return %q : tensor<i64>
}

// The message names the source line, like an error's.
// CHECK: llvm.mlir.global private constant @kiln_check_message_0("divide by zero encountered in floor_divide (at my_script.py:3)\00")
