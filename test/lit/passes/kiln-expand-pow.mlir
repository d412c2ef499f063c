// RUN: kiln-opt %s -p kiln-expand-pow | filecheck %s

// Scalar f32/f64 math.powf by a constant c with 2c an integer, |c| <= 16,
// becomes arith and math ops that LLVM can vectorize (no libm call):
// the exponent bits split x into m * 2^e, m^c is built in double-double
// (fma-exact products, sqrt(m) with its residual, one division for c < 0),
// and 2^(e*c) is applied in two halves. The op that ends the expansion
// carries kiln.vector_math (kiln-wide-vectors widens its function).

// CHECK-LABEL: func.func @inverse_cube_of_distance
// CHECK-SAME: (%[[X:.*]]: f64)
func.func @inverse_cube_of_distance(%x: f64) -> f64 {
  // CHECK-NOT: math.powf
  // CHECK: %[[AX:.*]] = math.absf %[[X]] : f64
  // CHECK: arith.bitcast %[[AX]] : f64 to i64
  // CHECK: %[[S:.*]] = math.sqrt %{{.*}} : f64
  // CHECK: %[[RES:.*]] = math.fma %{{.*}}, %[[S]], %{{.*}} : f64
  // CHECK: arith.divf %[[RES]], %{{.*}} : f64
  // CHECK: %[[Q:.*]] = arith.divf %{{.*}}, %{{.*}} : f64
  // CHECK: math.fma %[[Q]], %{{.*}}, %[[Q]] : f64
  // CHECK: arith.constant 1400 : i64
  // Zero, inf and NaN: the reciprocal of |x| (c < 0).
  // CHECK: %[[REC:.*]] = arith.divf %{{.*}}, %[[AX]] : f64
  // CHECK: arith.select %{{.*}}, %[[REC]], %{{.*}} : f64
  // A negative x (not -inf) has no real half-integer power.
  // CHECK: arith.cmpf olt, %[[X]]
  // CHECK: arith.cmpf one, %[[X]], %{{.*}} : f64
  // CHECK: %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} {kiln.vector_math} : f64
  // CHECK-NEXT: return %[[R]] : f64
  %c = arith.constant -1.5 : f64
  %y = math.powf %x, %c : f64
  return %y : f64
}

// f32 is computed in f64 and rounded once; an odd integer power keeps x's sign.
// CHECK-LABEL: func.func @cube_f32
func.func @cube_f32(%x: f32) -> f32 {
  // CHECK: %[[W:.*]] = arith.extf %{{.*}} : f32 to f64
  // CHECK-NOT: math.sqrt
  // CHECK-NOT: arith.divf
  // CHECK: %[[SIGNED:.*]] = math.copysign %{{.*}}, %[[W]] : f64
  // CHECK-NEXT: %[[R:.*]] = arith.truncf %[[SIGNED]] {kiln.vector_math} : f64 to f32
  // CHECK-NEXT: return %[[R]] : f32
  %c = arith.constant 3.0 : f32
  %y = math.powf %x, %c : f32
  return %y : f32
}

// An even power: no sign, no NaN select; the special values keep |x| itself.
// CHECK-LABEL: func.func @square
func.func @square(%x: f64) -> f64 {
  // CHECK: %[[AX:.*]] = math.absf
  // CHECK-NOT: math.sqrt
  // CHECK-NOT: arith.divf
  // CHECK: %[[R:.*]] = arith.select %{{.*}}, %[[AX]], %{{.*}} {kiln.vector_math} : f64
  // CHECK-NEXT: return %[[R]]
  %c = arith.constant 2.0 : f64
  %y = math.powf %x, %c : f64
  return %y : f64
}

// c = 0.5 is sqrt (NumPy's power gives sqrt's -0 and NaN for -0 and -inf);
// c = 0 is 1 and c = 1 is x, as for pow.
// CHECK-LABEL: func.func @trivial_exponents
// CHECK-SAME: (%[[X:.*]]: f64)
func.func @trivial_exponents(%x: f64) -> (f64, f64, f64) {
  // CHECK: %[[ROOT:.*]] = math.sqrt %[[X]] : f64
  // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
  // CHECK-NOT: math.powf
  // CHECK: return %[[ROOT]], %[[ONE]], %[[X]] : f64, f64, f64
  %half = arith.constant 0.5 : f64
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %a = math.powf %x, %half : f64
  %b = math.powf %x, %zero : f64
  %c = math.powf %x, %one : f64
  return %a, %b, %c : f64, f64, f64
}

// Left to libm: exponents that are not constants, not multiples of 1/2, or
// too large, and other element types.
// CHECK-LABEL: func.func @left_alone
func.func @left_alone(%x: f64, %e: f64, %h: f16) -> (f64, f64, f64, f16) {
  // CHECK-COUNT-4: math.powf
  // CHECK-NOT: math.sqrt
  %third = arith.constant 0.3 : f64
  %big = arith.constant 16.5 : f64
  %two = arith.constant 2.0 : f16
  %a = math.powf %x, %e : f64
  %b = math.powf %x, %third : f64
  %c = math.powf %x, %big : f64
  %d = math.powf %h, %two : f16
  return %a, %b, %c, %d : f64, f64, f64, f16
}
