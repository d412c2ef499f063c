// RUN: kiln-opt %s -p kiln-lower-sorts | filecheck %s

// Each `kiln.sort` becomes a call of the runtime's routine for its dtype on
// the operand seen as rows x n (leading axes merged), writing a fresh
// tensor.empty of that shape; the declaration says the input is only read,
// the output only written, and that the call returns its output argument.
// Unsigned data are bitcast to the signless type around the call.

// CHECK-DAG: func.func private @kiln_sort_u16(tensor<?x?xi16> {bufferization.access = "read"}, tensor<?x?xi16> {bufferization.access = "write"}, tensor<?xi64> {bufferization.access = "read"}) -> tensor<?x?xi16> attributes {kiln.returns_argument = 1 : i64}
// CHECK-DAG: func.func private @kiln_argsort_i32(tensor<?x?xi32> {bufferization.access = "read"}, tensor<?x?xi64> {bufferization.access = "write"}, tensor<?xi64> {bufferization.access = "read"}) -> tensor<?x?xi64> attributes {kiln.returns_argument = 1 : i64}
// CHECK-DAG: func.func private @kiln_sort_f64(tensor<?x?xf64> {bufferization.access = "read"}, tensor<?x?xf64> {bufferization.access = "write"}, tensor<?xi64> {bufferization.access = "read"}) -> tensor<?x?xf64> attributes {kiln.returns_argument = 1 : i64}

// A vector is one row.
// CHECK-LABEL: func.func @sort_values
// CHECK-SAME: (%[[X:.*]]: tensor<?xf64>, %[[K:.*]]: tensor<0xi64>)
func.func @sort_values(%x: tensor<?xf64>, %k: tensor<0xi64>) -> tensor<?xf64> {
  // CHECK-NOT: kiln.sort
  // CHECK: %[[N:.*]] = tensor.dim %[[X]]
  // CHECK: %[[ROW:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [1, %[[N]]] : tensor<?xf64> into tensor<1x?xf64>
  // CHECK: %[[IN:.*]] = tensor.cast %[[ROW]] : tensor<1x?xf64> to tensor<?x?xf64>
  // CHECK: %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %[[N]]) : tensor<?x?xf64>
  // CHECK: %[[OUT:.*]] = tensor.cast %[[EMPTY]]
  // CHECK: %[[KTH:.*]] = tensor.cast %[[K]] : tensor<0xi64> to tensor<?xi64>
  // CHECK: %[[SORTED:.*]] = call @kiln_sort_f64(%[[IN]], %[[OUT]], %[[KTH]])
  // CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[SORTED]] {{\[\[}}0, 1]] : tensor<?x?xf64> into tensor<?xf64>
  // CHECK: return %[[FLAT]]
  %r = "kiln.sort"(%x, %k) {indices = false} : (tensor<?xf64>, tensor<0xi64>) -> tensor<?xf64>
  return %r : tensor<?xf64>
}

// Positions: the output is int64.
// CHECK-LABEL: func.func @argsort_rows
func.func @argsort_rows(%x: tensor<?x5xi32>, %k: tensor<0xi64>) -> tensor<?x5xi64> {
  // CHECK: %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xi64>
  // CHECK: %[[R:.*]] = call @kiln_argsort_i32(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x?xi32>, tensor<?x?xi64>, tensor<?xi64>) -> tensor<?x?xi64>
  // CHECK: tensor.cast %[[R]] : tensor<?x?xi64> to tensor<?x5xi64>
  %r = "kiln.sort"(%x, %k) {indices = true} : (tensor<?x5xi32>, tensor<0xi64>) -> tensor<?x5xi64>
  return %r : tensor<?x5xi64>
}

// A partition (kth given) of a rank-3 unsigned array: leading axes merged,
// bitcast to i16 and back.
// CHECK-LABEL: func.func @partition_unsigned
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x3xui16>, %[[K:.*]]: tensor<?xi64>)
func.func @partition_unsigned(%x: tensor<2x?x3xui16>, %k: tensor<?xi64>) -> tensor<2x?x3xui16> {
  // CHECK: %[[BITS:.*]] = stablehlo.bitcast_convert %[[X]] : (tensor<2x?x3xui16>) -> tensor<2x?x3xi16>
  // CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[BITS]] {{\[\[}}0, 1], [2]] : tensor<2x?x3xi16> into tensor<?x3xi16>
  // CHECK: %[[R:.*]] = call @kiln_sort_u16(%{{.*}}, %{{.*}}, %[[K]])
  // CHECK: %[[BACK:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1], [2]] output_shape
  // CHECK: %[[TYPED:.*]] = tensor.cast %[[BACK]] : tensor<?x?x?xi16> to tensor<2x?x3xi16>
  // CHECK: stablehlo.bitcast_convert %[[TYPED]] : (tensor<2x?x3xi16>) -> tensor<2x?x3xui16>
  %r = "kiln.sort"(%x, %k) {indices = false} : (tensor<2x?x3xui16>, tensor<?xi64>) -> tensor<2x?x3xui16>
  return %r : tensor<2x?x3xui16>
}
