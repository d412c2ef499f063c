// RUN: kiln-opt %s -p kiln-simplify-shapes | filecheck %s
// RUN: kiln-opt %s -p kiln-simplify-shapes,canonicalize,cse | filecheck %s --check-prefix=CANON

// Shape arithmetic as stablehlo-legalize-to-linalg leaves it: small static
// integer generics become one scalar computation per element
// (tensor.from_elements), reshapes that only add or drop unit dims become
// collapse_shape / expand_shape, and constants read through static views
// fold. The CANON run (canonicalize, cse after the pass, as in the
// pipeline) shows what the scalarized bodies fold to.

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
#first = affine_map<(d0) -> (0)>
#rev = affine_map<(d0) -> (1 - d0)>

// ---------------------------------------------------------------------------
// Scalarization

// The lowering of `stablehlo.concatenate` of two 1-element shape vectors:
// the body is cloned once per element with linalg.index replaced by the
// constant position (0, then 1; CANON shows the scf.ifs folding to the
// right scalars).
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:[^:]*]]: i64, %[[B:[^:]*]]: i64)
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.index
// CHECK: %[[X:.*]] = tensor.from_elements %[[A]] : tensor<1xi64>
// CHECK: %[[Y:.*]] = tensor.from_elements %[[B]] : tensor<1xi64>
// CHECK: %[[LT0:.*]] = arith.cmpi ult, %[[P0:[^,]*]], %{{.*}} : index
// CHECK: %[[E0:.*]] = scf.if %[[LT0]] -> (i64) {
// CHECK:   tensor.extract %[[X]][%[[P0]]] : tensor<1xi64>
// CHECK: } else {
// CHECK:   %[[J0:.*]] = arith.subi %[[P0]], %{{.*}} : index
// CHECK:   tensor.extract %[[Y]][%[[J0]]] : tensor<1xi64>
// CHECK: }
// CHECK: %[[LT1:.*]] = arith.cmpi ult, %[[P1:[^,]*]], %{{.*}} : index
// CHECK: %[[E1:.*]] = scf.if %[[LT1]] -> (i64) {
// CHECK:   tensor.extract %[[X]][%[[P1]]] : tensor<1xi64>
// CHECK: } else {
// CHECK:   %[[J1:.*]] = arith.subi %[[P1]], %{{.*}} : index
// CHECK:   tensor.extract %[[Y]][%[[J1]]] : tensor<1xi64>
// CHECK: }
// CHECK: %[[R:.*]] = tensor.from_elements %[[E0]], %[[E1]] : tensor<2xi64>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]] : tensor<2xi64>
// CANON-LABEL: func.func @concat
// CANON-SAME: (%[[A:[^:]*]]: i64, %[[B:[^:]*]]: i64)
// CANON-NEXT: %[[R:.*]] = tensor.from_elements %[[A]], %[[B]] : tensor<2xi64>
// CANON-NEXT: return %[[R]] : tensor<2xi64>
func.func @concat(%a: i64, %b: i64) -> tensor<2xi64> {
  %c1 = arith.constant 1 : index
  %x = tensor.from_elements %a : tensor<1xi64>
  %y = tensor.from_elements %b : tensor<1xi64>
  %e = tensor.empty() : tensor<2xi64>
  %r = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%e : tensor<2xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %lt = arith.cmpi ult, %i, %c1 : index
    %v = scf.if %lt -> (i64) {
      %xi = tensor.extract %x[%i] : tensor<1xi64>
      scf.yield %xi : i64
    } else {
      %j = arith.subi %i, %c1 : index
      %yj = tensor.extract %y[%j] : tensor<1xi64>
      scf.yield %yj : i64
    }
    linalg.yield %v : i64
  } -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// Inputs are read at each element's position through their maps (here a
// constant map: every element reads s[0]).
// CHECK-LABEL: func.func @add_first
// CHECK-SAME: (%[[S:[^:]*]]: tensor<2xi64>)
// CHECK-NOT: linalg.generic
// CHECK: %[[V0:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: %[[V1:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: %[[R:.*]] = tensor.from_elements %[[V0]], %[[V1]] : tensor<2xi64>
// CHECK: return %[[R]]
// CANON-LABEL: func.func @add_first
// CANON-SAME: (%[[S:[^:]*]]: tensor<2xi64>)
// CANON-DAG: %[[C0:.*]] = arith.constant 0 : index
// CANON-DAG: %[[C1:.*]] = arith.constant 1 : index
// CANON-DAG: %[[S0:.*]] = tensor.extract %[[S]][%[[C0]]] : tensor<2xi64>
// CANON-DAG: %[[S1:.*]] = tensor.extract %[[S]][%[[C1]]] : tensor<2xi64>
// CANON-DAG: %[[V0:.*]] = arith.addi %[[S0]], %[[S0]] : i64
// CANON-DAG: %[[V1:.*]] = arith.addi %[[S1]], %[[S0]] : i64
// CANON: %[[R:.*]] = tensor.from_elements %[[V0]], %[[V1]] : tensor<2xi64>
// CANON-NEXT: return %[[R]]
func.func @add_first(%s: tensor<2xi64>) -> tensor<2xi64> {
  %e = tensor.empty() : tensor<2xi64>
  %r = linalg.generic {indexing_maps = [#id1, #first, #id1], iterator_types = ["parallel"]}
      ins(%s, %s : tensor<2xi64>, tensor<2xi64>) outs(%e : tensor<2xi64>) {
  ^bb0(%p: i64, %q: i64, %out: i64):
    %v = arith.addi %p, %q : i64
    linalg.yield %v : i64
  } -> tensor<2xi64>
  return %r : tensor<2xi64>
}

// Two dims, a transposed input, linalg.index of dim 1 and two results (one
// of them i1): out[i][j] = s[j][i] * j and out[i][j] > s[j][i], elements in
// row-major order.
// CHECK-LABEL: func.func @grid
// CHECK-NOT: linalg.generic
// CHECK: tensor.from_elements {{.*}} : tensor<3x2xi32>
// CHECK: tensor.from_elements {{.*}} : tensor<3x2xi1>
// CANON-LABEL: func.func @grid
// CANON-SAME: (%[[S:[^:]*]]: tensor<2x3xi32>)
// CANON-DAG: %[[FALSE:.*]] = arith.constant false
// CANON-DAG: %[[Z:.*]] = arith.constant 0 : i32
// CANON-DAG: %[[C0:.*]] = arith.constant 0 : index
// CANON-DAG: %[[C1:.*]] = arith.constant 1 : index
// CANON-DAG: %[[C2:.*]] = arith.constant 2 : index
// CANON-DAG: %[[S00:.*]] = tensor.extract %[[S]][%[[C0]], %[[C0]]] : tensor<2x3xi32>
// CANON-DAG: %[[S10:.*]] = tensor.extract %[[S]][%[[C1]], %[[C0]]] : tensor<2x3xi32>
// CANON-DAG: %[[S01:.*]] = tensor.extract %[[S]][%[[C0]], %[[C1]]] : tensor<2x3xi32>
// CANON-DAG: %[[S11:.*]] = tensor.extract %[[S]][%[[C1]], %[[C1]]] : tensor<2x3xi32>
// CANON-DAG: %[[S02:.*]] = tensor.extract %[[S]][%[[C0]], %[[C2]]] : tensor<2x3xi32>
// CANON-DAG: %[[S12:.*]] = tensor.extract %[[S]][%[[C1]], %[[C2]]] : tensor<2x3xi32>
// CANON-DAG: %[[N0:.*]] = arith.cmpi slt, %[[S00]], %[[Z]] : i32
// CANON-DAG: %[[N1:.*]] = arith.cmpi slt, %[[S01]], %[[Z]] : i32
// CANON-DAG: %[[N2:.*]] = arith.cmpi slt, %[[S02]], %[[Z]] : i32
// CANON: %[[V:.*]] = tensor.from_elements %[[Z]], %[[S10]], %[[Z]], %[[S11]], %[[Z]], %[[S12]] : tensor<3x2xi32>
// CANON: %[[G:.*]] = tensor.from_elements %[[N0]], %[[FALSE]], %[[N1]], %[[FALSE]], %[[N2]], %[[FALSE]] : tensor<3x2xi1>
// CANON: return %[[V]], %[[G]]
func.func @grid(%s: tensor<2x3xi32>) -> (tensor<3x2xi32>, tensor<3x2xi1>) {
  %e = tensor.empty() : tensor<3x2xi32>
  %f = tensor.empty() : tensor<3x2xi1>
  %r:2 = linalg.generic {indexing_maps = [#swap, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<2x3xi32>) outs(%e, %f : tensor<3x2xi32>, tensor<3x2xi1>) {
  ^bb0(%p: i32, %o: i32, %o2: i1):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i32
    %v = arith.muli %p, %jj : i32
    %c = arith.cmpi sgt, %v, %p : i32
    linalg.yield %v, %c : i32, i1
  } -> (tensor<3x2xi32>, tensor<3x2xi1>)
  return %r#0, %r#1 : tensor<3x2xi32>, tensor<3x2xi1>
}

// Left as generics: an input map that is not a dim or a constant, more than
// 16 elements, a float result, a reduction, a dynamic shape, and a body
// with a call.
// CHECK-LABEL: func.func @not_scalarized
// CHECK-NOT: tensor.from_elements
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT: tensor.from_elements
// CHECK: return
func.func @not_scalarized(%s: tensor<2xi64>, %big: tensor<17xi64>, %f: tensor<2xf64>, %d: tensor<?xi64>)
    -> (tensor<2xi64>, tensor<17xi64>, tensor<2xf64>, tensor<i64>, tensor<?xi64>, tensor<2xi64>) {
  %e = tensor.empty() : tensor<2xi64>
  %rev = linalg.generic {indexing_maps = [#rev, #id1], iterator_types = ["parallel"]}
      ins(%s : tensor<2xi64>) outs(%e : tensor<2xi64>) {
  ^bb0(%p: i64, %o: i64):
    linalg.yield %p : i64
  } -> tensor<2xi64>
  %e17 = tensor.empty() : tensor<17xi64>
  %b = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%big : tensor<17xi64>) outs(%e17 : tensor<17xi64>) {
  ^bb0(%p: i64, %o: i64):
    %v = arith.addi %p, %p : i64
    linalg.yield %v : i64
  } -> tensor<17xi64>
  %ef = tensor.empty() : tensor<2xf64>
  %fl = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%f : tensor<2xf64>) outs(%ef : tensor<2xf64>) {
  ^bb0(%p: f64, %o: f64):
    %v = arith.addf %p, %p : f64
    linalg.yield %v : f64
  } -> tensor<2xf64>
  %z = arith.constant dense<0> : tensor<i64>
  %sum = linalg.generic {indexing_maps = [#id1, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%s : tensor<2xi64>) outs(%z : tensor<i64>) {
  ^bb0(%p: i64, %o: i64):
    %v = arith.addi %p, %o : i64
    linalg.yield %v : i64
  } -> tensor<i64>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %d, %c0 : tensor<?xi64>
  %ed = tensor.empty(%n) : tensor<?xi64>
  %dy = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%d : tensor<?xi64>) outs(%ed : tensor<?xi64>) {
  ^bb0(%p: i64, %o: i64):
    %v = arith.addi %p, %p : i64
    linalg.yield %v : i64
  } -> tensor<?xi64>
  %call = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s : tensor<2xi64>) outs(%e : tensor<2xi64>) {
  ^bb0(%p: i64, %o: i64):
    %v = func.call @opaque(%p) : (i64) -> i64
    linalg.yield %v : i64
  } -> tensor<2xi64>
  return %rev, %b, %fl, %sum, %dy, %call : tensor<2xi64>, tensor<17xi64>, tensor<2xf64>, tensor<i64>, tensor<?xi64>, tensor<2xi64>
}
func.func private @opaque(i64) -> i64

// ---------------------------------------------------------------------------
// Reshapes

// [1, dim 0, dim 1] (as i64): a unit dim added in front.
// CHECK-LABEL: func.func @add_unit_dim
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?xf32>)
// CHECK-NOT: tensor.reshape
// CHECK: %[[R:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [1, %{{.*}}, %{{.*}}] : tensor<?x?xf32> into tensor<1x?x?xf32>
// CHECK-NOT: tensor.reshape
// CHECK: return %[[R]] : tensor<1x?x?xf32>
// The sizes of the expanded dims are x's dims 0 and 1.
// CANON-LABEL: func.func @add_unit_dim
// CANON-SAME: (%[[X:[^:]*]]: tensor<?x?xf32>)
// CANON-DAG: %[[C0:.*]] = arith.constant 0 : index
// CANON-DAG: %[[C1:.*]] = arith.constant 1 : index
// CANON-DAG: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x?xf32>
// CANON-DAG: %[[D1:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<?x?xf32>
// CANON: %[[R:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [1, %[[D0]], %[[D1]]] : tensor<?x?xf32> into tensor<1x?x?xf32>
// CANON-NEXT: return %[[R]] : tensor<1x?x?xf32>
func.func @add_unit_dim(%x: tensor<?x?xf32>) -> tensor<1x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %i0 = arith.index_cast %d0 : index to i64
  %i1 = arith.index_cast %d1 : index to i64
  %s = tensor.from_elements %one, %i0, %i1 : tensor<3xi64>
  %r = tensor.reshape %x(%s) : (tensor<?x?xf32>, tensor<3xi64>) -> tensor<1x?x?xf32>
  return %r : tensor<1x?x?xf32>
}

// [dim 1, dim 3] (as index): two unit dims dropped, each folded into the
// kept dim after it or before it.
// CHECK-LABEL: func.func @drop_unit_dims
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x?x1x?xf32>)
// CHECK-NOT: tensor.reshape
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2], [3]] : tensor<1x?x1x?xf32> into tensor<?x?xf32>
// CHECK-NOT: tensor.reshape
// CHECK: return %[[R]] : tensor<?x?xf32>
func.func @drop_unit_dims(%x: tensor<1x?x1x?xf32>) -> tensor<?x?xf32> {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %x, %c1 : tensor<1x?x1x?xf32>
  %d3 = tensor.dim %x, %c3 : tensor<1x?x1x?xf32>
  %s = tensor.from_elements %d1, %d3 : tensor<2xindex>
  %r = tensor.reshape %x(%s) : (tensor<1x?x1x?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// ?x1x3 -> ?x3x1 with [dim 0, 3, 1]: the unit dim moves, so collapse then
// expand (static dims match by value).
// CHECK-LABEL: func.func @move_unit_dim
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x1x3xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x1x3xf32> into tensor<?x3xf32>
// CHECK: %[[D:.*]] = tensor.dim %[[C]], %{{.*}} : tensor<?x3xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[C]] {{\[}}[0], [1, 2]] output_shape [%[[D]], 3, 1] : tensor<?x3xf32> into tensor<?x3x1xf32>
// CHECK-NOT: tensor.reshape
// CHECK: return %[[R]] : tensor<?x3x1xf32>
func.func @move_unit_dim(%x: tensor<?x1x3xf32>) -> tensor<?x3x1xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i64
  %three = arith.constant 3 : i64
  %d0 = tensor.dim %x, %c0 : tensor<?x1x3xf32>
  %i0 = arith.index_cast %d0 : index to i64
  %s = tensor.from_elements %i0, %three, %one : tensor<3xi64>
  %r = tensor.reshape %x(%s) : (tensor<?x1x3xf32>, tensor<3xi64>) -> tensor<?x3x1xf32>
  return %r : tensor<?x3x1xf32>
}

// The source's own dims in order: the reshape is the source itself.
// CHECK-LABEL: func.func @same_shape
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?xf32>)
// CHECK-NOT: tensor.reshape
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[X]] : tensor<?x?xf32>
func.func @same_shape(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %s = tensor.from_elements %d0, %d1 : tensor<2xindex>
  %r = tensor.reshape %x(%s) : (tensor<?x?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// A slice's dynamic size is known by the value it was sliced with.
// CHECK-LABEL: func.func @slice_size
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?xf32>, %[[N:[^:]*]]: index)
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 2] [%[[N]], 1] [1, 1] : tensor<?x?xf32> to tensor<?x1xf32>
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
// CHECK-NOT: tensor.reshape
// CHECK: return %[[R]] : tensor<?xf32>
func.func @slice_size(%x: tensor<?x?xf32>, %n: index) -> tensor<?xf32> {
  %sl = tensor.extract_slice %x[0, 2] [%n, 1] [1, 1] : tensor<?x?xf32> to tensor<?x1xf32>
  %i = arith.index_cast %n : index to i64
  %s = tensor.from_elements %i : tensor<1xi64>
  %v = tensor.reshape %sl(%s) : (tensor<?x1xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %v : tensor<?xf32>
}

// Real reshapes stay: the dims swapped (?x? -> ?x? as [dim 1, dim 0]),
// sizes from elsewhere, a flattening, a flattening with a unit dim added,
// and a shape operand that is not a tensor.from_elements.
// CHECK-LABEL: func.func @real_reshapes
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?xf32>, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[SHAPE:[^:]*]]: tensor<2xi64>)
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[SWAPPED:.*]] = tensor.from_elements %[[I1:.*]], %[[I0:.*]] : tensor<2xi64>
// CHECK: %[[A:.*]] = tensor.reshape %[[X]](%[[SWAPPED]]) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK: %[[B:.*]] = tensor.reshape %[[X]](%{{.*}}) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK: %[[C:.*]] = tensor.reshape %[[X]](%{{.*}}) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
// CHECK: %[[D:.*]] = tensor.reshape %[[X]](%{{.*}}) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<1x?xf32>
// CHECK: %[[E:.*]] = tensor.reshape %[[X]](%[[SHAPE]]) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
func.func @real_reshapes(%x: tensor<?x?xf32>, %n: i64, %m: i64, %shape: tensor<2xi64>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<1x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %i0 = arith.index_cast %d0 : index to i64
  %i1 = arith.index_cast %d1 : index to i64
  %swapped = tensor.from_elements %i1, %i0 : tensor<2xi64>
  %a = tensor.reshape %x(%swapped) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %other = tensor.from_elements %n, %m : tensor<2xi64>
  %b = tensor.reshape %x(%other) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %p = arith.muli %i0, %i1 : i64
  %flat = tensor.from_elements %p : tensor<1xi64>
  %c = tensor.reshape %x(%flat) : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %one = arith.constant 1 : i64
  %s3 = tensor.from_elements %one, %p : tensor<2xi64>
  %d = tensor.reshape %x(%s3) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<1x?xf32>
  %e = tensor.reshape %x(%shape) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %a, %b, %c, %d, %e : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<1x?xf32>, tensor<?x?xf32>
}

// ---------------------------------------------------------------------------
// Constants

// cst = [[10, 11, 12], [13, 14, 15]], read at constant indices through
// static views:
// - slice [1, 1..2] = [[14, 15]], collapsed to [14, 15], element 1: 15;
// - cst flattened, expanded to 3x2, element [2, 0] (flat 4): 14;
// - slice with stride 2 = [[10, 12], [13, 15]], element [1, 1]: 15;
// - a splat, sliced: 7 (i32); an index constant, sliced: 5.
// A dynamic index and a rank-reducing slice are not followed.
// CHECK-LABEL: func.func @constants
// CHECK-SAME: (%[[I:[^:]*]]: index)
// CHECK-DAG: %[[C15:.*]] = arith.constant 15 : i64
// CHECK-DAG: %[[C14:.*]] = arith.constant 14 : i64
// CHECK-DAG: %[[C15B:.*]] = arith.constant 15 : i64
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : i32
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x2xi64> into tensor<2xi64>
// CHECK-DAG: %[[DYN:.*]] = tensor.extract %[[F]][%[[I]]] : tensor<2xi64>
// CHECK-DAG: %[[ROW:.*]] = tensor.extract_slice %{{.*}}[1, 0] [1, 3] [1, 1] : tensor<2x3xi64> to tensor<3xi64>
// CHECK-DAG: %[[G:.*]] = tensor.extract %[[ROW]][%{{.*}}] : tensor<3xi64>
// CHECK: return %[[C15]], %[[C14]], %[[C15B]], %[[DYN]], %[[C7]], %[[C5]], %[[G]] : i64, i64, i64, i64, i32, index, i64
func.func @constants(%i: index) -> (i64, i64, i64, i64, i32, index, i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cst = arith.constant dense<[[10, 11, 12], [13, 14, 15]]> : tensor<2x3xi64>
  %s = tensor.extract_slice %cst[1, 1] [1, 2] [1, 1] : tensor<2x3xi64> to tensor<1x2xi64>
  %f = tensor.collapse_shape %s [[0, 1]] : tensor<1x2xi64> into tensor<2xi64>
  %a = tensor.extract %f[%c1] : tensor<2xi64>
  %flat = tensor.collapse_shape %cst [[0, 1]] : tensor<2x3xi64> into tensor<6xi64>
  %e = tensor.expand_shape %flat [[0, 1]] output_shape [3, 2] : tensor<6xi64> into tensor<3x2xi64>
  %b = tensor.extract %e[%c2, %c0] : tensor<3x2xi64>
  %st = tensor.extract_slice %cst[0, 0] [2, 2] [1, 2] : tensor<2x3xi64> to tensor<2x2xi64>
  %c = tensor.extract %st[%c1, %c1] : tensor<2x2xi64>
  %d = tensor.extract %f[%i] : tensor<2xi64>
  %sp = arith.constant dense<7> : tensor<4xi32>
  %sps = tensor.extract_slice %sp[1] [2] [1] : tensor<4xi32> to tensor<2xi32>
  %e2 = tensor.extract %sps[%c1] : tensor<2xi32>
  %ci = arith.constant dense<[4, 5]> : tensor<2xindex>
  %si = tensor.extract_slice %ci[1] [1] [1] : tensor<2xindex> to tensor<1xindex>
  %h = tensor.extract %si[%c0] : tensor<1xindex>
  %rr = tensor.extract_slice %cst[1, 0] [1, 3] [1, 1] : tensor<2x3xi64> to tensor<3xi64>
  %g = tensor.extract %rr[%c2] : tensor<3xi64>
  return %a, %b, %c, %d, %e2, %h, %g : i64, i64, i64, i64, i32, index, i64
}
