// RUN: kiln-opt %s -p kiln-reassociate-reductions | filecheck %s

// The float combiner of a reduction gets reassoc (so it vectorizes);
// elementwise ops, max reductions and parallel-only generics keep strict math.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @row_sum
func.func @row_sum(%x: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    // CHECK: %[[SQ:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
    // CHECK-NEXT: arith.addf %{{.*}}, %[[SQ]] fastmath<reassoc,contract> : f32
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %out, %sq : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// CHECK-LABEL: func.func @row_max
func.func @row_max(%x: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    // CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<?x?xf32>, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    // CHECK: arith.addf %{{.*}}, %{{.*}} : f32
    // CHECK-NOT: fastmath
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
