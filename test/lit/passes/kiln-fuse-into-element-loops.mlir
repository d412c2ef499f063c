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

// A CSR row's `vals @ x[cols]` after kiln-scalarize-dots: the index array
// is normalized (`idx`), checked (a reduction reading it), gathered (`g`,
// a body reading `x` at `linalg.index`), and read as the Kx1 operand of the
// dot through an expand_shape. The gather moves into the dot loop; the
// normalization is computed in the check and in the loop: no array per row.
#s1 = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @gathered_dot
func.func @gathered_dot(%cols: tensor<?xi32>, %vals: tensor<1x?xf64>, %x: tensor<?xf64>, %k: index, %len: i64) -> (f64, i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %true = arith.constant true
  %cst = arith.constant 0.0 : f64
  %ei = tensor.empty(%k) : tensor<?xi64>
  %ef = tensor.empty(%k) : tensor<?xf64>
  %eb = tensor.empty() : tensor<i1>
  // CHECK-NOT: linalg.generic {{.*}}iterator_types = ["parallel"]
  // CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%arg0 : tensor<?xi32>)
  // CHECK-NEXT: ^bb0(%[[C:.*]]: i32, %[[OK:.*]]: i1):
  // CHECK-NEXT: %[[E:.*]] = arith.extsi %[[C]] : i32 to i64
  // CHECK: arith.cmpi slt, %{{.*}}, %arg4 : i64
  // CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
  // CHECK-NEXT: %[[V:.*]] = tensor.extract %arg1[%{{.*}}, %[[I]]]
  // CHECK-NEXT: %[[C2:.*]] = tensor.extract %arg0[%[[I]]] : tensor<?xi32>
  // CHECK-NEXT: arith.extsi %[[C2]] : i32 to i64
  // CHECK: %[[XV:.*]] = tensor.extract %arg2[%{{.*}}] : tensor<?xf64>
  // CHECK-NEXT: arith.mulf %[[V]], %[[XV]]
  // CHECK-NOT: tensor.expand_shape
  %idx = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%cols : tensor<?xi32>) outs(%ei : tensor<?xi64>) {
  ^bb0(%c: i32, %out: i64):
    %e = arith.extsi %c : i32 to i64
    %w = arith.addi %e, %len : i64
    %neg = arith.cmpi slt, %e, %zero : i64
    %r = arith.select %neg, %w, %e : i64
    linalg.yield %r : i64
  } -> tensor<?xi64>
  %init = linalg.fill ins(%true : i1) outs(%eb : tensor<i1>) -> tensor<i1>
  %ok = linalg.generic {indexing_maps = [#id, #s1], iterator_types = ["reduction"]} ins(%idx : tensor<?xi64>) outs(%init : tensor<i1>) {
  ^bb0(%i: i64, %acc: i1):
    %lt = arith.cmpi slt, %i, %len : i64
    %ge = arith.cmpi sge, %i, %zero : i64
    %b = arith.andi %lt, %ge : i1
    %a = arith.andi %acc, %b : i1
    linalg.yield %a : i1
  } -> tensor<i1>
  %okv = tensor.extract %ok[] : tensor<i1>
  %g = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%ef : tensor<?xf64>) {
  ^bb0(%out: f64):
    %p = linalg.index 0 : index
    %iv = tensor.extract %idx[%p] : tensor<?xi64>
    %ii = arith.index_cast %iv : i64 to index
    %xv = tensor.extract %x[%ii] : tensor<?xf64>
    linalg.yield %xv : f64
  } -> tensor<?xf64>
  %col = tensor.expand_shape %g [[0, 1]] output_shape [%k, 1] : tensor<?xf64> into tensor<?x1xf64>
  %dot = scf.for %i = %c0 to %k step %c1 iter_args(%s = %cst) -> (f64) {
    %v = tensor.extract %vals[%c0, %i] : tensor<1x?xf64>
    %xv = tensor.extract %col[%i, %c0] : tensor<?x1xf64>
    %m = arith.mulf %v, %xv : f64
    %a = arith.addf %s, %m : f64
    scf.yield %a : f64
  }
  return %dot, %okv : f64, i1
}

// A producer with no input (its values come from its position) is not fused
// into a reduction reading it: nothing else would give that loop its extent.
// CHECK-LABEL: func.func @position_only
func.func @position_only(%n: index) -> i1 {
  %true = arith.constant true
  %e = tensor.empty(%n) : tensor<?xi64>
  %eb = tensor.empty() : tensor<i1>
  // CHECK: linalg.index
  // CHECK: linalg.generic {{.*}}ins(%{{.*}} : tensor<?xi64>)
  %pos = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%e : tensor<?xi64>) {
  ^bb0(%out: i64):
    %p = linalg.index 0 : index
    %v = arith.index_cast %p : index to i64
    linalg.yield %v : i64
  } -> tensor<?xi64>
  %init = linalg.fill ins(%true : i1) outs(%eb : tensor<i1>) -> tensor<i1>
  %all = linalg.generic {indexing_maps = [#id, #s1], iterator_types = ["reduction"]} ins(%pos : tensor<?xi64>) outs(%init : tensor<i1>) {
  ^bb0(%v: i64, %acc: i1):
    %z = arith.constant 0 : i64
    %b = arith.cmpi sge, %v, %z : i64
    %a = arith.andi %acc, %b : i1
    linalg.yield %a : i1
  } -> tensor<i1>
  %r = tensor.extract %all[] : tensor<i1>
  return %r : i1
}
