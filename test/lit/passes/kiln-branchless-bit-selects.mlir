// RUN: kiln-opt %s -p 'kiln-branchless-bit-selects{mask=true}' | filecheck %s
// RUN: kiln-opt %s -p kiln-branchless-bit-selects | filecheck %s --check-prefix=SELECT

// crc16's bit step: `if (crc & 1) ^ (byte & 1): crc = (crc >> 1) ^ poly
// else: crc >>= 1`. Both branches are computed before the `if`. With kiln's
// LLVM options (cmovs kept) the result is an `arith.select` of the two; in
// the mask form (LLVM options that turn cmovs back into branches) it is
// `else ^ ((then ^ else) & (0 - ext(bit)))`: no `scf.if`, no i1-based
// select for LLVM to turn back into a branch.
// SELECT-LABEL: func.func @crc_step
// SELECT-NOT: scf.if
// SELECT: %[[C:.*]] = arith.cmpi ne
// SELECT: %[[THEN:.*]] = arith.xori
// SELECT: %[[ELSE:.*]] = arith.shrsi %arg0
// SELECT: %[[R:.*]] = arith.select %[[C]], %[[THEN]], %[[ELSE]] : i64
// SELECT: return %[[R]] : i64
// SELECT-LABEL: func.func @bit_is_zero
// SELECT: arith.select
// SELECT-LABEL: func.func @kept
// SELECT-COUNT-2: scf.if
// CHECK-LABEL: func.func @crc_step
func.func @crc_step(%crc: i64, %byte: i8, %poly: i64) -> i64 {
  %c1 = arith.constant 1 : i64
  %c1_i8 = arith.constant 1 : i8
  %c0_i8 = arith.constant 0 : i8
  %low = arith.andi %crc, %c1 : i64
  %blow = arith.andi %byte, %c1_i8 : i8
  %t = arith.trunci %low : i64 to i8
  // CHECK: %[[BIT:.*]] = arith.xori %{{.*}}, %{{.*}} : i8
  %bit = arith.xori %t, %blow : i8
  %c = arith.cmpi ne, %bit, %c0_i8 : i8
  // CHECK-NOT: scf.if
  // CHECK: %[[SHIFTED:.*]] = arith.shrsi %arg0, %{{.*}} : i64
  // CHECK: %[[THEN:.*]] = arith.xori %[[SHIFTED]], %arg2 : i64
  // CHECK: %[[ELSE:.*]] = arith.shrsi %arg0, %{{.*}} : i64
  // CHECK: %[[WIDE:.*]] = arith.extui %[[BIT]] : i8 to i64
  // CHECK: %[[MASK:.*]] = arith.subi %{{.*}}, %[[WIDE]] : i64
  // CHECK: %[[DIFF:.*]] = arith.xori %[[THEN]], %[[ELSE]] : i64
  // CHECK: %[[PICK:.*]] = arith.andi %[[DIFF]], %[[MASK]] : i64
  // CHECK: %[[R:.*]] = arith.xori %[[ELSE]], %[[PICK]] : i64
  // CHECK: return %[[R]] : i64
  %r = scf.if %c -> (i64) {
    %s = arith.shrsi %crc, %c1 : i64
    %x = arith.xori %s, %poly : i64
    scf.yield %x : i64
  } else {
    %s = arith.shrsi %crc, %c1 : i64
    scf.yield %s : i64
  }
  return %r : i64
}

// `eq` picks the then-branch when the bit is 0: the bit is flipped first.
// CHECK-LABEL: func.func @bit_is_zero
func.func @bit_is_zero(%x: i32, %a: i32, %b: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c0 = arith.constant 0 : i32
  %bit = arith.andi %x, %c1 : i32
  %c = arith.cmpi eq, %bit, %c0 : i32
  // CHECK-NOT: scf.if
  // CHECK: %[[FLIP:.*]] = arith.xori %{{.*}}, %{{.*}} : i32
  // CHECK: arith.subi %{{.*}}, %[[FLIP]] : i32
  %r = scf.if %c -> (i32) {
    scf.yield %a : i32
  } else {
    scf.yield %b : i32
  }
  return %r : i32
}

// A condition that is not a bit (`x > 0`) keeps its `if`, and so does a
// branch that divides (a zero divisor must not be computed on the other path).
// CHECK-LABEL: func.func @kept
func.func @kept(%x: i64, %a: i64, %b: i64) -> (i64, i64) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %pos = arith.cmpi sgt, %x, %c0 : i64
  // CHECK: scf.if
  %r = scf.if %pos -> (i64) {
    scf.yield %a : i64
  } else {
    scf.yield %b : i64
  }
  %bit = arith.andi %x, %c1 : i64
  %odd = arith.cmpi ne, %bit, %c0 : i64
  // CHECK: scf.if
  // CHECK: arith.divsi
  %q = scf.if %odd -> (i64) {
    %d = arith.divsi %a, %b : i64
    scf.yield %d : i64
  } else {
    scf.yield %b : i64
  }
  return %r, %q : i64, i64
}
