"""Reductions along a leading or middle axis and NumPy-written
convolutions (kiln-interchange-reductions runs their reduction loops
outside the contiguous parallel loop, inside the outer ones): NumPy's values
for every reduction, dtype family, NaNs, sizes 0, 1, odd and large, views and
a second shape without a recompile."""

import numpy as np
import pytest

import kiln

rng = np.random.default_rng(1619)


def columns(x):
    return (np.sum(x, axis=0), np.max(x, axis=0), np.min(x, axis=0), np.prod(x[:4], axis=0), np.mean(x, axis=0),
            np.argmax(x, axis=0), np.argmin(x, axis=0), np.any(x > 0, axis=0), np.all(x > -2, axis=0),
            np.sum(x[::2, 1:], axis=0), np.sum(x.T, axis=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8], ids=lambda d: np.dtype(d).name)
def test_column_reductions_match_numpy(dtype):
    f = kiln.qjit(columns)
    compiles = {}
    for shape in ((1, 1), (7, 1), (5, 3), (301, 257), (3, 4099)):  # dims of 1 specialize
        x = rng.standard_normal(shape) * 10
        x = x.astype(dtype) if np.dtype(dtype).kind == "f" else np.abs(x).astype(dtype) % 50
        if np.dtype(dtype).kind == "f" and shape[0] > 2:
            x[1, 0] = np.nan
        for got, want in zip(f(x), columns(x)):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
        compiles[shape] = f.num_compiles
    assert compiles[(3, 4099)] == compiles[(5, 3)]


def test_middle_axis_and_empty_columns():
    def middle(x):
        return np.sum(x, axis=1), np.argmax(x, axis=1), np.max(x, axis=1)

    x = rng.standard_normal((3, 50, 7))
    x[2, 10, 3] = np.nan
    for got, want in zip(kiln.qjit(middle)(x), middle(x)):
        np.testing.assert_array_equal(got, want) if got.dtype.kind == "i" else np.testing.assert_allclose(got, want)
    f = kiln.qjit(lambda x: np.sum(x, axis=0))
    np.testing.assert_array_equal(f(np.zeros((0, 4))), np.zeros(4))
    np.testing.assert_array_equal(f(np.zeros((4, 0))), np.zeros(0))


def conv2d(image, weights):
    """A convolution as written in NumPy code (NPBench's resnet, deep-learning
    tutorials): one window sum per output pixel."""
    K = weights.shape[0]
    N, H, W = image.shape[0], image.shape[1] - K + 1, image.shape[2] - K + 1
    out = np.empty((N, H, W, weights.shape[3]), dtype=np.float32)
    for i in range(H):
        for j in range(W):
            out[:, i, j, :] = np.sum(image[:, i:i + K, j:j + K, :, np.newaxis] * weights[np.newaxis, :, :, :],
                                     axis=(1, 2, 3))
    return out


@pytest.mark.parametrize("n, size, k, c_in, c_out", [(1, 1, 1, 1, 1), (0, 5, 3, 2, 4), (3, 7, 3, 5, 3),
                                                     (8, 14, 1, 32, 8), (2, 9, 3, 8, 17)])
def test_numpy_convolution_matches_numpy(n, size, k, c_in, c_out):
    image = rng.standard_normal((n, size, size, c_in)).astype(np.float32)
    weights = rng.standard_normal((k, k, c_in, c_out)).astype(np.float32)
    np.testing.assert_allclose(kiln.qjit(conv2d)(image, weights), conv2d(image, weights), rtol=1e-5, atol=1e-5)
    # float64 activations (`np.zeros` without a dtype) against float32 weights, as in resnet's second conv
    wide = image.astype(np.float64)
    np.testing.assert_allclose(kiln.qjit(conv2d)(wide, weights), conv2d(wide, weights), rtol=1e-5, atol=1e-5)


def test_window_sum_keeps_the_batch_loop_outside():
    """The batch loop stays outside the window's reduction loops (the
    threads split it), the output channel loop runs inside them."""
    from kiln.compiler.passes import parse_pass_spec
    from kiln.compiler.pipeline import DEFAULT_PIPELINE

    f = kiln.qjit(lambda x, w: np.sum(x[:, 1:4, 2:5, :, np.newaxis] * w[np.newaxis], axis=(1, 2, 3)),
                  keep_intermediate=True)
    x, w = rng.standard_normal((4, 6, 6, 3)), rng.standard_normal((3, 3, 3, 5))
    np.testing.assert_allclose(f(x, w), np.sum(x[:, 1:4, 2:5, :, None] * w[None], axis=(1, 2, 3)), rtol=1e-12)
    assert parse_pass_spec("kiln-interchange-reductions").kiln_pass is not None
    assert any("kiln-interchange-reductions" in specs for _, specs in DEFAULT_PIPELINE)
    text = kiln.get_compilation_stage(f, "linalg")
    window = [line for line in text.splitlines() if "linalg.generic" in line and "reduction" in line]
    assert window and all('iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel"]' in line
                          for line in window), window


@pytest.mark.parametrize("shape", [(0, 4, 3), (1, 1, 1), (3, 50, 7), (2, 1, 5), (17, 33, 129)])
def test_middle_and_inner_axes_match_numpy(shape):
    def middle(x):
        return (np.sum(x, axis=1), np.max(x, axis=1) if shape[1] else np.sum(x, axis=1), np.mean(x, axis=(1,)),
                np.sum(x, axis=(0, 1)), np.sum(x * 2.0, axis=1, keepdims=True), np.argmin(x[:, ::-1], axis=1)
                if shape[1] else np.sum(x, axis=1))

    x = rng.standard_normal(shape)
    with np.errstate(invalid="ignore"):
        want = middle(x)
    got = kiln.qjit(middle)(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
