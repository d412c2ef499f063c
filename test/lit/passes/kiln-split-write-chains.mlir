// RUN: kiln-opt %s -p 'kiln-split-write-chains{writes=2}' | filecheck %s
// RUN: kiln-opt %s -p 'kiln-split-write-chains{writes=2},one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}' | filecheck %s --check-prefix=BUF
// RUN: kiln-opt %s -p 'one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}' | filecheck %s --check-prefix=BUF

// Four slice writes to one array (`a[0] = ...; a[1] = a[0] ...`), each
// reading the last version: every second update, the chain goes through its
// buffer again, so one-shot-bufferize analyses two short alias sets instead
// of one long one. The bufferized function is the same with and without the
// cuts (BUF checks both): the read-only argument copied once, every write in
// place (bufferization copies each row read from the array before writing
// it into another row, as it does without cuts), no bufferization op left.

// CHECK-LABEL: func.func @chain
// BUF-LABEL: func.func @chain
func.func @chain(%a: tensor<4x?xf64> {bufferization.writable = false}, %r: tensor<1x?xf64>, %n: index) -> tensor<4x?xf64> {
  // BUF-NOT: bufferization.
  // BUF: %[[ALLOC:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<4x?xf64>
  // BUF-NEXT: memref.copy %{{.*}}, %[[ALLOC]]
  // BUF-COUNT-3: memref.alloc(%{{.*}}) {{.*}} : memref<1x?xf64>
  // BUF-NOT: memref.alloc
  // BUF-NOT: bufferization.
  // BUF: return %[[ALLOC]]
  // CHECK: %[[T1:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0]
  // CHECK: %[[T2:.*]] = tensor.insert_slice %{{.*}} into %[[T1]][1, 0]
  // CHECK-NEXT: %[[M2:.*]] = bufferization.to_buffer %[[T2]] : tensor<4x?xf64> to memref<4x?xf64>
  // CHECK-NEXT: %[[C2:.*]] = bufferization.to_tensor %[[M2]] restrict writable : memref<4x?xf64> to tensor<4x?xf64>
  // CHECK-NEXT: tensor.extract_slice %[[C2]][1, 0]
  // CHECK: %[[T3:.*]] = tensor.insert_slice %{{.*}} into %[[C2]][2, 0]
  // CHECK: %[[T4:.*]] = tensor.insert_slice %{{.*}} into %[[T3]][3, 0]
  // CHECK-NEXT: %[[M4:.*]] = bufferization.to_buffer %[[T4]]
  // CHECK-NEXT: %[[C4:.*]] = bufferization.to_tensor %[[M4]] restrict writable
  // CHECK-NEXT: return %[[C4]]
  %t1 = tensor.insert_slice %r into %a[0, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %s1 = tensor.extract_slice %t1[0, 0] [1, %n] [1, 1] : tensor<4x?xf64> to tensor<1x?xf64>
  %t2 = tensor.insert_slice %s1 into %t1[1, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %s2 = tensor.extract_slice %t2[1, 0] [1, %n] [1, 1] : tensor<4x?xf64> to tensor<1x?xf64>
  %t3 = tensor.insert_slice %s2 into %t2[2, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %s3 = tensor.extract_slice %t3[2, 0] [1, %n] [1, 1] : tensor<4x?xf64> to tensor<1x?xf64>
  %t4 = tensor.insert_slice %s3 into %t3[3, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  return %t4 : tensor<4x?xf64>
}

// A view of an old version is read by the third update: no cut after the
// second (the view's buffer may be the one the later updates write); the
// cut comes after the third, the view's last use.
// CHECK-LABEL: func.func @old_version_read_later
func.func @old_version_read_later(%a: tensor<4x?xf64> {bufferization.writable = false}, %r: tensor<1x?xf64>, %n: index) -> tensor<4x?xf64> {
  // CHECK: %[[T2:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[1, 0]
  // CHECK-NOT: bufferization.to_buffer
  // CHECK: %[[T3:.*]] = tensor.insert_slice %{{.*}} into %[[T2]][2, 0]
  // CHECK-NEXT: %[[M:.*]] = bufferization.to_buffer %[[T3]]
  // CHECK-NEXT: bufferization.to_tensor %[[M]] restrict writable
  %t1 = tensor.insert_slice %r into %a[0, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %old = tensor.extract_slice %t1[0, 0] [1, %n] [1, 1] : tensor<4x?xf64> to tensor<1x?xf64>
  %t2 = tensor.insert_slice %r into %t1[1, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %t3 = tensor.insert_slice %old into %t2[2, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %t4 = tensor.insert_slice %r into %t3[3, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  return %t4 : tensor<4x?xf64>
}

// Left alone: a chain on a writable argument (its buffer is the caller's,
// and the result must stay equivalent to it), on a view of another tensor
// (a strided buffer), and inside a loop (the yielded tensor must stay
// equivalent to the loop's argument).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: bufferization.to_buffer
// CHECK: return
func.func @kept(%a: tensor<4x?xf64>, %b: tensor<8x?xf64> {bufferization.writable = false}, %r: tensor<1x?xf64>, %n: index, %steps: index) -> (tensor<4x?xf64>, tensor<4x?xf64>, tensor<4x?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %w1 = tensor.insert_slice %r into %a[0, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %w2 = tensor.insert_slice %r into %w1[1, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %w3 = tensor.insert_slice %r into %w2[2, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %view = tensor.extract_slice %b[4, 0] [4, %n] [1, 1] : tensor<8x?xf64> to tensor<4x?xf64>
  %v1 = tensor.insert_slice %r into %view[0, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %v2 = tensor.insert_slice %r into %v1[1, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %v3 = tensor.insert_slice %r into %v2[2, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
  %e = tensor.empty(%n) : tensor<4x?xf64>
  %l = scf.for %i = %c0 to %steps step %c1 iter_args(%t = %e) -> tensor<4x?xf64> {
    %l1 = tensor.insert_slice %r into %t[0, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
    %l2 = tensor.insert_slice %r into %l1[1, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
    %l3 = tensor.insert_slice %r into %l2[2, 0] [1, %n] [1, 1] : tensor<1x?xf64> into tensor<4x?xf64>
    scf.yield %l3 : tensor<4x?xf64>
  }
  return %w3, %v3, %l : tensor<4x?xf64>, tensor<4x?xf64>, tensor<4x?xf64>
}
