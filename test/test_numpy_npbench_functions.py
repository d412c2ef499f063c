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
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        kiln.qjit(lambda m: np.linalg.cholesky(m))(np.ones((2, 3, 4)))


def test_triu_tril():
    def f(a, k):
        return np.triu(a), np.tril(a), np.triu(a, 1), np.tril(a, -2), np.triu(a, k), np.tril(a[0], k), \
            np.triu(a.astype(np.int32), -k)

    compiled = kiln.qjit(f)
    for n in SIZES:
        a = _rng.standard_normal((n + 1, n + 3))
        for k in (-1, 0, 2):
            assert_same(compiled(a, k), f(a, k))


# --------------------------------------------------------------------------
# np.histogram


def _hist_equal(result, expected) -> None:
    """Counts exactly; float sums (weights, density) to rounding."""
    for r, e in zip(result, expected):
        assert_same(r, e, rtol=1e-12, atol=1e-12)


def test_histogram_azimint_forms():
    """NPBench azimint_hist: counts and weighted sums with a traced bin count."""

    def f(data, radius, npt):
        counts, edges = np.histogram(radius, npt)
        weighted = np.histogram(radius, npt, weights=data)[0]
        return counts, edges, weighted

    compiled = kiln.qjit(f)
    for n in SIZES + (4001,):
        for npt in (1, 3, 50):
            data, radius = _rng.random(n), _rng.random(n)
            _hist_equal(compiled(data, radius, npt), f(data, radius, npt))
    assert compiled.num_compiles <= 2  # one binary for every size (size 1 may specialize)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_histogram_default_bins_and_dtypes(dtype):
    def f(a):
        return np.histogram(a)

    compiled = kiln.qjit(f)
    for n in SIZES:
        a = (_rng.standard_normal(n) * 20).astype(dtype) if dtype != np.bool_ else _rng.random(n) > 0.5
        _hist_equal(compiled(a), f(a))


def test_histogram_right_edge_and_equal_values():
    """The last bin holds its right edge; all-equal data gets NumPy's
    range [v - 0.5, v + 0.5]; values on every inner edge land as NumPy's."""

    def f(a, bins):
        return np.histogram(a, bins)

    compiled = kiln.qjit(f)
    cases = [np.array([0.0, 1.0, 2.0, 3.0, 4.0]), np.full(5, 7.0), np.linspace(-1.0, 1.0, 101),
             np.array([1e-300, 1e300]), np.array([0.1, 0.2, 0.3, 0.7, 1.0, 0.9, 0.30000000000000004])]
    for a in cases:
        for bins in (1, 3, 4, 10):
            _hist_equal(compiled(a, bins), f(a, bins))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
def test_histogram_values_on_and_beside_every_edge(dtype):
    """Equal bins recompute each value's edges elementwise instead of reading
    the edge array (no gather, one fused loop): the recomputed edges must be
    NumPy's to the bit, with the range from the data or given (then the
    edges are made in float64 and cast)."""

    def f(a, bins):
        return np.histogram(a, bins), np.histogram(a, bins, range=(-0.3, 2.9))

    compiled = kiln.qjit(f)
    base = (_rng.standard_normal(37) * 3).astype(dtype)
    for bins in (1, 7, 1000):
        for edges in (np.histogram_bin_edges(base, bins), np.histogram_bin_edges(base, bins, range=(-0.3, 2.9))):
            edges = edges.astype(dtype)
            a = np.concatenate([base, edges, np.nextafter(edges, dtype(np.inf)), np.nextafter(edges, dtype(-np.inf))])
            for got, expected in zip(compiled(a, bins), f(a, bins)):
                _hist_equal(got, expected)


@pytest.mark.compiled_only
def test_histogram_equal_bins_gather_no_edges():
    def f(a, weights, bins):
        return np.histogram(a, bins, weights=weights)

    compiled = kiln.qjit(f)
    a = _rng.random(11)
    _hist_equal(compiled(a, a * 2, 5), f(a, a * 2, 5))
    assert "stablehlo.gather" not in kiln.get_compilation_stage(compiled, "stablehlo")


def test_histogram_range_density_and_weights():
    def f(a, w, lo, hi):
        return (np.histogram(a, 7, range=(lo, hi)), np.histogram(a, 5, range=(-1.0, 1.0), weights=w),
                np.histogram(a.reshape(1, -1), 3, weights=w.reshape(1, -1)),
                np.histogram(a, 6, density=True), np.histogram(a, 4, range=(lo, hi), density=True, weights=w))

    compiled = kiln.qjit(f)
    for n in SIZES:
        a = _rng.standard_normal(n) * 2
        w = _rng.random(n).astype(np.float32)
        with np.errstate(all="ignore"):
            expected = f(a, w, -0.5, 1.5)
        got = compiled(a, w, -0.5, 1.5)
        for g, e in zip(got, expected):
            for r, x in zip(g, e):
                assert_same(r, x, rtol=1e-6, atol=1e-12)


def test_histogram_explicit_edges():
    def f(a, edges):
        return np.histogram(a, edges), np.histogram(a, [0.0, 0.25, 0.25, 0.5, 1.0]), \
            np.histogram(a, np.array([0, 1, 2]), weights=a)

    compiled = kiln.qjit(f)
    for n in SIZES:
        a = _rng.random(n) * 1.5 - 0.2
        for edges in (np.sort(_rng.random(5)), np.array([0.0, 0.5, 0.5, 1.0]), np.array([0.3]), np.zeros(0)):
            got, expected = compiled(a, edges), f(a, edges)
            for g, e in zip(got, expected):
                _hist_equal(g, e)


def test_histogram_nan_and_errors():
    def auto(a):
        return np.histogram(a, 4)

    def ranged(a):
        return np.histogram(a, 4, range=(0.0, 1.0))

    def backwards(a):
        return np.histogram(a, 4, range=(1.0, 0.0))

    def unsorted(a):
        return np.histogram(a, np.array([0.0, 2.0, 1.0]))

    def no_bins(a, n):
        return np.histogram(a, n)

    def misshapen_weights(a, w):
        return np.histogram(a, 3, weights=w)

    a = np.array([0.2, np.nan, 0.7, 1.0])
    _hist_equal(kiln.qjit(ranged)(a), ranged(a))  # a NaN counts nowhere when the range is given
    with pytest.raises(ValueError, match="autodetected range"):
        auto(a)
    with pytest.raises(ValueError, match="autodetected range is not finite"):
        kiln.qjit(auto)(a)
    with pytest.raises(ValueError, match="max must be larger than min in range parameter"):
        kiln.qjit(backwards)(np.ones(3))
    with pytest.raises(ValueError, match="`bins` must increase monotonically"):
        kiln.qjit(unsorted)(np.ones(3))
    with pytest.raises(ValueError, match="`bins` must be positive"):
        kiln.qjit(no_bins)(np.ones(3), 0)
    with pytest.raises(ValueError, match="weights should have the same shape as a"):
        kiln.qjit(misshapen_weights)(np.ones(3), np.ones(4))
    # estimators: NumPy's run-time number of bins; 'stone' is refused, weights with one are NumPy's TypeError
    x = np.array([0.1, 0.4, 0.45, 2.0, 3.5])
    for estimator in ("auto", "fd", "sturges", "sqrt", "rice", "scott"):
        _hist_equal(kiln.qjit(lambda v: np.histogram(v, estimator))(x), np.histogram(x, estimator))
    with pytest.raises(ValueError, match="bins='stone'"):
        kiln.qjit(lambda v: np.histogram(v, "stone"))(np.ones(3))
    with pytest.raises(TypeError, match="weighted data"):
        kiln.qjit(lambda v: np.histogram(v, "auto", weights=v))(np.ones(3))


# --------------------------------------------------------------------------
# np.linalg.solve, np.linalg.inv


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_solve_and_inv(dtype):
    def f(a, b, v):
        return np.linalg.solve(a, b), np.linalg.solve(a, v), np.linalg.inv(a)

    compiled = kiln.qjit(f)
    for n in SIZES:
        # Well conditioned (a large diagonal), so NumPy's and kiln's rounding
        # stay close; test_solve_pivots_and_singular_matrices swaps rows.
        a = _rng.standard_normal((n, n)) + n * np.eye(n)
        if dtype == np.complex128:
            a = a + 1j * _rng.standard_normal((n, n))
        if dtype == np.int64:  # rounding must not make it singular: a dominant diagonal
            a = np.round(a * 3) + (3 * n + 1) * np.eye(n)
        a = a.astype(dtype)
        b, v = _rng.standard_normal((n, 3)).astype(dtype), _rng.standard_normal(n).astype(dtype)
        expected = f(a, b, v)
        rtol = 2e-3 if dtype == np.float32 else 1e-7
        assert_same(compiled(a, b, v), expected, rtol=rtol, atol=rtol * max(1.0, np.abs(expected[2]).max(initial=0)))


def test_solve_pivots_and_singular_matrices():
    """A zero leading entry needs a row swap; an exactly singular matrix
    raises numpy.linalg.LinAlgError as NumPy."""

    def f(a, b):
        return np.linalg.solve(a, b)

    a = np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]])
    b = np.arange(3.0)
    assert_same(kiln.qjit(f)(a, b), f(a, b), rtol=1e-12, atol=1e-12)
    for singular in (np.zeros((2, 2)), np.array([[1.0, 2.0], [2.0, 4.0]])):
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            np.linalg.solve(singular, np.ones(2))
        with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix"):
            kiln.qjit(f)(singular, np.ones(2))
        with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix"):
            kiln.qjit(lambda m: np.linalg.inv(m))(singular)
    with pytest.raises(ValueError, match="b has 2 rows but a has 3"):
        kiln.qjit(f)(a, np.ones(2))
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        kiln.qjit(lambda m: np.linalg.inv(m))(np.ones((2, 3)))
