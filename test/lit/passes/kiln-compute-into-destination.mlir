// RUN: kiln-opt %s -p kiln-compute-into-destination | filecheck %s
// RUN: kiln-opt %s -p 'kiln-compute-into-destination,one-shot-bufferize{bufferize-function-boundaries},memref-copy-to-linalg' | filecheck %s --check-prefix=BUF

// `B[1:-1] = 0.5 * (A[:-2] + A[2:])`: the expression is computed straight into
// the slice of B it is written to. After bufferization the generic writes a
// subview of B: no temporary, and the write of the slice into itself is no copy.

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @stencil
// BUF-LABEL: func.func @stencil
func.func @stencil(%a: tensor<?xf64> {bufferization.writable = false}, %b: tensor<?xf64>, %n: index) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %half = arith.constant 0.5 : f64
  %l = tensor.extract_slice %a[0] [%n] [1] : tensor<?xf64> to tensor<?xf64>
  %r = tensor.extract_slice %a[2] [%n] [1] : tensor<?xf64> to tensor<?xf64>
  %e = tensor.empty(%n) : tensor<?xf64>
  // CHECK: %[[WINDOW:.*]] = tensor.extract_slice %arg1[1] [%arg2] [1]
  // CHECK-NEXT: %[[V:.*]] = linalg.generic {{.*}} outs(%[[WINDOW]] : tensor<?xf64>)
  // CHECK: tensor.insert_slice %[[V]] into %arg1[1] [%arg2] [1]
  // BUF-NOT: memref.alloc
  // BUF: %[[SUB:.*]] = memref.subview %arg1[1] [%arg2] [1]
  // BUF: linalg.generic {{.*}} outs(%[[SUB]] :
  // BUF-NOT: memref.alloc
  // BUF-NOT: linalg.copy
  // BUF: return
  %v = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%l, %r : tensor<?xf64>, tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%x: f64, %y: f64, %out: f64):
    %s = arith.addf %x, %y : f64
    %m = arith.mulf %s, %half : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  %w = tensor.insert_slice %v into %b[1] [%n] [1] : tensor<?xf64> into tensor<?xf64>
  return %w : tensor<?xf64>
}

// `A[1:-1] = A[:-2] + A[2:]` reads the destination at other positions: NumPy
// computes the whole right-hand side before writing, so the result keeps its
// temporary (one copy into A; computing in place would make bufferization
// copy both inputs instead).
// CHECK-LABEL: func.func @overlap
// BUF-LABEL: func.func @overlap
func.func @overlap(%a: tensor<?xf64>, %n: index) -> tensor<?xf64> {
  %l = tensor.extract_slice %a[0] [%n] [1] : tensor<?xf64> to tensor<?xf64>
  %r = tensor.extract_slice %a[2] [%n] [1] : tensor<?xf64> to tensor<?xf64>
  %e = tensor.empty(%n) : tensor<?xf64>
  // CHECK: %[[E:.*]] = tensor.empty
  // CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<?xf64>)
  // BUF-COUNT-1: memref.alloc
  // BUF: linalg.generic
  // BUF: linalg.copy
  // BUF-NOT: linalg.copy
  // BUF: return
  %v = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%l, %r : tensor<?xf64>, tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%x: f64, %y: f64, %out: f64):
    %s = arith.addf %x, %y : f64
    linalg.yield %s : f64
  } -> tensor<?xf64>
  %w = tensor.insert_slice %v into %a[1] [%n] [1] : tensor<?xf64> into tensor<?xf64>
  return %w : tensor<?xf64>
}

// `A[1:-1] = 2 * A[1:-1]` reads only the elements it writes: it overwrites
// them in place (the input is the output).
// CHECK-LABEL: func.func @same_window
// BUF-LABEL: func.func @same_window
func.func @same_window(%a: tensor<?xf64>, %n: index) -> tensor<?xf64> {
  // CHECK: %[[WINDOW:.*]] = tensor.extract_slice %arg0[1] [%arg1] [1]
  // CHECK: linalg.generic {{.*}} ins(%[[WINDOW]] : tensor<?xf64>) outs(%[[WINDOW]] : tensor<?xf64>)
  %l = tensor.extract_slice %a[1] [%n] [1] : tensor<?xf64> to tensor<?xf64>
  %e = tensor.empty(%n) : tensor<?xf64>
  // BUF-NOT: memref.alloc
  // BUF-NOT: linalg.copy
  // BUF: return
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%l : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%x: f64, %out: f64):
    %s = arith.addf %x, %x : f64
    linalg.yield %s : f64
  } -> tensor<?xf64>
  %w = tensor.insert_slice %v into %a[1] [%n] [1] : tensor<?xf64> into tensor<?xf64>
  return %w : tensor<?xf64>
}

// Left alone: the value has another use, or the generic reads its output.
// CHECK-LABEL: func.func @kept
func.func @kept(%a: tensor<?xf64>, %b: tensor<?xf64>, %n: index) -> (tensor<?xf64>, tensor<?xf64>) {
  %e = tensor.empty(%n) : tensor<?xf64>
  // CHECK: %[[E:.*]] = tensor.empty
  // CHECK: %[[V:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<?xf64>)
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%x: f64, %out: f64):
    %s = arith.addf %x, %x : f64
    linalg.yield %s : f64
  } -> tensor<?xf64>
  %w = tensor.insert_slice %v into %b[1] [%n] [1] : tensor<?xf64> into tensor<?xf64>
  return %w, %v : tensor<?xf64>, tensor<?xf64>
}

// A whole written argument (`out[:] = 2 * a`): the function returns its new
// value (a result marked kiln.written_argument); the generic writes into the
// argument itself, and bufferization computes into the caller's buffer.
// CHECK-LABEL: func.func @whole_argument
// BUF-LABEL: func.func @whole_argument
func.func @whole_argument(%a: tensor<?xf64>, %out: tensor<?xf64> {bufferization.writable = true}, %n: index)
    -> (tensor<?xf64> {kiln.written_argument = 1 : i64}) {
  %e = tensor.empty(%n) : tensor<?xf64>
  // CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<?xf64>) outs(%arg1 : tensor<?xf64>)
  // BUF-NOT: memref.alloc
  // BUF-NOT: linalg.copy
  // BUF: return %arg1
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%x: f64, %o: f64):
    %s = arith.addf %x, %x : f64
    linalg.yield %s : f64
  } -> tensor<?xf64>
  return %v : tensor<?xf64>
}

// Left alone when the expression reads the argument (`out[:] = out[::-1]`
// would overwrite elements it has still to read).
// CHECK-LABEL: func.func @whole_argument_read
func.func @whole_argument_read(%out: tensor<?xf64> {bufferization.writable = true}, %n: index)
    -> (tensor<?xf64> {kiln.written_argument = 0 : i64}) {
  %e = tensor.empty(%n) : tensor<?xf64>
  %r = tensor.extract_slice %out[0] [%n] [1] : tensor<?xf64> to tensor<?xf64>
  // CHECK: %[[E:.*]] = tensor.empty
  // CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<?xf64>)
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%r : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%x: f64, %o: f64):
    %s = arith.addf %x, %x : f64
    linalg.yield %s : f64
  } -> tensor<?xf64>
  return %v : tensor<?xf64>
}
