"""`return` inside loop bodies (issue 14): for and while loops over traced and static
bounds, under `if`s, in nested loops and helpers, with mutated arguments, compared with
the same function run by Python on NumPy arrays at sizes 0, 1, odd and large; what kiln
cannot compile (different ranks or None on one path) is refused naming the line."""

import re

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 7, 1000)


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if want is None:
        assert got is None
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype.kind == want.dtype.kind
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)  # sums may add in another order


def _check(fn, *cases):
    """fn compiled against fn run by Python, on each case (a tuple of arguments; arrays are
    copied for each side so mutations compare too); the cases after the first two sizes
    must not recompile."""
    compiled = kiln.qjit(fn)
    for args in cases:
        mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
        _same(compiled(*mine), fn(*theirs))
        for m, t in zip(mine, theirs):
            if isinstance(t, np.ndarray):
                np.testing.assert_array_equal(m, t)
    return compiled


def first_above(x, t):
    for i in range(len(x)):
        if x[i] > t:
            return i
    return -1


def test_return_from_a_for_loop_over_a_traced_range(execution):
    rng = np.random.default_rng(0)
    cases = [(rng.normal(size=n), t) for n in SIZES for t in (0.5, 10.0)]
    f = _check(first_above, *cases)
    compiles = f.num_compiles
    _check(first_above, (rng.normal(size=333), 0.5))
    assert f.num_compiles == compiles


def newton_sqrt(a, tol):
    x = a
    for it in range(1000):
        dx = (x * x - a) / (2 * x)
        x = x - dx
        if abs(dx) < tol:
            return x, it
    return x, -1


def test_return_from_a_static_1000_iteration_loop_is_a_compiled_loop(execution):
    f = _check(newton_sqrt, (2.0, 1e-12), (9.0, 1e-3), (1e6, 0.0))
    eqns = kiln.interpret(f).jaxpr.eqns if execution == "interpreted" else f.jaxpr.eqns
    assert any(e.primitive.name == "while_loop" for e in eqns)


def first_negative_row(A):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] < 0:
                return A[i].sum(), i, j
    return 0.0, -1, -1


def test_return_from_nested_loops_leaves_both(execution):
    rng = np.random.default_rng(1)
    cases = [(np.abs(rng.normal(size=(n, 3))),) for n in SIZES]
    for n in (1, 7, 1000):
        A = np.abs(rng.normal(size=(n, 5)))
        A[n // 2, 3] = -1.0
        A[n - 1, 0] = -2.0
        cases.append((A,))
    _check(first_negative_row, *cases)


def prefix_until(x, t):
    i = 0
    while i < len(x):
        if x[i] < t:
            return x[:i]
        if x[i] > 10 * t:
            return x[i:] * 2.0
        i += 1
    return x[::2]


def test_return_from_a_while_loop_with_arrays_of_different_shapes(execution):
    rng = np.random.default_rng(2)
    cases = [(rng.uniform(1, 3, n), 0.5) for n in SIZES]
    cases += [(np.array([1.0, 2.0, 0.1, 3.0]), 0.5), (np.array([1.0, 9.0, 0.1]), 0.5), (np.array([0.1]), 0.5)]
    _check(prefix_until, *cases)


def zero_until_large(x, limit):
    total = 0.0
    for i in range(len(x)):
        if x[i] > limit:
            return total
        total += x[i]
        x[i] = 0.0
    x += 1.0
    return total


def test_return_keeps_the_writes_before_it_and_skips_the_ones_after(execution):
    rng = np.random.default_rng(3)
    cases = [(rng.uniform(0, 1, n), 0.9) for n in SIZES] + [(rng.uniform(0, 1, 9), 2.0)]
    _check(zero_until_large, *cases)


def scale_rows_until(A, stop):
    for row in A:
        if row[0] == stop:
            return
        row *= 2.0


def test_bare_return_from_a_loop_over_rows_mutating_them(execution):
    A = np.arange(12.0).reshape(4, 3)
    _check(scale_rows_until, (A, 6.0), (A, 100.0), (A[:0], 0.0), (A[:1], 0.0))


def _search(v, t):
    for k, value in enumerate(v):
        if value == t:
            return k
        if value > t:
            break
    else:
        return -2
    return -1


def search_all(x, targets):
    out = np.zeros(len(targets), dtype=np.int64)
    for m in range(len(targets)):
        out[m] = _search(x, targets[m])
    return out


def test_return_and_break_and_else_in_a_helper_called_in_a_loop(execution):
    x = np.array([1.0, 3.0, 5.0, 7.0])
    _check(search_all, (x, np.array([3.0, 4.0, 9.0, 1.0])), (x[:0], np.array([1.0])), (x, np.zeros(0)))


def skip_then_return(x):
    count = 0
    for i in range(len(x)):
        if x[i] < 0:
            continue
        count += 1
        if count == 3:
            return i
    return -count


def test_continue_and_return_in_one_loop(execution):
    x = np.array([1.0, -1.0, 2.0, -3.0, 4.0, 5.0])
    _check(skip_then_return, (x,), (x[:3],), (x[:0],), (-x,))


def at_line(marker: str) -> str:
    import inspect

    source, first = inspect.getsourcelines(test_different_ranks_and_none_are_refused_naming_the_line)
    for k, text in enumerate(source):
        if marker in text:
            return re.escape(f"{__file__}:{first + k}:")
    raise AssertionError(marker)


def test_different_ranks_and_none_are_refused_naming_the_line(execution):
    def ranks(x):
        for i in range(len(x)):  # ranks-loop
            if x[i] < 0:
                return x.reshape(1, -1)
        return x

    with pytest.raises(ValueError, match=at_line("ranks-loop") + r" a `return` inside this loop gives a value "
                       "unlike the one the function returns after the loop.*different ranks"):
        kiln.qjit(ranks)(np.ones(3))

    def maybe_none(x):
        for i in range(len(x)):  # none-loop
            if x[i] < 0:
                return i

    with pytest.raises(TypeError, match=at_line("none-loop") + r" a `return` inside this loop.*not None"):
        kiln.qjit(maybe_none)(np.ones(3))


def gradient_descent(X, y, lr, tol):
    w = np.zeros(X.shape[1])
    for it in range(500):
        g = X.T @ (X @ w - y)
        w -= lr * g
        if np.abs(g).sum() < tol:
            return w, it
    return w, -1


def first_positive_row(A):
    for i in range(A.shape[0]):
        if A[i].min() > 0:
            return A[i]
    return A[0] * 0.0


def test_return_of_an_array_the_loop_updates_in_place_or_an_argument_row(execution):
    rng = np.random.default_rng(4)
    cases = [(rng.normal(size=(n, 3)), rng.normal(size=n), 0.01, tol) for n in (0, 1, 7, 100) for tol in (1e-1, 0.0)]
    _check(gradient_descent, *cases)
    A = rng.normal(size=(9, 2))
    A[6] = np.abs(A[6]) + 0.1
    _check(first_positive_row, (A,), (-np.abs(A),), (A[5:],))


def index_until_negative(x):
    k = 0
    while True:
        if k >= len(x):
            return -1
        if x[k] < 0:
            return k
        k += 1


def test_while_true_that_only_returns(execution):
    _check(index_until_negative, (np.array([1.0, -1.0]),), (np.ones(3),), (np.zeros(0),), (-np.ones(1),))


def nested_branches_around_a_loop(x, a, b):
    total = 0.0
    if a > 0:
        if b > 0:
            for i in range(len(x)):
                if x[i] > 3:
                    return x[i], total
            total += 1
        total += 10
    total += 100
    return -1.0, total


def two_loops_in_a_branch_in_a_loop(A, a):
    for r in range(A.shape[0]):
        if a > r:
            for i in range(A.shape[1]):
                if A[r, i] > 3:
                    return r, i
            for i in range(A.shape[1]):
                if A[r, i] < -3:
                    return r, -i
            A[r] *= 2.0
    return -1, 0


def test_loops_with_return_inside_traced_branches_skip_the_rest_of_the_branch(execution):
    _check(nested_branches_around_a_loop, (np.arange(6.0), 1, 1), (np.arange(3.0), 1, 1), (np.arange(6.0), 1, 0),
           (np.arange(6.0), 0, 1), (np.zeros(0), 1, 1))
    A = np.array([[1.0, -1.0, 2.0], [1.0, -5.0, 0.5], [0.0, 9.0, 1.0]])
    _check(two_loops_in_a_branch_in_a_loop, (A, 3), (A, 1), (A, 0), (A[:0], 2), (A[:, :1], 3))


def first_crossing_after_guard(strain, stress):
    # An early-return guard on a traced size, then loops that return: both branches of the
    # guard return (found by the user corpus, materials.offset_yield).
    n = len(strain)
    if n < 2:
        return -1.0, 0.0
    area = 0.0
    for i in range(1, n):
        area += 0.5 * (stress[i] + stress[i - 1]) * (strain[i] - strain[i - 1])
    for i in range(1, n):
        if stress[i - 1] > 0 and stress[i] <= 0:
            return strain[i], area
    return -1.0, area


def guard_in_a_branch_then_loop(x, a):
    if a > 0:
        if len(x) == 0:
            return -2
        for i in range(len(x)):
            if x[i] < 0:
                return i
        return -1
    return a


def test_loop_return_after_an_early_return_guard_on_a_traced_condition(execution):
    x = np.linspace(0.0, 1.0, 7)
    _check(first_crossing_after_guard, (x, np.array([3.0, 2.0, 1.0, -1.0, 2.0, -3.0, 1.0])), (x, np.ones(7)),
           (x[:1], np.ones(1)), (x[:0], np.ones(0)), (x[:2], np.array([1.0, -1.0])))
    _check(guard_in_a_branch_then_loop, (np.array([1.0, -1.0, 2.0]), 1), (np.ones(3), 1), (np.zeros(0), 1),
           (np.array([-1.0]), 0), (np.zeros(0), 0))
