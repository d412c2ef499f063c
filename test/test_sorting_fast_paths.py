"""The sorting runtime's shortcuts of session 10 (runtime/sort.c; docs/numpy.md
"How sorting is compiled"), against NumPy bit for bit:

- rows of few distinct values: counted by vector compares (np.sort), ranked
  by them (argsort), their kths' values found exactly (argpartition); the
  row decides from a sample of 256, so rows of 16 values, of 17, of 16 and
  one rare value the sample misses, with both zero signs or a NaN, decide
  differently and must agree with NumPy all the same;
- packed positions: argsort of keys whose range and positions fit in one
  64-bit word, an LSD radix sort of the key bits (sizes around its 1024
  threshold, a skipped digit, 1 to 5 passes, ranges too wide to pack);
- rows of few monotone runs merged straight from the row (descending runs
  read backwards, the vector merge as two interleaved halves), and
  sorted / reversed rows answered by the scan, partitioned too.

Every check also runs in a child with KILN_NUM_THREADS=1 (the serial paths)
and one with KILN_SORT_PORTABLE=1 (no AVX2 code); the children reuse this
session's compiled libraries."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import kiln

VECTOR_DTYPES = ["float64", "float32", "int64", "int32"]
FEW_SIZES = [2047, 2048, 4095, 4096, 4097, 65537, 200_003]


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}")


def few_rows(dtype: str, n: int, rng: np.random.Generator):
    """(name, row) pairs of few distinct values."""
    dt = np.dtype(dtype)
    yield "16 values", rng.integers(0, 16, n).astype(dt)
    yield "17 values", rng.integers(0, 17, n).astype(dt)
    yield "3 values", rng.integers(-1, 2, n).astype(dt)
    rare = rng.integers(0, 16, n).astype(dt)
    rare[n // 3] = 100  # one value the sample of 256 misses: the counts fall short
    yield "16 values and a rare one", rare
    yield "all equal", np.full(n, 5, dt)
    if dt.kind == "f":
        z = rng.integers(-2, 3, n).astype(dt)
        z[rng.random(n) < 0.3] = -0.0  # -0.0 and +0.0: equal, in input order when sorted
        yield "zeros of both signs", z
        nan = rng.integers(0, 8, n).astype(dt)
        nan[::97] = np.nan
        yield "a NaN every 97", nan
        rare_nan = rng.integers(0, 8, n).astype(dt)
        rare_nan[n // 2 + 1] = -np.nan
        yield "one NaN", rare_nan


def _check_partition(p: np.ndarray, a: np.ndarray, kths) -> None:
    s = np.sort(a)
    np.testing.assert_array_equal(np.sort(p), s)  # a permutation of the values
    for k in kths:
        np.testing.assert_array_equal(p[k], s[k])
        if a.dtype.kind == "f" and np.isnan(s[k]):
            assert np.all(np.isnan(p[k:]))
        else:
            assert not np.any(p[:k] > s[k]) and not np.any(p[k + 1:] < s[k])
            if a.dtype.kind == "f":
                assert not np.any(np.isnan(p[:k]))


def _sorts():
    return kiln.qjit(lambda a: (np.sort(a), np.argsort(a, kind="stable"), np.argsort(a)))


def _partitions():
    def f(a):
        n = a.shape[0]
        return (np.partition(a, n // 2), np.argpartition(a, n // 2), np.argpartition(a, [0, n // 4, n - 1]),
                np.partition(a, [0, n - 1]), np.argpartition(a, n - 1), np.argpartition(a, 0))
    return kiln.qjit(f)


def check_row(a: np.ndarray, sorts, partitions, what: str) -> None:
    n = a.shape[0]
    s, i, i_default = sorts(a)
    np.testing.assert_array_equal(_bits(s), _bits(np.sort(a, kind="stable")), err_msg=what)
    np.testing.assert_array_equal(i, np.argsort(a, kind="stable"), err_msg=what)
    np.testing.assert_array_equal(i_default, np.argsort(a, kind="stable"), err_msg=what)
    p, ip, ipm, pends, ilast, ifirst = partitions(a)
    _check_partition(p, a, [n // 2])
    _check_partition(pends, a, [0, n - 1])
    for idx, kths in ((ip, [n // 2]), (ipm, [0, n // 4, n - 1]), (ilast, [n - 1]), (ifirst, [0])):
        np.testing.assert_array_equal(np.sort(idx), np.arange(n), err_msg=what)
        _check_partition(a[idx], a, kths)


def few_values_checks(dtypes=VECTOR_DTYPES + ["uint32", "int16"], sizes=FEW_SIZES) -> None:
    rng = np.random.default_rng(10)
    for dtype in dtypes:
        sorts, partitions = _sorts(), _partitions()
        for n in sizes:
            for name, a in few_rows(dtype, n, rng):
                check_row(a, sorts, partitions, f"{dtype} n={n} {name}")
        assert sorts.num_compiles == 1 and partitions.num_compiles == 1


def packed_rows(dtype: str, n: int, rng: np.random.Generator):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a = (rng.standard_normal(n) * 1e6).astype(dt)
        a[::13] = -0.0
        a[5::17] = 0.0
        a[7::29] = np.nan
        a[3::31] = -np.inf
        yield "normal, zeros, NaNs, -inf", a
        yield "ties", np.round(rng.standard_normal(n) * 100).astype(dt)
        return
    info = np.iinfo(dt)
    yield "full range", rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
    yield "ties", rng.integers(-3000, 3000, n).astype(dt) if dt.kind == "i" else rng.integers(0, 6000, n).astype(dt)
    yield "low digit constant", (rng.integers(0, 1 << 12, n) << 11).astype(dt)  # a pass skipped
    if dt.itemsize == 8:
        yield "40-bit range", rng.integers(-(1 << 39), 1 << 39, n).astype(dt)  # 4 passes
        yield "too wide to pack", rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)


def packed_checks(sizes=(1023, 1024, 1025, 5000, 100_003)) -> None:
    rng = np.random.default_rng(11)
    for dtype in VECTOR_DTYPES + ["uint32", "uint64"]:
        f = kiln.qjit(lambda a: np.argsort(a, kind="stable"))
        for n in sizes:
            for name, a in packed_rows(dtype, n, rng):
                np.testing.assert_array_equal(f(a), np.argsort(a, kind="stable"), err_msg=f"{dtype} n={n} {name}")
            strided = next(packed_rows(dtype, 2 * n, rng))[1][::2]
            np.testing.assert_array_equal(f(strided), np.argsort(strided, kind="stable"))
        assert f.num_compiles == 1


def run_rows(dtype: str, n: int, rng: np.random.Generator):
    dt = np.dtype(dtype)
    up = np.arange(n // 2)
    yield "organ", np.concatenate([up, np.arange(n - n // 2)[::-1]]).astype(dt)
    yield "vee", np.concatenate([up[::-1], np.arange(n - n // 2)]).astype(dt)
    yield "sorted", (np.arange(n) - n // 3).astype(dt) if dt.kind != "u" else np.arange(n).astype(dt)
    yield "reversed with ties", (np.arange(n)[::-1] // 3).astype(dt)
    yield "all equal", np.full(n, 2, dt)
    for count in (2, 3, 5, 16, 17):
        x = rng.integers(-500, 500, n) if dt.kind != "u" else rng.integers(0, 1000, n)
        blocks = np.array_split(x, count)
        yield f"{count} runs", np.concatenate(
            [np.sort(b) if j % 2 == 0 else np.sort(b)[::-1] for j, b in enumerate(blocks)]).astype(dt)
    if dt.kind == "f":
        z = np.concatenate([np.linspace(-3, 3, n // 2), np.linspace(3, -3, n - n // 2)]).astype(dt)
        z[np.abs(z) < 0.05] = 0.0
        z[(np.abs(z) < 0.02) & (np.arange(n) % 2 == 1)] = -0.0  # both zero signs: input order kept
        yield "organ with zeros of both signs", z
        s = np.sort(rng.standard_normal(n)).astype(dt)
        s[np.abs(s) < 0.01] = -0.0
        yield "sorted with -0.0", s
        nan = np.concatenate([up, np.arange(n - n // 2)[::-1]]).astype(dt)
        nan[n // 4] = np.nan
        yield "organ with a NaN", nan


def runs_checks(sizes=(255, 256, 257, 4099, 65536, 300_007)) -> None:
    rng = np.random.default_rng(12)
    for dtype in VECTOR_DTYPES + ["uint64"]:
        sorts, partitions = _sorts(), _partitions()
        for n in sizes:
            for name, a in run_rows(dtype, n, rng):
                check_row(a, sorts, partitions, f"{dtype} n={n} {name}")
        assert sorts.num_compiles == 1 and partitions.num_compiles == 1


@pytest.mark.parametrize("dtype", VECTOR_DTYPES + ["uint32", "int16"])
def test_few_distinct_values(dtype):
    few_values_checks([dtype])


def test_packed_positions():
    packed_checks()


def test_runs_from_the_row():
    runs_checks()


@pytest.mark.parametrize("env", [{"KILN_NUM_THREADS": "1"}, {"KILN_SORT_PORTABLE": "1"}])
def test_serial_and_portable(env):
    """The same checks (fewer sizes) in a child: serial paths, or no AVX2 code."""
    code = """
import sys
sys.path.insert(0, "test")
from test_sorting_fast_paths import few_values_checks, packed_checks, runs_checks
few_values_checks(["float64", "int32"], [4097, 200_003])
packed_checks((1025, 100_003))
runs_checks((257, 300_007))
print("ok")
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=dict(os.environ, **env), capture_output=True,
                          text=True)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]
