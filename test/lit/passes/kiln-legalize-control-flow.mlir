// RUN: kiln-opt %s -p kiln-legalize-control-flow | filecheck %s

// stablehlo.while becomes scf.while: the cond block moves into the `before`
// region and ends in scf.condition on the extracted predicate; the body
// block moves into `after` and ends in scf.yield. A body result more static
// than the carried type is cast back to it.
// CHECK-LABEL: func.func @while_grows
func.func @while_grows(%n: tensor<i64>, %a: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: %[[W:.*]]:2 = scf.while (%[[I:.*]] = %{{.*}}, %[[A:.*]] = %{{.*}}) : (tensor<i64>, tensor<?xf64>) -> (tensor<i64>, tensor<?xf64>)
  // CHECK-NEXT: %[[P:.*]] = stablehlo.compare LT, %[[I]]
  // CHECK-NEXT: %[[B:.*]] = tensor.extract %[[P]][] : tensor<i1>
  // CHECK-NEXT: scf.condition(%[[B]]) %[[I]], %[[A]] : tensor<i64>, tensor<?xf64>
  // CHECK-NEXT: } do {
  // CHECK-NEXT: ^bb0(%[[I2:.*]]: tensor<i64>, %[[A2:.*]]: tensor<?xf64>):
  // CHECK: %[[C:.*]] = tensor.cast %{{.*}} : tensor<3xf64> to tensor<?xf64>
  // CHECK-NEXT: scf.yield %{{.*}}, %[[C]] : tensor<i64>, tensor<?xf64>
  // CHECK-NOT: stablehlo.while
  // CHECK: return %[[W]]#1
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %x = %a) : tensor<i64>, tensor<?xf64>
  cond {
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %next = stablehlo.add %i, %one : tensor<i64>
    %three = stablehlo.constant dense<1.0> : tensor<3xf64>
    stablehlo.return %next, %three : tensor<i64>, tensor<3xf64>
  }
  return %r#1 : tensor<?xf64>
}

// stablehlo.if becomes scf.if on the extracted predicate.
// CHECK-LABEL: func.func @if_else
func.func @if_else(%p: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: %[[B:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
  // CHECK-NEXT: %[[R:.*]] = scf.if %[[B]] -> (tensor<?xf64>) {
  // CHECK-NEXT: scf.yield %{{.*}} : tensor<?xf64>
  // CHECK-NEXT: } else {
  // CHECK-NEXT: %[[N:.*]] = stablehlo.negate
  // CHECK-NEXT: scf.yield %[[N]] : tensor<?xf64>
  // CHECK: return %[[R]]
  %r = "stablehlo.if"(%p) ({
    stablehlo.return %x : tensor<?xf64>
  }, {
    %n = stablehlo.negate %x : tensor<?xf64>
    stablehlo.return %n : tensor<?xf64>
  }) : (tensor<i1>) -> tensor<?xf64>
  return %r : tensor<?xf64>
}

// stablehlo.case becomes scf.index_switch: branch k is case k and the last
// branch is the default (it also runs for an out-of-range index).
// CHECK-LABEL: func.func @case_three
func.func @case_three(%k: tensor<i32>) -> tensor<f64> {
  // CHECK: %[[K:.*]] = tensor.extract %{{.*}}[] : tensor<i32>
  // CHECK-NEXT: %[[IDX:.*]] = arith.index_cast %[[K]] : i32 to index
  // CHECK-NEXT: scf.index_switch %[[IDX]] -> tensor<f64>
  // CHECK-NEXT: case 0 {
  // CHECK-NEXT: stablehlo.constant dense<1.0
  // CHECK: case 1 {
  // CHECK-NEXT: stablehlo.constant dense<2.0
  // CHECK: default {
  // CHECK-NEXT: stablehlo.constant dense<3.0
  %r = "stablehlo.case"(%k) ({
    %a = stablehlo.constant dense<1.0> : tensor<f64>
    stablehlo.return %a : tensor<f64>
  }, {
    %b = stablehlo.constant dense<2.0> : tensor<f64>
    stablehlo.return %b : tensor<f64>
  }, {
    %c = stablehlo.constant dense<3.0> : tensor<f64>
    stablehlo.return %c : tensor<f64>
  }) : (tensor<i32>) -> tensor<f64>
  return %r : tensor<f64>
}
