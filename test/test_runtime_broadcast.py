"""Broadcasting of dims that are 1 only when the program runs (slices with
traced bounds, sizes from arguments), against NumPy: every elementwise
operator, `np.where`, comparisons, assignment and `np.broadcast_to`, with
each operand's dim being the 1 in turn, in 1-D, 2-D and 3-D, inside loops,
at sizes 0, 1, odd and large. Runs compiled and interpreted (conftest)."""

import itertools

import numpy as np
import pytest

import kiln

BROADCAST_ERROR = r"operands could not be broadcast together with shapes"
# (p, q): the sizes of the two operands; a 1 on either side broadcasts.
VECTOR_SIZES = [(1, 1), (1, 7), (7, 1), (7, 7), (0, 0), (1, 0), (0, 1), (1, 1000), (1000, 1), (1000, 1000)]


def _operands(p, q):
    x = np.linspace(-1.0, 2.0, max(p, 1) + 3)
    y = np.linspace(3.0, -2.0, max(q, 1) + 2)
    return x, y


BINARY = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / (b + 10.0),
    "maximum": np.maximum,
    "power": lambda a, b: np.abs(a) ** b,
    "less": lambda a, b: a < b,
    "equal": lambda a, b: a == b,
    "where": lambda a, b: np.where(a > 0.5, a, b),
    "logaddexp": np.logaddexp,
}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("p, q", VECTOR_SIZES)
def test_binary_ops_on_run_time_sizes(op, p, q):
    fn = BINARY[op]

    def f(x, y, p, q):
        return fn(x[:p], y[:q])

    x, y = _operands(p, q)
    got = kiln.qjit(f)(x, y, p, q)
    np.testing.assert_allclose(got, f(x, y, p, q))
    assert got.shape == f(x, y, p, q).shape


def test_one_compile_serves_every_size():
    @kiln.qjit
    def f(x, y, p, q):
        return x[:p] * 2.0 + y[:q]

    for p, q in VECTOR_SIZES:
        x, y = _operands(p, q)
        np.testing.assert_allclose(f(x, y, p, q), x[:p] * 2.0 + y[:q])
    assert f.num_compiles == 1


@pytest.mark.parametrize("p, q", [(3, 7), (2, 0), (0, 5), (7, 3)])
def test_mismatch_raises_numpys_error_with_the_line(p, q):
    @kiln.qjit
    def f(x, y, p, q):
        return x[:p] + y[:q]  # mismatch-line

    x, y = _operands(p, q)
    with pytest.raises(ValueError, match=BROADCAST_ERROR):
        x[:p] + y[:q]
    with pytest.raises(ValueError, match=BROADCAST_ERROR) as info:
        f(x, y, p, q)
    assert f"sizes {max(p, q)} and {min(p, q)}" in str(info.value) or f"sizes {p} and {q}" in str(info.value)
    assert "test_runtime_broadcast.py" in str(info.value)


def test_three_operands_of_where():
    def f(x, p, q, r):
        return np.where(x[:p] > 0.0, x[:q] * 2.0, -x[:r])

    compiled = kiln.qjit(f)
    x = np.linspace(-2.0, 3.0, 9)
    for p, q, r in itertools.product([1, 9], repeat=3):
        np.testing.assert_allclose(compiled(x, p, q, r), f(x, p, q, r))
    with pytest.raises(ValueError, match=BROADCAST_ERROR):
        compiled(x, 9, 4, 1)


@pytest.mark.parametrize("rows, cols", list(itertools.product([1, 4], [1, 5])))
@pytest.mark.parametrize("rows2, cols2", list(itertools.product([1, 4], [1, 5])))
def test_2d_every_combination_of_unit_dims(rows, cols, rows2, cols2):
    def f(a, b, r, c, r2, c2):
        return a[:r, :c] * b[:r2, :c2] - b[:r2, :c2]

    a = np.arange(20.0).reshape(4, 5)
    b = np.arange(20.0, 0.0, -1.0).reshape(4, 5)
    np.testing.assert_allclose(kiln.qjit(f)(a, b, rows, cols, rows2, cols2), f(a, b, rows, cols, rows2, cols2))


@pytest.mark.parametrize("n", [0, 1, 3, 8, 101])
def test_column_plus_row(n):
    def f(d, k):
        return d[:, k:k + 1] + d[k:k + 1, :]

    d = np.arange(float(n * n)).reshape(n, n)
    for k in sorted({0, n // 2, max(n - 1, 0)}):
        np.testing.assert_allclose(kiln.qjit(f)(d, k), f(d, k))


@pytest.mark.parametrize("shape_a, shape_b", [
    ((1, 3, 4), (2, 1, 4)), ((2, 3, 1), (1, 1, 4)), ((1, 1, 1), (2, 3, 4)), ((2, 3, 4), (1, 3, 1)),
    ((2, 3, 4), (2, 3, 4)), ((0, 3, 1), (1, 3, 4)), ((2, 1, 4), (2, 1, 1)),
])
def test_3d(shape_a, shape_b):
    def f(a, b, p, q, r, s, t, u):
        return np.exp(a[:p, :q, :r]) + b[:s, :t, :u] * 0.5

    a = np.linspace(0.0, 1.0, 24).reshape(2, 3, 4)
    b = np.linspace(2.0, -1.0, 24).reshape(2, 3, 4)
    np.testing.assert_allclose(kiln.qjit(f)(a, b, *shape_a, *shape_b), f(a, b, *shape_a, *shape_b))


@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_inside_a_loop_floyd_warshall(n):
    def f(d):
        for k in range(d.shape[0]):
            d = np.minimum(d, d[:, k:k + 1] + d[k:k + 1, :])
        return d

    rng = np.random.default_rng(n)
    d = rng.integers(1, 20, (n, n)).astype(float)
    np.fill_diagonal(d, 0.0)
    np.testing.assert_allclose(kiln.qjit(f)(d.copy()), f(d.copy()))


@pytest.mark.parametrize("n", [1, 2, 6])
def test_inside_a_loop_writing_the_argument(n):
    def f(d):
        for k in range(d.shape[0]):
            d[:] = np.minimum(d, d[:, k:k + 1] + d[k:k + 1, :])

    rng = np.random.default_rng(n)
    d = rng.integers(1, 20, (n, n)).astype(float)
    expected, got = d.copy(), d.copy()
    f(expected)
    kiln.qjit(f)(got)
    np.testing.assert_allclose(got, expected)


def test_loop_carried_size_one_meets_a_larger_dim():
    def f(x, m):
        acc = x[:1] * 0.0
        for i in range(m):
            acc = acc + x[i:i + 1]
        return acc + x

    x = np.arange(1.0, 6.0)
    np.testing.assert_allclose(kiln.qjit(f)(x, 3), f(x, 3))


@pytest.mark.parametrize("m", [1, 4])
def test_assignment_into_an_argument(m):
    def f(x, y, m):
        x[1:5] = y[:m]
        x[:4] += y[:m] * 2.0

    y = np.array([5.0, 6.0, 7.0, 8.0])
    expected, got = np.zeros(6), np.zeros(6)
    f(expected, y, m)
    kiln.qjit(f)(got, y, m)
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("m, k", [(1, 1), (3, 4), (1, 4), (3, 1)])
def test_assignment_2d_and_through_an_index_array(m, k):
    def f(x, y, z, m, k):
        x[:, :3] = y[:m, :m]
        x[[0, 2]] = z[:k]

    y = np.arange(1.0, 10.0).reshape(3, 3)
    z = np.array([-1.0, -2.0, -3.0, -4.0])
    expected, got = np.zeros((3, 4)), np.zeros((3, 4))
    f(expected, y, z, m, k)
    kiln.qjit(f)(got, y, z, m, k)
    np.testing.assert_allclose(got, expected)


def test_assignment_mismatch_raises_and_leaves_the_argument():
    @kiln.qjit
    def f(x, y, m):
        x[1:5] = y[:m]

    x = np.zeros(6)
    with pytest.raises(ValueError, match=r"could not broadcast"):
        f(x, np.ones(4), 3)
    np.testing.assert_array_equal(x, np.zeros(6))


@pytest.mark.parametrize("n", [0, 1, 5, 1000])
def test_broadcast_to_a_slice(n):
    def f(x):
        return np.broadcast_to(x[:1], x.shape) + 0.0

    x = np.arange(float(n)) + 3.0
    np.testing.assert_allclose(kiln.qjit(f)(x), f(x))


def test_broadcast_to_mismatch():
    @kiln.qjit
    def f(x, m):
        return np.broadcast_to(x[:m], x.shape) + 0.0

    with pytest.raises(ValueError, match=r"broadcast_to: could not broadcast shape \(\?,\) to \(\?,\) "
                                         r"\(axis 0: size 2 vs 5\)"):
        f(np.ones(5), 2)


@pytest.mark.parametrize("m", [1, 4])
def test_broadcast_to_a_larger_rank(m):
    def f(x, m):
        return np.broadcast_to(x[:m], (3, x.shape[0])) * 1.0

    x = np.arange(4.0)
    np.testing.assert_allclose(kiln.qjit(f)(x, m), f(x, m))


def test_unspecialized_argument_dims_broadcast_with_one_compile():
    @kiln.qjit(specialize_unit_dims=False)
    def f(x, y):
        return x * 2.0 + y

    for nx, ny in [(1, 5), (5, 1), (5, 5), (1, 1), (0, 1)]:
        x, y = np.arange(float(nx)), np.arange(10.0, 10.0 + ny)
        np.testing.assert_allclose(f(x, y), x * 2.0 + y)
    assert f.num_compiles == 1
    with pytest.raises(ValueError, match=BROADCAST_ERROR):
        f(np.ones(3), np.ones(4))


def test_integer_and_bool_operands():
    def f(x, b, p, q):
        return (x[:p] + x[:q] * 3) * b[:q]

    x = np.arange(7, dtype=np.int32)
    b = np.array([True, False, True, True, False, True, True])
    for p, q in [(1, 7), (7, 1), (7, 7)]:
        got = kiln.qjit(f)(x, b, p, q)
        np.testing.assert_array_equal(got, f(x, b, p, q))
        assert got.dtype == f(x, b, p, q).dtype


def test_stack_does_not_broadcast():
    """NumPy stacks equal shapes only, a 1 included."""

    @kiln.qjit
    def f(x, m):
        return np.stack([x[:m], x])

    x = np.arange(3.0)
    np.testing.assert_allclose(f(x, 3), np.stack([x, x]))
    with pytest.raises(ValueError, match=r"all input arrays must have the same shape"):
        np.stack([x[:1], x])
    with pytest.raises(ValueError, match=r"stack: all input arrays must have the same shape \(axis 0: sizes 1 and 3\)"):
        f(x, 1)


def test_loop_keeps_a_carried_dim_that_may_be_one():
    """`acc + x[:m]` in a loop body: both sizes may be 1, and the loop keeps
    the carried size (checked when it runs), so it needs no resizing."""

    @kiln.qjit
    def f(x, m, n):
        @kiln.for_loop(0, n, 1)
        def body(i, acc):
            return acc + x[:m] * 2.0 + x[1:m + 1]

        return body(np.zeros(m))

    x = np.arange(6.0)
    for m in (1, 3, 5):
        np.testing.assert_allclose(f(x, m, 4), 4 * (x[:m] * 2.0 + x[1:m + 1]))


def test_a_carried_array_that_broadcasting_would_grow_is_refused_when_it_runs():
    """NumPy lets `acc` grow from (1,) to (3,) on the first iteration; a
    kiln loop keeps its carried sizes and says so, naming the loop's line."""

    @kiln.qjit
    def f(x, n):
        acc = x[:1] * 0.0
        for i in range(n):
            acc = acc + x[:n]
        return acc

    np.testing.assert_allclose(f(np.arange(5.0), 1), [0.0])
    with pytest.raises(ValueError, match=r"carried array 0 enters the loop with size 1 on axis 0 but broadcasting "
                                         r"in the body makes it size 3"):
        f(np.arange(5.0), 3)
