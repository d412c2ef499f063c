// RUN: kiln-opt %s -p kiln-divide-by-reciprocal | filecheck %s
// RUN: kiln-opt %s -p "kiln-divide-by-reciprocal{enabled=false}" | filecheck %s --check-prefix=OFF

// OFF-NOT: math.fma
// OFF-NOT: kiln.rarely_taken

// A scalar divisor: its reciprocal and range check once, before the nest;
// the nest runs over blocks of 1024, each computing x * y corrected by two
// fmas, flagging huge and tiny dividends, and redone with the division
// when a dividend was flagged or the divisor is out of range.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[X:.*]]: memref<?xf64>, %[[C:.*]]: f64, %[[N:.*]]: index)
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK: %[[B:.*]] = arith.constant 1024 : index
// CHECK: %[[BLOCKS:.*]] = arith.ceildivsi %{{.*}}, %[[B]]
// CHECK: %[[Y:.*]] = arith.divf %{{.*}}, %[[C]] : f64
// CHECK: %[[AC:.*]] = math.absf %[[C]]
// CHECK: arith.cmpf oge, %[[AC]]
// CHECK: arith.cmpf ole, %[[AC]]
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: scf.parallel (%[[BI:.*]]) = (%{{.*}}) to (%[[BLOCKS]])
// CHECK:   %[[S:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:   %[[E0:.*]] = arith.addi %[[S]], %[[B]]
// CHECK:   %[[E:.*]] = arith.minsi %[[E0]], %[[N]]
// CHECK:   %[[BAD:.*]] = scf.for %[[J:.*]] = %[[S]] to %[[E]] step %{{.*}} iter_args(%[[ACC:.*]] = %false) -> (i1) {
// CHECK:     %[[V:.*]] = memref.load %[[X]][%[[J]]]
// CHECK:     %[[Q:.*]] = arith.mulf %[[V]], %[[Y]]
// CHECK:     %[[NQ:.*]] = arith.negf %[[Q]]
// CHECK:     %[[R:.*]] = math.fma %[[NQ]], %[[C]], %[[V]]
// CHECK:     %[[Q2:.*]] = math.fma %[[R]], %[[Y]], %[[Q]]
// CHECK:     %[[RES:.*]] = math.copysign %[[Q2]], %[[Q]]
// CHECK:     %[[A:.*]] = math.absf %[[V]]
// CHECK:     arith.cmpf ogt, %[[A]]
// CHECK:     arith.cmpf olt, %[[A]]
// CHECK:     arith.cmpf ogt, %[[A]]
// CHECK:     %[[NEXT:.*]] = arith.ori %[[ACC]], %{{.*}} : i1
// CHECK:     memref.store %[[RES]], %[[OUT]][%[[J]]]
// CHECK:     scf.yield %[[NEXT]] : i1
// CHECK:   %[[NOTOK:.*]] = arith.xori %[[OK]], %true
// CHECK:   %[[REDO:.*]] = arith.ori %[[BAD]], %[[NOTOK]]
// CHECK:   scf.if %[[REDO]] {
// CHECK:     scf.for %[[J2:.*]] = %[[S]] to %[[E]]
// CHECK:       %[[V2:.*]] = memref.load %[[X]][%[[J2]]]
// CHECK:       %[[D:.*]] = arith.divf %[[V2]], %[[C]] : f64
// CHECK:       memref.store %[[D]], %[[OUT]][%[[J2]]]
// CHECK:   } {kiln.rarely_taken}
// CHECK:   scf.reduce
func.func @scalar(%x: memref<?xf64>, %c: f64, %n: index) -> memref<?xf64> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc(%n) : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf64>
    %q = arith.divf %v, %c : f64
    memref.store %q, %out[%i] : memref<?xf64>
    scf.reduce
  }
  return %out : memref<?xf64>
}

// One divisor per row (softmax's e / s[i]): loaded once per row and block,
// before the loop over the block; the other dims stay parallel. f32 has
// its own bounds.
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[E:.*]]: memref<?x?xf32>, %[[SUMS:.*]]: memref<?xf32>, %[[O:.*]]: memref<?x?xf32>
// CHECK: scf.parallel (%[[I:.*]], %{{.*}}) =
// CHECK:   %[[T:.*]] = memref.load %[[SUMS]][%[[I]]]
// CHECK:   %[[YT:.*]] = arith.divf %{{.*}}, %[[T]] : f32
// CHECK:   arith.constant 9.31322574E-10 : f32
// CHECK:   scf.for
// CHECK-NOT:   memref.load %[[SUMS]]
// CHECK:     arith.mulf %{{.*}}, %[[YT]] : f32
// CHECK:     arith.constant 1.1529215E+18 : f32
// CHECK:     memref.store %{{.*}}, %[[O]]
// CHECK:   scf.if
// CHECK:     memref.load %[[SUMS]][%[[I]]]
// CHECK:     arith.divf
// CHECK:   } {kiln.rarely_taken}
func.func @rows(%e: memref<?x?xf32>, %s: memref<?xf32>, %out: memref<?x?xf32>, %m: index, %n: index) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    %v = memref.load %e[%i, %j] : memref<?x?xf32>
    %t = memref.load %s[%i] : memref<?xf32>
    %q = arith.divf %v, %t : f32
    memref.store %q, %out[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// Left alone: an in-place update (the redo would read what the first pass
// wrote), a store into a buffer a load reaches through a loop's carried
// value, a divisor that changes along the last dimension, a store to the
// argument of a function that is not an entry (it may be another argument),
// an f16 division, and a body with a call.
// CHECK-LABEL: func.func @in_place
// CHECK-NOT: math.fma
// CHECK: arith.divf
// CHECK: return
func.func @in_place(%x: memref<?xf64>, %c: f64, %n: index) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf64>
    %q = arith.divf %v, %c : f64
    memref.store %q, %x[%i] : memref<?xf64>
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @carried
// CHECK-NOT: math.fma
// CHECK: return
func.func @carried(%c: f64, %n: index, %steps: index) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc(%n) : memref<?xf64>
  %b = memref.alloc(%n) : memref<?xf64>
  %r:2 = scf.for %t = %c0 to %steps step %c1 iter_args(%src = %a, %dst = %b) -> (memref<?xf64>, memref<?xf64>) {
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %v = memref.load %src[%i] : memref<?xf64>
      %q = arith.divf %v, %c : f64
      memref.store %q, %a[%i] : memref<?xf64>
      scf.reduce
    }
    scf.yield %dst, %src : memref<?xf64>, memref<?xf64>
  }
  return
}

// CHECK-LABEL: func.func @varying
// CHECK-NOT: math.fma
// CHECK: return
func.func @varying(%x: memref<?xf64>, %d: memref<?xf64>, %n: index) -> memref<?xf64> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc(%n) : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = memref.load %d[%i] : memref<?xf64>
    %q = arith.divf %v, %w : f64
    memref.store %q, %out[%i] : memref<?xf64>
    scf.reduce
  }
  return %out : memref<?xf64>
}

// CHECK-LABEL: func.func @helper
// CHECK-NOT: math.fma
// CHECK: return
func.func @helper(%x: memref<?xf64>, %out: memref<?xf64>, %c: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf64>
    %q = arith.divf %v, %c : f64
    memref.store %q, %out[%i] : memref<?xf64>
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @half
// CHECK-NOT: math.fma
// CHECK: return
func.func @half(%x: memref<?xf16>, %c: f16, %n: index) -> memref<?xf16> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc(%n) : memref<?xf16>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf16>
    %q = arith.divf %v, %c : f16
    memref.store %q, %out[%i] : memref<?xf16>
    scf.reduce
  }
  return %out : memref<?xf16>
}

func.func private @observe(f64)
// CHECK-LABEL: func.func @with_call
// CHECK-NOT: math.fma
// CHECK: return
func.func @with_call(%x: memref<?xf64>, %c: f64, %n: index) -> memref<?xf64> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc(%n) : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf64>
    %q = arith.divf %v, %c : f64
    func.call @observe(%q) : (f64) -> ()
    memref.store %q, %out[%i] : memref<?xf64>
    scf.reduce
  }
  return %out : memref<?xf64>
}
