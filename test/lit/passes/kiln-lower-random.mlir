// RUN: kiln-opt %s -p kiln-lower-random | filecheck %s

// Each `kiln.random` becomes calls of runtime/random.c: begin with the bit
// generator's kind, load each state word, one call of `kiln_rng_<method>`
// per value (inserted into a new tensor), then the advanced words read back.

// CHECK-DAG: func.func private @kiln_rng_begin(i64)
// CHECK-DAG: func.func private @kiln_rng_set(i64, i64)
// CHECK-DAG: func.func private @kiln_rng_get(i64) -> i64
// CHECK-DAG: func.func private @kiln_rng_normal(f64, f64, f64) -> f64
// CHECK-DAG: func.func private @kiln_rng_integers64(i64, i64, f64, f64) -> i64
// CHECK-DAG: func.func private @kiln_rng_random_f32(f64, f64, f64) -> f64
// CHECK-DAG: func.func private @kiln_rng_seed_mt19937(i64, i64, f64, f64) -> i64

// CHECK-LABEL: func.func @normal
// CHECK-SAME: (%[[S:.*]]: tensor<6xi64>, %[[N:.*]]: tensor<i64>, %[[A:.*]]: tensor<i64>, %[[P:.*]]: tensor<f64>)
func.func @normal(%s: tensor<6xi64>, %n: tensor<i64>, %a: tensor<i64>, %p: tensor<f64>) -> (tensor<6xi64>, tensor<?xf64>) {
  // CHECK-NOT: kiln.random
  // CHECK: %[[PCG:.*]] = arith.constant 0 : i64
  // CHECK-NEXT: call @kiln_rng_begin(%[[PCG]])
  // CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
  // CHECK: %[[W:.*]] = tensor.extract %[[S]][%[[K]]] : tensor<6xi64>
  // CHECK-NEXT: func.call @kiln_rng_set(%{{.*}}, %[[W]])
  // CHECK: %[[COUNT:.*]] = tensor.extract %[[N]][] : tensor<i64>
  // CHECK-NEXT: %[[COUNTI:.*]] = arith.index_cast %[[COUNT]] : i64 to index
  // CHECK: %[[LOC:.*]] = tensor.extract %[[P]][] : tensor<f64>
  // CHECK: %[[EMPTY:.*]] = tensor.empty(%[[COUNTI]]) : tensor<?xf64>
  // CHECK: %[[VALUES:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[COUNTI]] step %{{.*}} iter_args(%[[T:.*]] = %[[EMPTY]])
  // CHECK-NEXT: %[[V:.*]] = func.call @kiln_rng_normal(%[[LOC]], %{{.*}}, %{{.*}}) : (f64, f64, f64) -> f64
  // CHECK-NEXT: %[[T2:.*]] = tensor.insert %[[V]] into %[[T]][%[[I]]] : tensor<?xf64>
  // CHECK-NEXT: scf.yield %[[T2]]
  // CHECK: %[[STATE:.*]] = scf.for
  // CHECK: func.call @kiln_rng_get
  // CHECK: return %[[STATE]], %[[VALUES]] : tensor<6xi64>, tensor<?xf64>
  %s2, %v = "kiln.random"(%s, %n, %a, %a, %p, %p, %p) {method = "normal", bit_generator = "pcg64"} : (tensor<6xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>, tensor<f64>) -> (tensor<6xi64>, tensor<?xf64>)
  return %s2, %v : tensor<6xi64>, tensor<?xf64>
}

// Integer methods take (a, b, p, q); a static count sizes a static tensor.
// CHECK-LABEL: func.func @integers
func.func @integers(%s: tensor<6xi64>, %n: tensor<i64>, %a: tensor<i64>, %p: tensor<f64>) -> tensor<5xi64> {
  // CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<5xi64>
  // CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[EMPTY]]) -> (tensor<5xi64>)
  // CHECK-NEXT: func.call @kiln_rng_integers64(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, f64, f64) -> i64
  %s2, %v = "kiln.random"(%s, %n, %a, %a, %p, %p, %p) {method = "integers64", bit_generator = "pcg64"} : (tensor<6xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>, tensor<f64>) -> (tensor<6xi64>, tensor<5xi64>)
  return %v : tensor<5xi64>
}

// float32 methods return f64 (exact) and are truncated.
// CHECK-LABEL: func.func @floats32
func.func @floats32(%s: tensor<6xi64>, %n: tensor<i64>, %a: tensor<i64>, %p: tensor<f64>) -> tensor<?xf32> {
  // CHECK: %[[V:.*]] = func.call @kiln_rng_random_f32
  // CHECK-NEXT: arith.truncf %[[V]] : f64 to f32
  %s2, %v = "kiln.random"(%s, %n, %a, %a, %p, %p, %p) {method = "random_f32", bit_generator = "pcg64"} : (tensor<6xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>, tensor<f64>) -> (tensor<6xi64>, tensor<?xf32>)
  return %v : tensor<?xf32>
}

// A seeding method draws nothing: one call between loading and reading the
// words; MT19937 is kind 1 with 627 words.
// CHECK-LABEL: func.func @seed
func.func @seed(%s: tensor<627xi64>, %n: tensor<i64>, %a: tensor<i64>, %p: tensor<f64>) -> tensor<627xi64> {
  // CHECK: %[[MT:.*]] = arith.constant 1 : i64
  // CHECK-NEXT: call @kiln_rng_begin(%[[MT]])
  // CHECK: call @kiln_rng_seed_mt19937(
  // CHECK-NOT: scf.for {{.*}} iter_args({{.*}}) -> (tensor<0xi64>)
  // CHECK: func.call @kiln_rng_get
  %s2, %v = "kiln.random"(%s, %n, %a, %a, %p, %p, %p) {method = "seed_mt19937", bit_generator = "mt19937"} : (tensor<627xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>, tensor<f64>) -> (tensor<627xi64>, tensor<0xi64>)
  return %s2 : tensor<627xi64>
}

// A 1-D parameter gives each draw its own value (NumPy's broadcast
// parameters, flattened): it is read inside the loop, a scalar one outside.
// CHECK-LABEL: func.func @per_draw_parameters
// CHECK-SAME: (%{{.*}}: tensor<6xi64>, %{{.*}}: tensor<i64>, %{{.*}}: tensor<i64>, %[[LOCS:.*]]: tensor<?xf64>, %[[SCALE:.*]]: tensor<f64>)
func.func @per_draw_parameters(%s: tensor<6xi64>, %n: tensor<i64>, %a: tensor<i64>, %locs: tensor<?xf64>, %scale: tensor<f64>) -> tensor<?xf64> {
  // CHECK: %[[S:.*]] = tensor.extract %[[SCALE]][] : tensor<f64>
  // CHECK-NEXT: %[[S2:.*]] = tensor.extract %[[SCALE]][] : tensor<f64>
  // CHECK: scf.for %[[I:.*]] = {{.*}} iter_args
  // CHECK-NEXT: %[[LOC:.*]] = tensor.extract %[[LOCS]][%[[I]]] : tensor<?xf64>
  // CHECK-NEXT: func.call @kiln_rng_normal(%[[LOC]], %[[S]], %[[S2]])
  %s2, %v = "kiln.random"(%s, %n, %a, %a, %locs, %scale, %scale) {method = "normal", bit_generator = "pcg64"} : (tensor<6xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<?xf64>, tensor<f64>, tensor<f64>) -> (tensor<6xi64>, tensor<?xf64>)
  return %v : tensor<?xf64>
}
