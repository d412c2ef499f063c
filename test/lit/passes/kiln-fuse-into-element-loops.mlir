// RUN: kiln-opt %s -p kiln-fuse-into-element-loops | filecheck %s

// np.histogram's scatter loop: the bin of each value (a generic reading the
// mask `keep` and the data) and the count it adds (`keep` as an int) are
// read one element per iteration. Both generics and the mask are computed
// in the loop instead: no n-element array of bins, masks or counts.

#id = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @histogram_loop
func.func @histogram_loop(%x: tensor<?xf64>, %first: f64, %scale: f64, %bins: tensor<?xi64>, %n: index) -> tensor<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ei1 = tensor.empty(%n) : tensor<?xi1>
  %ei64 = tensor.empty(%n) : tensor<?xi64>
  // CHECK-NOT: linalg.generic
  // CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
  // CHECK-NEXT: %[[X:.*]] = tensor.extract %{{.*}}[%[[I]]] : tensor<?xf64>
  // CHECK-NEXT: %[[KEEP:.*]] = arith.cmpf oge, %[[X]], %{{.*}} : f64
  // CHECK-NEXT: %[[X2:.*]] = tensor.extract %{{.*}}[%[[I]]] : tensor<?xf64>
  // CHECK-NEXT: %[[Z:.*]] = tensor.extract %{{.*}}[] : tensor<f64>
  // CHECK-NEXT: %[[OFF:.*]] = arith.subf %[[X2]], %{{.*}} : f64
  // CHECK-NEXT: %[[SC:.*]] = arith.mulf %[[OFF]], %{{.*}} : f64
  // CHECK-NEXT: %[[SEL:.*]] = arith.select %[[KEEP]], %[[SC]], %[[Z]] : f64
  // CHECK-NEXT: %[[BIN:.*]] = arith.fptosi %[[SEL]] : f64 to i64
  // CHECK-NEXT: %[[AT:.*]] = arith.index_cast %[[BIN]] : i64 to index
  // CHECK-NEXT: %[[OLD:.*]] = tensor.extract %[[ACC]][%[[AT]]]
  // CHECK: %[[ONE:.*]] = arith.extui %{{.*}} : i1 to i64
  // CHECK-NEXT: arith.addi %[[OLD]], %[[ONE]] : i64
  // CHECK-NOT: linalg.generic
  %keep = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xf64>) outs(%ei1 : tensor<?xi1>) {
  ^bb0(%v: f64, %out: i1):
    %k = arith.cmpf oge, %v, %first : f64
    linalg.yield %k : i1
  } -> tensor<?xi1>
  %zero = arith.constant 0.0 : f64
  %zt = tensor.from_elements %zero : tensor<f64>
  %index = linalg.generic {indexing_maps = [#id, #id, #s, #id], iterator_types = ["parallel"]} ins(%keep, %x, %zt : tensor<?xi1>, tensor<?xf64>, tensor<f64>) outs(%ei64 : tensor<?xi64>) {
  ^bb0(%k: i1, %v: f64, %z: f64, %out: i64):
    %o = arith.subf %v, %first : f64
    %s = arith.mulf %o, %scale : f64
    %w = arith.select %k, %s, %z : f64
    %b = arith.fptosi %w : f64 to i64
    linalg.yield %b : i64
  } -> tensor<?xi64>
  %ones = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%keep : tensor<?xi1>) outs(%ei64 : tensor<?xi64>) {
  ^bb0(%k: i1, %out: i64):
    %e = arith.extui %k : i1 to i64
    linalg.yield %e : i64
  } -> tensor<?xi64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %bins) -> (tensor<?xi64>) {
    %b = tensor.extract %index[%i] : tensor<?xi64>
    %at = arith.index_cast %b : i64 to index
    %old = tensor.extract %acc[%at] : tensor<?xi64>
    %one = tensor.extract %ones[%i] : tensor<?xi64>
    %new = arith.addi %old, %one : i64
    %ins = tensor.insert %new into %acc[%at] : tensor<?xi64>
    scf.yield %ins : tensor<?xi64>
  }
  return %r : tensor<?xi64>
}

// A generic also read as a whole (here returned) stays: fusing it would
// compute it twice and still write the array.
// CHECK-LABEL: func.func @also_read_whole
func.func @also_read_whole(%x: tensor<?xf64>, %acc0: tensor<?xf64>, %n: index) -> (tensor<?xf64>, tensor<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty(%n) : tensor<?xf64>
  // CHECK: linalg.generic
  // CHECK: scf.for
  // CHECK-NEXT: tensor.extract %[[SQ:.*]][
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%v: f64, %out: f64):
    %m = arith.mulf %v, %v : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %acc0) -> (tensor<?xf64>) {
    %v = tensor.extract %sq[%i] : tensor<?xf64>
    %old = tensor.extract %acc[%c0] : tensor<?xf64>
    %new = arith.addf %old, %v : f64
    %ins = tensor.insert %new into %acc[%c0] : tensor<?xf64>
    scf.yield %ins : tensor<?xf64>
  }
  return %r, %sq : tensor<?xf64>, tensor<?xf64>
}

// A read at another index than the loop's (a gather) stays a read.
// CHECK-LABEL: func.func @read_elsewhere
func.func @read_elsewhere(%x: tensor<?xf64>, %j: index, %n: index) -> f64 {
  %e = tensor.empty(%n) : tensor<?xf64>
  // CHECK: linalg.generic
  // CHECK: tensor.extract
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%v: f64, %out: f64):
    %m = arith.mulf %v, %v : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  %v = tensor.extract %sq[%j] : tensor<?xf64>
  return %v : f64
}
