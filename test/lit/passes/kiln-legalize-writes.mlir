// RUN: kiln-opt %s -p kiln-legalize-writes | filecheck %s

// The StableHLO that immut-to-stablehlo emits for writes and that
// stablehlo-legalize-to-linalg leaves behind, lowered to tensor/scf:
// dynamic_update_slice on dynamic shapes -> tensor.insert_slice; kiln's
// one-axis replacing scatter -> an scf.for moving one row per index, in
// order (the last write of a duplicated index wins); get_dimension_size ->
// tensor.dim.

// CHECK-LABEL: func.func @writes
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[ROW:.*]]: tensor<1x4xf32>, %[[I:.*]]: tensor<i64>, %[[IDX:.*]]: tensor<?xi64>, %[[UPD:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<4xf32>, %[[V:.*]]: tensor<2xf32>)
func.func @writes(%x: tensor<?x4xf32>, %row: tensor<1x4xf32>, %i: tensor<i64>, %idx: tensor<?xi64>, %upd: tensor<?x4xf32>, %s: tensor<4xf32>, %v: tensor<2xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<i32>, tensor<4xf32>) {
  %z = stablehlo.constant dense<0> : tensor<i64>
  // CHECK: %[[EI:.*]] = tensor.extract %[[I]][] : tensor<i64>
  // CHECK-NEXT: %[[OFF0:.*]] = arith.index_cast %[[EI]] : i64 to index
  // CHECK: %[[OFF1:.*]] = arith.index_cast
  // CHECK-NEXT: %[[A:.*]] = tensor.insert_slice %[[ROW]] into %[[X]][%[[OFF0]], %[[OFF1]]] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
  // CHECK-NOT: stablehlo.dynamic_update_slice %[[X]]
  %a = stablehlo.dynamic_update_slice %x, %row, %i, %z : (tensor<?x4xf32>, tensor<1x4xf32>, tensor<i64>, tensor<i64>) -> tensor<?x4xf32>
  // CHECK: %[[COUNT:.*]] = tensor.dim %[[IDX]], %{{.*}} : tensor<?xi64>
  // CHECK: %[[B:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[COUNT]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[X]]) -> (tensor<?x4xf32>) {
  // CHECK-NEXT: %[[T:.*]] = tensor.extract %[[IDX]][%[[K]]] : tensor<?xi64>
  // CHECK-NEXT: %[[TI:.*]] = arith.index_cast %[[T]] : i64 to index
  // CHECK: %[[R:.*]] = tensor.extract_slice %[[UPD]][%[[K]], 0] [1, 4] [1, 1] : tensor<?x4xf32> to tensor<1x4xf32>
  // CHECK-NEXT: %[[NEXT:.*]] = tensor.insert_slice %[[R]] into %[[ACC]][%[[TI]], 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
  // CHECK-NEXT: scf.yield %[[NEXT]] : tensor<?x4xf32>
  // CHECK-NEXT: }
  %b = "stablehlo.scatter"(%x, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%old: tensor<f32>, %new: tensor<f32>):
    stablehlo.return %new : tensor<f32>
  }) : (tensor<?x4xf32>, tensor<?xi64>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
  // CHECK-NEXT: %[[D32:.*]] = arith.index_cast %[[D]] : index to i32
  // CHECK-NEXT: %[[N:.*]] = tensor.from_elements %[[D32]] : tensor<i32>
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  // Static shapes are left to stablehlo-legalize-to-linalg.
  // CHECK-NEXT: %[[ST:.*]] = stablehlo.dynamic_update_slice %[[S]], %[[V]], %[[I]]
  %st = stablehlo.dynamic_update_slice %s, %v, %i : (tensor<4xf32>, tensor<2xf32>, tensor<i64>) -> tensor<4xf32>
  // CHECK-NEXT: return %[[A]], %[[B]], %[[N]], %[[ST]]
  return %a, %b, %n, %st : tensor<?x4xf32>, tensor<?x4xf32>, tensor<i32>, tensor<4xf32>
}

// A static operand written with an update of dynamic size (x[0:i] = v on a
// specialized size-1 array) is lowered too.
// CHECK-LABEL: func.func @static_operand_dynamic_update
// CHECK-SAME: (%[[X:.*]]: tensor<1xf64>, %[[U:.*]]: tensor<?xf64>, %[[I:.*]]: tensor<i64>)
func.func @static_operand_dynamic_update(%x: tensor<1xf64>, %u: tensor<?xf64>, %i: tensor<i64>) -> tensor<1xf64> {
  // CHECK: %[[OFF:.*]] = arith.index_cast
  // CHECK: %[[N:.*]] = tensor.dim %[[U]], %{{.*}} : tensor<?xf64>
  // CHECK-NEXT: %[[R:.*]] = tensor.insert_slice %[[U]] into %[[X]][%[[OFF]]] [%[[N]]] [1] : tensor<?xf64> into tensor<1xf64>
  %r = stablehlo.dynamic_update_slice %x, %u, %i : (tensor<1xf64>, tensor<?xf64>, tensor<i64>) -> tensor<1xf64>
  // CHECK-NEXT: return %[[R]]
  return %r : tensor<1xf64>
}

// kiln's 1-D adding scatter (scatter_add: np.histogram's counts) -> an
// scf.for adding one update to the element at its index, in order, so
// duplicated indices accumulate.
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[IDX:.*]]: tensor<?xi64>, %[[UPD:.*]]: tensor<?xf32>)
func.func @accumulate(%x: tensor<?xf32>, %idx: tensor<?xi64>, %upd: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: %[[COUNT:.*]] = tensor.dim %[[IDX]], %{{.*}} : tensor<?xi64>
  // CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[COUNT]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[X]]) -> (tensor<?xf32>) {
  // CHECK-NEXT: %[[T:.*]] = tensor.extract %[[IDX]][%[[K]]] : tensor<?xi64>
  // CHECK-NEXT: %[[TI:.*]] = arith.index_cast %[[T]] : i64 to index
  // CHECK-NEXT: %[[OLD:.*]] = tensor.extract %[[ACC]][%[[TI]]] : tensor<?xf32>
  // CHECK-NEXT: %[[U:.*]] = tensor.extract %[[UPD]][%[[K]]] : tensor<?xf32>
  // CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[OLD]], %[[U]] : f32
  // CHECK-NEXT: %[[NEXT:.*]] = tensor.insert %[[SUM]] into %[[ACC]][%[[TI]]] : tensor<?xf32>
  // CHECK-NEXT: scf.yield %[[NEXT]] : tensor<?xf32>
  // CHECK-NEXT: }
  // CHECK-NOT: stablehlo.scatter
  %r = "stablehlo.scatter"(%x, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) : (tensor<?xf32>, tensor<?xi64>, tensor<?xf32>) -> tensor<?xf32>
  // CHECK: return %[[R]]
  return %r : tensor<?xf32>
}

// A scatter that is not kiln's form (another update computation) is left alone.
// CHECK-LABEL: func.func @multiply
func.func @multiply(%x: tensor<?xf32>, %idx: tensor<?xi64>, %upd: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: "stablehlo.scatter"
  // CHECK: stablehlo.multiply
  // CHECK-NOT: scf.for
  %r = "stablehlo.scatter"(%x, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %p : tensor<f32>
  }) : (tensor<?xf32>, tensor<?xi64>, tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
