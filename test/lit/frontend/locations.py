# RUN: %PYTHON %s | filecheck %s
"""Source locations: `jaxpr.pretty(source_info=True)` ends each equation
with the user's `file.py:LINE`, and every op lowered from an equation
carries `loc("prim"("file.py":LINE:COL))`; kiln-lower-checks turns a
check's location into the end of its message."""

import numpy as np

import kiln
from kiln.compiler.lowering import lower_jaxpr_to_module
from kiln.dialects import new_context
from kiln.compiler.pipeline import run_passes


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


@kiln.qjit
def scaled_row(x, i):
    y = np.cumsum(x * 2.0, axis=0)
    return y[i]


scaled_row(np.ones(3), 0)


# CHECK-LABEL: TEST: jaxpr_with_source_info
@run
def jaxpr_with_source_info():
    print(scaled_row.jaxpr.pretty(source_info=True))
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a] c:i64[]. let
    # CHECK-NEXT:     d:f64[a] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] 2.0 a  # locations.py:23
    # CHECK-NEXT:     e:f64[a] = mul b d  # locations.py:23
    # CHECK-NEXT:     f:f64[a] = cumsum[axis=0] e  # locations.py:23
    # CHECK-NEXT:     g:bool[] = lt c 0  # locations.py:24
    # CHECK:          _ = check[kind=IndexError message=index {} is out of bounds for axis 0 with size {}] l c a  # locations.py:24
    # CHECK:          o:f64[] = copy n  # locations.py:24
    # CHECK-NEXT:   in (o) }
    # The default printing has no source lines.
    print(scaled_row.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a] c:i64[]. let
    # CHECK-NOT: locations.py
    # CHECK:        in (o) }


# Ops carry loc("primitive"("file":line:col)): `x * 2.0` starts at column 19
# of line 23, `np.cumsum(...)` at column 9, `y[i]` at column 12 of line 24.
# CHECK-LABEL: TEST: mlir_with_locations
@run
def mlir_with_locations():
    ctx = new_context()
    module = lower_jaxpr_to_module(scaled_row.jaxpr, "scaled_row", ctx)
    print(module.operation.get_asm(enable_debug_info=True))
    # CHECK: stablehlo.multiply {{.*}} loc(#[[MUL:loc[0-9]+]])
    # CHECK: "kiln.scan"({{.*}}) {axis = 0 : i64, combiner = "add", reverse = false} {{.*}} loc(#[[SCAN:loc[0-9]+]])
    # CHECK: "kiln.check"({{.*}}) {kind = "IndexError", message = "index {} is out of bounds for axis 0 with size {}"} {{.*}} loc(#[[CHECK:loc[0-9]+]])
    # CHECK: stablehlo.real_dynamic_slice {{.*}} loc(#[[SLICE:loc[0-9]+]])
    # CHECK-DAG: #[[TIMES:loc[0-9]+]] = loc("{{.*}}locations.py":23:19)
    # CHECK-DAG: #[[CUMSUM:loc[0-9]+]] = loc("{{.*}}locations.py":23:9)
    # CHECK-DAG: #[[ROW:loc[0-9]+]] = loc("{{.*}}locations.py":24:12)
    # CHECK-DAG: #[[MUL]] = loc("mul"(#[[TIMES]]))
    # CHECK-DAG: #[[SCAN]] = loc("cumsum"(#[[CUMSUM]]))
    # CHECK-DAG: #[[CHECK]] = loc("check"(#[[ROW]]))
    # CHECK-DAG: #[[SLICE]] = loc("slice"(#[[ROW]]))
    with ctx:
        run_passes(module, ["kiln-lower-checks"], "linalg")
    print(module)
    # The check's message ends with its source line.
    # CHECK: llvm.mlir.global private constant @kiln_check_message_0("index {} is out of bounds for axis 0 with size {} (at {{.*}}locations.py:24)\00")
