// RUN: kiln-opt %s -p kiln-chain-overwrites | filecheck %s
// RUN: kiln-opt %s -p 'kiln-chain-overwrites,one-shot-bufferize{bufferize-function-boundaries}' | filecheck %s --check-prefix=BUF

// `A[i, j] += A[i, j - 1]; A[i, j] /= 9.0` after canonicalization: both
// writes of A[i, j] take the loop's A as destination (the second write's
// destination, the first write's result, was folded away), and the first
// write's result is still read. The pass makes the second write update the
// first one's result again, so A has one writer and its buffer is updated in
// place; without it bufferization copies all of A at every iteration.

// CHECK-LABEL: func.func @two_writes
// BUF-LABEL: func.func @two_writes
func.func @two_writes(%a0: tensor<?x?xf64>, %i: index, %n: index) -> tensor<?x?xf64> {
  %c1 = arith.constant 1 : index
  %nine = arith.constant 9.0 : f64
  // BUF-NOT: memref.alloc
  // BUF-NOT: memref.copy
  // BUF: return
  %r = scf.for %j = %c1 to %n step %c1 iter_args(%a = %a0) -> tensor<?x?xf64> {
    // CHECK: %[[X:.*]] = tensor.insert %{{.*}} into %[[A:.*]][%{{.*}}, %[[J:.*]]] : tensor<?x?xf64>
    // CHECK-NEXT: %[[R:.*]] = tensor.extract %[[X]]
    // CHECK: %[[Y:.*]] = tensor.insert %{{.*}} into %[[X]][%{{.*}}, %[[J]]] : tensor<?x?xf64>
    // CHECK-NEXT: scf.yield %[[Y]]
    %jm1 = arith.subi %j, %c1 : index
    %p = tensor.extract %a[%i, %jm1] : tensor<?x?xf64>
    %q = tensor.extract %a[%i, %j] : tensor<?x?xf64>
    %s = arith.addf %p, %q : f64
    %x = tensor.insert %s into %a[%i, %j] : tensor<?x?xf64>
    %read = tensor.extract %x[%i, %j] : tensor<?x?xf64>
    %d = arith.divf %read, %nine : f64
    %y = tensor.insert %d into %a[%i, %j] : tensor<?x?xf64>
    scf.yield %y : tensor<?x?xf64>
  }
  return %r : tensor<?x?xf64>
}

// The same for two slice writes of a row (`A[i, 1:-1] += ...`).
// CHECK-LABEL: func.func @two_slice_writes
func.func @two_slice_writes(%a: tensor<?x?xf64>, %u: tensor<1x?xf64>, %v: tensor<1x?xf64>, %i: index, %k: index) -> (tensor<?x?xf64>, tensor<1x?xf64>) {
  // CHECK: %[[X:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 1] [1, %{{.*}}] [1, 1]
  // CHECK: tensor.insert_slice %{{.*}} into %[[X]][%{{.*}}, 1] [1, %{{.*}}] [1, 1]
  %x = tensor.insert_slice %u into %a[%i, 1] [1, %k] [1, 1] : tensor<1x?xf64> into tensor<?x?xf64>
  %s = tensor.extract_slice %x[%i, 1] [1, %k] [1, 1] : tensor<?x?xf64> to tensor<1x?xf64>
  %y = tensor.insert_slice %v into %a[%i, 1] [1, %k] [1, 1] : tensor<1x?xf64> into tensor<?x?xf64>
  return %y, %s : tensor<?x?xf64>, tensor<1x?xf64>
}

// Writes of different elements, or in different blocks, are left alone.
// CHECK-LABEL: func.func @kept
func.func @kept(%a: tensor<?xf64>, %i: index, %j: index, %p: i1, %v: f64) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  // CHECK: tensor.insert %{{.*}} into %[[A:[^\[]*]][%{{.*}}]
  // CHECK: tensor.insert %{{.*}} into %[[A]][%{{.*}}]
  // CHECK: tensor.insert %{{.*}} into %[[A]][%{{.*}}]
  %x = tensor.insert %v into %a[%i] : tensor<?xf64>
  %y = tensor.insert %v into %a[%j] : tensor<?xf64>
  %z = scf.if %p -> tensor<?xf64> {
    %w = tensor.insert %v into %a[%i] : tensor<?xf64>
    scf.yield %w : tensor<?xf64>
  } else {
    scf.yield %a : tensor<?xf64>
  }
  return %x, %y, %z : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}
