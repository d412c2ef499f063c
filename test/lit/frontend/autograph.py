# RUN: %PYTHON %s | filecheck %s
"""Stage "jaxpr" of autograph-converted functions: a Python `for` over a
traced range becomes one for_loop, a `while` on a traced condition one
while_loop, `if`/`elif`/`else` nested conds (`and`/`or`/`not` become
logical ops), a loop over a Python range one for_loop unless its body has
Python side effects (then it is unrolled)."""

import numpy as np

import kiln
import kiln.numpy as knp


def run(test):
    print(f"\nTEST: {test.__name__}")
    test()
    return test


# `acc` is assigned in the body and used after: it is the one carried value
# (0.0, weakly typed f64); `x` and its dim are captured constants of the body.
# CHECK-LABEL: TEST: for_range
@run
def for_range():
    @kiln.qjit(autograph=True)
    def f(x, n):
        acc = 0.0
        for i in range(n):
            acc = acc + x[i]
        return acc

    print(f(np.arange(4.0), 3))
    # CHECK-NEXT: 3.0
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a] c:i64[]. let
    # CHECK-NEXT:     d:f64[] = for_loop[
    # CHECK-NEXT:       body_jaxpr={ lambda e:i64[] f:f64[e] ; g:i64[] h:f64[]. let
    # CHECK:                [[SUM:[a-z]+]]:f64[] = add h {{[a-z]+}}
    # CHECK-NEXT:           in ([[SUM]]) }
    # CHECK-NEXT:       body_nconsts=2
    # CHECK:          ] a b 0 c 1 0.0
    # CHECK-NEXT:   in (d) }


# The condition reads the carried `x`; `steps` (a Python int, weakly typed)
# is carried too because it is used after the loop.
# CHECK-LABEL: TEST: while_loop
@run
def while_loop():
    @kiln.qjit(autograph=True)
    def f(x):
        steps = 0
        while x.sum() < 100.0:
            x = x * 2.0
            steps += 1
        return x, steps

    print(f(np.ones(3)))
    # CHECK-NEXT: (array([64., 64., 64.]), np.int64(6))
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a]. let
    # CHECK-NEXT:     c:i64[] d:f64[a] = while_loop[
    # CHECK-NEXT:       body_jaxpr={ lambda e:i64[] ; f:i64[] g:f64[e]. let
    # CHECK:                  mul g
    # CHECK:                  add f 1
    # CHECK:          cond_jaxpr={ lambda k:i64[] ; l:i64[] m:f64[k]. let
    # CHECK-NEXT:             n:f64[] = reduce_sum[axes=(0,)] m
    # CHECK-NEXT:             o:bool[] = lt n 100.0
    # CHECK-NEXT:           in (o) }
    # CHECK:          ] a a 0 b
    # CHECK-NEXT:   in (d c) }


# `and` becomes a logical `and` of the two traced predicates, `not` a logical
# `not`; the `elif` is a cond nested in the false branch, so its predicate is
# only computed when the first one is false.
# CHECK-LABEL: TEST: if_elif_else
@run
def if_elif_else():
    @kiln.qjit(autograph=True)
    def f(x):
        if x.sum() > 0.0 and x.sum() < 10.0:
            y = x * 2.0
        elif not x.sum() < -1.0:
            y = x
        else:
            y = -x
        return y

    print(f(np.ones(3)))
    # CHECK-NEXT: [2. 2. 2.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a]. let
    # CHECK-NEXT:     c:f64[] = reduce_sum[axes=(0,)] b
    # CHECK-NEXT:     d:bool[] = gt c 0.0
    # CHECK-NEXT:     e:f64[] = reduce_sum[axes=(0,)] b
    # CHECK-NEXT:     f:bool[] = lt e 10.0
    # CHECK-NEXT:     g:bool[] = and d f
    # CHECK-NEXT:     h:f64[a] = cond[
    # CHECK-NEXT:       branches=(
    # CHECK-NEXT:         { lambda i:i64[] j:f64[i] ; . let
    # CHECK:                  l:f64[i] = mul j k
    # CHECK-NEXT:           in (l) }
    # CHECK-NEXT:         { lambda m:i64[] n:f64[m] ; . let
    # CHECK-NEXT:             o:f64[] = reduce_sum[axes=(0,)] n
    # CHECK-NEXT:             p:bool[] = lt o -1.0
    # CHECK-NEXT:             q:bool[] = not p
    # CHECK-NEXT:             r:f64[m] = cond[
    # CHECK:                  w:f64[u] = neg v
    # CHECK:                ] q m n
    # CHECK-NEXT:           in (r) }
    # CHECK:          ] g a b
    # CHECK-NEXT:   in (h) }


# The right operand of a traced `and` has a run-time bounds check (x[i]): it
# becomes a cond, so x[i] is only read when i < n, as Python would.
# CHECK-LABEL: TEST: and_with_checks_short_circuits
@run
def and_with_checks_short_circuits():
    @kiln.qjit(autograph=True)
    def f(x):
        i = 0
        while i < x.shape[0] and x[i] < 5.0:
            i += 1
        return i

    print(f(np.array([1.0, 2.0, 3.0])))
    # CHECK-NEXT: 3
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a]. let
    # CHECK-NEXT:     c:i64[] = while_loop[
    # CHECK:          cond_jaxpr={ lambda f:i64[] g:f64[f] ; h:i64[]. let
    # CHECK-NEXT:             i:bool[] = lt h f
    # CHECK-NEXT:             j:bool[] = cond[
    # CHECK:                      _ = check[kind=IndexError
    # CHECK:                      [[LT:[a-z]+]]:bool[] = lt {{[a-z]+}} 5.0
    # CHECK-NEXT:                 in ([[LT]]) }
    # CHECK-NEXT:               { lambda {{.*}} ; . let
    # CHECK-NEXT:                 in (False) }
    # CHECK:                ] i f g h
    # CHECK-NEXT:           in (j) }
    # CHECK:          ] a b 0
    # CHECK-NEXT:   in (c) }


# A range with static bounds is one compiled loop (its index traced), so
# compile time does not grow with the trip count.
# CHECK-LABEL: TEST: static_range_is_one_loop
@run
def static_range_is_one_loop():
    @kiln.qjit
    def f(x):
        for k in range(2):
            x = x + k
        return x

    print(f(np.ones(2)))
    # CHECK-NEXT: [2. 2.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a]. let
    # CHECK-NEXT:     c:f64[a] = for_loop[
    # CHECK-NEXT:       body_jaxpr={ lambda d:i64[] ; e:i64[] f:f64[d]. let
    # CHECK:                  i:f64[d] = add f h
    # CHECK-NEXT:           in (i) }
    # CHECK:          ] a 0 2 1 b
    # CHECK-NEXT:   in (c) }


# A static range whose body has a Python side effect (here `.append`) keeps
# Python semantics: two unrolled additions, no loop.
# CHECK-LABEL: TEST: static_range_with_python_effects_unrolls
@run
def static_range_with_python_effects_unrolls():
    @kiln.qjit
    def f(x):
        seen = []
        for k in range(2):
            seen.append(k)
            x = x + k
        return x

    print(f(np.ones(2)))
    # CHECK-NEXT: [2. 2.]
    print(f.jaxpr)
    # CHECK-NEXT: { lambda ; a:i64[] b:f64[a]. let
    # CHECK-NOT:  for_loop
    # CHECK:          d:f64[a] = add b c
    # CHECK-NOT:  for_loop
    # CHECK:          f:f64[a] = add d e
    # CHECK-NEXT:   in (f) }
