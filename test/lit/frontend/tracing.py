# RUN: %PYTHON %s | filecheck %s
"""Stage "jaxpr" of functions with dynamic dims: an int argument used as a
size, a result whose size is computed (an implicit result), and two
arguments that share one named dim."""

import numpy as np

import kiln
import kiln.numpy as knp


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


# A Python int is traced as an i64 scalar that serves as the dim of the arrays
# built from it, so one binary serves every size.
# CHECK-LABEL: TEST: int_argument_as_size
@run
def int_argument_as_size():
    @kiln.qjit
    def f(sz: int):
        a = knp.ones(sz)
        b = a * sz
        return a + b

    print(f(5))
    # CHECK-NEXT: [6. 6. 6. 6. 6.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[]. let
    # CHECK-NEXT:     b:bool[] = ge a 0
    # CHECK-NEXT:     _ = check[kind=ValueError message=negative dimensions are not allowed (got {})] b a
    # CHECK-NEXT:     c:f64[a] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] 1.0 a
    # CHECK-NEXT:     d:f64[] = convert_element_type[new_dtype=f64 weak_type=False] a
    # CHECK-NEXT:     e:f64[a] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] d a
    # CHECK-NEXT:     f:f64[a] = mul c e
    # CHECK-NEXT:     g:f64[a] = add c f
    # CHECK-NEXT:   in (g) }


# The result's size n + 1 is not an input dim: it is returned first, as an
# implicit result, and the array's type refers to it.
# CHECK-LABEL: TEST: computed_size_is_implicit_result
@run
def computed_size_is_implicit_result():
    @kiln.qjit
    def f(x):
        n = x.shape[0]
        return knp.ones(n + 1)

    print(f(np.ones(3)))
    # CHECK-NEXT: [1. 1. 1. 1.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a]. let
    # CHECK-NEXT:     c:i64[] = add a 1
    # CHECK-NEXT:     d:bool[] = ge c 0
    # CHECK-NEXT:     _ = check[kind=ValueError message=negative dimensions are not allowed (got {})] d c
    # CHECK-NEXT:     e:f64[c] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] 1.0 c
    # CHECK-NEXT:   in (c e) }


# Both arguments name axis 0 "n": one dim variable, no run-time check.
# CHECK-LABEL: TEST: shared_named_axis
@run
def shared_named_axis():
    @kiln.qjit(abstracted_axes=({0: "n"}, {0: "n"}))
    def f(x, y):
        return x + y

    print(f(np.ones(3), np.ones(3)))
    # CHECK-NEXT: [2. 2. 2.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a] c:f64[a]. let
    # CHECK-NEXT:     d:f64[a] = add b c
    # CHECK-NEXT:   in (d) }
