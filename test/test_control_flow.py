"""kiln.for_loop / kiln.while_loop / kiln.cond, compiled and compared with NumPy/Python."""

import numpy as np
import pytest

import kiln
from kiln import numpy as knp


# --------------------------------------------------------------------------
# for_loop


def test_for_loop_multiplies_by_repeated_addition():
    @kiln.qjit
    def times(x, n):
        @kiln.for_loop(0, n, 1)
        def loop(i, acc):
            return acc + x

        return loop(knp.zeros_like(x))

    for size, n in [(3, 4), (10, 7), (1000, 3)]:
        x = np.random.rand(size)
        np.testing.assert_allclose(times(x, n), x * n)
    assert times.num_compiles == 1


def test_for_loop_readme_example():
    @kiln.qjit
    def f(sz):
        a0 = knp.ones(sz)

        @kiln.for_loop(0, 10, 1)
        def loop(i, a):
            return a * sz

        return a0 + loop(a0)

    for sz in (2, 3, 5):
        np.testing.assert_allclose(f(sz), np.ones(sz) + float(sz) ** 10)
    assert f.num_compiles == 1


def test_nested_for_loops():
    @kiln.qjit
    def f(x, n, m):
        @kiln.for_loop(0, n, 1)
        def outer(i, acc):
            @kiln.for_loop(0, m, 1)
            def inner(j, acc2):
                return acc2 + x * (i + j)

            return inner(acc)

        return outer(knp.zeros_like(x))

    x = np.random.rand(5)
    expected = x * sum(i + j for i in range(3) for j in range(4))
    np.testing.assert_allclose(f(x, 3, 4), expected)
    np.testing.assert_allclose(f(np.random.rand(9), 0, 4), np.zeros(9))


@pytest.mark.parametrize("lower,upper,step", [(0, 10, 2), (10, 0, -2), (1, 10, 3), (-5, 5, 1), (5, -5, -3)])
def test_for_loop_steps(lower, upper, step):
    @kiln.qjit
    def f(lo, hi, st):
        @kiln.for_loop(lo, hi, st)
        def loop(i, total, count):
            return total + i, count + 1

        return loop(0, 0)

    total, count = f(lower, upper, step)
    r = range(lower, upper, step)
    assert (int(total), int(count)) == (sum(r), len(r))
    assert f.num_compiles == 1


def test_for_loop_static_negative_step():
    @kiln.qjit
    def f(x):
        @kiln.for_loop(10, 0, -2)
        def loop(i, acc):
            return acc + i * x

        return loop(knp.zeros_like(x))

    x = np.random.rand(4)
    np.testing.assert_allclose(f(x), x * sum(range(10, 0, -2)))


@pytest.mark.parametrize("lower,upper,step", [(0, 0, 1), (5, 2, 1), (2, 5, -1)])
def test_zero_trip_loop_returns_initial_value(lower, upper, step):
    @kiln.qjit
    def f(x, lo, hi, st):
        @kiln.for_loop(lo, hi, st)
        def loop(i, acc):
            return acc * 100.0

        return loop(x)

    x = np.random.rand(6)
    np.testing.assert_allclose(f(x, lower, upper, step), x)


def test_for_loop_captures_dynamic_arrays():
    @kiln.qjit
    def f(x, y, n):
        @kiln.for_loop(0, n, 1)
        def loop(i, acc):
            return acc + x * y

        return loop(knp.zeros_like(x))

    for size in (3, 17):
        x, y = np.random.rand(size), np.random.rand(size)
        np.testing.assert_allclose(f(x, y, 5), 5 * x * y)
    assert f.num_compiles == 1


def test_python_scalar_carried_value_is_promoted():
    @kiln.qjit
    def total(x):
        @kiln.for_loop(0, x.shape[0], 1)
        def loop(i, acc):
            return acc + x[i]

        return loop(0)

    x = np.random.rand(11)
    result = total(x)
    assert np.asarray(result).dtype == np.float64
    np.testing.assert_allclose(result, x.sum())


def test_for_loop_without_carried_values():
    @kiln.qjit
    def f(x, n):
        @kiln.for_loop(0, n, 1)
        def loop(i):
            pass

        loop()
        return x + 1.0

    np.testing.assert_allclose(f(np.ones(3), 4), np.full(3, 2.0))


def test_zero_step_raises_at_run_time():
    @kiln.qjit
    def f(x, step):
        @kiln.for_loop(0, 10, step)
        def loop(i, acc):
            return acc + 1.0

        return loop(x)

    np.testing.assert_allclose(f(np.ones(2), 3), np.full(2, 5.0))
    with pytest.raises(ValueError, match="step must not be zero"):
        f(np.ones(2), 0)


def test_zero_static_step_raises_at_trace_time():
    @kiln.qjit
    def f(x):
        @kiln.for_loop(0, 10, 0)
        def loop(i, acc):
            return acc

        return loop(x)

    with pytest.raises(ValueError, match="step must not be zero"):
        f(np.ones(2))


# --------------------------------------------------------------------------
# array resizing


def test_resizing_loop_grows_array():
    @kiln.qjit
    def f(n):
        @kiln.for_loop(0, n, 1, allow_array_resizing=True)
        def loop(i, a):
            return knp.ones(i + 1) * i

        return loop(knp.zeros(0))

    for n in (1, 4, 9):
        np.testing.assert_allclose(f(n), np.full(n, n - 1.0))
    assert f(0).shape == (0,)
    assert f.num_compiles == 1


def test_resizing_loop_body_returning_ones_of_index():
    @kiln.qjit
    def f(x, n):
        @kiln.for_loop(0, n, 1, allow_array_resizing=True)
        def loop(i, a):
            return knp.ones(i)

        return loop(x)

    assert f(np.ones(3), 5).shape == (4,)
    assert f(np.ones(3), 0).shape == (3,)


def test_resizing_loop_appends_one_each_iteration():
    @kiln.qjit
    def f(x, n):
        @kiln.for_loop(0, n, 1, allow_array_resizing=True)
        def loop(i, a):
            m = a.shape[0]
            return knp.ones(m + 1) * m

        return loop(x)

    out = f(np.ones(2), 3)
    np.testing.assert_allclose(out, np.full(5, 4.0))


def test_shape_change_without_resizing_raises():
    @kiln.qjit
    def f(n):
        @kiln.for_loop(0, 3, 1)
        def loop(i, a):
            return knp.ones(n + 1)

        return loop(knp.ones(n))

    with pytest.raises(ValueError, match=r"carried value 0 enters the loop with shape float64\[d0\] but the "
                                         r"body returns shape float64\[d1\].*allow_array_resizing=True"):
        f(4)


def test_dtype_change_of_strong_carried_value_raises():
    @kiln.qjit
    def f(x):
        @kiln.for_loop(0, 3, 1)
        def loop(i, a):
            return a.astype(np.float32)

        return loop(x)

    with pytest.raises(TypeError, match="carried value 0 enters the loop as float64 but the body returns float32"):
        f(np.ones(3))


def test_wrong_number_of_carried_values_raises():
    @kiln.qjit
    def f(x):
        @kiln.for_loop(0, 3, 1)
        def loop(i, a, b):
            return a

        return loop(x, x)

    with pytest.raises(TypeError, match="structure of the initial values"):
        f(np.ones(3))


# --------------------------------------------------------------------------
# while_loop


def test_while_loop_newton_sqrt2():
    @kiln.qjit
    def newton(x):
        def not_converged(y, steps):
            # relative error, with an iteration cap so a bug cannot hang the suite
            return (knp.max(knp.abs(y * y - x) / x) >= 1e-12) & (steps < 100)

        @kiln.while_loop(not_converged)
        def loop(y, steps):
            return 0.5 * (y + x / y), steps + 1

        return loop(knp.ones_like(x), 0)

    for size in (1, 4, 100):
        x = np.full(size, 2.0)
        y, steps = newton(x)
        np.testing.assert_allclose(y, np.sqrt(2.0), rtol=1e-12)
        assert 3 < steps < 10
        np.testing.assert_array_less(np.abs(y * y - 2.0), 1e-12)
    x = np.linspace(1.0, 1e6, 50)
    y, steps = newton(x)
    np.testing.assert_allclose(y, np.sqrt(x), rtol=1e-10)
    assert steps < 100
    assert newton.num_compiles == 2  # size 1 is specialized


def test_while_loop_counts():
    @kiln.qjit
    def f(n):
        @kiln.while_loop(lambda k, total: k < n)
        def loop(k, total):
            return k + 1, total + k

        return loop(0, 0)

    for n in (0, 1, 10):
        k, total = f(n)
        assert (int(k), int(total)) == (max(n, 0), sum(range(n)))


def test_while_loop_resizing():
    @kiln.qjit
    def f(limit):
        @kiln.while_loop(lambda a: a.shape[0] < limit, allow_array_resizing=True)
        def loop(a):
            return knp.ones(a.shape[0] * 2) * a.shape[0]

        return loop(knp.ones(1))

    out = f(10)
    np.testing.assert_allclose(out, np.full(16, 8.0))


def test_while_loop_condition_must_be_bool_scalar():
    @kiln.qjit
    def f(x):
        @kiln.while_loop(lambda a: a)
        def loop(a):
            return a

        return loop(x)

    with pytest.raises(TypeError, match="condition must be a bool scalar, got f64"):
        f(np.ones(3))


# --------------------------------------------------------------------------
# cond


def test_cond_two_branches():
    @kiln.qjit
    def f(x):
        @kiln.cond(knp.sum(x) > 0)
        def branch():
            return x * 2.0

        @branch.otherwise
        def _():
            return -x

        return branch()

    x = np.random.rand(5)
    np.testing.assert_allclose(f(x), x * 2.0)
    np.testing.assert_allclose(f(-x), x)


def test_cond_chain_with_else_if():
    @kiln.qjit
    def sign(v):
        @kiln.cond(v > 0)
        def s():
            return 1.0

        @s.else_if(v < 0)
        def _():
            return -1.0

        @s.otherwise
        def _():
            return 0.0

        return s()

    for v in (3.5, -2.0, 0.0):
        assert sign(v) == np.sign(v)
    assert sign.num_compiles == 1


def test_cond_four_way():
    @kiln.qjit
    def f(x, k):
        @kiln.cond(k == 0)
        def c():
            return x + 1.0

        @c.else_if(k == 1)
        def _():
            return x * 10.0

        @c.else_if(k == 2)
        def _():
            return x - 5.0

        @c.otherwise
        def _():
            return x * 0.0

        return c()

    x = np.random.rand(4)
    for k, expected in enumerate([x + 1, x * 10, x - 5, x * 0, x * 0]):
        np.testing.assert_allclose(f(x, k), expected)


def test_cond_branches_return_different_sizes():
    @kiln.qjit
    def f(x, flag):
        n = x.shape[0]

        @kiln.cond(flag)
        def c():
            return knp.ones(n + 1)

        @c.otherwise
        def _():
            return x

        return c()

    x = np.random.rand(6)
    np.testing.assert_allclose(f(x, True), np.ones(7))
    np.testing.assert_allclose(f(x, False), x)
    np.testing.assert_allclose(f(np.random.rand(2), True), np.ones(3))
    assert f.num_compiles == 1


def test_cond_inside_loop():
    @kiln.qjit
    def f(x, n):
        @kiln.for_loop(0, n, 1)
        def loop(i, acc):
            @kiln.cond(i % 2 == 0)
            def c():
                return acc + x

            @c.otherwise
            def _():
                return acc - 1.0

            return c()

        return loop(knp.zeros_like(x))

    x = np.random.rand(3)
    expected = np.zeros(3)
    for i in range(7):
        expected = expected + x if i % 2 == 0 else expected - 1.0
    np.testing.assert_allclose(f(x, 7), expected)


def test_cond_without_otherwise_returns_nothing():
    @kiln.qjit
    def f(x):
        @kiln.cond(x[0] > 0)
        def c():
            return x

        c()
        return x

    with pytest.raises(TypeError, match="without .otherwise must return nothing"):
        f(np.ones(2))


def test_cond_rejects_non_bool_predicates():
    @kiln.qjit
    def f(x):
        @kiln.cond(x)
        def c():
            return x

        return c()

    with pytest.raises(TypeError, match="predicate must be a bool scalar, got a traced f64"):
        f(np.ones(3))
    with pytest.raises(TypeError, match="predicate must be a bool scalar"):
        kiln.cond(1.5)


def test_cond_mismatched_branches_raise():
    @kiln.qjit
    def f(x):
        @kiln.cond(x[0] > 0)
        def c():
            return x

        @c.otherwise
        def _():
            return x, x

        return c()

    with pytest.raises(TypeError, match="branch 1 returns a different structure"):
        f(np.ones(3))

    @kiln.qjit
    def g(x):
        @kiln.cond(x[0] > 0)
        def c():
            return x

        @c.otherwise
        def _():
            return x.astype(np.int32)

        return c()

    with pytest.raises(TypeError, match="result 0 has different dtypes"):
        g(np.ones(3))


def test_eager_control_flow_runs_in_python():
    @kiln.for_loop(0, 4, 1)
    def loop(i, acc):
        return acc + i

    assert loop(0) == 6

    @kiln.while_loop(lambda k: k < 5)
    def wl(k):
        return k + 2

    assert wl(0) == 6


# --------------------------------------------------------------------------
# combinations


def test_nested_resizing_loops():
    @kiln.qjit
    def f(n):
        @kiln.for_loop(0, n, 1, allow_array_resizing=True)
        def outer(i, a):
            @kiln.for_loop(0, 2, 1, allow_array_resizing=True)
            def inner(j, b):
                return knp.concatenate([b, knp.ones(1) * i])

            return inner(a)

        return outer(knp.zeros(0))

    np.testing.assert_allclose(f(3), [0, 0, 1, 1, 2, 2])
    assert f(0).shape == (0,)


def test_resizing_two_arrays_independently():
    @kiln.qjit
    def f(n, x):
        @kiln.for_loop(0, n, 1, allow_array_resizing=True)
        def loop(i, a, b):
            return knp.ones(a.shape[0] + 1), b[1:]

        return loop(knp.zeros(1), x)

    a, b = f(3, np.arange(7.0))
    np.testing.assert_allclose(a, np.ones(4))
    np.testing.assert_allclose(b, np.arange(3.0, 7.0))


def test_pytree_carried_values():
    @kiln.qjit
    def fib(x, n):
        @kiln.for_loop(0, n, 1)
        def loop(i, pair, k):
            a, b = pair
            return (b, a + b), k + 1

        return loop((x, x), 0)

    (a, b), k = fib(np.ones(2), 5)
    np.testing.assert_allclose(a, [8, 8])
    np.testing.assert_allclose(b, [13, 13])
    assert k == 5


def test_traced_int32_bounds():
    @kiln.qjit
    def f(n):
        @kiln.for_loop(np.int32(1), n, 2)
        def loop(i, acc):
            return acc + i

        return loop(0)

    assert f(np.int32(10)) == sum(range(1, 10, 2))


def test_float_bound_raises():
    @kiln.qjit
    def f(x):
        @kiln.for_loop(0, 2.5, 1)
        def loop(i, acc):
            return acc

        return loop(x)

    with pytest.raises(TypeError, match="upper must be an integer"):
        f(np.ones(2))


def test_while_loop_inside_cond():
    @kiln.qjit
    def f(x, n):
        @kiln.cond(n > 0)
        def c():
            @kiln.while_loop(lambda v, k: k < n)
            def w(v, k):
                return v * 2.0, k + 1

            return w(x, 0)[0]

        @c.otherwise
        def _():
            return x

        return c()

    np.testing.assert_allclose(f(np.ones(2), 3), [8.0, 8.0])
    np.testing.assert_allclose(f(np.ones(2), -1), [1.0, 1.0])


def test_writes_to_captured_array_in_loop():
    @kiln.qjit
    def f(n):
        a = knp.zeros(n)

        @kiln.for_loop(0, n, 1)
        def loop(i):
            a[i] = i * 2.0

        loop()
        return a

    np.testing.assert_allclose(f(5), np.arange(5) * 2.0)


def test_nested_jaxprs_typecheck_and_print():
    from kiln.typecheck import typecheck_jaxpr

    @kiln.qjit
    def f(x, n):
        @kiln.for_loop(0, n, 1, allow_array_resizing=True)
        def loop(i, a):
            @kiln.cond(i % 2 == 0)
            def c():
                return knp.concatenate([a, x])

            @c.otherwise
            def _():
                return a

            return c()

        return loop(x)

    x = np.arange(2.0)
    np.testing.assert_allclose(f(x, 3), np.concatenate([x, x, x]))
    typecheck_jaxpr(f.jaxpr)
    text = str(f.jaxpr)
    assert "for_loop[" in text and "body_jaxpr={ lambda" in text and "branches=(" in text


def test_captured_size_returned_as_a_carried_value():
    @kiln.qjit
    def f(sz):
        @kiln.for_loop(0, 3, 1)
        def loop(i, a, m):
            return a + 1.0, sz

        return loop(knp.ones(sz), 0)

    a, m = f(4)
    np.testing.assert_allclose(a, np.full(4, 4.0))
    assert m == 4

    @kiln.qjit
    def g(x, flag):
        n = x.shape[0]

        @kiln.cond(flag)
        def c():
            return n, x

        @c.otherwise
        def _():
            return n + 1, knp.ones(n)

        return c()

    m, y = g(np.arange(3.0), True)
    assert m == 3
    np.testing.assert_allclose(y, np.arange(3.0))
    m, y = g(np.arange(3.0), False)
    assert m == 4
    np.testing.assert_allclose(y, np.ones(3))


def test_run_time_check_inside_loop_body_raises():
    @kiln.qjit
    def f(x, n):
        @kiln.for_loop(0, n, 1)
        def loop(i, acc):
            return acc + x[i]

        return loop(0.0)

    assert f(np.arange(4.0), 4) == 6.0
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        f(np.arange(4.0), 6)
    assert f(np.arange(5.0), 5) == 10.0
    assert f.num_compiles == 1


def test_weak_traced_scalar_carried_value_is_promoted():
    @kiln.qjit
    def f(s, x):
        @kiln.for_loop(0, x.shape[0], 1)
        def loop(i, acc):
            return acc + x[i]

        return loop(s)

    x = np.arange(5, dtype=np.float32)
    result = f(2, x)
    assert np.asarray(result).dtype == np.float32
    assert result == 12.0
