// RUN: kiln-opt %s -p kiln-legalize-dynamic | filecheck %s
// RUN: kiln-opt %s -p 'kiln-legalize-dynamic,func.func(stablehlo-legalize-to-linalg),canonicalize' | filecheck %s --check-prefix=LINALG

// The dynamic-shape StableHLO ops that stablehlo-legalize-to-linalg leaves
// behind, and `kiln.scan`, become tensor / linalg / scf ops; after the upstream lowering no
// stablehlo op is left anywhere.
// LINALG-NOT: stablehlo.

// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[UNIT:.*]] = affine_map<(d0, d1) -> (0, d1)>

// The size-1 copy of each rank used (below) is declared once, private,
// with index arguments: element bytes, source address and offset,
// destination address, then the sizes and the source strides.
// CHECK: func.func private @kiln_broadcast_copy_1d(index, index, index, index, index, index) attributes {llvm.nounwind}
// CHECK: func.func private @kiln_broadcast_copy_2d(index, index, index, index, index, index, index, index) attributes {llvm.nounwind}

// A dynamic result size is read from the shape operand; the operand map
// drops the broadcast dim.
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[SHAPE:.*]]: tensor<2xi64>)
func.func @broadcast(%x: tensor<?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  // CHECK: %[[E0:.*]] = tensor.extract %[[SHAPE]][%{{.*}}] : tensor<2xi64>
  // CHECK: %[[M:.*]] = arith.index_cast %[[E0]] : i64 to index
  // CHECK: %[[E1:.*]] = tensor.extract %[[SHAPE]][%{{.*}}] : tensor<2xi64>
  // CHECK: %[[N:.*]] = arith.index_cast %[[E1]] : i64 to index
  // CHECK: %[[INIT:.*]] = tensor.empty(%[[M]], %[[N]]) : tensor<?x?xf32>
  // CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[COL]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
  // CHECK-SAME: ins(%[[X]] : tensor<?xf32>) outs(%[[INIT]] : tensor<?x?xf32>)
  // CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
  // CHECK-NEXT: linalg.yield %[[IN]] : f32
  // CHECK-NOT: stablehlo.dynamic_broadcast_in_dim
  // CHECK: return %[[R]]
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [1] {known_nonexpanding_dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Shape operands may hold indices: they are used without a cast.
// CHECK-LABEL: func.func @broadcast_index_shape
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[SHAPE:.*]]: tensor<2xindex>)
func.func @broadcast_index_shape(%x: tensor<?xf32>, %shape: tensor<2xindex>) -> tensor<?x?xf32> {
  // CHECK: %[[M:.*]] = tensor.extract %[[SHAPE]][%{{.*}}] : tensor<2xindex>
  // CHECK: %[[N:.*]] = tensor.extract %[[SHAPE]][%{{.*}}] : tensor<2xindex>
  // CHECK-NOT: arith.index_cast
  // CHECK: tensor.empty(%[[M]], %[[N]]) : tensor<?x?xf32>
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [1] {known_nonexpanding_dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// A static size-1 operand dim stretched to a dynamic result dim reads index 0.
// CHECK-LABEL: func.func @broadcast_unit_dim
func.func @broadcast_unit_dim(%x: tensor<1x?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  // CHECK: linalg.generic {indexing_maps = [#[[UNIT]], #[[ID2]]]
  // CHECK-SAME: ins(%{{.*}} : tensor<1x?xf32>)
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [0, 1] {known_nonexpanding_dimensions = array<i64: 1>} : (tensor<1x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// An operand dim in neither known list may be 1 at run time while the
// result dim is larger (StableHLO's meaning): the broadcast is versioned.
// When every such dim equals its result dim, the result is the operand
// itself (no copy, so the consumer fuses with the operand's producer as
// before); otherwise that dim is 1 and one call of runtime/broadcast.c
// copies the operand's buffer, read with stride 0 along that dim, into a
// fresh buffer of the result's sizes (the callees are declared at the top).
// CHECK-LABEL: func.func @broadcast_versioned
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[SHAPE:.*]]: tensor<2xi64>)
func.func @broadcast_versioned(%x: tensor<?x?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  // CHECK: %[[M:.*]] = arith.index_cast %{{.*}} : i64 to index
  // CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
  // CHECK: %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?xf32>
  // CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : index
  // CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[D]], %[[M]] : index
  // CHECK: %[[R:.*]] = scf.if %[[SAME]] -> (tensor<?x?xf32>) {
  // CHECK-NEXT: scf.yield %[[X]] : tensor<?x?xf32>
  // CHECK-NEXT: } else {
  // CHECK-NOT: linalg.generic
  // CHECK-NEXT: %[[SRC:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<?x?xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  // CHECK-NEXT: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[SRC]]
  // CHECK: %[[S0:.*]] = arith.select %[[ONE]], %{{.*}}, %[[STRIDES]]#0 : index
  // CHECK-NEXT: %[[DST:.*]] = memref.alloc(%[[M]], %[[N]]) : memref<?x?xf32>
  // CHECK-NEXT: %[[BYTES:.*]] = arith.constant 4 : index
  // CHECK-NEXT: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[SRC]]
  // CHECK-NEXT: %[[Q:.*]] = memref.extract_aligned_pointer_as_index %[[DST]]
  // CHECK-NEXT: func.call @kiln_broadcast_copy_2d(%[[BYTES]], %[[P]], %[[OFF]], %[[Q]], %[[M]], %[[N]], %[[S0]], %[[STRIDES]]#1)
  // CHECK-NEXT: %[[T:.*]] = bufferization.to_tensor %[[DST]] restrict writable : memref<?x?xf32> to tensor<?x?xf32>
  // CHECK-NEXT: scf.yield %[[T]] : tensor<?x?xf32>
  // CHECK: return %[[R]]
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [0, 1] {known_nonexpanding_dimensions = array<i64: 1>} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// With a new result dim, the common case is the broadcast by maps; the
// copy reads that dim with stride 0.
// CHECK-LABEL: func.func @broadcast_versioned_new_dim
func.func @broadcast_versioned_new_dim(%x: tensor<?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  // CHECK: scf.if
  // CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[ID2]]]
  // CHECK: } else {
  // CHECK: %[[ZERO:.*]] = arith.constant 0 : index
  // CHECK: %[[S:.*]] = arith.select %{{.*}}, %[[ZERO]], %{{.*}} : index
  // CHECK: func.call @kiln_broadcast_copy_2d(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %[[S]])
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [1] : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// With several such dims, the size-1 path cannot know which are 1: each
// stride is chosen when the program runs (0 where the dim is 1). Still one
// call, no loop nest: the path runs only when a dim is 1, and LLVM spent
// most of a stencil kernel's compile time on a nest per operand.
// CHECK-LABEL: func.func @broadcast_versioned_two_dims
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[SHAPE:.*]]: tensor<2xi64>)
func.func @broadcast_versioned_two_dims(%x: tensor<?x?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  // CHECK: %[[D0:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?xf32>
  // CHECK: %[[ONE0:.*]] = arith.cmpi eq, %[[D0]], %{{.*}} : index
  // CHECK: %[[D1:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?xf32>
  // CHECK: %[[ONE1:.*]] = arith.cmpi eq, %[[D1]], %{{.*}} : index
  // CHECK: %[[R:.*]] = scf.if %{{.*}} -> (tensor<?x?xf32>) {
  // CHECK-NEXT: scf.yield %[[X]] : tensor<?x?xf32>
  // CHECK-NEXT: } else {
  // CHECK-NOT: scf.for
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata
  // CHECK: %[[S0:.*]] = arith.select %[[ONE0]], %{{.*}}, %[[STRIDES]]#0 : index
  // CHECK-NEXT: %[[S1:.*]] = arith.select %[[ONE1]], %{{.*}}, %[[STRIDES]]#1 : index
  // CHECK-NOT: scf.for
  // CHECK: func.call @kiln_broadcast_copy_2d(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S0]], %[[S1]])
  // CHECK: return %[[R]]
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [0, 1] : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// 1-D: the copy of rank 1, its one stride chosen when the program runs.
// CHECK-LABEL: func.func @broadcast_versioned_vector
func.func @broadcast_versioned_vector(%x: tensor<?xi1>, %shape: tensor<1xi64>) -> tensor<?xi1> {
  // CHECK: } else {
  // CHECK: %[[BYTES:.*]] = arith.constant 1 : index
  // CHECK: func.call @kiln_broadcast_copy_1d(%[[BYTES]],
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [0] : (tensor<?xi1>, tensor<1xi64>) -> tensor<?xi1>
  return %0 : tensor<?xi1>
}

// Above rank 8 (the largest rank runtime/broadcast.c has an entry for) the
// size-1 path stays a loop nest: serial scf.for loops inserting each element.
// CHECK-LABEL: func.func @broadcast_versioned_rank_9
func.func @broadcast_versioned_rank_9(%x: tensor<?x1x1x1x1x1x1x1x?xf32>, %shape: tensor<9xi64>) -> tensor<?x1x1x1x1x1x1x1x?xf32> {
  // CHECK: } else {
  // CHECK-NOT: func.call
  // CHECK: scf.for
  // CHECK: tensor.insert
  // CHECK: return
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [0, 1, 2, 3, 4, 5, 6, 7, 8] {known_nonexpanding_dimensions = array<i64: 1, 2, 3, 4, 5, 6, 7>} : (tensor<?x1x1x1x1x1x1x1x?xf32>, tensor<9xi64>) -> tensor<?x1x1x1x1x1x1x1x?xf32>
  return %0 : tensor<?x1x1x1x1x1x1x1x?xf32>
}

// A static result is left to stablehlo-legalize-to-linalg.
// CHECK-LABEL: func.func @broadcast_static_result
func.func @broadcast_static_result(%x: tensor<f32>, %shape: tensor<1xi64>) -> tensor<4xf32> {
  // CHECK: stablehlo.dynamic_broadcast_in_dim
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [] : (tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[SHAPE:.*]]: tensor<1xi64>)
func.func @reshape(%x: tensor<?x?xf32>, %shape: tensor<1xi64>) -> tensor<?xf32> {
  // CHECK: %[[R:.*]] = tensor.reshape %[[X]](%[[SHAPE]]) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  // CHECK-NEXT: return %[[R]] : tensor<?xf32>
  %0 = stablehlo.dynamic_reshape %x, %shape : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// Output position (i, j) reads x[n - 1 - i, 2 - j].
// CHECK-LABEL: func.func @reverse
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
func.func @reverse(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3xf32>
  // CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[INIT]] : tensor<?x3xf32>)
  // CHECK: %[[ONE:.*]] = arith.constant 1 : index
  // CHECK: %[[I:.*]] = linalg.index 0 : index
  // CHECK: %[[LAST:.*]] = arith.subi %[[N]], %[[ONE]] : index
  // CHECK: %[[RI:.*]] = arith.subi %[[LAST]], %[[I]] : index
  // CHECK: %[[J:.*]] = linalg.index 1 : index
  // CHECK: %[[THREE:.*]] = arith.constant 3 : index
  // CHECK: %[[LASTJ:.*]] = arith.subi %[[THREE]], %[[ONE]] : index
  // CHECK: %[[RJ:.*]] = arith.subi %[[LASTJ]], %[[J]] : index
  // CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[RI]], %[[RJ]]] : tensor<?x3xf32>
  // CHECK: linalg.yield %[[V]] : f32
  %0 = stablehlo.reverse %x, dims = [0, 1] : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// A static reverse is left to stablehlo-legalize-to-linalg.
// CHECK-LABEL: func.func @reverse_static
func.func @reverse_static(%x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: stablehlo.reverse
  %0 = stablehlo.reverse %x, dims = [0] : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// Result position (i, j) reads x[clamp(idx[i], 0, n - slice size 0), 0 + j]:
// the batch dim picks the start index, the offset dim steps in the slice.
// CHECK-LABEL: func.func @dynamic_gather
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>, %[[IDX:.*]]: tensor<?xi64>, %[[SIZES:.*]]: tensor<2xi64>)
func.func @dynamic_gather(%x: tensor<?x3xf32>, %idx: tensor<?xi64>, %sizes: tensor<2xi64>) -> tensor<?x3xf32> {
  // CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3xf32>
  // CHECK: %[[S0:.*]] = tensor.extract %[[SIZES]][%{{.*}}] : tensor<2xi64>
  // CHECK: %[[S0I:.*]] = arith.index_cast %[[S0]] : i64 to index
  // CHECK: %[[K:.*]] = tensor.dim %[[IDX]], %{{.*}} : tensor<?xi64>
  // CHECK: %[[MAXSTART:.*]] = arith.subi %[[N]], %[[S0I]] : index
  // CHECK: %[[INIT:.*]] = tensor.empty(%[[K]]) : tensor<?x3xf32>
  // CHECK: linalg.generic {indexing_maps = [#[[ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[INIT]] : tensor<?x3xf32>)
  // CHECK: %[[I:.*]] = linalg.index 0 : index
  // CHECK: %[[J:.*]] = linalg.index 1 : index
  // CHECK: %[[START:.*]] = tensor.extract %[[IDX]][%[[I]]] : tensor<?xi64>
  // CHECK: %[[STARTI:.*]] = arith.index_cast %[[START]] : i64 to index
  // CHECK: %[[LOW:.*]] = arith.minsi %[[STARTI]], %[[MAXSTART]] : index
  // CHECK: %[[ROW:.*]] = arith.maxsi %[[LOW]], %{{.*}} : index
  // CHECK: %[[COL:.*]] = arith.addi %{{.*}}, %[[J]] : index
  // CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<?x3xf32>
  // CHECK: linalg.yield %[[V]] : f32
  %0 = "stablehlo.dynamic_gather"(%x, %idx, %sizes) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<?x3xf32>, tensor<?xi64>, tensor<2xi64>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// A scan along axis 0: an scf.for carries the running row (starting at the
// identity) and the result; step i adds row i and inserts the sum.
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
func.func @cumsum(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3xf32>
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK: %[[ROW0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<3xf32>)
  // CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
  // CHECK: %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[CARRY:.*]] = %[[ROW0]], %[[OUT:.*]] = %[[INIT]])
  // CHECK: %[[ROW:.*]] = tensor.extract_slice %[[X]][%[[I]], 0] [1, 3] [1, 1] : tensor<?x3xf32> to tensor<3xf32>
  // CHECK: %[[NEXT:.*]] = linalg.generic {{.*}} ins(%[[ROW]] : tensor<3xf32>) outs(%[[CARRY]] : tensor<3xf32>)
  // CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
  // CHECK: arith.addf %[[ACC]], %[[IN]] : f32
  // CHECK: %[[INS:.*]] = tensor.insert_slice %[[NEXT]] into %[[OUT]][%[[I]], 0] [1, 3] [1, 1]
  // CHECK: scf.yield %[[NEXT]], %[[INS]]
  // CHECK: return %[[LOOP]]#1
  %0 = "kiln.scan"(%x) {combiner = "add", axis = 0 : i64, reverse = false} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// A reversed running maximum of a 1-D tensor reads element n - 1 - i and
// starts at the smallest i32, carried as a scalar (a 0-d tensor there would
// become a buffer allocated per element).
// CHECK-LABEL: func.func @cummax_reverse
// CHECK-SAME: (%[[X:.*]]: tensor<?xi32>)
func.func @cummax_reverse(%x: tensor<?xi32>) -> tensor<?xi32> {
  // CHECK: %[[SMALLEST:.*]] = arith.constant -2147483648 : i32
  // CHECK: %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<?xi32>
  // CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N:.*]] step %[[ONE:.*]] iter_args(%[[RUNNING:.*]] = %[[SMALLEST]], %[[PARTIAL:.*]] = %[[EMPTY]]) -> (i32, tensor<?xi32>)
  // CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[N]], %[[ONE]]
  // CHECK-NEXT: %[[POSITION:.*]] = arith.subi %[[LAST]], %[[I]]
  // CHECK-NEXT: %[[ELEMENT:.*]] = tensor.extract %[[X]][%[[POSITION]]] : tensor<?xi32>
  // CHECK-NEXT: %[[MAX:.*]] = arith.maxsi %[[RUNNING]], %[[ELEMENT]] : i32
  // CHECK-NEXT: %[[INSERTED:.*]] = tensor.insert %[[MAX]] into %[[PARTIAL]][%[[POSITION]]] : tensor<?xi32>
  // CHECK-NEXT: scf.yield %[[MAX]], %[[INSERTED]] : i32, tensor<?xi32>
  %0 = "kiln.scan"(%x) {combiner = "max", axis = 0 : i64, reverse = true} : (tensor<?xi32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// A scan along the last axis of a matrix: one scalar scan per row (a loop
// over rows carrying the result, then one along the row), so rows are read
// and written contiguously; no running column, no extract_slice.
// CHECK-LABEL: func.func @cumsum_rows
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf64>)
func.func @cumsum_rows(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  // CHECK-NOT: tensor.extract_slice
  // CHECK: %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf64>
  // CHECK: %[[ROWS:.*]] = scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %[[EMPTY]]) -> (tensor<?x?xf64>)
  // CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
  // CHECK: %[[ROW:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[RUNNING:.*]] = %[[ZERO]], %[[PARTIAL:.*]] = %[[OUT]]) -> (f64, tensor<?x?xf64>)
  // CHECK-NEXT: %[[ELEMENT:.*]] = tensor.extract %[[X]][%[[R]], %[[I]]] : tensor<?x?xf64>
  // CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[RUNNING]], %[[ELEMENT]] : f64
  // CHECK-NEXT: %[[INSERTED:.*]] = tensor.insert %[[SUM]] into %[[PARTIAL]][%[[R]], %[[I]]] : tensor<?x?xf64>
  // CHECK-NEXT: scf.yield %[[SUM]], %[[INSERTED]] : f64, tensor<?x?xf64>
  // CHECK: scf.yield %[[ROW]]#1 : tensor<?x?xf64>
  // CHECK: return %[[ROWS]]
  %0 = "kiln.scan"(%x) {combiner = "add", axis = 1 : i64, reverse = false} : (tensor<?x?xf64>) -> tensor<?x?xf64>
  return %0 : tensor<?x?xf64>
}

// The positions of a mask's true elements: the mask is viewed flat, one loop
// counts the true elements, a second stores position i at the next free slot
// of a tensor of exactly that size; the count comes back as a tensor<i64>.
// CHECK-LABEL: func.func @flatnonzero
// CHECK-SAME: (%[[MASK:.*]]: tensor<?x3xi1>)
func.func @flatnonzero(%mask: tensor<?x3xi1>) -> (tensor<i64>, tensor<?xi64>) {
  // CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[MASK]] {{\[\[}}0, 1]] : tensor<?x3xi1> into tensor<?xi1>
  // CHECK: %[[N:.*]] = tensor.dim %[[FLAT]], %{{.*}} : tensor<?xi1>
  // CHECK: %[[COUNT:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[SEEN:.*]] = %{{.*}}) -> (index)
  // CHECK: %[[BIT:.*]] = tensor.extract %[[FLAT]][%[[I]]] : tensor<?xi1>
  // CHECK: arith.extui %[[BIT]] : i1 to i64
  // CHECK: %[[OUT:.*]] = tensor.empty(%[[COUNT]]) : tensor<?xi64>
  // CHECK: %[[FILL:.*]]:2 = scf.for %[[J:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[SLOT:.*]] = %{{.*}}, %[[PART:.*]] = %[[OUT]]) -> (index, tensor<?xi64>)
  // CHECK: %[[TRUE:.*]] = tensor.extract %[[FLAT]][%[[J]]] : tensor<?xi1>
  // CHECK: scf.if %[[TRUE]] -> (index, tensor<?xi64>)
  // CHECK: %[[POS:.*]] = arith.index_cast %[[J]] : index to i64
  // CHECK: tensor.insert %[[POS]] into %[[PART]][%[[SLOT]]] : tensor<?xi64>
  // CHECK: } else {
  // CHECK: scf.yield %[[SLOT]], %[[PART]] : index, tensor<?xi64>
  // CHECK: %[[N64:.*]] = arith.index_cast %[[COUNT]] : index to i64
  // CHECK: %[[NT:.*]] = tensor.from_elements %[[N64]] : tensor<i64>
  // CHECK: return %[[NT]], %[[FILL]]#1
  %count, %positions = "kiln.flatnonzero"(%mask) : (tensor<?x3xi1>) -> (tensor<i64>, tensor<?xi64>)
  return %count, %positions : tensor<i64>, tensor<?xi64>
}

// An erf StableHLO lacks: one linalg.generic applying math.erf to each
// element, into a tensor of the operand's (dynamic) size.
// CHECK-LABEL: func.func @elementwise_erf
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf64>)
func.func @elementwise_erf(%x: tensor<?x3xf64>) -> tensor<?x3xf64> {
  // CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3xf64>
  // CHECK: %[[OUT:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf64>
  // CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<?x3xf64>) outs(%[[OUT]] : tensor<?x3xf64>)
  // CHECK: ^bb0(%[[IN:.*]]: f64, %{{.*}}: f64):
  // CHECK: %[[E:.*]] = math.erf %[[IN]] : f64
  // CHECK: linalg.yield %[[E]] : f64
  // CHECK-NOT: kiln.elementwise
  %y = "kiln.elementwise"(%x) {fn = "erf"} : (tensor<?x3xf64>) -> tensor<?x3xf64>
  return %y : tensor<?x3xf64>
}

// erfc on a 0-d f32 tensor: a rank-0 generic around math.erfc.
// CHECK-LABEL: func.func @elementwise_erfc_scalar
func.func @elementwise_erfc_scalar(%x: tensor<f32>) -> tensor<f32> {
  // CHECK: linalg.generic
  // CHECK: math.erfc %{{.*}} : f32
  %y = "kiln.elementwise"(%x) {fn = "erfc"} : (tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
