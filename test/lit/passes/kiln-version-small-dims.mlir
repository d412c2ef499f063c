// RUN: kiln-opt %s -p kiln-version-small-dims | filecheck %s

// scf.parallel nests (as convert-linalg-to-parallel-loops leaves them)
// whose innermost bound is a dynamic `memref.dim %m, q` are versioned for
// an extent of 2, 3 and 4: in each version the bound is the constant and
// `%m`, the buffers allocated with the extent as dim q, and subviews of
// them are reinterpret_cast to static sizes / strides; the original nest
// is the last else.

// An image (H x W x C) minus a per-channel mean, into a buffer allocated
// with the image's dims.
// CHECK-LABEL: func.func @normalize
// CHECK-SAME: (%[[IMG:[^:]*]]: memref<?x?x?xf32>, %[[MEAN:[^:]*]]: memref<?xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[H:.*]] = memref.dim %[[IMG]], %{{.*}} : memref<?x?x?xf32>
// CHECK: %[[W:.*]] = memref.dim %[[IMG]], %{{.*}} : memref<?x?x?xf32>
// CHECK: %[[C:.*]] = memref.dim %[[IMG]], %{{.*}} : memref<?x?x?xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%[[H]], %[[W]], %[[C]]) : memref<?x?x?xf32>
// Extent 2.
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[IS2:.*]] = arith.cmpi eq, %[[C]], %[[TWO]] : index
// CHECK-NEXT: scf.if %[[IS2]] {
// CHECK-NEXT: %[[B2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %{{.*}}, %{{.*}}, %[[ISZ:.*]]:3, %[[IST:.*]]:3 = memref.extract_strided_metadata %[[IMG]]
// CHECK-NEXT: %[[IMG2:.*]] = memref.reinterpret_cast %[[IMG]] to offset: [0], sizes: [%[[ISZ]]#0, %[[ISZ]]#1, 2], strides: [%[[IST]]#0, 2, 1] : memref<?x?x?xf32> to memref<?x?x2xf32, strided<[?, 2, 1]>>
// CHECK-NEXT: %{{.*}}, %{{.*}}, %[[OSZ:.*]]:3, %[[OST:.*]]:3 = memref.extract_strided_metadata %[[OUT]]
// CHECK-NEXT: %[[OUT2:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [%[[OSZ]]#0, %[[OSZ]]#1, 2], strides: [%[[OST]]#0, 2, 1] : memref<?x?x?xf32> to memref<?x?x2xf32, strided<[?, 2, 1]>>
// CHECK-NEXT: scf.parallel (%[[I:.*]], %[[J:.*]], %[[K:.*]]) = (%[[C0]], %[[C0]], %[[C0]]) to (%[[H]], %[[W]], %[[B2]]) step (%[[C1]], %[[C1]], %[[C1]]) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[IMG2]][%[[I]], %[[J]], %[[K]]] : memref<?x?x2xf32, strided<[?, 2, 1]>>
// The per-channel vector is not versioned.
// CHECK-NEXT: %[[M:.*]] = memref.load %[[MEAN]][%[[K]]] : memref<?xf32>
// CHECK-NEXT: %[[V:.*]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT: memref.store %[[V]], %[[OUT2]][%[[I]], %[[J]], %[[K]]] : memref<?x?x2xf32, strided<[?, 2, 1]>>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// Extent 3.
// CHECK-NEXT: %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[IS3:.*]] = arith.cmpi eq, %[[C]], %[[THREE]] : index
// CHECK-NEXT: scf.if %[[IS3]] {
// CHECK-NEXT: %[[B3:.*]] = arith.constant 3 : index
// CHECK: %[[IMG3:.*]] = memref.reinterpret_cast %[[IMG]] to offset: [0], sizes: [%{{.*}}#0, %{{.*}}#1, 3], strides: [%{{.*}}#0, 3, 1] : memref<?x?x?xf32> to memref<?x?x3xf32, strided<[?, 3, 1]>>
// CHECK: %[[OUT3:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [%{{.*}}#0, %{{.*}}#1, 3], strides: [%{{.*}}#0, 3, 1] : memref<?x?x?xf32> to memref<?x?x3xf32, strided<[?, 3, 1]>>
// CHECK-NEXT: scf.parallel ({{.*}}) = ({{.*}}) to (%[[H]], %[[W]], %[[B3]])
// CHECK-NEXT: memref.load %[[IMG3]]
// CHECK-NEXT: memref.load %[[MEAN]]
// CHECK-NEXT: arith.subf
// CHECK-NEXT: memref.store %{{.*}}, %[[OUT3]]
// CHECK: } else {
// Extent 4.
// CHECK-NEXT: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[IS4:.*]] = arith.cmpi eq, %[[C]], %[[FOUR]] : index
// CHECK-NEXT: scf.if %[[IS4]] {
// CHECK-NEXT: %[[B4:.*]] = arith.constant 4 : index
// CHECK: %[[IMG4:.*]] = memref.reinterpret_cast %[[IMG]] to {{.*}} : memref<?x?x?xf32> to memref<?x?x4xf32, strided<[?, 4, 1]>>
// CHECK: %[[OUT4:.*]] = memref.reinterpret_cast %[[OUT]] to {{.*}} : memref<?x?x?xf32> to memref<?x?x4xf32, strided<[?, 4, 1]>>
// CHECK-NEXT: scf.parallel ({{.*}}) = ({{.*}}) to (%[[H]], %[[W]], %[[B4]])
// CHECK-NEXT: memref.load %[[IMG4]]
// CHECK-NEXT: memref.load %[[MEAN]]
// CHECK-NEXT: arith.subf
// CHECK-NEXT: memref.store %{{.*}}, %[[OUT4]]
// CHECK: } else {
// Any other extent: the original nest, unchanged.
// CHECK-NEXT: scf.parallel (%[[I:.*]], %[[J:.*]], %[[K:.*]]) = (%[[C0]], %[[C0]], %[[C0]]) to (%[[H]], %[[W]], %[[C]]) step (%[[C1]], %[[C1]], %[[C1]]) {
// CHECK-NEXT: memref.load %[[IMG]][%[[I]], %[[J]], %[[K]]] : memref<?x?x?xf32>
// CHECK-NEXT: memref.load %[[MEAN]][%[[K]]] : memref<?xf32>
// CHECK-NEXT: arith.subf
// CHECK-NEXT: memref.store %{{.*}}, %[[OUT]][%[[I]], %[[J]], %[[K]]] : memref<?x?x?xf32>
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return %[[OUT]]
func.func @normalize(%img: memref<?x?x?xf32>, %mean: memref<?xf32>) -> memref<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = memref.dim %img, %c0 : memref<?x?x?xf32>
  %w = memref.dim %img, %c1 : memref<?x?x?xf32>
  %ch = memref.dim %img, %c2 : memref<?x?x?xf32>
  %out = memref.alloc(%h, %w, %ch) : memref<?x?x?xf32>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%h, %w, %ch) step (%c1, %c1, %c1) {
    %x = memref.load %img[%i, %j, %k] : memref<?x?x?xf32>
    %m = memref.load %mean[%k] : memref<?xf32>
    %v = arith.subf %x, %m : f32
    memref.store %v, %out[%i, %j, %k] : memref<?x?x?xf32>
    scf.reduce
  }
  return %out : memref<?x?x?xf32>
}

// (The body reads a per-channel weight, which makes the nest a candidate.)
// Index arithmetic on the extent is recomputed with the constant, a
// subview of the image gets its static strides, and a buffer allocated
// with another size in dim 2 is left as it is.
// CHECK-LABEL: func.func @flip
// CHECK-SAME: (%[[IMG:[^:]*]]: memref<?x?x?xf32>, %[[WEIGHT:[^:]*]]: memref<?xf32>)
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[H:.*]] = memref.dim %[[IMG]], %{{.*}}
// CHECK: %[[W:.*]] = memref.dim %[[IMG]], %{{.*}}
// CHECK: %[[C:.*]] = memref.dim %[[IMG]], %{{.*}}
// CHECK: %[[OTHER:.*]] = memref.alloc(%[[H]], %[[W]], %[[W]]) : memref<?x?x?xf32>
// CHECK: %[[OLAST:.*]] = arith.subi %[[C]], %[[ONE]] : index
// CHECK: %[[OSV:.*]] = memref.subview %[[IMG]][0, 0, 1] [%[[H]], %[[W]], %[[OLAST]]] [1, 1, 1]
// CHECK: arith.cmpi eq, %[[C]], %{{.*}} : index
// CHECK-NEXT: scf.if
// CHECK-NEXT: %[[B2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[B2]], %[[ONE]] : index
// CHECK: %[[IMG2:.*]] = memref.reinterpret_cast %[[IMG]] {{.*}} to memref<?x?x2xf32, strided<[?, 2, 1]>>
// CHECK-NEXT: %[[SV:.*]] = memref.subview %[[IMG]][0, 0, 1] [%[[H]], %[[W]], %[[LAST]]] [1, 1, 1]
// CHECK-NEXT: %{{.*}}, %{{.*}}, %[[SSZ:.*]]:3, %[[SST:.*]]:3 = memref.extract_strided_metadata %[[SV]]
// CHECK-NEXT: %[[SV2:.*]] = memref.reinterpret_cast %[[SV]] to offset: [1], sizes: [%[[SSZ]]#0, %[[SSZ]]#1, %[[SSZ]]#2], strides: [%[[SST]]#0, 2, 1] : memref<?x?x?xf32, strided<[?, ?, 1], offset: 1>> to memref<?x?x?xf32, strided<[?, 2, 1], offset: 1>>
// CHECK-NEXT: scf.parallel (%[[I:.*]], %[[J:.*]], %[[K:.*]]) = ({{.*}}) to (%[[H]], %[[W]], %[[B2]])
// CHECK-NEXT: %[[R:.*]] = arith.subi %[[LAST]], %[[K]] : index
// CHECK-NEXT: memref.load %[[IMG2]][%[[I]], %[[J]], %[[R]]] : memref<?x?x2xf32, strided<[?, 2, 1]>>
// CHECK-NEXT: memref.load %[[SV2]][%[[I]], %[[J]], %{{.*}}] : memref<?x?x?xf32, strided<[?, 2, 1], offset: 1>>
// CHECK-NEXT: memref.load %[[WEIGHT]][%[[K]]] : memref<?xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: memref.store %{{.*}}, %[[OTHER]][%[[I]], %[[J]], %{{.*}}] : memref<?x?x?xf32>
// CHECK: scf.if
// CHECK: scf.if
// The fallback still uses the original values.
// CHECK: } else {
// CHECK-NEXT: scf.parallel ({{.*}}) = ({{.*}}) to (%[[H]], %[[W]], %[[C]])
// CHECK-NEXT: arith.subi %[[OLAST]], %{{.*}} : index
// CHECK-NEXT: memref.load %[[IMG]][
// CHECK-NEXT: memref.load %[[OSV]][
// CHECK: return
func.func @flip(%img: memref<?x?x?xf32>, %weight: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %h = memref.dim %img, %c0 : memref<?x?x?xf32>
  %w = memref.dim %img, %c1 : memref<?x?x?xf32>
  %ch = memref.dim %img, %c2 : memref<?x?x?xf32>
  %other = memref.alloc(%h, %w, %w) : memref<?x?x?xf32>
  %last = arith.subi %ch, %c1 : index
  %sv = memref.subview %img[0, 0, 1] [%h, %w, %last] [1, 1, 1] : memref<?x?x?xf32> to memref<?x?x?xf32, strided<[?, ?, 1], offset: 1>>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%h, %w, %ch) step (%c1, %c1, %c1) {
    %r = arith.subi %last, %k : index
    %x = memref.load %img[%i, %j, %r] : memref<?x?x?xf32>
    %y = memref.load %sv[%i, %j, %c0] : memref<?x?x?xf32, strided<[?, ?, 1], offset: 1>>
    %m = memref.load %weight[%k] : memref<?xf32>
    %s = arith.addf %x, %y : f32
    %z = arith.mulf %s, %m : f32
    memref.store %z, %other[%i, %j, %c0] : memref<?x?x?xf32>
    scf.reduce
  }
  return
}

// Two loops: versioned when the body loads a 1-D buffer at the innermost
// index alone (a per-channel vector).
// CHECK-LABEL: func.func @per_channel
// CHECK-SAME: (%[[A:[^:]*]]: memref<?x?xf32>, %[[MEAN:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<?x?xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x?xf32>
// CHECK: %[[C:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x?xf32>
// CHECK: arith.cmpi eq, %[[C]], %{{.*}} : index
// CHECK: %[[A2:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [%{{.*}}#0, 2], strides: [2, 1] : memref<?x?xf32> to memref<?x2xf32, strided<[2, 1]>>
// CHECK-NEXT: scf.parallel ({{.*}}) = ({{.*}}) to (%[[N]], %{{.*}})
// CHECK-NEXT: memref.load %[[A2]]
// An argument buffer is not known to share the extent: not versioned.
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: arith.cmpi eq, %[[C]], %{{.*}} : index
// CHECK: memref.reinterpret_cast %[[A]] {{.*}} to memref<?x3xf32, strided<[3, 1]>>
// CHECK: arith.cmpi eq, %[[C]], %{{.*}} : index
// CHECK: memref.reinterpret_cast %[[A]] {{.*}} to memref<?x4xf32, strided<[4, 1]>>
// CHECK: } else {
// CHECK-NEXT: scf.parallel ({{.*}}) = ({{.*}}) to (%[[N]], %[[C]])
// CHECK-NEXT: memref.load %[[A]]
func.func @per_channel(%a: memref<?x?xf32>, %mean: memref<?xf32>, %out: memref<?x?xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %ch = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %k) = (%c0, %c0) to (%n, %ch) step (%c1, %c1) {
    %x = memref.load %a[%i, %k] : memref<?x?xf32>
    %m = memref.load %mean[%k] : memref<?xf32>
    %v = arith.subf %x, %m : f32
    memref.store %v, %out[%i, %k] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// Left alone: two loops without a per-channel load, three loops without
// one (an elementwise image op: kiln-flatten-parallel-nests makes it one
// loop), a constant innermost bound, a non-zero lower bound, a bound that
// is not a memref.dim, and a single loop.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: scf.if
// CHECK-NOT: memref.reinterpret_cast
// CHECK-COUNT-6: scf.parallel
// CHECK-NOT: scf.if
// CHECK-NOT: memref.reinterpret_cast
// CHECK: return
func.func @kept(%a: memref<?x?xf32>, %b: memref<?x3x?xf32>, %mean: memref<?xf32>, %n: index,
                %img: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %rows = memref.dim %a, %c0 : memref<?x?xf32>
  %cols = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    %y = arith.negf %x : f32
    memref.store %y, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  %ia = memref.dim %img, %c0 : memref<?x?x?xf32>
  %ib = memref.dim %img, %c1 : memref<?x?x?xf32>
  %ic = memref.dim %img, %c2 : memref<?x?x?xf32>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%ia, %ib, %ic) step (%c1, %c1, %c1) {
    %x = memref.load %img[%i, %j, %k] : memref<?x?x?xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %img[%i, %j, %k] : memref<?x?x?xf32>
    scf.reduce
  }
  %bd = memref.dim %b, %c0 : memref<?x3x?xf32>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%bd, %bd, %c3) step (%c1, %c1, %c1) {
    %x = memref.load %b[%i, %k, %j] : memref<?x3x?xf32>
    memref.store %x, %b[%i, %k, %j] : memref<?x3x?xf32>
    scf.reduce
  }
  %b2 = memref.dim %b, %c2 : memref<?x3x?xf32>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c1) to (%bd, %c3, %b2) step (%c1, %c1, %c1) {
    %x = memref.load %b[%i, %j, %k] : memref<?x3x?xf32>
    memref.store %x, %b[%i, %j, %k] : memref<?x3x?xf32>
    scf.reduce
  }
  scf.parallel (%i, %k) = (%c0, %c0) to (%rows, %n) step (%c1, %c1) {
    %x = memref.load %mean[%k] : memref<?xf32>
    memref.store %x, %a[%i, %k] : memref<?x?xf32>
    scf.reduce
  }
  scf.parallel (%k) = (%c0) to (%cols) step (%c1) {
    %x = memref.load %mean[%k] : memref<?xf32>
    memref.store %x, %mean[%k] : memref<?xf32>
    scf.reduce
  }
  return
}
