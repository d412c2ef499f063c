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
