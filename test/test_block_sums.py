"""Float sums in blocks (kiln-block-sums): NumPy's values for sum, mean,
np.add.reduce and nansum along every axis, at sizes 0, 1, odd, around the
block size (4096) and large, through views and written arguments, without
a recompile for a second size; and an error near NumPy's pairwise summation
(not the sequential sum's) on long float32 sums."""

import math

import numpy as np
import pytest

import kiln

rng = np.random.default_rng(1618)

SIZES = (0, 1, 7, 4095, 4096, 8191, 8192, 8193, 100_001)


def sums(x):
    return (np.sum(x), np.mean(x), np.add.reduce(x), x[::3].sum(), np.sum(x[5:]), np.sum(x * x), np.nansum(x))


def rel_err(got, exact):
    return abs(float(got) - exact) / abs(exact)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_one_dimensional_sums_match_numpy(dtype):
    f = kiln.qjit(sums)
    compiles = {}
    for n in SIZES:
        x = rng.standard_normal(n) if dtype != np.bool_ else rng.random(n) < 0.5
        x = x.astype(dtype)
        for got, want in zip(f(x), sums(x)):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            if np.dtype(dtype).kind == "f":
                tol = {np.float16: 2e-2, np.float32: 1e-5, np.float64: 1e-12}[dtype]
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol * math.sqrt(max(n, 1)))
            else:
                np.testing.assert_array_equal(got, want)
        compiles[n] = f.num_compiles
    assert compiles[100_001] == compiles[7]  # a second size does not recompile


def test_axis_sums_match_numpy():
    def axes(x):
        return (np.sum(x, axis=1), np.sum(x, axis=0), np.sum(x), x.mean(axis=-1), np.add.reduce(x, axis=1),
                np.sum(x.T, axis=0), np.sum(x[:, 1:], axis=1), np.sum(x, axis=1, keepdims=True))

    f = kiln.qjit(axes)
    for shape in ((0, 5), (3, 0), (1, 1), (3, 9000), (2, 8192), (5000, 3), (17, 4097)):
        x = rng.standard_normal(shape)
        for got, want in zip(f(x), axes(x)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)

    def three(x):
        return np.sum(x, axis=2), np.sum(x), np.sum(x, axis=(1, 2))

    x = rng.standard_normal((2, 3, 9001)).astype(np.float32)
    for got, want, exact in zip(kiln.qjit(three)(x), three(x), three(x.astype(np.float64))):
        assert np.asarray(got).dtype == np.float32
        # Sums of ~9000 normals (magnitude ~100) cancel: compare absolute errors.
        np.testing.assert_allclose(got, exact, rtol=1e-5, atol=2e-4)
        np.testing.assert_allclose(want, exact, rtol=1e-5, atol=2e-4)


def test_nan_and_inf_propagate():
    x = rng.standard_normal(20_000)
    f = kiln.qjit(lambda x: (np.sum(x), np.sum(x.reshape(2, -1), axis=1)))
    for pos in (0, 4095, 4096, 12_000, 19_999):
        y = x.copy()
        y[pos] = np.nan
        got = f(y)
        assert np.isnan(got[0]) and np.isnan(got[1][pos // 10_000]) and not np.isnan(got[1][1 - pos // 10_000])
        y[pos] = np.inf
        assert f(y)[0] == np.inf
    y = x.copy()
    y[10], y[9000] = np.inf, -np.inf
    assert np.isnan(f(y)[0])


def test_sum_of_a_written_argument():
    def bump(x):
        x[::2] += 1.0
        return np.sum(x), np.mean(x)

    x = rng.standard_normal(50_001)
    got, want = x.copy(), x.copy()
    for g, w in zip(kiln.qjit(bump)(got), bump(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    np.testing.assert_array_equal(got, want)


def test_long_float32_sums_are_about_as_accurate_as_numpys():
    # A sequential (or 32-lane) float32 sum of 4e6 values in [0, 1) errs by
    # ~1e-6 relative; NumPy's pairwise sum and the block sums by ~1e-8.
    x = rng.random(4_000_000).astype(np.float32)
    exact = math.fsum(x.astype(np.float64).tolist())
    f = kiln.qjit(lambda x: (np.sum(x), np.sum(x.reshape(2000, 2000)), np.mean(x)))
    total, total_2d, mean = f(x)
    assert rel_err(total, exact) < 1e-7
    assert rel_err(total_2d, exact) < 1e-7
    assert rel_err(mean, exact / x.size) < 1e-7
    assert rel_err(np.sum(x), exact) < 1e-7  # NumPy's own


def test_row_softmax_over_wide_rows_runs_in_one_pass_of_row_blocks():
    """Rows longer than a sum block: the block sums read the exp rows through
    column slices that keep the rows, so kiln-block-rows still runs max, exp,
    sum and divide block of rows by block of rows (one parallel loop)."""

    def softmax(x):
        e = np.exp(x - np.max(x, axis=1, keepdims=True))
        return e / np.sum(e, axis=1, keepdims=True)

    f = kiln.qjit(softmax, keep_intermediate=True)
    for shape in ((1, 1), (3, 4095), (3, 4097), (1, 8192), (5, 8193), (64, 9001), (257, 20_000)):
        for dtype in (np.float32, np.float64):
            x = rng.standard_normal(shape).astype(dtype)
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(f(x), softmax(x), rtol=tol, atol=tol * 1e-3)
    assert kiln.get_compilation_stage(f, "bufferized").count("call @kiln_parallel_for") == 1
    x = rng.standard_normal((0, 5000)).astype(np.float32)
    assert f(x).shape == (0, 5000)
