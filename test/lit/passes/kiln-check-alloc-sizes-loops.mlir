// RUN: kiln-opt %s -p 'kiln-check-alloc-sizes{loops=true}' | filecheck %s

// With loops=true only an alloc of a loop body is checked, in place, and its
// size becomes 0 where a check fails: buffer-loop-hoisting may then move it
// before the loop, where it also runs when the loop runs zero times. The
// alloc is marked so that the pass's later run skips it.
// CHECK-LABEL: func.func @in_a_loop
func.func @in_a_loop(%n: index, %k: index, %out: memref<?xf64>) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[OUTSIDE:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
  // CHECK-NOT: kiln.sizes_checked
  // CHECK: scf.for
  // CHECK: %[[NEG:.*]] = arith.cmpi slt
  // CHECK: %[[BIG:.*]] = arith.cmpf ogt
  // CHECK: scf.if %[[NEG]]
  // CHECK: func.call @kiln_check_failed
  // CHECK: scf.if %[[BIG]]
  // CHECK: func.call @kiln_check_failed
  // CHECK: %[[BAD:.*]] = arith.ori %[[NEG]], %[[BIG]] : i1
  // CHECK: %[[SIZE:.*]] = arith.select %[[BAD]], %{{.*}}, %{{.*}} : index
  // CHECK: memref.alloc(%[[SIZE]]) {kiln.sizes_checked} : memref<?xf64>
  %outside = memref.alloc(%n) : memref<?xf64>
  scf.for %i = %c0 to %k step %c1 {
    %t = memref.alloc(%n) : memref<?xf64>
    memref.copy %t, %out : memref<?xf64> to memref<?xf64>
  }
  return %outside : memref<?xf64>
}
