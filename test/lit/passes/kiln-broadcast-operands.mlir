// RUN: kiln-opt %s -p kiln-broadcast-operands | filecheck %s

// A broadcast whose operand dim may be 1 at run time (dim 0 is in neither
// known list) moves onto the operands of the elementwise ops it reads, and
// through the scalar's own broadcast: the add and multiply now work at the
// result size, and only the slices are broadcast (kiln-legalize-dynamic
// versions those).
// CHECK-LABEL: func.func @through_elementwise
// CHECK-SAME: (%[[A:.*]]: tensor<?xf64>, %[[B:.*]]: tensor<?xf64>, %[[C:.*]]: tensor<f64>, %[[N:.*]]: tensor<1xi64>, %[[M:.*]]: tensor<1xi64>)
func.func @through_elementwise(%a: tensor<?xf64>, %b: tensor<?xf64>, %c: tensor<f64>, %n: tensor<1xi64>,
                               %m: tensor<1xi64>) -> tensor<?xf64> {
  // CHECK-DAG: %[[BA:.*]] = stablehlo.dynamic_broadcast_in_dim %[[A]], %[[M]], dims = [0] : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  // CHECK-DAG: %[[BB:.*]] = stablehlo.dynamic_broadcast_in_dim %[[B]], %[[M]], dims = [0] : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  // CHECK-DAG: %[[BC:.*]] = stablehlo.dynamic_broadcast_in_dim %[[C]], %[[M]], dims = [] : (tensor<f64>, tensor<1xi64>) -> tensor<?xf64>
  // CHECK-DAG: %[[SUM:.*]] = stablehlo.add %[[BA]], %[[BB]] : tensor<?xf64>
  // CHECK: %[[PROD:.*]] = stablehlo.multiply %[[BC]], %[[SUM]] : tensor<?xf64>
  // CHECK-NEXT: return %[[PROD]]
  %cs = stablehlo.dynamic_broadcast_in_dim %c, %n, dims = [] : (tensor<f64>, tensor<1xi64>) -> tensor<?xf64>
  %sum = stablehlo.add %a, %b : tensor<?xf64>
  %prod = stablehlo.multiply %cs, %sum : tensor<?xf64>
  %r = stablehlo.dynamic_broadcast_in_dim %prod, %m, dims = [0] : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  return %r : tensor<?xf64>
}

// A dim that keeps its size in both broadcasts keeps it in the one they
// become; a rank-0 select predicate stays a scalar.
// CHECK-LABEL: func.func @through_broadcast_and_select
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[Y:.*]]: tensor<?x?x?xf32>, %[[P:.*]]: tensor<i1>, %[[S1:.*]]: tensor<3xi64>, %[[S2:.*]]: tensor<3xi64>)
func.func @through_broadcast_and_select(%x: tensor<?x?xf32>, %y: tensor<?x?x?xf32>, %p: tensor<i1>,
                                        %s1: tensor<3xi64>, %s2: tensor<3xi64>) -> tensor<?x?x?xf32> {
  // CHECK-DAG: %[[BX:.*]] = stablehlo.dynamic_broadcast_in_dim %[[X]], %[[S2]], dims = [1, 2] {known_nonexpanding_dimensions = array<i64: 1>} : (tensor<?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  // CHECK-DAG: %[[BY:.*]] = stablehlo.dynamic_broadcast_in_dim %[[Y]], %[[S2]], dims = [0, 1, 2] {known_nonexpanding_dimensions = array<i64: 0, 2>}
  // CHECK: %[[SEL:.*]] = stablehlo.select %[[P]], %[[BX]], %[[BY]] : tensor<i1>, tensor<?x?x?xf32>
  // CHECK-NEXT: return %[[SEL]]
  %xb = stablehlo.dynamic_broadcast_in_dim %x, %s1, dims = [1, 2] {known_nonexpanding_dimensions = array<i64: 1>} : (tensor<?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %sel = stablehlo.select %p, %xb, %y : tensor<i1>, tensor<?x?x?xf32>
  %r = stablehlo.dynamic_broadcast_in_dim %sel, %s2, dims = [0, 1, 2] {known_nonexpanding_dimensions = array<i64: 0, 2>} : (tensor<?x?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// Nothing moves when every dim keeps its size, or when the elementwise
// result has another use (it is computed once, at its own size).
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%a: tensor<?xf64>, %n: tensor<1xi64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  // CHECK: %[[NEG:.*]] = stablehlo.negate
  // CHECK: stablehlo.dynamic_broadcast_in_dim %[[NEG]], {{.*}}known_nonexpanding_dimensions = array<i64: 0>}
  // CHECK: %[[EXP:.*]] = stablehlo.exponential
  // CHECK: stablehlo.dynamic_broadcast_in_dim %[[EXP]]
  // CHECK: return
  %neg = stablehlo.negate %a : tensor<?xf64>
  %r1 = stablehlo.dynamic_broadcast_in_dim %neg, %n, dims = [0] {known_nonexpanding_dimensions = array<i64: 0>} : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  %exp = stablehlo.exponential %a : tensor<?xf64>
  %r2 = stablehlo.dynamic_broadcast_in_dim %exp, %n, dims = [0] : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  return %r1, %r2, %exp : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}
