// RUN: kiln-opt %s -p kiln-fuse-insert-slices | filecheck %s

// An elementwise generic reading (identity map) a tensor.insert_slice that
// nothing else reads reads the slice's base instead and picks the inserted
// element in its body: scf.if (offset <= i < offset + size) then
// tensor.extract of the inserted source at i - offset, else the base's
// element. Chains of insert_slices nest, the last insert outermost.

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// dup = img.copy(); dup[..., 0] = img[..., 2]; dup[..., 2] = img[..., 0]
// out = dup - mean
// The slices span the whole of dims 0 and 1 (offset 0, size dim of img):
// only channel bounds are tested (each scf.if condition is the one
// and of the two channel comparisons).
// CHECK-LABEL: func.func @swap_channels
// CHECK-SAME: (%[[IMG:[^:]*]]: tensor<?x?x3xf32>, %[[MEAN:[^:]*]]: tensor<3xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[BLUE:.*]] = tensor.extract_slice %[[IMG]][0, 0, 2]
// CHECK: %[[RED:.*]] = tensor.extract_slice %[[IMG]][0, 0, 0]
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[IMG]], %[[MEAN]] : tensor<?x?x3xf32>, tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f32, %[[M:[^:]*]]: f32, %{{[^:]*}}: f32):
// The inner insert (channel 0 <- blue).
// CHECK-NEXT: %[[I0:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[I1:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[I2:.*]] = linalg.index 2 : index
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[END0:.*]] = arith.addi %[[ZERO]], %[[ONE]] : index
// CHECK-NEXT: %[[GE0:.*]] = arith.cmpi uge, %[[I2]], %[[ZERO]] : index
// CHECK-NEXT: %[[LT0:.*]] = arith.cmpi ult, %[[I2]], %[[END0]] : index
// CHECK-NEXT: %[[IN0:.*]] = arith.andi %[[GE0]], %[[LT0]] : i1
// CHECK-NEXT: %[[V0:.*]] = scf.if %[[IN0]] -> (f32) {
// CHECK-NEXT:   %[[E0:.*]] = tensor.extract %[[BLUE]][%[[I0]], %[[I1]], %[[I2]]] : tensor<?x?x1xf32>
// CHECK-NEXT:   scf.yield %[[E0]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %[[IN]] : f32
// CHECK-NEXT: }
// The outer insert (channel 2 <- red) falls back to the inner one.
// CHECK: %[[J0:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J1:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[J2:.*]] = linalg.index 2 : index
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[END2:.*]] = arith.addi %[[TWO]], %[[ONE2]] : index
// CHECK-NEXT: %[[GE2:.*]] = arith.cmpi uge, %[[J2]], %[[TWO]] : index
// CHECK-NEXT: %[[LT2:.*]] = arith.cmpi ult, %[[J2]], %[[END2]] : index
// CHECK-NEXT: %[[IN2:.*]] = arith.andi %[[GE2]], %[[LT2]] : i1
// CHECK-NEXT: %[[V2:.*]] = scf.if %[[IN2]] -> (f32) {
// CHECK-NEXT:   %[[TWO2:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[K:.*]] = arith.subi %[[J2]], %[[TWO2]] : index
// CHECK-NEXT:   %[[E2:.*]] = tensor.extract %[[RED]][%[[J0]], %[[J1]], %[[K]]] : tensor<?x?x1xf32>
// CHECK-NEXT:   scf.yield %[[E2]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %[[V0]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[V2]], %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NOT: tensor.insert_slice
// CHECK: return
func.func @swap_channels(%img: tensor<?x?x3xf32>, %mean: tensor<3xf32>) -> tensor<?x?x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = tensor.dim %img, %c0 : tensor<?x?x3xf32>
  %w = tensor.dim %img, %c1 : tensor<?x?x3xf32>
  %blue = tensor.extract_slice %img[0, 0, 2] [%h, %w, 1] [1, 1, 1] : tensor<?x?x3xf32> to tensor<?x?x1xf32>
  %d1 = tensor.insert_slice %blue into %img[0, 0, 0] [%h, %w, 1] [1, 1, 1] : tensor<?x?x1xf32> into tensor<?x?x3xf32>
  %red = tensor.extract_slice %img[0, 0, 0] [%h, %w, 1] [1, 1, 1] : tensor<?x?x3xf32> to tensor<?x?x1xf32>
  %d2 = tensor.insert_slice %red into %d1[0, 0, 2] [%h, %w, 1] [1, 1, 1] : tensor<?x?x1xf32> into tensor<?x?x3xf32>
  %e = tensor.empty(%h, %w) : tensor<?x?x3xf32>
  %r = linalg.generic {indexing_maps = [#id3, #ch, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%d2, %mean : tensor<?x?x3xf32>, tensor<3xf32>) outs(%e : tensor<?x?x3xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %v = arith.subf %x, %m : f32
    linalg.yield %v : f32
  } -> tensor<?x?x3xf32>
  return %r : tensor<?x?x3xf32>
}

// In a chain, an insert that is read elsewhere too stops the fusion: the
// outer insert is fused, the generic then reads the inner one.
// CHECK-LABEL: func.func @chain_stops
// CHECK-SAME: (%[[B:[^:]*]]: tensor<8xf32>, %[[S:[^:]*]]: tensor<2xf32>, %[[T:[^:]*]]: tensor<2xf32>)
// CHECK: %[[D1:.*]] = tensor.insert_slice %[[S]] into %[[B]][1] [2] [1]
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.generic {{.*}} ins(%[[D1]] : tensor<8xf32>)
// CHECK: scf.if
// CHECK: tensor.extract %[[T]]
// CHECK-NOT: tensor.extract %[[S]]
// CHECK: return %[[D1]], %{{.*}}
func.func @chain_stops(%b: tensor<8xf32>, %s: tensor<2xf32>, %t: tensor<2xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %d1 = tensor.insert_slice %s into %b[1] [2] [1] : tensor<2xf32> into tensor<8xf32>
  %d2 = tensor.insert_slice %t into %d1[5] [2] [1] : tensor<2xf32> into tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%d2 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.negf %v : f32
    linalg.yield %w : f32
  } -> tensor<8xf32>
  return %d1, %r : tensor<8xf32>, tensor<8xf32>
}

// A dynamic offset and a source of unknown size: the bounds are
// [offset, offset + dim of the source), read at i - offset. A tensor.dim of
// the insert is not a reader (the insert itself stays for it).
// CHECK-LABEL: func.func @dynamic_offset
// CHECK-SAME: (%[[B:[^:]*]]: tensor<?xf64>, %[[S:[^:]*]]: tensor<?xf64>, %[[OFF:[^:]*]]: index)
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<?xf64>)
// CHECK-NEXT: ^bb0(%[[IN:[^:]*]]: f64, %{{[^:]*}}: f64):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[N:.*]] = tensor.dim %[[S]], %{{.*}} : tensor<?xf64>
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[OFF]], %[[N]] : index
// CHECK-NEXT: %[[GE:.*]] = arith.cmpi uge, %[[I]], %[[OFF]] : index
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi ult, %[[I]], %[[END]] : index
// CHECK-NEXT: %[[INSIDE:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT: %[[V:.*]] = scf.if %[[INSIDE]] -> (f64) {
// CHECK-NEXT:   %[[K:.*]] = arith.subi %[[I]], %[[OFF]] : index
// CHECK-NEXT:   %[[E:.*]] = tensor.extract %[[S]][%[[K]]] : tensor<?xf64>
// CHECK-NEXT:   scf.yield %[[E]] : f64
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %[[IN]] : f64
// CHECK-NEXT: }
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f64
// CHECK-NEXT: linalg.yield %[[SQ]] : f64
func.func @dynamic_offset(%b: tensor<?xf64>, %s: tensor<?xf64>, %i: index) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?xf64>
  %x = tensor.insert_slice %s into %b[%i] [%n] [1] : tensor<?xf64> into tensor<?xf64>
  %m = tensor.dim %x, %c0 : tensor<?xf64>
  %e = tensor.empty(%m) : tensor<?xf64>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%v: f64, %o: f64):
    %w = arith.mulf %v, %v : f64
    linalg.yield %w : f64
  } -> tensor<?xf64>
  return %r : tensor<?xf64>
}

// A slice covering the whole tensor: the source is read everywhere, with
// no condition.
// CHECK-LABEL: func.func @whole
// CHECK-SAME: (%[[B:[^:]*]]: tensor<2x3xf32>, %[[S:[^:]*]]: tensor<2x3xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[E:.*]] = tensor.extract %[[S]][%[[I]], %[[J]]] : tensor<2x3xf32>
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[E]] : f32
// CHECK-NEXT: linalg.yield %[[N]] : f32
func.func @whole(%b: tensor<2x3xf32>, %s: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %x = tensor.insert_slice %s into %b[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.negf %v : f32
    linalg.yield %w : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// Not fused: an insert read a second time (here returned), a strided
// insert, a generic reading the insert through a transposing map, and a
// reduction.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: scf.if
// CHECK-NOT: linalg.index
// CHECK: %[[X:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[1] [2] [1]
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>)
// CHECK: %[[Y:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[1] [2] [3]
// CHECK: linalg.generic {{.*}} ins(%[[Y]] : tensor<8xf32>)
// CHECK: %[[Z:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[1, 1] [2, 2] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[Z]] : tensor<4x4xf32>)
// CHECK: %[[U:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[4] [2] [1]
// CHECK: linalg.generic {{.*}} ins(%[[U]] : tensor<8xf32>)
// CHECK-NOT: scf.if
// CHECK-NOT: linalg.index
// CHECK: return %[[X]],
func.func @kept(%b: tensor<8xf32>, %s: tensor<2xf32>, %b2: tensor<4x4xf32>, %s2: tensor<2x2xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<f32>) {
  %x = tensor.insert_slice %s into %b[1] [2] [1] : tensor<2xf32> into tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.negf %v : f32
    linalg.yield %w : f32
  } -> tensor<8xf32>
  %y = tensor.insert_slice %s into %b[1] [2] [3] : tensor<2xf32> into tensor<8xf32>
  %r2 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%y : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.negf %v : f32
    linalg.yield %w : f32
  } -> tensor<8xf32>
  %z = tensor.insert_slice %s2 into %b2[1, 1] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %r3 = linalg.generic {indexing_maps = [#swap, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.negf %v : f32
    linalg.yield %w : f32
  } -> tensor<4x4xf32>
  %u = tensor.insert_slice %s into %b[4] [2] [1] : tensor<2xf32> into tensor<8xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id1, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%u : tensor<8xf32>) outs(%zero : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.addf %v, %o : f32
    linalg.yield %w : f32
  } -> tensor<f32>
  return %x, %r, %r2, %r3, %sum : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x4xf32>, tensor<f32>
}
