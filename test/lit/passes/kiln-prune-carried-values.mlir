// RUN: kiln-opt %s -p kiln-prune-carried-values | filecheck %s

// A time loop around a pressure loop, as functionalization leaves them: the
// array %p is carried and updated, and its view %v (a slice) is carried
// beside it by both loops, recomputed from the new %p at each iteration and
// read by nothing else (only the inner loop's init and the outer loop's
// yield). The view goes from both loops, with the slices that computed it;
// the counters, %p and the loop results that are returned stay.
// CHECK-LABEL: func.func @nested_loops
// CHECK-SAME: (%[[P:.*]]: tensor<?xf64>, %[[N:.*]]: tensor<i64>)
func.func @nested_loops(%p: tensor<?xf64>, %n: tensor<i64>) -> tensor<?xf64> {
  // CHECK: %[[OUT:.*]]:2 = stablehlo.while(%[[I:[^ ]*]] = %{{[^ ]*}}, %[[PO:[^ ]*]] = %[[P]]) : tensor<i64>, tensor<?xf64>
  // CHECK: %[[IN:.*]]:2 = stablehlo.while(%[[J:[^ ]*]] = %{{[^ ]*}}, %[[PI:[^ ]*]] = %[[PO]]) : tensor<i64>, tensor<?xf64>
  // CHECK-NOT: stablehlo.slice
  // CHECK: %[[NEWP:.*]] = stablehlo.add %[[PI]], %[[PI]]
  // CHECK-NEXT: %[[J1:.*]] = stablehlo.add %[[J]]
  // CHECK-NEXT: stablehlo.return %[[J1]], %[[NEWP]] : tensor<i64>, tensor<?xf64>
  // CHECK: stablehlo.return %{{.*}}, %[[IN]]#1 : tensor<i64>, tensor<?xf64>
  // CHECK: return %[[OUT]]#1
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %v0 = "stablehlo.slice"(%p) {start_indices = array<i64: 1>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<?xf64>) -> tensor<2xf64>
  %r:3 = stablehlo.while(%i = %zero, %po = %p, %vo = %v0) : tensor<i64>, tensor<?xf64>, tensor<2xf64>
  cond {
    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %s:3 = stablehlo.while(%j = %zero, %pi = %po, %vi = %vo) : tensor<i64>, tensor<?xf64>, tensor<2xf64>
    cond {
      %c = stablehlo.compare LT, %j, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %newp = stablehlo.add %pi, %pi : tensor<?xf64>
      %newv = "stablehlo.slice"(%newp) {start_indices = array<i64: 1>, limit_indices = array<i64: 3>, strides = array<i64: 1>} : (tensor<?xf64>) -> tensor<2xf64>
      %j1 = stablehlo.add %j, %one : tensor<i64>
      stablehlo.return %j1, %newp, %newv : tensor<i64>, tensor<?xf64>, tensor<2xf64>
    }
    %i1 = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %i1, %s#1, %s#2 : tensor<i64>, tensor<?xf64>, tensor<2xf64>
  }
  return %r#1 : tensor<?xf64>
}

// A carried value read by a check (an effect) inside the loop stays, and so
// does one the loop's condition reads; one whose result is returned stays
// although no op of the loop reads it.
// CHECK-LABEL: func.func @kept
func.func @kept(%x: tensor<?xf64>, %k: tensor<i64>, %n: tensor<i64>) -> (tensor<i64>, tensor<?xf64>) {
  // CHECK: stablehlo.while(%{{[^ ]*}} = %{{[^ ]*}}, %{{[^ ]*}} = %{{[^ ]*}}, %{{[^ ]*}} = %{{[^ ]*}}) : tensor<i64>, tensor<i64>, tensor<?xf64>
  // CHECK: "kiln.check"
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r:3 = stablehlo.while(%i = %zero, %kk = %k, %xx = %x) : tensor<i64>, tensor<i64>, tensor<?xf64>
  cond {
    %c = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %ok = stablehlo.compare GE, %kk, %zero, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    "kiln.check"(%ok, %kk) {kind = "IndexError", message = "index {} is negative"} : (tensor<i1>, tensor<i64>) -> ()
    %i1 = stablehlo.add %i, %one : tensor<i64>
    %x1 = stablehlo.negate %xx : tensor<?xf64>
    stablehlo.return %i1, %kk, %x1 : tensor<i64>, tensor<i64>, tensor<?xf64>
  }
  return %r#0, %r#2 : tensor<i64>, tensor<?xf64>
}

// A branch result nothing reads goes from every branch; the ops that only
// computed it go with it.
// CHECK-LABEL: func.func @branch
func.func @branch(%p: tensor<i1>, %x: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: %[[R:.*]] = "stablehlo.if"
  // CHECK-NEXT: stablehlo.return %{{.*}} : tensor<?xf64>
  // CHECK-NEXT: }, {
  // CHECK-NEXT: %[[NEG:.*]] = stablehlo.negate
  // CHECK-NEXT: stablehlo.return %[[NEG]] : tensor<?xf64>
  // CHECK-NEXT: }) : (tensor<i1>) -> tensor<?xf64>
  // CHECK-NEXT: return %[[R]]
  %r:2 = "stablehlo.if"(%p) ({
    %e = stablehlo.exponential %x : tensor<?xf64>
    stablehlo.return %x, %e : tensor<?xf64>, tensor<?xf64>
  }, {
    %n = stablehlo.negate %x : tensor<?xf64>
    %a = stablehlo.abs %x : tensor<?xf64>
    stablehlo.return %n, %a : tensor<?xf64>, tensor<?xf64>
  }) : (tensor<i1>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#0 : tensor<?xf64>
}
