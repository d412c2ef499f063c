// RUN: kiln-opt %s -p kiln-expand-exp | filecheck %s

// Scalar f32/f64 math.exp becomes arith ops (range reduction, Horner
// polynomial, exponent bits), which LLVM can vectorize; NaN is passed through.
// CHECK-NOT: math.exp %{{.*}} : f{{32|64}}

// CHECK-LABEL: func.func @exp_f32
// CHECK-SAME: (%[[X:.*]]: f32)
func.func @exp_f32(%x: f32) -> f32 {
  // CHECK: %[[HI:.*]] = arith.minnumf %[[X]]
  // CHECK: arith.maxnumf %[[HI]]
  // CHECK: math.floor
  // CHECK-COUNT-7: arith.addf {{.*}} fastmath<contract> : f32
  // CHECK: arith.fptosi {{.*}} : f32 to i32
  // CHECK: arith.shli {{.*}} : i32
  // CHECK: arith.bitcast {{.*}} : i32 to f32
  // CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
  // CHECK-NEXT: %[[R:.*]] = arith.select %[[NAN]], %[[X]], %{{.*}} {kiln.vector_math} : f32
  // CHECK-NEXT: return %[[R]] : f32
  %y = math.exp %x : f32
  return %y : f32
}

// CHECK-LABEL: func.func @exp_f64
func.func @exp_f64(%x: f64) -> f64 {
  // CHECK-COUNT-13: arith.addf {{.*}} fastmath<contract> : f64
  // CHECK: arith.bitcast {{.*}} : i64 to f64
  %y = math.exp %x : f64
  return %y : f64
}

// Other element types (and vectors) are left to the math lowering.
// CHECK-LABEL: func.func @exp_f16
func.func @exp_f16(%x: f16) -> f16 {
  // CHECK: math.exp %{{.*}} : f16
  %y = math.exp %x : f16
  return %y : f16
}
