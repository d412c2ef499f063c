// RUN: kiln-opt %s -p kiln-alias-scopes | filecheck %s

// Each access's pointer is traced to its buffer: an entry argument (through
// the descriptor's slot 1), an allocation, or a body's context field, which
// stands for what each call site stores there. Buffers known apart get
// scopes that say so; accesses of one buffer, or of a buffer kiln cannot
// trace, say nothing.

// CHECK-DAG: #[[DOMAIN:.*]] = #llvm.alias_scope_domain<{{.*}}description = "body">
// CHECK-DAG: #[[S0:alias_scope[0-9]*]] = #llvm.alias_scope<{{.*}}domain = #[[DOMAIN]]>
// CHECK-DAG: #[[S1:alias_scope[0-9]*]] = #llvm.alias_scope<{{.*}}domain = #[[DOMAIN]]>
// CHECK-DAG: #[[EDOMAIN:.*]] = #llvm.alias_scope_domain<{{.*}}description = "entry">

llvm.func @kiln_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @sink(!llvm.ptr)

// A parallel body reading field 0 and writing field 1. Its two call sites
// pass (a, b) and (b, a): field 0 and field 1 are different arguments at
// both, so the load and the store are declared apart.
// CHECK-LABEL: llvm.func @body
// CHECK: llvm.load %{{.*}} {alias_scopes = [#[[S0]]], noalias_scopes = [#[[S1]]]} : !llvm.ptr -> f64
// CHECK: llvm.store %{{.*}}, %{{.*}} {alias_scopes = [#[[S1]]], noalias_scopes = [#[[S0]]]} : f64, !llvm.ptr
llvm.func @body(%ctx: !llvm.ptr, %lo: i64, %hi: i64) {
  %f0 = llvm.getelementptr %ctx[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  %d0 = llvm.load %f0 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
  %f1 = llvm.getelementptr %ctx[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  %d1 = llvm.load %f1 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
  %p0 = llvm.extractvalue %d0[1] : !llvm.struct<(ptr, ptr, i64)>
  %a0 = llvm.getelementptr %p0[%lo] : (!llvm.ptr, i64) -> !llvm.ptr, f64
  %v = llvm.load %a0 : !llvm.ptr -> f64
  %p1 = llvm.extractvalue %d1[1] : !llvm.struct<(ptr, ptr, i64)>
  %a1 = llvm.getelementptr %p1[%lo] : (!llvm.ptr, i64) -> !llvm.ptr, f64
  llvm.store %v, %a1 : f64, !llvm.ptr
  llvm.return
}

// The same shape, called with one buffer in both fields (an in-place
// update): nothing is declared apart.
// CHECK-LABEL: llvm.func @in_place
// CHECK-NOT: noalias_scopes
// CHECK: llvm.return
llvm.func @in_place(%ctx: !llvm.ptr, %lo: i64, %hi: i64) {
  %f0 = llvm.getelementptr %ctx[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  %d0 = llvm.load %f0 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
  %f1 = llvm.getelementptr %ctx[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  %d1 = llvm.load %f1 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
  %p0 = llvm.extractvalue %d0[1] : !llvm.struct<(ptr, ptr, i64)>
  %a0 = llvm.getelementptr %p0[%lo] : (!llvm.ptr, i64) -> !llvm.ptr, f64
  %v = llvm.load %a0 : !llvm.ptr -> f64
  %p1 = llvm.extractvalue %d1[1] : !llvm.struct<(ptr, ptr, i64)>
  %a1 = llvm.getelementptr %p1[%hi] : (!llvm.ptr, i64) -> !llvm.ptr, f64
  llvm.store %v, %a1 : f64, !llvm.ptr
  llvm.return
}

// A body whose address also goes elsewhere: its fields are unknown.
// CHECK-LABEL: llvm.func @escapes
// CHECK-NOT: noalias_scopes
// CHECK: llvm.return
llvm.func @escapes(%ctx: !llvm.ptr, %lo: i64, %hi: i64) {
  %f0 = llvm.getelementptr %ctx[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  %d0 = llvm.load %f0 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
  %f1 = llvm.getelementptr %ctx[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  %d1 = llvm.load %f1 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64)>
  %p0 = llvm.extractvalue %d0[1] : !llvm.struct<(ptr, ptr, i64)>
  %v = llvm.load %p0 : !llvm.ptr -> f64
  %p1 = llvm.extractvalue %d1[1] : !llvm.struct<(ptr, ptr, i64)>
  llvm.store %v, %p1 : f64, !llvm.ptr
  llvm.return
}

// The entry: arguments a (slot 1 is %a1) and b (%b1), a buffer it
// allocates, and the calls. Its own accesses: a load of a, a store into the
// allocation (apart), and a store through a descriptor a loop carries
// (unknown: no metadata).
// CHECK-LABEL: llvm.func @entry
llvm.func @entry(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64, %b0: !llvm.ptr, %b1: !llvm.ptr, %b2: i64, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c8 = llvm.mlir.constant(8 : i64) : i64
  %c64 = llvm.mlir.constant(64 : i64) : i64
  %c63 = llvm.mlir.constant(63 : i64) : i64
  %u = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64)>
  %da0 = llvm.insertvalue %a0, %u[0] : !llvm.struct<(ptr, ptr, i64)>
  %da1 = llvm.insertvalue %a1, %da0[1] : !llvm.struct<(ptr, ptr, i64)>
  %da = llvm.insertvalue %a2, %da1[2] : !llvm.struct<(ptr, ptr, i64)>
  %db0 = llvm.insertvalue %b0, %u[0] : !llvm.struct<(ptr, ptr, i64)>
  %db1 = llvm.insertvalue %b1, %db0[1] : !llvm.struct<(ptr, ptr, i64)>
  %db = llvm.insertvalue %b2, %db1[2] : !llvm.struct<(ptr, ptr, i64)>
  // An allocation, aligned as MLIR aligns one.
  %raw = llvm.call @_mlir_memref_to_llvm_alloc(%c64) : (i64) -> !llvm.ptr
  %int = llvm.ptrtoint %raw : !llvm.ptr to i64
  %bumped = llvm.add %int, %c63 : i64
  %rem = llvm.urem %bumped, %c64 : i64
  %down = llvm.sub %bumped, %rem : i64
  %aligned = llvm.inttoptr %down : i64 to !llvm.ptr
  %dt0 = llvm.insertvalue %raw, %u[0] : !llvm.struct<(ptr, ptr, i64)>
  %dt = llvm.insertvalue %aligned, %dt0[1] : !llvm.struct<(ptr, ptr, i64)>
  // CHECK: llvm.load %{{.*}} {alias_scopes = [#[[EA:alias_scope[0-9]*]]], noalias_scopes = [#[[ET:alias_scope[0-9]*]]]} : !llvm.ptr -> f64
  %pa = llvm.extractvalue %da[1] : !llvm.struct<(ptr, ptr, i64)>
  %x = llvm.load %pa : !llvm.ptr -> f64
  // CHECK: llvm.store %{{.*}}, %{{.*}} {alias_scopes = [#[[ET]]], noalias_scopes = [#[[EA]]]} : f64, !llvm.ptr
  %pt = llvm.extractvalue %dt[1] : !llvm.struct<(ptr, ptr, i64)>
  llvm.store %x, %pt : f64, !llvm.ptr
  // Two sites of @body with the buffers swapped, one of @in_place with b twice.
  %size = llvm.mlir.constant(1 : i64) : i64
  %ctx1 = llvm.alloca %size x !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)> : (i64) -> !llvm.ptr
  %ctx2 = llvm.alloca %size x !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)> : (i64) -> !llvm.ptr
  %ctx3 = llvm.alloca %size x !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)> : (i64) -> !llvm.ptr
  %ctx4 = llvm.alloca %size x !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)> : (i64) -> !llvm.ptr
  %body = llvm.mlir.addressof @body : !llvm.ptr
  %in_place = llvm.mlir.addressof @in_place : !llvm.ptr
  %escapes = llvm.mlir.addressof @escapes : !llvm.ptr
  %g10 = llvm.getelementptr %ctx1[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  llvm.store %da, %g10 : !llvm.struct<(ptr, ptr, i64)>, !llvm.ptr
  %g11 = llvm.getelementptr %ctx1[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  llvm.store %db, %g11 : !llvm.struct<(ptr, ptr, i64)>, !llvm.ptr
  llvm.call @kiln_parallel_for(%body, %ctx1, %c0, %n, %c1) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
  %g20 = llvm.getelementptr %ctx2[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  llvm.store %db, %g20 : !llvm.struct<(ptr, ptr, i64)>, !llvm.ptr
  %g21 = llvm.getelementptr %ctx2[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  llvm.store %da, %g21 : !llvm.struct<(ptr, ptr, i64)>, !llvm.ptr
  llvm.call @kiln_parallel_for(%body, %ctx2, %c0, %n, %c1) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
  %g30 = llvm.getelementptr %ctx3[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  llvm.store %db, %g30 : !llvm.struct<(ptr, ptr, i64)>, !llvm.ptr
  %g31 = llvm.getelementptr %ctx3[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  llvm.store %db, %g31 : !llvm.struct<(ptr, ptr, i64)>, !llvm.ptr
  llvm.call @kiln_parallel_for(%in_place, %ctx3, %c0, %n, %c1) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
  %g40 = llvm.getelementptr %ctx4[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  llvm.store %da, %g40 : !llvm.struct<(ptr, ptr, i64)>, !llvm.ptr
  %g41 = llvm.getelementptr %ctx4[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(struct<(ptr, ptr, i64)>, struct<(ptr, ptr, i64)>)>
  llvm.store %db, %g41 : !llvm.struct<(ptr, ptr, i64)>, !llvm.ptr
  llvm.call @kiln_parallel_for(%escapes, %ctx4, %c0, %n, %c1) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
  llvm.call @sink(%escapes) : (!llvm.ptr) -> ()
  // A loop that swaps a and the allocation each iteration: the carried
  // descriptor may be either, and a store through it is not declared apart
  // from anything (no metadata).
  llvm.br ^loop(%c0, %da, %dt : i64, !llvm.struct<(ptr, ptr, i64)>, !llvm.struct<(ptr, ptr, i64)>)
^loop(%i: i64, %cur: !llvm.struct<(ptr, ptr, i64)>, %next: !llvm.struct<(ptr, ptr, i64)>):
  %pc = llvm.extractvalue %cur[1] : !llvm.struct<(ptr, ptr, i64)>
  // CHECK: llvm.store %{{.*}}, %{{.*}} : f64, !llvm.ptr
  llvm.store %x, %pc : f64, !llvm.ptr
  %i1 = llvm.add %i, %c1 : i64
  %more = llvm.icmp "slt" %i1, %n : i64
  llvm.cond_br %more, ^loop(%i1, %next, %cur : i64, !llvm.struct<(ptr, ptr, i64)>, !llvm.struct<(ptr, ptr, i64)>), ^done
^done:
  llvm.return
}

llvm.func @_mlir_ciface_entry(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) {
  llvm.return
}
