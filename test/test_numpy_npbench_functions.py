"""NumPy functions the NPBench kernels need, against NumPy: every binary
ufunc's `.outer`, `np.histogram` and `np.linalg.cholesky` (issue 14).

Sizes 0, 1, odd and large; each test runs compiled and through the
reference interpreter (the `execution` fixture of conftest.py). One
compiled function serves every size of a test.
"""

from __future__ import annotations

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 7, 200)
_rng = np.random.default_rng(14)


def assert_same(result, expected, rtol=1e-12, atol=0.0) -> None:
    """Values, shape and dtype agree with NumPy's."""
    if isinstance(expected, tuple):
        assert isinstance(result, tuple) and len(result) == len(expected)
        for r, e in zip(result, expected):
            assert_same(r, e, rtol, atol)
        return
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.shape == expected.shape, f"shape {result.shape} != NumPy's {expected.shape}"
    assert result.dtype == expected.dtype, f"dtype {result.dtype} != NumPy's {expected.dtype}"
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(result, expected)


# --------------------------------------------------------------------------
# ufunc.outer

_OUTER_UFUNCS = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "less", "equal",
                 "arctan2", "hypot", "logical_and", "bitwise_or", "floor_divide"]


def _outer_operands(name: str, n: int):
    if name in ("bitwise_or", "floor_divide"):
        return _rng.integers(1, 9, n), _rng.integers(1, 9, (2, n // 2 + 1))
    if name == "power":
        return _rng.uniform(0.5, 2.0, n), _rng.uniform(-2.0, 2.0, (2, n // 2 + 1))
    return _rng.uniform(-2.0, 2.0, n), _rng.uniform(-2.0, 2.0, (2, n // 2 + 1))


@pytest.mark.parametrize("name", _OUTER_UFUNCS)
def test_ufunc_outer(name):
    ufunc = getattr(np, name)

    def f(a, b):
        return ufunc.outer(a, b)

    compiled = kiln.qjit(f)
    for n in SIZES:
        a, b = _outer_operands(name, n)
        assert_same(compiled(a, b), f(a, b))


def test_outer_scalars_dtypes_and_out():
    def f(a, b, c):
        out = np.zeros((a.shape[0], b.shape[0]), dtype=np.float32)
        np.add.outer(a, b, out=out)
        return (np.multiply.outer(2, b), np.subtract.outer(a, 1.5), np.maximum.outer(c, c),
                np.add.outer(a, b, dtype=np.float64), out, np.minimum.outer(c[0], c))

    compiled = kiln.qjit(f)
    for n in SIZES:
        a = _rng.uniform(-1, 1, n).astype(np.float32)
        b = _rng.uniform(-1, 1, n + 2).astype(np.float32)
        c = _rng.integers(-5, 5, (n + 1, 2)).astype(np.int8)
        assert_same(compiled(a, b, c), f(a, b, c), rtol=1e-6)


def test_outer_of_views_in_a_loop():
    """NPBench floyd_warshall: `np.add.outer(path[:, k], path[k, :])` in a time loop."""

    def f(path):
        for k in range(path.shape[0]):
            path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))

    compiled = kiln.qjit(f)
    for n in SIZES:
        path = _rng.integers(1, 100, (n, n)).astype(np.int32)
        expected, got = path.copy(), path.copy()
        f(expected)
        compiled(got)
        assert_same(got, expected)


# --------------------------------------------------------------------------
# np.linalg.cholesky, np.triu, np.tril


def _spd(n: int, dtype=np.float64):
    m = _rng.standard_normal((n, n))
    a = m @ m.T + n * np.eye(n)
    if np.dtype(dtype).kind == "c":
        h = _rng.standard_normal((n, n)) * 1j
        a = a + (h - h.T) * 0.3
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_cholesky(dtype):
    def f(a):
        return np.linalg.cholesky(a), np.linalg.cholesky(a, upper=True)

    compiled = kiln.qjit(f)
    for n in SIZES:
        a = _spd(n, np.float64 if dtype == np.int64 else dtype)
        if dtype == np.int64:
            a = np.round(a).astype(np.int64) + n * np.eye(n, dtype=np.int64)
        rtol = 2e-4 if dtype == np.float32 else 1e-9
        assert_same(compiled(a), f(a), rtol=rtol, atol=rtol)


def test_cholesky_reads_only_the_lower_triangle_and_writes_back():
    """NPBench cholesky2: `A[:] = np.linalg.cholesky(A) + np.triu(A, k=1)`."""

    def f(a):
        a[:] = np.linalg.cholesky(a) + np.triu(a, k=1)

    compiled = kiln.qjit(f)
    for n in SIZES:
        a = _spd(n)
        a[np.triu_indices(n, 1)] = 1e9  # garbage above the diagonal: never read
        expected, got = a.copy(), a.copy()
        f(expected)
        compiled(got)
        assert_same(got, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("matrix", [[[1.0, 2.0], [2.0, 1.0]], [[-1.0]], [[0.0]],
                                    [[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]],
                         ids=["indefinite", "negative", "zero", "singular"])
def test_cholesky_of_a_matrix_that_is_not_positive_definite(matrix):
    a = np.array(matrix)
    with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
        np.linalg.cholesky(a)
    with pytest.raises(np.linalg.LinAlgError, match="^Matrix is not positive definite"):
        kiln.qjit(lambda m: np.linalg.cholesky(m))(a)


def test_cholesky_with_nans_gives_numpys_nans():
    """NumPy's LAPACK (OpenBLAS potrf) raises for a pivot <= 0 only: a NaN
    pivot spreads NaNs through the rest of the factor."""

    def f(a):
        return np.linalg.cholesky(a)

    compiled = kiln.qjit(f)
    for a in ([[np.nan, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, np.nan]], [[4.0, np.nan], [np.nan, 4.0]]):
        a = np.array(a)
        assert_same(compiled(a), f(a))


def test_cholesky_of_a_non_square_matrix():
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        kiln.qjit(lambda m: np.linalg.cholesky(m))(np.ones((2, 3)))
    with pytest.raises(ValueError, match="one 2-D matrix"):
        kiln.qjit(lambda m: np.linalg.cholesky(m))(np.ones((2, 3, 3)))


def test_triu_tril():
    def f(a, k):
        return np.triu(a), np.tril(a), np.triu(a, 1), np.tril(a, -2), np.triu(a, k), np.tril(a[0], k), \
            np.triu(a.astype(np.int32), -k)

    compiled = kiln.qjit(f)
    for n in SIZES:
        a = _rng.standard_normal((n + 1, n + 3))
        for k in (-1, 0, 2):
            assert_same(compiled(a, k), f(a, k))
