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

// A chain of sums whose operands were each broadcast (`((a + b) + c)`, each
// `+` between slices of other sizes) moves down in one sweep: the inner
// broadcast of `a + b` that the outer one goes through is erased at once, so
// `a + b` has one use again and the move goes on to `a` and `b`. No broadcast
// is left on an elementwise result, and the three sums fuse into one loop.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: tensor<?xf64>, %[[B:.*]]: tensor<?xf64>, %[[C:.*]]: tensor<?xf64>, %[[N:.*]]: tensor<1xi64>, %[[M:.*]]: tensor<1xi64>)
func.func @chain(%a: tensor<?xf64>, %b: tensor<?xf64>, %c: tensor<?xf64>, %n: tensor<1xi64>,
                 %m: tensor<1xi64>) -> tensor<?xf64> {
  // CHECK-DAG: %[[BA:.*]] = stablehlo.dynamic_broadcast_in_dim %[[A]], %[[M]], dims = [0]
  // CHECK-DAG: %[[BB:.*]] = stablehlo.dynamic_broadcast_in_dim %[[B]], %[[M]], dims = [0]
  // CHECK-DAG: %[[BC:.*]] = stablehlo.dynamic_broadcast_in_dim %[[C]], %[[M]], dims = [0]
  // CHECK-DAG: %[[AB:.*]] = stablehlo.add %[[BA]], %[[BB]]
  // CHECK: %[[ABC:.*]] = stablehlo.add %[[AB]], %[[BC]]
  // CHECK-NEXT: return %[[ABC]]
  %ab = stablehlo.add %a, %b : tensor<?xf64>
  %abn = stablehlo.dynamic_broadcast_in_dim %ab, %n, dims = [0] : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  %cn = stablehlo.dynamic_broadcast_in_dim %c, %n, dims = [0] : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  %abc = stablehlo.add %abn, %cn : tensor<?xf64>
  %r = stablehlo.dynamic_broadcast_in_dim %abc, %m, dims = [0] : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  return %r : tensor<?xf64>
}

// A value read by two equal broadcasts (hdiff's `np.where(res * d > 0, 0,
// res)`, both sides broadcast to the where's shape) is broadcast once, and
// the move goes on through it.
// CHECK-LABEL: func.func @twins
// CHECK-SAME: (%[[A:.*]]: tensor<?xf64>, %[[B:.*]]: tensor<?xf64>, %[[D:.*]]: tensor<?xf64>, %[[M:.*]]: tensor<1xi64>)
func.func @twins(%a: tensor<?xf64>, %b: tensor<?xf64>, %d: tensor<?xf64>, %m: tensor<1xi64>) -> tensor<?xf64> {
  // CHECK-DAG: %[[BA:.*]] = stablehlo.dynamic_broadcast_in_dim %[[A]], %[[M]], dims = [0]
  // CHECK-DAG: %[[BB:.*]] = stablehlo.dynamic_broadcast_in_dim %[[B]], %[[M]], dims = [0]
  // CHECK: %[[RES:.*]] = stablehlo.subtract %[[BA]], %[[BB]]
  // CHECK-NOT: stablehlo.subtract
  // CHECK: stablehlo.multiply %[[RES]], %[[D]]
  // CHECK: stablehlo.select {{.*}}, %[[RES]]
  %res = stablehlo.subtract %a, %b : tensor<?xf64>
  %r1 = stablehlo.dynamic_broadcast_in_dim %res, %m, dims = [0] : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  %r2 = stablehlo.dynamic_broadcast_in_dim %res, %m, dims = [0] : (tensor<?xf64>, tensor<1xi64>) -> tensor<?xf64>
  %prod = stablehlo.multiply %r1, %d : tensor<?xf64>
  %zero = stablehlo.constant dense<0.0> : tensor<f64>
  %zeros = stablehlo.dynamic_broadcast_in_dim %zero, %m, dims = [] : (tensor<f64>, tensor<1xi64>) -> tensor<?xf64>
  %pos = stablehlo.compare GT, %prod, %zeros : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xi1>
  %w = stablehlo.select %pos, %zeros, %r2 : tensor<?xi1>, tensor<?xf64>
  return %w : tensor<?xf64>
}
