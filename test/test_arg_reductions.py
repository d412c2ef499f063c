"""argmax / argmin (functions, methods, nanargmax / nanargmin) as the blocked
search of kiln-block-arg-reductions: NumPy's answers for every dtype family,
at sizes 1, odd, around the block size and large, with NumPy's rules (the
first of equal extremes, the first NaN), along the last axis and the others,
through views, and a second size without a recompile."""

import numpy as np
import pytest

import kiln

rng = np.random.default_rng(1616)

DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int8, np.uint8, np.uint64, np.bool_]
SIZES = (1, 2, 7, 1023, 1024, 1025, 3000, 100_001)


def sample(n: int, dtype, low: int = -100, high: int = 100) -> np.ndarray:
    """Values with many ties (small integer range) in every dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(n) < 0.3
    if dtype.kind == "f":
        return rng.integers(low, high, n).astype(dtype) / 4
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, low), min(info.max, high), n, endpoint=True).astype(dtype)


def both(x):
    return np.argmax(x), np.argmin(x)


def check(f, ref, *args):
    got, want = f(*args), ref(*args)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_argmax_argmin_match_numpy_at_every_size(dtype):
    f = kiln.qjit(both)
    compiles = {}
    for n in SIZES:
        check(f, both, sample(n, dtype))
        compiles[n] = f.num_compiles
    assert compiles[SIZES[-1]] == compiles[7]  # a second size does not recompile


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
def test_first_nan_wins_in_any_block(dtype):
    f = kiln.qjit(both)
    for n in (1, 5, 1024, 1025, 5000):
        for nans in ([0], [n - 1], [n // 2], [n - 1, n // 3], [n // 3, n - 1, 0]):
            x = rng.random(n).astype(dtype)
            x[nans] = np.nan
            check(f, both, x)
        check(f, both, np.full(n, np.nan, dtype))


def test_extremes_equal_to_the_start_value_and_ties_across_blocks():
    f = kiln.qjit(both)
    check(f, both, np.full(3000, -np.inf))
    check(f, both, np.full(3000, np.inf))
    check(f, both, np.array([-np.inf, np.inf, -np.inf, np.inf]))
    check(f, both, np.full(2049, np.iinfo(np.int64).min))
    check(f, both, np.full(2049, np.iinfo(np.int64).max))
    check(f, both, np.zeros(2049, np.bool_))
    check(f, both, np.ones(2049, np.bool_))
    x = np.zeros(5000)
    x[[3000, 1500, 4999]] = 7.0
    x[[2500, 100]] = -7.0
    check(f, both, x)
    check(f, both, np.array([0.0, -0.0, 0.0]))
    check(f, both, np.array([-0.0, 0.0, -0.0]))


def test_axes_views_methods_and_keepdims():
    def axes(x):
        return (np.argmax(x, axis=-1), np.argmin(x, axis=1), np.argmax(x, axis=0), x.argmax(axis=1),
                x.argmin(), x[:, ::2].argmax(axis=1), x[1:].argmin(axis=-1), np.argmax(x, axis=1, keepdims=True),
                np.argmax(x.T, axis=1))

    f = kiln.qjit(axes)
    for shape in ((1, 1), (3, 7), (5, 1025), (2000, 9)):
        x = sample(shape[0] * shape[1], np.float64).reshape(shape)
        x[0, shape[1] // 2] = np.nan
        check(f, axes, x)
        check(f, axes, sample(shape[0] * shape[1], np.int32).reshape(shape))

    def three(x):
        return np.argmax(x, axis=2), np.argmin(x, axis=-1), np.argmax(x)

    check(kiln.qjit(three), three, sample(2 * 3 * 1500, np.float32).reshape(2, 3, 1500))


def test_nanargmax_nanargmin():
    def nan_both(x):
        return np.nanargmax(x), np.nanargmin(x), np.nanargmax(x.reshape(4, -1), axis=1)

    f = kiln.qjit(nan_both)
    for n in (4, 8, 4096, 4100):
        x = rng.random(n)
        x[rng.random(n) < 0.3] = np.nan
        x[: n // 4: 3] = np.nan
        x.reshape(4, -1)[:, -1] = 0.25  # every row keeps a number: nanargmax of an all-NaN row raises
        check(f, nan_both, x)


def test_written_argument_and_empty_axis():
    def bump(x):
        x[3] = 100.0
        return np.argmax(x), np.argmin(x)

    x = rng.random(2000)
    got, want = x.copy(), x.copy()
    assert kiln.qjit(bump)(got) == bump(want)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="argmax"):
        kiln.qjit(lambda x: np.argmax(x))(np.zeros(0))
    with pytest.raises(ValueError, match="argmin"):
        kiln.qjit(lambda x: np.argmin(x, axis=1))(np.zeros((3, 0)))
