"""Loops of column-by-columns products read one matrix product
(kiln-lift-matvec-loops) and `x.T @ x`-style products call BLAS with
transpose flags or syrk (kiln-linalg-to-blas), against NumPy: NPBench's
covariance and correlation as written, other matrices and dtypes, row
ranges, a loop that writes its matrix, loops too short for the product to
pay, out-of-bounds columns, sizes 0, 1, odd and large, one compile."""

from __future__ import annotations

import numpy as np
import pytest

import kiln


def covariance(M, float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def correlation(M, float_n, data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def cross_products(x, y):
    n = x.shape[1]
    out = np.zeros((n, y.shape[1]), x.dtype)
    for i in range(n):
        out[i, i:] = x[:, i] @ y[:, i:]
    return out


def inner_rows(x):
    n = x.shape[1]
    out = np.zeros((n, n))
    for j in range(1, n):
        out[j, :j] = x[1:-1, j] @ x[1:-1, :j]
    return out


def writes_its_matrix(x):
    n = x.shape[1]
    out = np.zeros((n, n))
    for i in range(n):
        x[:, i] *= 2.0
        out[i, i:] = x[:, i] @ x[:, i:]
    return out


def few_columns(x, k):
    out = np.zeros((k, 2))
    for i in range(k):
        out[i] = x[:, i] @ x[:, :2]
    return out


def past_the_end(x):
    out = np.zeros(x.shape[1] + 1)
    for i in range(x.shape[1] + 1):
        out[i] = np.sum(x[:, i] @ x[:, i:])
    return out


def rows_of_product(A, B):
    C = np.empty((A.shape[0], B.shape[1]), A.dtype)
    for i in range(A.shape[0]):
        C[i, :] = A[i, :] @ B
    return C


def columns_of_product(A, B):
    C = np.zeros((A.shape[0], B.shape[1]), A.dtype)
    for j in range(B.shape[1]):
        C[:, j] = A @ B[:, j]
    return C


def rows_on_the_right(A, B):
    C = np.zeros((A.shape[0], B.shape[0]))
    for j in range(B.shape[0]):
        C[:, j] = A @ B[j]
    return C


def into_argument(A, B, C):
    for i in range(A.shape[0]):
        C[i] = A[i] @ B


def rows_in_place(A, B):
    for i in range(A.shape[0]):
        A[i, :] = A[i, :] @ B
    return A


def triple_loop(A, B):
    n, m = A.shape[0], B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            C[i, j] = np.dot(A[i, :], B[:, j])
    return C


def upper_triangle_of_gram(X):
    n = X.shape[1]
    G = np.zeros((n, n))
    for i in range(n):
        for j in range(i, n):
            G[i, j] = X[:, i] @ X[:, j]
    return G


def every_other_row(A, B):
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(1, A.shape[0], 2):
        C[i] = A[i] @ B
    return C


def backwards(A, B):
    C = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0] - 1, -1, -1):
        C[i] = A[i] @ B
    return C


def until_small(A, B):
    C = np.zeros((A.shape[0], B.shape[1]))
    i = 0
    while i < A.shape[0] and A[i, 0] > 0.05:
        C[i] = A[i] @ B
        i += 1
    return C


def _check(f, kernel, *args, rtol=1e-11, atol=1e-11):
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    np.testing.assert_allclose(f(*mine), kernel(*theirs), rtol=rtol, atol=atol)
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)  # written arguments too


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's mean of 0 rows
@pytest.mark.parametrize("kernel", [covariance, correlation])
def test_npbench_kernels_at_many_sizes_one_compile(kernel):
    f = kiln.qjit(kernel)
    rng = np.random.default_rng(0)
    for m, n in [(7, 9), (50, 31), (201, 300), (3, 2)]:
        _check(f, kernel, m, float(n), rng.random((n, m)))
    assert f.num_compiles == 1
    for m, n in [(0, 3), (1, 1), (1, 4), (4, 1), (2, 0)]:
        _check(f, kernel, m, float(n), rng.random((n, m)))


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-11), (np.float32, 2e-4)])
def test_different_matrices_and_dtypes(dtype, rtol):
    f = kiln.qjit(cross_products)
    rng = np.random.default_rng(1)
    for r, n, k in [(9, 7, 7), (40, 33, 50), (1, 5, 5), (6, 1, 3), (0, 4, 4), (300, 120, 130)]:
        x, y = rng.random((r, n)).astype(dtype), rng.random((r, k)).astype(dtype)
        _check(f, cross_products, x, y, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("kernel", [rows_of_product, columns_of_product, rows_on_the_right])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-11), (np.float32, 2e-4)])
def test_products_written_row_by_row_or_column_by_column(kernel, dtype, rtol):
    f = kiln.qjit(kernel)
    rng = np.random.default_rng(11)
    for m, k, n in [(7, 5, 6), (40, 33, 50), (1, 5, 5), (6, 1, 3), (0, 4, 4), (4, 0, 3), (3, 4, 0),
                    (200, 150, 170)]:
        a = rng.random((m, k)).astype(dtype)
        b = rng.random((k, n) if kernel is not rows_on_the_right else (n, k)).astype(dtype)
        _check(f, kernel, a, b, rtol=rtol, atol=rtol * max(1, k))


@pytest.mark.parametrize("kernel", [triple_loop, upper_triangle_of_gram])
def test_nested_loops_of_dot_products(kernel):
    f = kiln.qjit(kernel)
    rng = np.random.default_rng(13)
    shapes = [((7, 5), (5, 6)), ((1, 1), (1, 1)), ((0, 3), (3, 2)), ((3, 0), (0, 4)), ((4, 3), (3, 0)),
              ((120, 90), (90, 100))]
    for a_shape, b_shape in shapes:
        args = (rng.random(a_shape), rng.random(b_shape)) if kernel is triple_loop else (rng.random(a_shape),)
        _check(f, kernel, *args)
    text = kiln.get_compilation_stage(f, "linalg")
    assert text.index("linalg.matmul") < text.index("scf.while"), "one product before the loops"


@pytest.mark.parametrize("kernel", [every_other_row, backwards, until_small])
def test_other_loop_shapes(kernel):
    f = kiln.qjit(kernel)
    rng = np.random.default_rng(14)
    for m, k, n in [(9, 7, 8), (1, 3, 2), (0, 2, 2), (2, 5, 1), (150, 120, 130)]:
        _check(f, kernel, rng.random((m, k)), rng.random((k, n)))


def test_inner_dimensions_that_disagree_raise_numpys_error():
    f = kiln.qjit(rows_of_product)
    with pytest.raises(ValueError, match="matmul"):
        f(np.ones((6, 5)), np.ones((4, 3)))
    g = kiln.qjit(cross_products)
    with pytest.raises(ValueError):
        g(np.ones((6, 5)), np.ones((7, 5)))


def test_products_into_an_argument_and_in_place():
    rng = np.random.default_rng(12)
    f = kiln.qjit(into_argument)
    for m, k, n in [(9, 7, 8), (1, 1, 1), (120, 90, 100)]:
        a, b = rng.random((m, k)), rng.random((k, n))
        mine, theirs = np.zeros((m, n)), np.zeros((m, n))
        f(a, b, mine)
        into_argument(a, b, theirs)
        np.testing.assert_allclose(mine, theirs, rtol=1e-11, atol=1e-11)
    g = kiln.qjit(rows_in_place)  # writes the matrix it reads: nothing lifted
    for m in (5, 1, 60):
        _check(g, rows_in_place, rng.random((m, m)), rng.random((m, m)))


def test_integer_products_are_left_alone():
    f = kiln.qjit(cross_products)
    rng = np.random.default_rng(2)
    x, y = rng.integers(-5, 5, (13, 11)), rng.integers(-5, 5, (13, 12))
    np.testing.assert_array_equal(f(x, y), cross_products(x, y))


def test_row_range_and_leading_columns():
    f = kiln.qjit(inner_rows)
    rng = np.random.default_rng(3)
    for shape in [(5, 6), (3, 1), (2, 4), (64, 40), (120, 200)]:
        _check(f, inner_rows, rng.random(shape))


def test_loop_that_writes_its_matrix():
    f = kiln.qjit(writes_its_matrix)
    rng = np.random.default_rng(4)
    for shape in [(6, 5), (1, 1), (40, 70)]:
        _check(f, writes_its_matrix, rng.random(shape))


def test_short_loops_over_wide_matrices():
    f = kiln.qjit(few_columns)
    rng = np.random.default_rng(5)
    x = rng.random((30, 400))
    for k in [0, 1, 2, 3, 400]:
        _check(f, few_columns, x, k)


def test_short_wide_matrix():
    # G would be 3000 x 3000 for a 4 x 3000 matrix: the loop keeps its own
    # products (the estimate refuses a G much larger than its operands).
    f = kiln.qjit(cross_products)
    x = np.random.default_rng(10).random((4, 3000))
    _check(f, cross_products, x, x)


def test_out_of_bounds_column_raises_index_error():
    f = kiln.qjit(past_the_end)
    x = np.random.default_rng(6).random((8, 6))
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 1 with size 6"):
        f(x)


def test_ir_reads_one_product_before_the_loop():
    f = kiln.qjit(covariance)
    f(5, 7.0, np.random.default_rng(7).random((7, 5)))
    text = kiln.get_compilation_stage(f, "bufferized")
    loop = text.index("scf.while")
    assert text.index("scipy_cblas_dsyrk64_") < loop, "the product is computed before the loop"
    assert "kiln_mirror_upper_f64" in text


def gram(x):
    return x.T @ x


def outer_gram(x):
    return x @ x.T


def crossed(x, y):
    return x.T @ y


def both_transposed(x, y):
    return x.T @ y.T


def gram_of_view(x):
    v = x[::2]
    return v.T @ v


@pytest.mark.parametrize("kernel", [gram, outer_gram, gram_of_view])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_symmetric_products(kernel, dtype, rtol):
    f = kiln.qjit(kernel)
    rng = np.random.default_rng(8)
    for shape in [(9, 7), (0, 5), (5, 0), (1, 1), (1, 6), (6, 1), (301, 200), (64, 65)]:
        x = rng.standard_normal(shape).astype(dtype)
        r = f(x)
        np.testing.assert_allclose(r, kernel(x), rtol=rtol, atol=rtol * max(1, shape[0]))
        np.testing.assert_array_equal(r, r.T)  # exactly symmetric, as NumPy's syrk result


def overlapping_views(x):
    return x[:, :5].T @ x[:, 3:]


def gram_of_transposed(z):
    y = z.T
    return y.T @ y


def test_aliasing_views_of_one_buffer():
    rng = np.random.default_rng(15)
    f, g = kiln.qjit(overlapping_views), kiln.qjit(gram_of_transposed)
    for shape in [(9, 8), (1, 6), (0, 7), (130, 140)]:
        x = rng.random(shape)
        np.testing.assert_allclose(f(x), overlapping_views(x), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g(x), gram_of_transposed(x), rtol=1e-12, atol=1e-12)


def test_symmetric_product_propagates_nan_and_inf():
    f = kiln.qjit(gram)
    x = np.ones((4, 3))
    x[1, 2] = np.nan
    x[2, 0] = np.inf
    np.testing.assert_array_equal(f(x), gram(x))


@pytest.mark.parametrize("kernel", [crossed, both_transposed])
def test_transposed_operands(kernel):
    f = kiln.qjit(kernel)
    rng = np.random.default_rng(9)
    for (r, n), k in [((9, 7), 5), ((0, 3), 4), ((1, 1), 1), ((150, 90), 70)]:
        x = rng.random((r, n))
        y = rng.random((r, k)) if kernel is crossed else rng.random((k, r))
        np.testing.assert_allclose(f(x, y), kernel(x, y), rtol=1e-12, atol=1e-12)


def test_ir_calls_blas_with_transpose_flags():
    f = kiln.qjit(crossed)
    f(np.ones((3, 2)), np.ones((3, 4)))
    text = kiln.get_compilation_stage(f, "bufferized")
    # CblasRowMajor (101), CblasTrans (112) for x, CblasNoTrans (111) for y;
    # only the result is allocated: x.T is not copied.
    assert "call @scipy_cblas_dgemm64_(%c101_i32, %c112_i32, %c111_i32," in text
    assert text.count("memref.alloc(") == 1 and "memref.load" not in text
    g = kiln.qjit(gram)
    g(np.ones((3, 2)))
    text = kiln.get_compilation_stage(g, "bufferized")
    assert "call @scipy_cblas_dsyrk64_(%c101_i32, %c121_i32, %c112_i32," in text  # upper, x.T @ x
    assert "call @kiln_mirror_upper_f64" in text and "scipy_cblas_dgemm64_" not in text
