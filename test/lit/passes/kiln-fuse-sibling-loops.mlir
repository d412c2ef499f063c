// RUN: kiln-opt %s -p kiln-fuse-sibling-loops | filecheck %s
// RUN: kiln-opt %s -p kiln-fuse-sibling-loops,cse | filecheck %s --check-prefix=CSE

// Two histograms of the same data (counts, then weighted sums), each scatter
// loop computing the bin: one loop updates both, and cse computes the bin
// once. The slice of the first histogram, taken between the loops, moves
// after the fused loop.

// CHECK-LABEL: func.func @two_histograms
// CSE-LABEL: func.func @two_histograms
func.func @two_histograms(%x: tensor<?xf64>, %w: tensor<?xf64>, %c0h: tensor<?xi64>, %w0h: tensor<?xf64>,
                          %n: index, %k: index) -> (tensor<?xi64>, tensor<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[R:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}}) -> (tensor<?xi64>, tensor<?xf64>)
  // CHECK: tensor.insert %{{.*}} into %[[A]]
  // CHECK: tensor.insert %{{.*}} into %[[B]]
  // CHECK: scf.yield
  // CHECK-NOT: scf.for
  // CHECK: tensor.extract_slice %[[R]]#0
  // CSE: scf.for
  // CSE-COUNT-1: arith.fptosi
  // CSE-NOT: arith.fptosi
  // CSE: scf.yield
  %counts = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0h) -> (tensor<?xi64>) {
    %v = tensor.extract %x[%i] : tensor<?xf64>
    %b = arith.fptosi %v : f64 to i64
    %at = arith.index_cast %b : i64 to index
    %old = tensor.extract %acc[%at] : tensor<?xi64>
    %one = arith.constant 1 : i64
    %new = arith.addi %old, %one : i64
    %ins = tensor.insert %new into %acc[%at] : tensor<?xi64>
    scf.yield %ins : tensor<?xi64>
  }
  %slice = tensor.extract_slice %counts[0] [%k] [1] : tensor<?xi64> to tensor<?xi64>
  %sums = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %w0h) -> (tensor<?xf64>) {
    %v = tensor.extract %x[%i] : tensor<?xf64>
    %b = arith.fptosi %v : f64 to i64
    %at = arith.index_cast %b : i64 to index
    %old = tensor.extract %acc[%at] : tensor<?xf64>
    %wi = tensor.extract %w[%i] : tensor<?xf64>
    %new = arith.addf %old, %wi : f64
    %ins = tensor.insert %new into %acc[%at] : tensor<?xf64>
    scf.yield %ins : tensor<?xf64>
  }
  return %slice, %sums : tensor<?xi64>, tensor<?xf64>
}

// The second loop reads the first one's result: not fused. A loop with a
// call (a check, a print) in its body is never fused.
// CHECK-LABEL: func.func @dependent_or_effects
func.func private @effect(index)
func.func @dependent_or_effects(%a0: tensor<?xf64>, %n: index) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK-COUNT-3: scf.for
  %a = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a0) -> (tensor<?xf64>) {
    %v = tensor.extract %acc[%i] : tensor<?xf64>
    %d = arith.addf %v, %v : f64
    %ins = tensor.insert %d into %acc[%i] : tensor<?xf64>
    scf.yield %ins : tensor<?xf64>
  }
  %b = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<?xf64>) {
    %v = tensor.extract %acc[%i] : tensor<?xf64>
    %d = arith.mulf %v, %v : f64
    %ins = tensor.insert %d into %acc[%i] : tensor<?xf64>
    scf.yield %ins : tensor<?xf64>
  }
  scf.for %i = %c0 to %n step %c1 {
    func.call @effect(%i) : (index) -> ()
  }
  return %b : tensor<?xf64>
}

// Three loops: the reader of the first loop's result, moved after the first
// fusion, moves after the second one too.
// CHECK-LABEL: func.func @three_loops
func.func @three_loops(%x: tensor<?xf64>, %h0: tensor<?xf64>, %n: index, %k: index) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[R:.*]]:3 = scf.for
  // CHECK-NOT: scf.for
  // CHECK: tensor.extract_slice %[[R]]#0
  // CHECK: return
  %a = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %h0) -> (tensor<?xf64>) {
    %v = tensor.extract %x[%i] : tensor<?xf64>
    %ins = tensor.insert %v into %acc[%c0] : tensor<?xf64>
    scf.yield %ins : tensor<?xf64>
  }
  %s = tensor.extract_slice %a[0] [%k] [1] : tensor<?xf64> to tensor<?xf64>
  %b = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %h0) -> (tensor<?xf64>) {
    %v = tensor.extract %x[%i] : tensor<?xf64>
    %ins = tensor.insert %v into %acc[%c1] : tensor<?xf64>
    scf.yield %ins : tensor<?xf64>
  }
  %c = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %h0) -> (tensor<?xf64>) {
    %v = tensor.extract %x[%i] : tensor<?xf64>
    %ins = tensor.insert %v into %acc[%c0] : tensor<?xf64>
    scf.yield %ins : tensor<?xf64>
  }
  return %s, %b, %c : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}
