"""Sorting and selection on adversarial inputs (issue 15), against NumPy:
the runtime's radix sort (range-relative keys, skipped digits, the in-order
and reverse-order shortcuts) and its Floyd-Rivest selection (sampled
pivots, equal pivots, the no-progress step, several kths) on all-equal,
sorted, reversed, organ-pipe, few-unique, many-NaN and extreme-integer
rows of sizes 0, 1, 2, 15, 16, 17 and 1e5 + 3, contiguous and strided."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import kiln

DTYPES = ["float64", "float32", "int64", "int32", "uint64", "uint32"]
SIZES = [0, 1, 2, 15, 16, 17, 100_003]
PATTERNS = ["random", "equal", "sorted", "reversed", "organ", "few", "extremes", "nans", "zeros", "runs5", "runs20"]


def _pattern(name, n, dtype, rng):
    dtype = np.dtype(dtype)
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    if name == "random":
        a = rng.standard_normal(n) * 1e6 if dtype.kind == "f" else rng.integers(info.min, info.max, n, dtype=dtype,
                                                                                  endpoint=True)
    elif name == "equal":
        a = np.full(n, 7)
    elif name == "sorted":
        a = np.arange(n) - n // 2 if dtype.kind != "u" else np.arange(n)
    elif name == "reversed":
        a = (np.arange(n) - n // 2)[::-1] if dtype.kind != "u" else np.arange(n)[::-1]
    elif name == "organ":
        a = np.concatenate([np.arange(n // 2), np.arange(n - n // 2)[::-1]])
    elif name == "few":
        a = rng.integers(0, 4, n)
    elif name in ("runs5", "runs20"):  # sorted blocks, alternately up and down (a merge; past 16 runs a quicksort)
        a = rng.integers(-50, 50, n)
        blocks = np.array_split(a, int(name[4:]))
        a = np.concatenate([np.sort(b) if j % 2 == 0 else np.sort(b)[::-1] for j, b in enumerate(blocks)])
    elif name == "extremes":  # the dtype's extremes (and for floats +-inf) among small values
        a = rng.integers(-3, 3, n).astype(dtype) if dtype.kind != "u" else rng.integers(0, 3, n).astype(dtype)
        a[::3] = info.max
        a[1::5] = info.min
        if dtype.kind == "f":
            a[2::7] = np.inf
            a[3::11] = -np.inf
    elif name == "nans":  # most values NaN, of both signs, with zeros of both signs
        if dtype.kind != "f":
            return None
        a = rng.standard_normal(n)
        a[rng.random(n) < 0.7] = np.nan
        a[::9] = -np.nan
        a[1::13] = -0.0
    elif name == "zeros":  # -0.0 and +0.0 only (equal; sorted values keep their input order, as kind="stable")
        if dtype.kind != "f":
            return None
        a = np.where(rng.random(n) < 0.5, -0.0, 0.0)
    return np.asarray(a).astype(dtype)


def _check_partition(p, a, kths):
    s = np.sort(a)
    np.testing.assert_array_equal(np.sort(p), s)  # a permutation of the values
    for k in kths:
        np.testing.assert_array_equal(p[k], s[k])
        if not np.isnan(s[k]) if a.dtype.kind == "f" else True:
            assert not np.any(p[:k] > s[k]) and not np.any(p[k + 1:] < s[k])
            assert not np.any(np.isnan(p[:k])) if a.dtype.kind == "f" else True
        else:  # a NaN at k: only NaNs after it
            assert np.all(np.isnan(p[k:]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_partition_adversarial(dtype):
    rng = np.random.default_rng(15)

    @kiln.qjit
    def sorts(a):
        return np.sort(a), np.sort(a, kind="stable"), np.argsort(a, kind="stable")

    @kiln.qjit
    def partitions(a):
        n = a.shape[0]
        return (np.partition(a, n // 2), np.partition(a, [0, n // 3, n // 2, n - 1]), np.argpartition(a, n // 2),
                np.argpartition(a, [0, n // 3, n // 2, n - 1]))

    for pattern in PATTERNS:
        for n in SIZES:
            a = _pattern(pattern, n, dtype, rng)
            if a is None:
                continue
            for x in (a, np.repeat(a, 2)[::2]):  # contiguous, and a strided view
                what = f"{pattern} n={n} {'strided' if x is not a else 'contiguous'}"
                s, ss, i = sorts(x)
                np.testing.assert_array_equal(s, np.sort(x), err_msg=what)
                np.testing.assert_array_equal(ss, np.sort(x, kind="stable"), err_msg=what)
                np.testing.assert_array_equal(i, np.argsort(x, kind="stable"), err_msg=what)
                if n == 0:
                    continue
                p1, pm, ip, ipm = partitions(x)
                _check_partition(p1, x, [n // 2])
                _check_partition(pm, x, sorted({0, n // 3, n // 2, n - 1}))
                np.testing.assert_array_equal(np.sort(ip), np.arange(n), err_msg=what)
                np.testing.assert_array_equal(x[ip[n // 2]], np.sort(x)[n // 2], err_msg=what)
                _check_partition(x[ip], x, [n // 2])
                np.testing.assert_array_equal(np.sort(ipm), np.arange(n), err_msg=what)
                _check_partition(x[ipm], x, sorted({0, n // 3, n // 2, n - 1}))
    # sizes 0 and 1 are signatures of their own (unit dims); every other size reuses one compile
    assert sorts.num_compiles <= 3 and partitions.num_compiles <= 2


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_rows_share_the_kept_scratch(dtype):
    """Several rows of one call, then a longer row in a later call: each row
    is sorted and partitioned on its own."""
    rng = np.random.default_rng(3)

    @kiln.qjit
    def f(a):
        return np.sort(a, axis=1), np.partition(a, a.shape[1] // 2, axis=1), np.argsort(a, axis=1, kind="stable")

    for rows, n in ((5, 1001), (2, 40_000), (7, 17)):
        a = (rng.standard_normal((rows, n)) * 1e3).astype(dtype)
        s, p, i = f(a)
        np.testing.assert_array_equal(s, np.sort(a, axis=1))
        np.testing.assert_array_equal(i, np.argsort(a, axis=1, kind="stable"))
        for r in range(rows):
            _check_partition(p[r], a[r], [n // 2])


def test_portable_code_without_avx2():
    """KILN_SORT_PORTABLE=1 makes the runtime skip its AVX2 code (radix sort,
    scalar selection passes): the same answers, in a fresh process."""
    code = """
import sys
sys.path.insert(0, "test")
import numpy as np, kiln
from test_sorting_patterns import _pattern, _check_partition
rng = np.random.default_rng(5)
f = kiln.qjit(lambda a: (np.sort(a), np.partition(a, a.shape[0] // 2), np.argpartition(a, a.shape[0] // 2)))
for dtype in ("float64", "float32", "int64", "int32"):
    for pattern in ("random", "few", "nans", "reversed", "extremes"):
        for n in (17, 100_003):
            a = _pattern(pattern, n, dtype, rng)
            if a is None:
                continue
            s, p, i = f(a)
            np.testing.assert_array_equal(s, np.sort(a))
            _check_partition(p, a, [n // 2])
            _check_partition(a[i], a, [n // 2])
print("portable ok")
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, KILN_SORT_PORTABLE="1")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "portable ok" in done.stdout


BOUNDARY_SIZES = [3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 8191, 8192, 8193,
                  65_543, 100_003]
BOUNDARY_PATTERNS = ["random", "few", "few16", "equal", "nans", "extremes", "zeros", "organ", "runs20"]


def _boundary_pattern(name, n, dtype, rng):
    if name == "few16":  # 16 distinct values (each part's pivot soon its maximum or minimum)
        return rng.integers(-8, 8, n).astype(dtype) if np.dtype(dtype).kind != "u" else rng.integers(0, 16, n).astype(
            dtype)
    return _pattern(name, n, dtype, rng)


def _check_sorted_like_numpy(s, a, what, stable=None):
    """NumPy's np.sort: equal values (NaNs last and as many as in `a`); the
    stable sort bit for bit (-0.0 and +0.0 in input order, NaN payloads)."""
    expected = np.sort(a)
    np.testing.assert_array_equal(s, expected, err_msg=what)
    if a.dtype.kind == "f":
        assert np.array_equal(np.isnan(s), np.isnan(expected)), what
    if stable is not None:
        bits = f"u{a.dtype.itemsize}" if a.dtype.kind != "b" else "u1"
        np.testing.assert_array_equal(stable.view(bits), np.sort(a, kind="stable").view(bits), err_msg=what)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_default_sort_network_and_pivot_boundaries(dtype):
    """The AVX2 quicksort's part sizes around its leaf networks (1, 2, 4, 8
    vectors: 4/8 lanes), the sampled pivot (8192), the value buckets
    (65536, 64-bit), on random, 16-value, all-equal, NaN-heavy, extreme,
    +-0.0, organ-pipe and 20-run rows; one compile for every size above 1."""
    rng = np.random.default_rng(21)
    f = kiln.qjit(lambda a: (np.sort(a), np.sort(a, kind="stable")))
    for pattern in BOUNDARY_PATTERNS:
        for n in BOUNDARY_SIZES:
            a = _boundary_pattern(pattern, n, dtype, rng)
            if a is None:
                continue
            s, ss = f(a)
            _check_sorted_like_numpy(s, a, f"{dtype} {pattern} n={n}", stable=ss)
    x = rng.standard_normal(257).astype(dtype)
    x_before = x.copy()
    f(x)
    np.testing.assert_array_equal(x, x_before)  # the argument is not sorted in place
    assert f.num_compiles == 1


def test_default_sort_boundaries_portable_and_small_dtypes():
    """The same boundaries on the portable code (KILN_SORT_PORTABLE=1) and on
    the dtypes without AVX2 code (8/16-bit integers, float16, bool, uint*)."""
    code = """
import sys
sys.path.insert(0, "test")
import numpy as np, kiln
from test_sorting_patterns import _boundary_pattern, _check_sorted_like_numpy, BOUNDARY_SIZES, BOUNDARY_PATTERNS
rng = np.random.default_rng(8)
f = kiln.qjit(lambda a: (np.sort(a), np.sort(a, kind="stable")))
for dtype in ("float64", "float32", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64",
              "float16", "bool"):
    for pattern in BOUNDARY_PATTERNS:
        for n in BOUNDARY_SIZES:
            if dtype == "bool":
                a = rng.random(n) < 0.5
            elif dtype == "float16" or np.dtype(dtype).itemsize < 4:
                a = _boundary_pattern(pattern, n, "float32" if dtype == "float16" else "int64", rng)
                if a is None:
                    continue
                a = a.astype(dtype) if dtype == "float16" else (a % 100).astype(dtype)
            else:
                a = _boundary_pattern(pattern, n, dtype, rng)
                if a is None:
                    continue
            s, ss = f(a)
            _check_sorted_like_numpy(s, a, f"{dtype} {pattern} n={n}", stable=ss)
print("boundaries ok")
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for portable in ("1", "0"):
        env = dict(os.environ, KILN_SORT_PORTABLE=portable)
        done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "boundaries ok" in done.stdout
