// RUN: kiln-opt %s -p kiln-elementwise-in-place | filecheck %s

// An elementwise generic writes into a dead input of its own type instead
// of a fresh tensor.empty, so bufferization updates that buffer in place.

#id = affine_map<(d0) -> (d0)>

// A loop-carried value: the update overwrites the carried buffer.
// CHECK-LABEL: func.func @carried
func.func @carried(%a: tensor<?xf64>, %x0: tensor<?xf64>, %n: index) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for {{.*}} iter_args(%[[X:.*]] = %{{.*}})
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %x0) -> tensor<?xf64> {
    %d = tensor.dim %x, %c0 : tensor<?xf64>
    %e = tensor.empty(%d) : tensor<?xf64>
    // CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[X]] : tensor<?xf64>, tensor<?xf64>) outs(%[[X]] : tensor<?xf64>)
    %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %x : tensor<?xf64>, tensor<?xf64>) outs(%e : tensor<?xf64>) {
    ^bb0(%ai: f64, %xi: f64, %out: f64):
      %q = arith.divf %ai, %xi : f64
      linalg.yield %q : f64
    } -> tensor<?xf64>
    scf.yield %y : tensor<?xf64>
  }
  return %r : tensor<?xf64>
}

// Function arguments, inputs used again later, and values defined outside
// the generic's block keep their fresh output.
// CHECK-LABEL: func.func @kept
func.func @kept(%a: tensor<?xf64>, %n: index) -> (tensor<?xf64>, tensor<?xf64>) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %a, %c0 : tensor<?xf64>
  %e = tensor.empty(%d) : tensor<?xf64>
  // CHECK: %[[EMPTY:.*]] = tensor.empty
  // CHECK: linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<?xf64>)
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%ai: f64, %out: f64):
    %q = arith.addf %ai, %ai : f64
    linalg.yield %q : f64
  } -> tensor<?xf64>
  // CHECK: linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<?xf64>)
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%bi: f64, %out: f64):
    %q = arith.mulf %bi, %bi : f64
    linalg.yield %q : f64
  } -> tensor<?xf64>
  return %b, %c : tensor<?xf64>, tensor<?xf64>
}

// A slice of a tensor that another op reads too (hdiff: `lap[1:] - lap[:-1]`
// and, in the next statement, `lap[:, 1:]`) is not overwritten: bufferization
// would first copy the slice. A slice of a tensor read by nothing else is.
// CHECK-LABEL: func.func @views
func.func @views(%a: tensor<?xf64>, %n: index) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty(%n) : tensor<?xf64>
  %lap = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%ai: f64, %out: f64):
    %q = arith.addf %ai, %ai : f64
    linalg.yield %q : f64
  } -> tensor<?xf64>
  %m = arith.subi %n, %c0 : index
  // CHECK: %[[HEAD:.*]] = tensor.extract_slice %[[LAP:.*]][1]
  %head = tensor.extract_slice %lap[1] [%m] [1] : tensor<?xf64> to tensor<?xf64>
  %tail = tensor.extract_slice %lap[0] [%m] [1] : tensor<?xf64> to tensor<?xf64>
  %e2 = tensor.empty(%m) : tensor<?xf64>
  // CHECK: %[[FRESH:.*]] = tensor.empty
  // CHECK: linalg.generic {{.*}} ins(%[[HEAD]], %{{.*}} : tensor<?xf64>, tensor<?xf64>) outs(%[[FRESH]] : tensor<?xf64>)
  %res = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%head, %tail : tensor<?xf64>, tensor<?xf64>) outs(%e2 : tensor<?xf64>) {
  ^bb0(%h: f64, %t: f64, %out: f64):
    %q = arith.subf %h, %t : f64
    linalg.yield %q : f64
  } -> tensor<?xf64>
  %lap2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%ai: f64, %out: f64):
    %q = arith.mulf %ai, %ai : f64
    linalg.yield %q : f64
  } -> tensor<?xf64>
  // CHECK: %[[ONLY:.*]] = tensor.extract_slice %{{.*}}[1]
  // CHECK: linalg.generic {{.*}} ins(%[[ONLY]] : tensor<?xf64>) outs(%[[ONLY]] : tensor<?xf64>)
  %only = tensor.extract_slice %lap2[1] [%m] [1] : tensor<?xf64> to tensor<?xf64>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%only : tensor<?xf64>) outs(%e2 : tensor<?xf64>) {
  ^bb0(%h: f64, %out: f64):
    %q = arith.negf %h : f64
    linalg.yield %q : f64
  } -> tensor<?xf64>
  return %res, %neg, %lap : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}
