# RUN: %PYTHON %s | filecheck %s
"""Stage "jaxpr" of kiln.for_loop, kiln.while_loop and kiln.cond: one
equation each, bodies as nested jaxprs, captured values as constants (dims
first), implicit dims when arrays may change size."""

import numpy as np

import kiln
import kiln.numpy as knp


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


# `sz` is both the size of the carried array and a captured scalar of the
# body (`d`), so the carried `f:f64[d]` keeps the dims it entered with.
# CHECK-LABEL: TEST: for_loop_captures
@run
def for_loop_captures():
    @kiln.qjit
    def f(sz):
        a0 = knp.ones(sz)

        @kiln.for_loop(0, 10, 1)
        def loop(i, a):
            return a * sz

        return a0 + loop(a0)

    print(f(3))
    # CHECK-NEXT: [59050. 59050. 59050.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[]. let
    # CHECK-NEXT:     b:bool[] = ge a 0
    # CHECK-NEXT:     _ = check[kind=ValueError message=negative dimensions are not allowed (got {})] b a
    # CHECK-NEXT:     c:f64[a] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] 1.0 a
    # CHECK-NEXT:     d:f64[a] = for_loop[
    # CHECK-NEXT:       body_jaxpr={ lambda e:i64[] ; f:i64[] g:f64[e]. let
    # CHECK-NEXT:             h:f64[] = convert_element_type[new_dtype=f64 weak_type=False] e
    # CHECK-NEXT:             i:f64[e] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] h e
    # CHECK-NEXT:             j:f64[e] = mul g i
    # CHECK-NEXT:           in (j) }
    # CHECK-NEXT:       body_nconsts=1
    # CHECK-NEXT:       num_implicit_inputs=0
    # CHECK-NEXT:       num_implicit_outputs=0
    # CHECK-NEXT:       preserve_dimensions=True
    # CHECK-NEXT:     ] a 0 10 1 c
    # CHECK-NEXT:     k:f64[a] = add c d
    # CHECK-NEXT:   in (k) }


# The condition and the body each capture `x` and its dim.
# CHECK-LABEL: TEST: while_loop_newton
@run
def while_loop_newton():
    @kiln.qjit
    def f(x):
        @kiln.while_loop(lambda y: knp.max(knp.abs(y * y - x)) >= 1e-12)
        def loop(y):
            return 0.5 * (y + x / y)

        return loop(knp.ones_like(x))

    print(f(np.full(3, 2.0)))
    # CHECK-NEXT: [1.41421356 1.41421356 1.41421356]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a]. let
    # CHECK-NEXT:     c:f64[a] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] 1.0 a
    # CHECK-NEXT:     d:f64[a] = while_loop[
    # CHECK-NEXT:       body_jaxpr={ lambda e:i64[] f:f64[e] ; g:f64[e]. let
    # CHECK-NEXT:             h:f64[e] = div f g
    # CHECK:                  k:f64[e] = mul j i
    # CHECK-NEXT:           in (k) }
    # CHECK-NEXT:       body_nconsts=2
    # CHECK-NEXT:       cond_jaxpr={ lambda l:i64[] m:f64[l] ; n:f64[l]. let
    # CHECK:                  [[MAX:[a-z]+]]:f64[] = reduce_max[axes=(0,)]
    # CHECK-NEXT:             [[MORE:[a-z]+]]:bool[] = ge [[MAX]] 1e-12
    # CHECK-NEXT:           in ([[MORE]]) }
    # CHECK-NEXT:       cond_nconsts=2
    # CHECK-NEXT:       num_implicit_inputs=0
    # CHECK-NEXT:       num_implicit_outputs=0
    # CHECK-NEXT:       preserve_dimensions=True
    # CHECK-NEXT:     ] a b a b c
    # CHECK-NEXT:   in (d) }


# Every branch takes the same captured values. The result's size is `a` in
# two branches and `a + 1` in the third, so it is an implicit output `f`.
# CHECK-LABEL: TEST: cond_three_way
@run
def cond_three_way():
    @kiln.qjit
    def f(x, v):
        @kiln.cond(v > 0)
        def c():
            return x * v

        @c.else_if(v < 0)
        def _():
            return -x

        @c.otherwise
        def _():
            return knp.zeros(x.shape[0] + 1)

        return c()

    print(f(np.ones(2), 0.0))
    # CHECK-NEXT: [0. 0. 0.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a] c:f64[]. let
    # CHECK-NEXT:     d:bool[] = gt c 0.0
    # CHECK-NEXT:     e:bool[] = lt c 0.0
    # CHECK-NEXT:     f:i64[] g:f64[f] = cond[
    # CHECK-NEXT:       branches=(
    # CHECK-NEXT:         { lambda h:i64[] i:f64[h] j:f64[] ; . let
    # CHECK-NEXT:             k:f64[h] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] j h
    # CHECK-NEXT:             l:f64[h] = mul i k
    # CHECK-NEXT:           in (h l) }
    # CHECK-NEXT:         { lambda m:i64[] n:f64[m] o:f64[] ; . let
    # CHECK-NEXT:             p:f64[m] = neg n
    # CHECK-NEXT:           in (m p) }
    # CHECK-NEXT:         { lambda q:i64[] r:f64[q] s:f64[] ; . let
    # CHECK-NEXT:             t:i64[] = add q 1
    # CHECK-NEXT:             u:bool[] = ge t 0
    # CHECK-NEXT:             _ = check[kind=ValueError message=negative dimensions are not allowed (got {})] u t
    # CHECK-NEXT:             v:f64[t] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] 0.0 t
    # CHECK-NEXT:           in (t v) }
    # CHECK-NEXT:       )
    # CHECK-NEXT:       num_implicit_inputs=0
    # CHECK-NEXT:       num_implicit_outputs=1
    # CHECK-NEXT:       preserve_dimensions=False
    # CHECK-NEXT:     ] d e a b c
    # CHECK-NEXT:   in (f g) }


# With allow_array_resizing the carried array's dim is a loop-carried value
# (`e`, starting at the literal 0) and the result's dim an implicit output
# (`c`). In MLIR the induction variable is carried first, then the dim, then
# the array, whose static initial type is cast to the dynamic loop type.
# CHECK-LABEL: TEST: for_loop_resizing
@run
def for_loop_resizing():
    @kiln.qjit
    def f(n):
        @kiln.for_loop(0, n, 1, allow_array_resizing=True)
        def loop(i, a):
            return knp.ones(a.shape[0] + 1)

        return loop(knp.zeros(0))

    print(f(4))
    # CHECK-NEXT: [1. 1. 1. 1.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[]. let
    # CHECK-NEXT:     b:f64[0] = broadcast_in_dim[broadcast_dimensions=() shape=(0,)] 0.0
    # CHECK-NEXT:     c:i64[] d:f64[c] = for_loop[
    # CHECK-NEXT:       body_jaxpr={ lambda ; e:i64[] f:i64[] g:f64[e]. let
    # CHECK-NEXT:             h:i64[] = add e 1
    # CHECK-NEXT:             i:bool[] = ge h 0
    # CHECK-NEXT:             _ = check[kind=ValueError message=negative dimensions are not allowed (got {})] i h
    # CHECK-NEXT:             j:f64[h] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] 1.0 h
    # CHECK-NEXT:           in (h j) }
    # CHECK-NEXT:       body_nconsts=0
    # CHECK-NEXT:       num_implicit_inputs=1
    # CHECK-NEXT:       num_implicit_outputs=1
    # CHECK-NEXT:       preserve_dimensions=False
    # CHECK-NEXT:     ] 0 a 1 0 b
    # CHECK-NEXT:   in (c d) }
    print(f.mlir)
    # CHECK:      %[[CAST:.*]] = tensor.cast %{{.*}} : tensor<0xf64> to tensor<?xf64>
    # CHECK:      stablehlo.while(%[[I:.*]] = %{{.*}}, %[[N:.*]] = %{{.*}}, %[[A:.*]] = %[[CAST]]) : tensor<i64>, tensor<i64>, tensor<?xf64>
    # CHECK-NEXT: cond {
    # CHECK-NEXT:   stablehlo.compare LT, %[[I]], %arg0, SIGNED
    # CHECK:      } do {
    # CHECK:        stablehlo.dynamic_broadcast_in_dim
    # CHECK:        stablehlo.return %{{.*}}, %{{.*}}, %{{.*}} : tensor<i64>, tensor<i64>, tensor<?xf64>


# `x += 1.0` in a branch in a loop: autograph carries `x`, but the branches
# return the array itself, so the cond has no result and the loop carries
# nothing: the body writes the captured argument, which is written back.
def bump_in_branch(x, n):
    for k in range(n):
        if k >= 0:
            x += 1.0


# CHECK-LABEL: TEST: in_place_update_in_branch_in_loop
@run
def in_place_update_in_branch_in_loop():
    f = kiln.qjit(bump_in_branch, autograph=True)
    x = np.zeros(3)
    f(x, 4)
    print(x)
    # CHECK-NEXT: [4. 4. 4.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a] c:i64[]. let
    # CHECK-NEXT:     _ = for_loop[
    # CHECK-NEXT:       body_jaxpr={ lambda d:i64[] e:f64[d] ; f:i64[]. let
    # CHECK-NEXT:             g:bool[] = ge f 0
    # CHECK-NEXT:             _ = cond[
    # CHECK-NEXT:               branches=(
    # CHECK-NEXT:                 { lambda h:i64[] i:f64[h] ; . let
    # CHECK-NEXT:                     j:f64[h] = broadcast_in_dim[broadcast_dimensions=() shape=(None,)] 1.0 h
    # CHECK-NEXT:                     k:f64[h] = add i j
    # CHECK-NEXT:                     _ = assign i k
    # CHECK-NEXT:                   in () }
    # CHECK-NEXT:                 { lambda l:i64[] m:f64[l] ; . let
    # CHECK-NEXT:                   in () }
    # CHECK-NEXT:               )
    # CHECK:                  ] g d e
    # CHECK-NEXT:           in () }
    # CHECK:            ] a b 0 c 1
    # CHECK-NEXT:   in (b) }
