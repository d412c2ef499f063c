"""f32 products whose left operand has at most 8 rows run runtime/matvec.c's
kiln_gemm_small_m_f32 (kiln-linalg-to-blas; the IR is in
test/lit/passes/kiln-linalg-to-blas.mlir): results as NumPy's, written the
way a small-batch inference or a few-row least-squares step is written,
at sizes 0, 1, odd and large, with more than 8 rows (sgemm), through
views, accumulated and scaled, with NaN and infinity."""

from __future__ import annotations

import numpy as np
import pytest

import kiln


def dense_layer(x, w, b):
    return np.maximum(x @ w + b, 0)


def accumulate(out, x, w):
    out += x @ w
    return out


def scaled(x, w, s):
    return s * (x @ w)


def _close(got, expected, k):
    # Each element sums k float32 products in another order than OpenBLAS.
    tolerance = 2e-6 * max(1, k) ** 0.5 * max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=tolerance)


@pytest.mark.parametrize("rows", [0, 1, 2, 3, 7, 8, 9, 33])
@pytest.mark.parametrize("inner, columns", [(0, 5), (1, 1), (5, 3), (300, 257), (1031, 2049)])
def test_dense_layer_matches_numpy(rows, inner, columns):
    rng = np.random.default_rng(rows * 1000 + inner + columns)
    x = rng.standard_normal((rows, inner)).astype(np.float32)
    w = rng.standard_normal((inner, columns)).astype(np.float32)
    b = rng.standard_normal(columns).astype(np.float32)
    got = kiln.qjit(dense_layer)(x, w, b)
    assert got.dtype == np.float32 and got.shape == (rows, columns)
    _close(got, dense_layer(x, w, b), inner)


@pytest.mark.parametrize("rows", [1, 4, 8, 12])
def test_accumulate_into_an_argument(rows):
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 64)).astype(np.float32)
    w = rng.standard_normal((64, 130)).astype(np.float32)
    out = rng.standard_normal((rows, 130)).astype(np.float32)
    expected = out + x @ w
    got = kiln.qjit(accumulate)(out, x, w)
    _close(out, expected, 64)
    _close(got, expected, 64)


@pytest.mark.parametrize("s", [0.5, 0.0, -3.0])
def test_scaled_product(s):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 40)).astype(np.float32)
    w = rng.standard_normal((40, 70)).astype(np.float32)
    _close(kiln.qjit(scaled)(x, w, np.float32(s)), scaled(x, w, np.float32(s)), 40)


def test_views_of_rows_and_columns():
    """A few rows of a larger matrix (row stride > width) times a column block."""
    rng = np.random.default_rng(4)
    big = rng.standard_normal((20, 50)).astype(np.float32)
    w = rng.standard_normal((60, 90)).astype(np.float32)

    def f(big, w):
        return big[2:8:2, 5:35] @ w[10:40, 3:80]

    _close(kiln.qjit(f)(big, w), f(big, w), 30)


def test_nan_and_infinity_propagate_as_numpy():
    x = np.array([[np.nan, 1.0], [np.inf, 0.0], [1.0, 2.0]], dtype=np.float32)
    w = np.array([[0.0, 1.0, 2.0], [1.0, np.inf, 0.0]], dtype=np.float32)

    def f(x, w):
        return x @ w

    got, expected = kiln.qjit(f)(x, w), f(x, w)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(got[~np.isnan(got)], expected[~np.isnan(expected)])


def test_batches_of_changing_size_share_one_compile():
    """One compile serves every batch size above 1 (a size of 1 is a
    signature of its own: broadcasting): a run-time test picks the kernel."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((200, 300)).astype(np.float32)
    b = rng.standard_normal(300).astype(np.float32)
    f = kiln.qjit(dense_layer)
    for rows in (3, 8, 9, 100, 2):
        x = rng.standard_normal((rows, 200)).astype(np.float32)
        _close(f(x, w, b), dense_layer(x, w, b), 200)
    assert f.num_compiles == 1


def test_float64_keeps_numpys_results():
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((4, 100)), rng.standard_normal((100, 33))

    def f(x, w):
        return x @ w

    np.testing.assert_allclose(kiln.qjit(f)(x, w), f(x, w), rtol=1e-12, atol=1e-12)
