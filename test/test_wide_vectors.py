"""Functions that compute exp ask LLVM for 512-bit vectors
(kiln-wide-vectors; the IR is in test/lit/passes/kiln-wide-vectors.mlir):
results as NumPy's for code written the way a classifier, a kernel density
estimate or an attention layer is written, at sizes 0, 1, odd (a vector
remainder) and large (the parallel bodies), with the special values exp
must keep (NaN, infinities, overflow, underflow to subnormals and zero);
the width reaches the LLVM IR of those functions only."""

from __future__ import annotations

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 17, 31, 1001, 100_003)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def gaussian_weights(d, bandwidth):
    w = np.exp(-0.5 * (d / bandwidth) ** 2)
    return w / max(w.sum(), 1e-300)


def attention_rows(scores):
    scores = scores - scores.max(axis=1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=1, keepdims=True)
    return p


def decay_in_place(x, rate, steps):
    for _ in range(steps):
        x *= np.exp(-rate)
        x += np.exp(-x)
    return x


def _tolerance(dtype):
    return dict(rtol=3e-6, atol=1e-30) if dtype == np.float32 else dict(rtol=2e-14, atol=1e-300)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_sigmoid_and_gaussian_weights(dtype, n):
    rng = np.random.default_rng(n)
    z = (rng.standard_normal(n) * 30).astype(dtype)
    with np.errstate(over="ignore"):
        expected = sigmoid(z)
    np.testing.assert_allclose(kiln.qjit(sigmoid)(z), expected, **_tolerance(dtype))
    d = np.abs(rng.standard_normal(n)).astype(dtype)
    np.testing.assert_allclose(kiln.qjit(gaussian_weights)(d, 0.7), gaussian_weights(d, 0.7),
                               **_tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0, 5), (1, 1), (3, 17), (257, 1024)])
def test_attention_rows(dtype, shape):
    x = np.random.default_rng(shape[1]).standard_normal(shape).astype(dtype)
    np.testing.assert_allclose(kiln.qjit(attention_rows)(x), attention_rows(x.copy()), **_tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_values_through_the_wide_loop(dtype):
    info = np.finfo(dtype)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 88.7, 89.0, 709.0, 710.0, -87.0,
                        -100.0, -103.9, -745.0, -746.0, float(info.max), float(-info.max)], dtype=dtype)
    # Each value at every lane position of a 16-wide vector and in the remainder.
    x = np.concatenate([np.roll(np.tile(special, 3), k) for k in range(16)] + [special[:7]])
    with np.errstate(over="ignore", under="ignore"):
        expected = np.exp(x)
    got = kiln.qjit(lambda v: np.exp(v))(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    np.testing.assert_allclose(got, expected, **_tolerance(dtype))


@pytest.mark.parametrize("n", [0, 1, 33, 4097])
def test_exp_in_a_loop_that_writes_its_argument(n):
    x = np.linspace(0, 3, n)
    expected = decay_in_place(x.copy(), 0.1, 5)
    got = kiln.qjit(decay_in_place)(x, 0.1, 5)
    np.testing.assert_allclose(x, expected, rtol=1e-14)
    assert got is x or np.shares_memory(got, x) or np.allclose(got, expected)


def test_only_functions_with_exp_ask_for_wide_vectors():
    f = kiln.qjit(attention_rows, keep_intermediate=True)
    g = kiln.qjit(lambda a, b: a * b + 1.0, keep_intermediate=True)
    x = np.ones((64, 4096), dtype=np.float32)
    f(x)
    g(x, x)
    widened = kiln.get_compilation_stage(f, "llvmir")
    assert '"prefer-vector-width"="512"' in widened
    assert "prefer-vector-width" not in kiln.get_compilation_stage(g, "llvmir")
    # The parallel body that computes exp is widened, not the entry that calls it.
    wide_groups = {line.split()[1] for line in widened.splitlines()
                   if line.startswith("attributes #") and '"prefer-vector-width"="512"' in line}
    groups = {line.split("@")[1].split("(")[0]: line.rsplit(" ", 2)[1]
              for line in widened.splitlines() if line.startswith("define ") and line.endswith(" {")}
    assert groups["attention_rows_parallel0"] in wide_groups
    assert groups["attention_rows"] not in wide_groups
