// RUN: kiln-opt %s -p kiln-block-sums | filecheck %s
// RUN: kiln-opt %s -p 'kiln-block-sums{block=32}' | filecheck %s --check-prefix=SMALL

// A long float sum becomes: block sums over a view of the first m * block
// elements (extract_slice at offset 0, expand_shape into (m, block): no
// copy), the original loop over the rest, and the block sums added onto it.

#vec = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all2 = affine_map<(d0, d1) -> ()>

// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[VEC:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @sum_f32
func.func @sum_f32(%x: tensor<?xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // CHECK: %[[N:.*]] = tensor.dim %[[X:.*]], %{{.*}} : tensor<?xf32>
  // CHECK: %[[M:.*]] = arith.divsi %[[N]], %[[B:.*]] : index
  // CHECK: %[[HEAD:.*]] = arith.muli %[[M]], %[[B]] : index
  // CHECK: %[[REST:.*]] = arith.subi %[[N]], %[[HEAD]] : index
  // CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[X]][0] [%[[HEAD]]] [1] : tensor<?xf32> to tensor<?xf32>
  // CHECK: %[[VIEW:.*]] = tensor.expand_shape %[[FIRST]] {{\[\[}}0, 1]] output_shape [%[[M]], 4096] : tensor<?xf32> into tensor<?x4096xf32>
  // SMALL: tensor.expand_shape {{.*}} output_shape [%{{.*}}, 32] : tensor<?xf32> into tensor<?x32xf32>
  // CHECK: %[[PINIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?xf32>)
  // CHECK: %[[PARTIAL:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[VIEW]] : tensor<?x4096xf32>) outs(%[[PINIT]] : tensor<?xf32>)
  // CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
  // CHECK: %[[LAST:.*]] = tensor.extract_slice %[[X]][%[[HEAD]]] [%[[REST]]] [1]
  // CHECK: %[[TAIL:.*]] = linalg.generic {indexing_maps = [#[[VEC]], #[[SCALAR]]], iterator_types = ["reduction"]} ins(%[[LAST]] : tensor<?xf32>) outs(%{{.*}} : tensor<f32>)
  // CHECK: %[[TOTAL:.*]] = linalg.generic {indexing_maps = [#[[VEC]], #[[SCALAR]]], iterator_types = ["reduction"]} ins(%[[PARTIAL]] : tensor<?xf32>) outs(%[[TAIL]] : tensor<f32>)
  // CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,contract> : f32
  // CHECK: return %[[TOTAL]]
  %r = linalg.generic {indexing_maps = [#vec, #scalar], iterator_types = ["reduction"]}
      ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Row sums of a fused body (the squares): the summed axis of the input is
// split, the row axis kept; the partial sums are (rows, m).
// CHECK-LABEL: func.func @row_sums_of_squares
func.func @row_sums_of_squares(%x: tensor<?x?xf64>, %init: tensor<?xf64>) -> tensor<?xf64> {
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [%{{.*}}, %{{.*}}, 4096] : tensor<?x?xf64> into tensor<?x?x4096xf64>
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<?x?xf64>)
  // CHECK: arith.mulf
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<?xf64>)
  // CHECK: arith.mulf
  // CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<?x?xf64>) outs(%{{.*}} : tensor<?xf64>)
  %r = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf64>) outs(%init : tensor<?xf64>) {
  ^bb0(%in: f64, %out: f64):
    %sq = arith.mulf %in, %in : f64
    %s = arith.addf %out, %sq fastmath<reassoc,contract> : f64
    linalg.yield %s : f64
  } -> tensor<?xf64>
  return %r : tensor<?xf64>
}

// A sum over both axes: row sums (themselves blocked), then their sum.
// CHECK-LABEL: func.func @sum_all_2d
func.func @sum_all_2d(%x: tensor<?x?xf32>, %init: tensor<f32>) -> tensor<f32> {
  // CHECK: tensor.expand_shape {{.*}} : tensor<?x?xf32> into tensor<?x?x4096xf32>
  // CHECK: %[[PARTS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<?x?xf32>)
  // CHECK: %[[TAILS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<?xf32>)
  // CHECK: %[[ROWS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[PARTS]] : tensor<?x?xf32>) outs(%[[TAILS]] : tensor<?xf32>)
  // CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[ROWS]] : tensor<?xf32>) outs(%{{.*}} : tensor<f32>)
  %r = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in fastmath<reassoc,contract> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Left alone: a short static sum (fewer than two blocks; blocked with
// block=32), a max, an integer sum, a body reading linalg.index, and a
// sum over the first loop (column sums).
// CHECK-LABEL: func.func @left_alone
// SMALL-LABEL: func.func @left_alone
func.func @left_alone(%s: tensor<100xf32>, %x: tensor<?xf32>, %i: tensor<?xi64>, %m: tensor<?x?xf32>,
                      %init: tensor<f32>, %iinit: tensor<i64>, %cinit: tensor<?xf32>)
    -> (tensor<f32>, tensor<f32>, tensor<i64>, tensor<f32>, tensor<?xf32>) {
  // CHECK-NOT: tensor.expand_shape
  // SMALL: tensor.expand_shape {{.*}} : tensor<?xf32> into tensor<?x32xf32>
  // SMALL-NOT: tensor.expand_shape
  %a = linalg.generic {indexing_maps = [#vec, #scalar], iterator_types = ["reduction"]}
      ins(%s : tensor<100xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %out, %in fastmath<reassoc,contract> : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %b = linalg.generic {indexing_maps = [#vec, #scalar], iterator_types = ["reduction"]}
      ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.maximumf %out, %in : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %c = linalg.generic {indexing_maps = [#vec, #scalar], iterator_types = ["reduction"]}
      ins(%i : tensor<?xi64>) outs(%iinit : tensor<i64>) {
  ^bb0(%in: i64, %out: i64):
    %t = arith.addi %out, %in : i64
    linalg.yield %t : i64
  } -> tensor<i64>
  %d = linalg.generic {indexing_maps = [#vec, #scalar], iterator_types = ["reduction"]}
      ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %k = linalg.index 0 : index
    %ki = arith.index_cast %k : index to i64
    %kf = arith.sitofp %ki : i64 to f32
    %w = arith.mulf %in, %kf : f32
    %t = arith.addf %out, %w fastmath<reassoc,contract> : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %e = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%m : tensor<?x?xf32>) outs(%cinit : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.addf %out, %in fastmath<reassoc,contract> : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %a, %b, %c, %d, %e : tensor<f32>, tensor<f32>, tensor<i64>, tensor<f32>, tensor<?xf32>
}
