"""Long rows sorted on the thread pool (runtime/sort.c, "long rows on the
thread pool"), against NumPy bit for bit: rows of KILN_SORT_PARALLEL_MIN
(65536) elements or more are split into parts sorted in parallel (values:
four parts by sampled pivots; merges of runs, copies and argsort's scans in
pieces of the output). Sizes just below, at and above the threshold and
beyond four times it (each quarter then large enough for the value
buckets); the four dtypes with vector code and int16 / uint8 (no parallel
path, the same answers); NaNs of both signs, -0.0 and +0.0 (sorted values
keep their input order, as kind='stable'), ties, organ pipes and rows of 2
to 16 runs (merged in pieces, for positions stably), strided rows;
partition with kth at both ends and in the middle.

Each check runs three ways: in this process (the pool as configured), in a
child with KILN_PARALLEL_BACKOFF=0 (the pool is used whenever it can be,
even on a loaded machine) and in a child with KILN_NUM_THREADS=1 (never;
the child also checks that no pool thread was started). The children
reuse this session's compiled libraries (the cache is shared)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import kiln

THRESHOLD = 1 << 16  # KILN_SORT_PARALLEL_MIN in runtime/sort.c
SIZES = [THRESHOLD - 1, THRESHOLD, THRESHOLD + 1, 4 * THRESHOLD + 13]
DTYPES = ["float64", "float32", "int64", "int32", "int16", "uint8"]


def _runs(rng, n, count):
    """`count` sorted blocks, alternately ascending and descending, with ties."""
    a = rng.integers(-1000, 1000, n)
    blocks = np.array_split(a, count)
    return np.concatenate([np.sort(b) if j % 2 == 0 else np.sort(b)[::-1] for j, b in enumerate(blocks)])


def rows(dtype: str, n: int, rng: np.random.Generator):
    """(name, row) pairs of one dtype and size."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        random = rng.standard_normal(n) * 1e3
    else:
        info = np.iinfo(dt)
        random = rng.integers(info.min, info.max, n, endpoint=True)
    yield "random", random.astype(dt)
    yield "few", rng.integers(0, 16 if dt.itemsize > 1 else 4, n).astype(dt)
    yield "equal", np.full(n, 3, dt)
    yield "organ", np.concatenate([np.arange(n // 2), np.arange(n - n // 2)[::-1]]).astype(dt)
    yield "sorted", (np.arange(n) % 120 if dt.itemsize == 1 else np.arange(n)).astype(dt)
    yield "reversed", (np.arange(n)[::-1] // (n // 100 + 1)).astype(dt)
    for count in (2, 3, 16):
        yield f"runs{count}", _runs(rng, n, count).astype(dt)
    yield "runs17", _runs(rng, n, 17).astype(dt)  # one run too many: the split, not the merge
    yield "strided", random.astype(dt)[::-1]
    if dt.kind == "f":
        a = (rng.standard_normal(n) * 10).round().astype(dt)  # many ties, zeros of both signs
        a[rng.random(n) < 0.3] = 0.0
        a[rng.random(n) < 0.3] = -0.0
        yield "zeros", a
        b = a.copy()
        b[rng.random(n) < 0.1] = np.nan
        b[::97] = -np.nan
        yield "nans", b
        c = rng.standard_normal(n).astype(dt)
        c[-5:] = np.nan  # NaNs after the first pass's vectors
        c[: n // 3] = np.sort(c[: n // 3])
        yield "nans-tail", c


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def functions():
    sort = kiln.qjit(lambda x: (np.sort(x), np.sort(x, kind="stable"), np.argsort(x, kind="stable"),
                                np.argsort(x)))
    part = kiln.qjit(lambda x: (np.partition(x, 0), np.partition(x, -1), np.partition(x, x.shape[0] // 2),
                                np.argpartition(x, -1)))
    return sort, part


def _check_partition(name, x, got, kth):
    want = np.sort(x, kind="stable")
    k = kth % len(x)
    at = got[k]
    assert _bits(np.array([at]))[0] == _bits(want[k:k + 1])[0] or (at != at and want[k] != want[k]), (name, kth)
    if at == at:
        assert not (got[:k] > at).any() and not (got[k + 1:] < at).any(), (name, kth)


def check_all(dtypes=DTYPES, sizes=SIZES) -> None:
    """Every row of every dtype and size against NumPy; one compile per dtype."""
    rng = np.random.default_rng(15)
    for dtype in dtypes:
        sort, part = functions()
        for n in sizes:
            for name, x in rows(dtype, n, rng):
                what = f"{dtype} {name} n={len(x)}"
                values, stable_values, positions, default_positions = sort(x)
                want = np.sort(x, kind="stable")
                np.testing.assert_array_equal(_bits(values), _bits(want), err_msg=what)
                np.testing.assert_array_equal(_bits(stable_values), _bits(want), err_msg=what)
                np.testing.assert_array_equal(positions, np.argsort(x, kind="stable"), err_msg=what)
                np.testing.assert_array_equal(default_positions, np.argsort(x, kind="stable"), err_msg=what)
                first, last, middle, arg_last = part(x)
                for kth, got in ((0, first), (-1, last), (len(x) // 2, middle)):
                    _check_partition(what, x, got, kth)
                _check_partition(what, x, x[arg_last], -1)
                assert np.array_equal(np.sort(arg_last), np.arange(len(x))), what
        assert sort.num_compiles == 1 and part.num_compiles == 1, (dtype, sort.num_compiles, part.num_compiles)


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def check_threads(expect_pool: bool) -> None:
    """A long row starts the pool's worker thread(s) only when threads are allowed."""
    f = kiln.qjit(lambda x: np.sort(x))
    f(np.arange(10.0))  # compiled, loaded, the watchdog started: only the pool is left
    before = _threads()
    x = np.random.default_rng(0).standard_normal(4 * THRESHOLD)
    np.testing.assert_array_equal(f(x), np.sort(x))
    started = _threads() - before
    assert (started > 0) == expect_pool, (started, expect_pool)


def _child(env_extra: dict, code: str) -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, **env_extra)
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'test'); "
                           "import test_sorting_parallel as t; " + code + "; print('ok')"],
                          cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc")
def test_sorted_like_numpy_with_and_without_threads():
    """In this process, then always parallel, then serial (KILN_NUM_THREADS=1: no thread started)."""
    check_all()
    _child({"KILN_PARALLEL_BACKOFF": "0", "KILN_NUM_THREADS": "2"}, "t.check_all(); t.check_threads(True)")
    _child({"KILN_NUM_THREADS": "1"}, "t.check_all(); t.check_threads(False)")


def test_portable_code_on_long_rows():
    """KILN_SORT_PORTABLE=1 (no AVX2: no parallel value sort, parallel argsort merges and fills)."""
    _child({"KILN_SORT_PORTABLE": "1", "KILN_PARALLEL_BACKOFF": "0"},
           "t.check_all(['float64', 'int32'], [t.THRESHOLD + 1])")
