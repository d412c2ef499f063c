"""1-D scans (cumsum, cumprod, ufunc.accumulate) carry their running value
as a scalar (kiln-legalize-dynamic): NumPy's answers for every dtype family,
NaNs, sizes 0, 1, odd and large, through views, and a second size without a
recompile."""

import numpy as np
import pytest

import kiln

rng = np.random.default_rng(1617)


def scans(x):
    return (np.cumsum(x), np.cumprod(x[:7]), np.maximum.accumulate(x), np.minimum.accumulate(x),
            np.add.accumulate(x[::-2]))


DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int8, np.uint8, np.uint64]


def sample(n: int, dtype) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_one_dimensional_scans_match_numpy(dtype):
    f = kiln.qjit(scans)
    compiles = {}
    for n in (0, 1, 7, 100_001):
        x = sample(n, dtype)
        for got, want in zip(f(x), scans(x)):
            assert got.dtype == want.dtype
            if np.dtype(dtype).kind == "f":
                np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-3)
            else:
                np.testing.assert_array_equal(got, want)
        compiles[n] = f.num_compiles
    assert compiles[100_001] == compiles[7]  # sizes 0 and 1 specialize; a second size does not recompile


def test_scans_propagate_nan_like_numpy():
    x = np.array([1.0, 3.0, np.nan, 2.0, 5.0])
    f = kiln.qjit(lambda x: (np.cumsum(x), np.maximum.accumulate(x), np.minimum.accumulate(x)))
    for got, want in zip(f(x), (np.cumsum(x), np.maximum.accumulate(x), np.minimum.accumulate(x))):
        np.testing.assert_array_equal(got, want)


def test_scan_into_a_written_argument():
    def running(x):
        x[1:] = np.cumsum(x[:-1])
        return x

    for n in (1, 2, 9):
        x = rng.standard_normal(n)
        expected, got = x.copy(), x.copy()
        kiln.qjit(running)(got)
        np.testing.assert_allclose(got, running(expected), rtol=1e-12)


def axis_scans(x):
    return (np.cumsum(x, axis=-1), np.cumsum(x, axis=0), np.cumprod(x[:, :5], axis=1),
            np.maximum.accumulate(x, axis=1), np.minimum.accumulate(x, axis=0), np.add.accumulate(x[:, ::-2], axis=1),
            np.cumsum(x.T, axis=1))


@pytest.mark.parametrize("dtype", DTYPES + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_scans_along_each_axis_of_a_matrix(dtype):
    # Along the last axis each row is one scalar scan (kiln-legalize-dynamic);
    # along the others the running slice is carried.
    f = kiln.qjit(axis_scans)
    compiles = {}
    for shape in ((0, 3), (3, 0), (1, 1), (3, 7), (2, 1001), (301, 5)):
        n = shape[0] * shape[1]
        x = (rng.random(n) < 0.5) if dtype == np.bool_ else sample(n, dtype)
        x = x.reshape(shape)
        for got, want in zip(f(x), axis_scans(x)):
            assert got.dtype == want.dtype and got.shape == want.shape
            if np.dtype(dtype).kind == "f":
                np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-3)
            else:
                np.testing.assert_array_equal(got, want)
        compiles[shape] = f.num_compiles
    assert compiles[(301, 5)] == compiles[(3, 7)]


def test_row_scans_of_three_dims_with_nan_and_a_written_argument():
    def rows(x):
        y = np.cumsum(x, axis=2)
        x[0, 0, 0] = 5.0
        return y, np.maximum.accumulate(x, axis=-1), np.cumprod(x, axis=2)

    x = rng.standard_normal((2, 3, 9))
    x[1, 2, 4] = np.nan
    got, want = x.copy(), x.copy()
    for g, w in zip(kiln.qjit(rows)(got), rows(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    np.testing.assert_array_equal(got, want)
