// RUN: kiln-opt %s -p kiln-block-rows | filecheck %s

// Consecutive outermost nests over the same rows (0 to the same count, step
// 1) whose written buffers are allocations accessed at the nest's own row
// become one nest over blocks of rows; each block runs every nest in turn
// on rows [start, min(start + rows_per_block, rows)). rows_per_block is
// max(8192 / max(iterations per row, 1), 1), the iterations per row summed
// over the nests (here m + m2). The ops between the nests (a memref.dim)
// stay before the block loop.
// CHECK-LABEL: func.func @softmax_like
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x?xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[N:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[M:.*]] = memref.dim %[[X]], %[[C1]]
// CHECK: %[[T:.*]] = memref.alloc(%[[N]], %[[M]])
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc(%[[N]], %[[M]])
// CHECK-NEXT: %[[M2:.*]] = memref.dim %[[T]], %[[C1]]
// CHECK-NOT: scf.parallel
// CHECK: %[[ROW1:.*]] = arith.subi %[[M]], %[[C0]] : index
// CHECK-NEXT: %[[ROW2:.*]] = arith.subi %[[M2]], %[[C0]] : index
// CHECK-NEXT: %[[PER_ROW:.*]] = arith.addi %[[ROW1]], %[[ROW2]] : index
// CHECK-NEXT: %[[ELEMENTS:.*]] = arith.constant 8192 : index
// CHECK-NEXT: %[[AT_LEAST_1:.*]] = arith.maxsi %[[PER_ROW]], %[[ONE:.*]] : index
// CHECK-NEXT: %[[QUOTIENT:.*]] = arith.divsi %[[ELEMENTS]], %[[AT_LEAST_1]] : index
// CHECK-NEXT: %[[BLOCK:.*]] = arith.maxsi %[[QUOTIENT]], %[[ONE]] : index
// CHECK-NEXT: %[[BLOCKS:.*]] = arith.ceildivsi %[[N]], %[[BLOCK]] : index
// CHECK-NEXT: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[BLOCKS]]) step (%[[ONE]]) {
// CHECK-NEXT: %[[START:.*]] = arith.muli %[[B]], %[[BLOCK]] : index
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[START]], %[[BLOCK]] : index
// CHECK-NEXT: %[[STOP:.*]] = arith.minsi %[[END]], %[[N]] : index
// CHECK-NEXT: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[START]], %[[C0]]) to (%[[STOP]], %[[M]])
// CHECK-NEXT: memref.load %[[X]][%[[I]], %[[J]]]
// CHECK-NEXT: math.exp
// CHECK-NEXT: memref.store %{{.*}}, %[[T]][%[[I]], %[[J]]]
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[START]], %[[C0]]) to (%[[STOP]], %[[M2]])
// CHECK-NEXT: memref.load %[[T]][%[[I]], %[[J]]]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: memref.store %{{.*}}, %[[OUT]][%[[I]], %[[J]]]
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[T]]
func.func @softmax_like(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %t = memref.alloc(%n, %m) : memref<?x?xf32>
  %out = memref.alloc(%n, %m) : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %e = math.exp %v : f32
    memref.store %e, %t[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  %m2 = memref.dim %t, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m2) step (%c1, %c1) {
    %v = memref.load %t[%i, %j] : memref<?x?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %out[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<?x?xf32>
  return %out : memref<?x?xf32>
}

// Not blocked: the second nest writes a function argument (another view of
// it could be read at other rows), so each nest stays as it is.
// CHECK-LABEL: func.func @writes_argument
// CHECK-NOT: arith.ceildivsi
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: memref.load
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: memref.load
// CHECK: return
func.func @writes_argument(%x: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %t = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %t[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %t[%i] : memref<?xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// Two nests over the same rows are not merged when the second reads the
// first's buffer through a transposed view (row i of the view is column i
// of the buffer): both stay as they are.
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: arith.ceildivsi
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %{{.*}} : memref<?x?xf32>
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %{{.*}} : memref<?x?xf32, strided<[1, ?]>>
func.func @transposed(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %a = memref.alloc(%n, %n) : memref<?x?xf32>
  %out = memref.alloc(%n, %n) : memref<?x?xf32>
  %t = memref.transpose %a (i, j) -> (j, i) : memref<?x?xf32> to memref<?x?xf32, strided<[1, ?]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    memref.store %v, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    %v = memref.load %t[%i, %j] : memref<?x?xf32, strided<[1, ?]>>
    memref.store %v, %out[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return %out : memref<?x?xf32>
}

// A column slice of the first nest's buffer keeps its rows (offset 0,
// stride 1 in dim 0): kiln-block-sums reads the exp rows of softmax this
// way, in blocks of columns. The nests are blocked together.
// CHECK-LABEL: func.func @column_slice
// CHECK: arith.ceildivsi
// CHECK: scf.parallel (%[[B:.*]]) =
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = ([[S:%[0-9]+]], %{{.*}}) to ([[E:%[0-9]+]], %{{.*}})
// CHECK: memref.store
// CHECK: scf.parallel (%{{.*}}) = ([[S]]) to ([[E]])
// CHECK: memref.load %{{.*}} : memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @column_slice(%x: memref<?x?xf32>, %k: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %a = memref.alloc(%n, %m) : memref<?x?xf32>
  %s = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    memref.store %v, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  %w = arith.subi %m, %k : index
  %cols = memref.subview %a[0, %k] [%n, %w] [1, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %cst, %s[%i] : memref<?xf32>
    scf.for %j = %c0 to %w step %c1 {
      %v = memref.load %cols[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
      %t = memref.load %s[%i] : memref<?xf32>
      %u = arith.addf %t, %v : f32
      memref.store %u, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  memref.dealloc %a : memref<?x?xf32>
  return %s : memref<?xf32>
}

// A slice that starts at another row (row i of the view is row i + 1 of
// the buffer) is not row-local: the nests stay apart.
// CHECK-LABEL: func.func @row_offset_slice
// CHECK-NOT: arith.ceildivsi
// CHECK: return
func.func @row_offset_slice(%x: memref<?x?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %a = memref.alloc(%n, %m) : memref<?x?xf32>
  %s = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    memref.store %v, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  %r = arith.subi %n, %c1 : index
  %rows = memref.subview %a[1, 0] [%r, %m] [1, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %cst, %s[%i] : memref<?xf32>
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %rows[%i, %j] : memref<?x?xf32, strided<[?, 1], offset: ?>>
      %t = memref.load %s[%i] : memref<?xf32>
      %u = arith.addf %t, %v : f32
      memref.store %u, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  memref.dealloc %a : memref<?x?xf32>
  return %s : memref<?xf32>
}
