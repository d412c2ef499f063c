"""Reductions along a leading axis (kiln-interchange-reductions runs their
reduction loop outermost): NumPy's values for every reduction, dtype family,
NaNs, sizes 0, 1, odd and large, views and a second shape without a
recompile."""

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
