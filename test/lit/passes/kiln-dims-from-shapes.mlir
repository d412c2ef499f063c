// RUN: kiln-opt %s -p kiln-dims-from-shapes | filecheck %s

// An implicit dim argument marked `kiln.dim_of = [k, axis]` is read from
// `tensor.dim %arg<k>, axis` (cast to the argument's integer type and
// wrapped in a rank-0 tensor) at the top of the function; the argument
// itself is then unused. The attributes stay on the signature.

// Two dims of two arrays: each use reads the dim of the array and axis the
// attribute names (not the argument's position).
// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[A:[^:]*]]: tensor<i64> {kiln.dim_of = array<i64: 3, 1>}, %[[B:[^:]*]]: tensor<i64> {kiln.dim_of = array<i64: 2, 0>}, %[[X:[^:]*]]: tensor<?x?xf64>, %[[Y:[^:]*]]: tensor<?x?xf64>)
func.func @add(%a: tensor<i64> {kiln.dim_of = array<i64: 3, 1>}, %b: tensor<i64> {kiln.dim_of = array<i64: 2, 0>},
               %x: tensor<?x?xf64>, %y: tensor<?x?xf64>) -> tensor<?x?xf64> {
  // CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
  // CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
  // CHECK-DAG: %[[DX0:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x?xf64>
  // CHECK-DAG: %[[DY1:.*]] = tensor.dim %[[Y]], %[[C1]] : tensor<?x?xf64>
  // CHECK-DAG: %[[IX0:.*]] = arith.index_cast %[[DX0]] : index to i64
  // CHECK-DAG: %[[IY1:.*]] = arith.index_cast %[[DY1]] : index to i64
  // CHECK-DAG: %[[NB:.*]] = tensor.from_elements %[[IX0]] : tensor<i64>
  // CHECK-DAG: %[[NA:.*]] = tensor.from_elements %[[IY1]] : tensor<i64>
  // CHECK: %[[A1:.*]] = stablehlo.reshape %[[NA]] : (tensor<i64>) -> tensor<1xi64>
  // CHECK: %[[B1:.*]] = stablehlo.reshape %[[NB]] : (tensor<i64>) -> tensor<1xi64>
  // CHECK: %[[SHAPE:.*]] = stablehlo.concatenate %[[B1]], %[[A1]], dim = 0
  // CHECK: %[[CMP:.*]] = stablehlo.compare EQ, %[[NA]], %[[NB]], SIGNED
  // CHECK: "kiln.check"(%[[CMP]], %[[NA]], %[[NB]])
  // CHECK: stablehlo.dynamic_broadcast_in_dim %[[Y]], %[[SHAPE]]
  // The dim arguments have no use left.
  // CHECK-NOT: %[[A]]
  // CHECK-NOT: %[[B]]
  // CHECK: return
  %a1 = stablehlo.reshape %a : (tensor<i64>) -> tensor<1xi64>
  %b1 = stablehlo.reshape %b : (tensor<i64>) -> tensor<1xi64>
  %shape = stablehlo.concatenate %b1, %a1, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %eq = stablehlo.compare EQ, %a, %b, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
  "kiln.check"(%eq, %a, %b) {kind = "ValueError", message = "dims {} and {} differ"} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
  %yb = stablehlo.dynamic_broadcast_in_dim %y, %shape, dims = [0, 1] : (tensor<?x?xf64>, tensor<2xi64>) -> tensor<?x?xf64>
  %r = stablehlo.add %x, %yb : tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

// The cast goes to the argument's own element type; uses nested in regions
// are rewritten too.
// CHECK-LABEL: func.func @i32_nested
// CHECK-SAME: (%[[N:[^:]*]]: tensor<i32> {kiln.dim_of = array<i64: 1, 0>}, %[[X:[^:]*]]: tensor<?xf32>, %[[P:[^:]*]]: i1)
func.func @i32_nested(%n: tensor<i32> {kiln.dim_of = array<i64: 1, 0>}, %x: tensor<?xf32>, %p: i1) -> tensor<i32> {
  // CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
  // CHECK-NEXT: %[[D:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?xf32>
  // CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[D]] : index to i32
  // CHECK-NEXT: %[[T:.*]] = tensor.from_elements %[[I]] : tensor<i32>
  // CHECK-NEXT: %[[R:.*]] = scf.if %[[P]] -> (tensor<i32>) {
  // CHECK-NEXT:   scf.yield %[[T]] : tensor<i32>
  %r = scf.if %p -> tensor<i32> {
    scf.yield %n : tensor<i32>
  } else {
    %z = arith.constant dense<0> : tensor<i32>
    scf.yield %z : tensor<i32>
  }
  // CHECK: return %[[R]] : tensor<i32>
  return %r : tensor<i32>
}

// Left alone: an annotated argument without uses (no dim is read), an
// unannotated tensor<i64> argument, an argument describing a memref (not a
// ranked tensor), and a declaration.
// CHECK-LABEL: func.func @kept
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?xf32>, %{{[^:]*}}: tensor<i64> {kiln.dim_of = array<i64: 0, 0>}, %[[K:[^:]*]]: tensor<i64>, %[[M:[^:]*]]: memref<?xf32>, %[[NM:[^:]*]]: tensor<i64> {kiln.dim_of = array<i64: 3, 0>})
func.func @kept(%x: tensor<?xf32>, %unused: tensor<i64> {kiln.dim_of = array<i64: 0, 0>}, %k: tensor<i64>,
                %m: memref<?xf32>, %nm: tensor<i64> {kiln.dim_of = array<i64: 3, 0>}) -> (tensor<i64>, tensor<i64>) {
  // CHECK-NOT: tensor.dim
  // CHECK-NOT: tensor.from_elements
  // CHECK: return %[[K]], %[[NM]] : tensor<i64>, tensor<i64>
  return %k, %nm : tensor<i64>, tensor<i64>
}

// CHECK-LABEL: func.func private @decl
// CHECK-SAME: (tensor<?xf32>, tensor<i64> {kiln.dim_of = array<i64: 0, 0>})
func.func private @decl(%x: tensor<?xf32>, %n: tensor<i64> {kiln.dim_of = array<i64: 0, 0>})
