"""What BLAS gemm computes besides the product, folded into the call
(kiln-fold-into-gemm, kiln-linalg-to-blas): gemm's `alpha * A @ B + beta *
C`, k2mm's chain, a bias epilogue, scaled right operands; against NumPy at
sizes 0, 1, odd and large, f32 and f64, with NaN and infinity where a
factor is 0 (NumPy's `0 * nan` is nan; BLAS would skip the term), and
arguments that alias."""

from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln.compiler.passes.kiln_linalg_to_blas import blas_library

pytestmark = pytest.mark.skipif(blas_library() is None, reason="NumPy ships no ILP64 OpenBLAS here")

SIZES = [(5, 6, 7), (0, 3, 2), (3, 0, 2), (3, 2, 0), (2, 3, 4), (64, 33, 17), (201, 150, 99)]


def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


def k2mm(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D


def _tolerance(dtype):
    return {"rtol": 2e-5, "atol": 2e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gemm_is_one_call(dtype):
    f = kiln.qjit(gemm)
    rng = np.random.default_rng(0)
    for m, n, k in SIZES:
        C, A, B = (rng.random(s).astype(dtype) for s in ((m, n), (m, k), (k, n)))
        expected = C.copy()
        gemm(1.5, 1.2, expected, A, B)
        f(1.5, 1.2, C, A, B)
        np.testing.assert_allclose(C, expected, **_tolerance(dtype))
    ir = f.stage("bufferized")
    # alpha and beta go to the call; the scalings run only for a factor of 0.
    assert ir.count("call @scipy_cblas_") == 1
    assert f.num_compiles == 1
    for m, n, k in [(1, 1, 1), (2, 3, 1), (1, 4, 3)]:  # dims of 1 (compiled apart, like every broadcast)
        C, A, B = (rng.random(s).astype(dtype) for s in ((m, n), (m, k), (k, n)))
        expected = C.copy()
        gemm(1.5, 1.2, expected, A, B)
        f(1.5, 1.2, C, A, B)
        np.testing.assert_allclose(C, expected, **_tolerance(dtype))


@pytest.mark.parametrize("which", ["alpha", "beta", "both"])
def test_a_factor_of_zero_keeps_numpys_nan(which):
    f = kiln.qjit(gemm)
    rng = np.random.default_rng(1)
    C, A, B = rng.random((4, 5)), rng.random((4, 3)), rng.random((3, 5))
    A[1, 2] = np.nan
    A[2, 0] = np.inf
    C[0, 0] = np.nan
    C[3, 4] = -np.inf
    alpha = 0.0 if which in ("alpha", "both") else 2.0
    beta = 0.0 if which in ("beta", "both") else 0.5
    expected = C.copy()
    with np.errstate(invalid="ignore"):
        gemm(alpha, beta, expected, A, B)
    f(alpha, beta, C, A, B)
    np.testing.assert_array_equal(np.isnan(C), np.isnan(expected))
    np.testing.assert_allclose(C, expected, rtol=1e-12)


def test_k2mm_chain():
    f = kiln.qjit(k2mm)
    rng = np.random.default_rng(2)
    for ni, nj, nk, nl in [(4, 5, 6, 7), (1, 3, 2, 5), (0, 2, 3, 4), (40, 50, 70, 80)]:
        A, B, C, D = (rng.random(s) for s in ((ni, nk), (nk, nj), (nj, nl), (ni, nl)))
        expected = D.copy()
        k2mm(1.5, 1.2, A, B, C, expected)
        f(1.5, 1.2, A, B, C, D)
        np.testing.assert_allclose(D, expected, rtol=1e-12)


def test_bias_epilogue_and_scaled_right_operand():
    def layer(x, W, b, s):
        return np.maximum(x @ W + b, 0.0), x @ (W * s), (s * x) @ W + 1.0

    f = kiln.qjit(layer)
    rng = np.random.default_rng(3)
    for n, d, h in [(8, 5, 3), (1, 4, 6), (0, 3, 2), (64, 31, 17)]:
        x, W, b = rng.standard_normal((n, d)), rng.standard_normal((d, h)), rng.standard_normal(h)
        for got, want in zip(f(x, W, b, -0.75), layer(x, W, b, -0.75)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_destination_read_after_the_write_keeps_its_old_value():
    # C's old value is read after `C[:] = ...`: the added term must not be
    # computed in C's buffer before that read.
    def g(alpha, beta, C, A, B):
        old = C.copy()
        C[:] = alpha * A @ B + beta * C
        return old.sum() + C.sum()

    f = kiln.qjit(g)
    rng = np.random.default_rng(4)
    C, A, B = rng.random((6, 5)), rng.random((6, 4)), rng.random((4, 5))
    C2 = C.copy()
    want = g(1.5, 1.2, C2, A, B)
    got = f(1.5, 1.2, C, A, B)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(C, C2, rtol=1e-12)


def test_gemm_in_a_loop_and_on_views():
    def loop(alpha, beta, C, A, B, steps):
        for _ in range(steps):
            C[:] = alpha * A @ B + beta * C
        C[1:, :2] = alpha * A[1:, ::2] @ B[::2, :2] + beta * C[1:, :2]

    f = kiln.qjit(loop)
    rng = np.random.default_rng(5)
    for m, n in [(5, 5), (9, 9), (2, 2)]:
        C, A, B = rng.random((m, n)) / n, rng.random((m, n)) / n, rng.random((n, n)) / n
        expected = C.copy()
        loop(0.5, 0.9, expected, A, B, 3)
        f(0.5, 0.9, C, A, B, 3)
        np.testing.assert_allclose(C, expected, rtol=1e-12, atol=1e-14)


def test_overlapping_arguments_are_refused():
    f = kiln.qjit(gemm)
    C, B = np.ones((3, 3)), np.ones((3, 3))
    with pytest.raises(ValueError, match="overlaps"):
        f(1.0, 1.0, C, C, B)
