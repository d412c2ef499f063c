"""The size-1 path of a run-time broadcast (kiln-legalize-dynamic: one call
of runtime/broadcast.c per broadcast operand) against NumPy: stencil
expressions whose operands come from another array than the target, with
a dim that is 1 (shapes (3, n), (n, 3), (3, 3): every slice of the stencil
has a 1 there), sizes 0, 1, odd and large, every dtype, strided and
transposed sources, new leading dims, ranks up to 9 (above 8 the path is a
loop nest), inside long loops, and one compile for every size. Runs
compiled and interpreted (conftest)."""

import numpy as np
import pytest

import kiln


def jacobi(a, b, steps):
    for _ in range(steps):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])


def _grid(shape, seed):
    return np.random.default_rng(seed).random(shape)


# (shape of a, shape of b): a's interior is a row, a column or one element
# where b's is larger (a broadcasts into b, and b's result into a only where
# NumPy allows it, else both raise), or both interiors are equal.
STENCIL_SHAPES = [
    ((3, 9), (11, 9)), ((9, 3), (9, 11)), ((3, 3), (7, 8)), ((3, 3), (3, 3)), ((3, 40), (3, 40)),
    ((3, 2), (5, 2)), ((2, 7), (2, 7)), ((3, 3), (2, 2)), ((3, 201), (3, 201)),
]


@pytest.mark.parametrize("shape_a, shape_b", STENCIL_SHAPES)
def test_stencil_whose_operands_have_a_unit_dim(shape_a, shape_b):
    """`b[1:-1, 1:-1] = f(a[...])`: every operand of `f` broadcasts when
    a's interior has a 1 where b's has more; then `a[1:-1, 1:-1] = f(b[...])`
    asks NumPy to shrink b's interior into a's, which raises (both sides)."""
    a, b = _grid(shape_a, 1), _grid(shape_b, 2)
    expected_a, expected_b = a.copy(), b.copy()
    try:
        jacobi(expected_a, expected_b, 1)
        error = None
    except ValueError as e:
        error = e
    got_a, got_b = a.copy(), b.copy()
    if error is not None:
        with pytest.raises(ValueError, match="could not broadcast"):
            kiln.qjit(jacobi)(got_a, got_b, 1)
        return
    kiln.qjit(jacobi)(got_a, got_b, 1)
    np.testing.assert_allclose(got_b, expected_b)
    np.testing.assert_allclose(got_a, expected_a)


def stencil_into(b, a):
    b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])


@pytest.mark.parametrize("n", [2, 3, 4, 9, 300])
@pytest.mark.parametrize("a_shape", ["row", "column", "element"])
def test_stencil_one_compile_for_every_size(n, a_shape):
    """A row (3, n), a column (n, 3) or one element (3, 3) of `a` broadcast
    into an n x n interior of `b`; the sizes 0 (n = 2), 1 and odd included."""
    shapes = {"row": (3, n), "column": (n, 3), "element": (3, 3)}
    a, b = _grid(shapes[a_shape], n), _grid((n, n), n + 1)
    expected = b.copy()
    stencil_into(expected, a)
    got = b.copy()
    kiln.qjit(stencil_into)(got, a)
    np.testing.assert_allclose(got, expected)


def test_stencil_serves_both_paths_with_one_compile():
    f = kiln.qjit(stencil_into)
    for shape_a, shape_b in [((9, 9), (9, 9)), ((3, 9), (9, 9)), ((9, 3), (9, 9)), ((3, 3), (5, 7)),
                             ((3, 3), (2, 2)), ((5, 6), (5, 6)), ((3, 17), (40, 17))]:
        a, b = _grid(shape_a, 3), _grid(shape_b, 4)
        expected, got = b.copy(), b.copy()
        stencil_into(expected, a)
        f(got, a)
        np.testing.assert_allclose(got, expected)
    assert f.num_compiles == 1


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.float32, np.float64, np.complex64,
          np.complex128]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_every_dtype_through_the_copy(dtype):
    """Each element size the copy handles (1, 2, 4, 8, 16 bytes; bool is a
    byte), in a 2-D write whose value has two dims that may be 1."""
    def f(x, y, p, q):
        x[1:, 1:] = y[:p, :q]

    y = (np.arange(20) % 7).reshape(4, 5).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        y = y + 1j * y[::-1]
    for p, q in [(1, 1), (1, 5), (4, 1), (4, 5)]:
        x_shape = (p + 1 if p > 1 else 5, q + 1 if q > 1 else 6)
        expected, got = np.zeros(x_shape, dtype), np.zeros(x_shape, dtype)
        f(expected, y, p, q)
        kiln.qjit(f)(got, y, p, q)
        np.testing.assert_array_equal(got, expected)


def test_strided_and_transposed_sources():
    """The source's strides come from its buffer: a reversed, stepped or
    transposed view is read where it lies."""
    def f(d, e, k, m):
        return d[::-2, k:k + 1] * 2.0 + e.T[m:m + 1, ::3] - d[1::2, :1].T[:, :1]

    d = np.arange(99.0).reshape(11, 9)
    e = np.arange(60.0).reshape(12, 5) * -0.5
    for k, m in [(0, 0), (4, 2), (8, 4)]:
        np.testing.assert_allclose(kiln.qjit(f)(d, e, k, m), f(d, e, k, m))


@pytest.mark.parametrize("p, q, r", [(1, 1, 1), (2, 1, 4), (1, 3, 1), (2, 3, 4), (0, 1, 4), (1, 3, 0)])
def test_new_leading_dims_and_3d(p, q, r):
    """A 1-D and a 2-D operand broadcast into 3-D (dims the source lacks are
    read with stride 0), next to a 3-D one with its own unit dims."""
    def f(a, v, w, p, q, r):
        return a[:p, :q, :r] + v[:r] * w[:q, :r]

    a = np.linspace(0.0, 1.0, 24).reshape(2, 3, 4)
    v = np.arange(1.0, 5.0)
    w = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(kiln.qjit(f)(a, v, w, p, q, r), f(a, v, w, p, q, r))


@pytest.mark.parametrize("rank", [4, 8, 9])
def test_high_ranks(rank):
    """Rank 8 is the largest with an entry in runtime/broadcast.c; rank 9
    takes the loop nest."""
    middle = (slice(None),) * (rank - 2)

    def f(x, y, m, n, p, q):
        return x[(slice(None, m), *middle, slice(None, n))] + y[(slice(None, p), *middle, slice(None, q))] * 2.0

    shape = (3,) + (2,) * (rank - 2) + (3,)
    x = np.arange(float(np.prod(shape))).reshape(shape)
    y = -x[..., ::-1].copy()
    compiled = kiln.qjit(f)
    for sizes in [(1, 3, 3, 3), (3, 1, 3, 3), (3, 3, 1, 1), (1, 1, 3, 3), (3, 3, 3, 3), (1, 3, 3, 1)]:
        np.testing.assert_allclose(compiled(x, y, *sizes), f(x, y, *sizes))


def test_a_long_loop_on_the_size_one_path():
    """10,000 time steps through the copy: nothing grows per iteration (no
    stack allocation, every buffer freed)."""
    a, b = _grid((3, 6), 5), _grid((6, 6), 6)
    expected, got = b.copy(), b.copy()

    def steps(b, a, n):
        for _ in range(n):
            b[1:-1, 1:-1] = 0.5 * (a[1:-1, 1:-1] + a[1:-1, :-2]) + 0.5 * b[1:-1, 1:-1]

    steps(expected, a, 10_000)
    kiln.qjit(steps)(got, a, 10_000)
    np.testing.assert_allclose(got, expected)
