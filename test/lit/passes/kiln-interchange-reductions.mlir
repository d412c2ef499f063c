// RUN: kiln-opt %s -p kiln-interchange-reductions | filecheck %s

// A reduction along a leading axis (column sums) walked each column with a
// stride; with the reduction loop outside the contiguous parallel loop the
// inner loop runs along the contiguous axis. A parallel loop every input
// indexes ahead of the reduced axes stays outermost. Maps are renumbered,
// the body (linalg.index included) keeps its meaning.

#id2 = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
#id2r = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#out3 = affine_map<(d0, d1) -> (d0)>
#keep3 = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[IN3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT3:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, 0)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (0, 0, 0, d3, d4)>
// CHECK-DAG: #[[ACC:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4)>
// CHECK-DAG: #[[T3OUT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>

// CHECK-LABEL: func.func @column_sums
func.func @column_sums(%x: tensor<?x?xf64>, %init: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["reduction", "parallel"]}
  // CHECK: arith.addf
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf64>) outs(%init : tensor<?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %s = arith.addf %out, %in : f64
    linalg.yield %s : f64
  } -> tensor<?xf64>
  return %r : tensor<?xf64>
}

// An argmin along axis 0 with the position read by linalg.index: the index
// op follows its loop (old d1, the reduction, is now d0).
// CHECK-LABEL: func.func @argmin_axis0
func.func @argmin_axis0(%x: tensor<?x?xf32>, %v: tensor<?xf32>, %i: tensor<?xi64>) -> (tensor<?xf32>, tensor<?xi64>) {
  // CHECK: iterator_types = ["reduction", "parallel"]
  // CHECK: %[[K:.*]] = linalg.index 0 : index
  // CHECK: arith.index_cast %[[K]]
  %r:2 = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%v, %i : tensor<?xf32>, tensor<?xi64>) {
  ^bb0(%in: f32, %bv: f32, %bi: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %lt = arith.cmpf olt, %in, %bv : f32
    %nv = arith.select %lt, %in, %bv : f32
    %ni = arith.select %lt, %ki, %bi : i64
    linalg.yield %nv, %ni : f32, i64
  } -> (tensor<?xf32>, tensor<?xi64>)
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xi64>
}

// Three loops, the middle axis of x[a, r, c] reduced (d0 = a, d1 = c
// parallel; d2 = r reduction): a is ahead of r in x, so it stays outside
// (a; r; c): x is read in its memory order, one row of sums at a time.
// CHECK-LABEL: func.func @middle_axis
func.func @middle_axis(%x: tensor<?x?x?xf64>, %init: tensor<?x?xf64>) -> tensor<?x?xf64> {
  // CHECK: linalg.generic {indexing_maps = [#[[IN3]], #[[OUT3]]], iterator_types = ["parallel", "reduction", "parallel"]}
  %r = linalg.generic {indexing_maps = [#id3, #keep3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<?x?x?xf64>) outs(%init : tensor<?x?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %s = arith.addf %out, %in : f64
    linalg.yield %s : f64
  } -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

// The window sum of a NumPy convolution, `np.sum(x[:, i:i+K, j:j+K, :, None]
// * w[None], axis=(1, 2, 3))` as stablehlo-legalize-to-linalg leaves it:
// (n, co parallel; kh, kw, ci reductions). The batch n comes first in the
// window, so it stays outermost; co (w's contiguous axis) goes innermost:
// (n; kh, kw, ci; co).
#win = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4, 0)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (0, 0, 0, d4, d1)>
#acc = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
// CHECK-LABEL: func.func @convolution_window
func.func @convolution_window(%x: tensor<?x?x?x?x1xf32>, %w: tensor<1x1x1x?x?xf32>, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // CHECK: linalg.generic {indexing_maps = [#[[WIN]], #[[W]], #[[ACC]]], iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel"]}
  %r = linalg.generic {indexing_maps = [#win, #w, #acc], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<?x?x?x?x1xf32>, tensor<1x1x1x?x?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// x[r, b, c] summed over its leading axis: b comes after r in x, so it
// does not stay outside (r; b, c), as for column sums.
#t3 = affine_map<(d0, d1, d2) -> (d2, d0, d1)>
// CHECK-LABEL: func.func @leading_axis_3d
func.func @leading_axis_3d(%x: tensor<?x?x?xf64>, %init: tensor<?x?xf64>) -> tensor<?x?xf64> {
  // CHECK: linalg.generic {indexing_maps = [#[[IN3]], #[[T3OUT]]], iterator_types = ["reduction", "parallel", "parallel"]}
  %r = linalg.generic {indexing_maps = [#t3, #keep3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<?x?x?xf64>) outs(%init : tensor<?x?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %s = arith.addf %out, %in : f64
    linalg.yield %s : f64
  } -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

// Left alone: row sums (the innermost loop already runs along the
// contiguous axis) and an all-parallel op.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%x: tensor<?x?xf64>, %init: tensor<?xf64>, %y: tensor<?x?xf64>) -> (tensor<?xf64>, tensor<?x?xf64>) {
  // CHECK: iterator_types = ["parallel", "reduction"]
  %r = linalg.generic {indexing_maps = [#id2r, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf64>) outs(%init : tensor<?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %s = arith.addf %out, %in : f64
    linalg.yield %s : f64
  } -> tensor<?xf64>
  // CHECK: iterator_types = ["parallel", "parallel"]
  %c = linalg.generic {indexing_maps = [#id2, #id2r], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf64>) outs(%y : tensor<?x?xf64>) {
  ^bb0(%in: f64, %out: f64):
    linalg.yield %in : f64
  } -> tensor<?x?xf64>
  return %r, %c : tensor<?xf64>, tensor<?x?xf64>
}
