"""Rows made of a few monotone runs, and the set functions built on sorting,
against NumPy bit for bit, on the AVX2 code and the portable code
(KILN_SORT_PORTABLE=1, in a fresh process that reuses this session's
compiled libraries): every dtype, two runs at every split and three runs
at many, ascending, descending and mixed, of few or many distinct values
(zeros of both signs, NaNs of both signs, the dtype's extremes), n in
2..70 and around the vector and network sizes; then np.sort / argsort /
unique / setxor1d / union1d / intersect1d of two sorted unique arrays
concatenated (what the set functions sort) at every n in 0..200.

The run-merging sort once answered such a row unmerged when its one descent
sat just after the first pass's vector loop (int32 [-5, -4, -2, -1, 1, 2,
3, 4, 5, -5, -4, -2, -1, 0, 1, 2]: np.setxor1d came out wrong); these sweeps are the tests that catch
it. Each dtype compiles one function per sweep (the rows of one size are
one 2-d call; sizes are run-time dims)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64",
          "bool"]
RUN_SIZES = list(range(2, 71)) + [127, 128, 129, 255, 256, 257, 1000, 4097]
TWO_RUNS = [(0, 0), (1, 1), (0, 1), (1, 0)]  # per run: 0 ascending, 1 descending
AVX2_DTYPES = ["int32", "int64", "float32", "float64"]  # the dtypes whose values sort.c sorts with AVX2
THREE_RUNS = [(0, 0, 0), (1, 1, 1), (0, 1, 0), (1, 0, 1)]


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}")


def pool(dtype: str, size: int, rng: np.random.Generator, extremes: bool = True) -> np.ndarray:
    """About `size` distinct values of `dtype` in NumPy's ascending order, the
    dtype's extremes among them (integers: unless `extremes` is false, a
    narrow range then); floats also get -inf, inf, -0.0 just before +0.0,
    and NaN last (a row of pool positions sorted is then sorted)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(int(info.min), -4 * size), min(int(info.max), 4 * size)
        if not extremes:
            return np.unique(rng.integers(lo, hi, size).astype(dt))
        extremes = np.array([info.min, info.min + 1, info.max - 1, info.max], dt)
        return np.unique(np.concatenate([extremes, rng.integers(lo, hi, size).astype(dt)]))
    info = np.finfo(dt)
    finite = (rng.standard_normal(size) * 4).astype(dt)
    finite = np.concatenate([finite, np.array([-np.inf, info.min, info.max, np.inf], dt)])
    finite = np.unique(finite[finite != 0])
    at = np.searchsorted(finite, 0)
    return np.concatenate([finite[:at], np.array([-0.0, 0.0], dt), finite[at:],
                           np.array([np.nan], dt)])


def run_rows(n: int, cuts: np.ndarray, directions, pool_len: int, rng: np.random.Generator) -> np.ndarray:
    """One row of pool positions per row of `cuts` (increasing, in (0, n)):
    the runs between the cuts sorted ascending or descending as `directions`
    says (a key per position: the run's number, then the value or its
    mirror; one sort of the keys sorts every run in place)."""
    rows = len(cuts)
    position = rng.integers(0, pool_len, (rows, n))
    run = (np.arange(n)[None, :, None] >= cuts[:, None, :]).sum(-1)
    down = np.asarray(directions, bool)[run]
    key = run * pool_len + np.where(down, pool_len - 1 - position, position)
    key.sort(axis=1)
    value = key - run * pool_len
    return np.where(down, pool_len - 1 - value, value)


def shuffle_signs(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Zeros and NaNs of both signs, at random (equal keys: the runs stay runs)."""
    if x.dtype.kind != "f":
        return x
    special = (x == 0) | np.isnan(x)
    flip = special & (rng.random(x.shape) < 0.5)
    x[flip] = -x[flip]
    return x


def runs_cases(dtype: str, n: int, rng: np.random.Generator):
    """(what, matrix) for size n: rows of two and three runs, few and many distinct values."""
    if n < 200:
        ks = np.arange(1, n)
    else:  # every split near either end (the first vectors, the vector loop's tail), a few in the middle
        ends = 40 if n < 300 else 12
        ks = np.unique(np.concatenate([np.arange(1, ends), np.arange(n - ends, n), rng.integers(ends, n - ends, 4)]))
    two = ks[:, None]
    if n <= 20:
        three = np.array([c for c in itertools.combinations(range(1, n), 2)], dtype=np.int64).reshape(-1, 2)
    else:  # random pairs, and pairs whose second cut is near the end
        count = 20 if n <= 70 else 8
        k2 = np.concatenate([rng.integers(2, n, count // 2), n - 1 - np.arange(count // 2)])
        three = np.stack([rng.integers(1, k2), k2], 1)
    # long rows of a narrow integer range: argsort's counting sort (rows of 1024 or more)
    for distinct, extremes in [(4, True), (4 * n, True)] + ([(12, False)] if n >= 1024 else []):
        values = pool(dtype, distinct, rng, extremes)
        parts = [run_rows(n, two, d, len(values), rng) for d in TWO_RUNS]
        if len(three):
            parts += [run_rows(n, three, d, len(values), rng) for d in THREE_RUNS]
        yield f"{dtype} n={n} distinct~{distinct}{'' if extremes else ' narrow'}", shuffle_signs(values[np.concatenate(parts)], rng)


def check_runs(dtype: str, f) -> None:
    """Every row of every case sorted, stably sorted and argsorted (both
    kinds) as NumPy's kind='stable' does, bit for bit; contiguous rows and
    strided ones."""
    rng = np.random.default_rng(1509)
    for n in RUN_SIZES:
        for what, m in runs_cases(dtype, n, rng):
            views = [("contiguous", m)]
            if n <= 40:
                views.append(("strided", np.repeat(m, 2, axis=1)[:, ::2]))
            for layout, x in views:
                expected_values = _bits(np.sort(x, axis=-1, kind="stable"))
                expected_order = np.argsort(x, axis=-1, kind="stable")
                for name, got, expected in zip(("sort", "sort stable", "argsort", "argsort stable"), f(x),
                                               (expected_values, expected_values, expected_order, expected_order)):
                    values = name.startswith("sort")
                    bad = np.flatnonzero(((_bits(got) if values else got) != expected).any(axis=1))
                    if len(bad):
                        row = bad[0]
                        want = expected[row].view(x.dtype) if values else expected[row]
                        raise AssertionError(f"{name} of {what} ({layout}), {len(bad)} bad rows, first: "
                                             f"{x[row].tolist()} -> {got[row].tolist()}, NumPy: {want.tolist()}")


def sorted_unique(values: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    return np.sort(rng.choice(values, size=min(count, len(values)), replace=False))


def set_cases(dtype: str, rng: np.random.Generator):
    """(what, x, k) for n in 0..200: x[:k] and x[k:] sorted and unique (one
    NaN at most), or x random of few distinct values."""
    for n in range(201):
        values = pool(dtype, max(3, n // 2), rng)
        if values.dtype.kind == "f":  # one NaN (its payload is not what the set functions compare)
            values = values[~np.isnan(values)]
            values = np.concatenate([values[values != 0], np.array([0.0, np.nan], values.dtype)])
        k = int(rng.integers(0, n + 1))
        x = np.concatenate([sorted_unique(values, k, rng), sorted_unique(values, n - k, rng)])
        yield f"{dtype} n={len(x)} two sorted unique", x, min(k, len(values))
        few = rng.choice(values, size=min(len(values), 5), replace=False)[rng.integers(0, min(len(values), 5), n)]
        yield f"{dtype} n={n} few", few, int(rng.integers(0, n + 1))


def _same(got: np.ndarray, expected: np.ndarray, exact: bool) -> bool:
    """Equal shapes and values; `exact`: also equal bits (else -0.0 == 0.0,
    whose order NumPy's default sort leaves open)."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    if exact or got.dtype.kind != "f":
        return np.array_equal(_bits(got), _bits(expected))
    return np.array_equal(got, expected, equal_nan=True)


def check_sets(dtype: str, f) -> None:
    rng = np.random.default_rng(1512)
    for what, x, k in set_cases(dtype, rng):
        n = len(x)
        padded = np.concatenate([x, x[:2] if n >= 2 else np.zeros(2, x.dtype)])  # x's dim is never 0 or 1
        a, b = x[:k], x[k:]
        expected = (np.sort(x, kind="stable"), np.argsort(x, kind="stable"), np.argsort(x, kind="stable"),
                    np.unique(x), np.setxor1d(a, b), np.union1d(a, b), np.intersect1d(a, b))
        names = ("sort", "argsort", "argsort stable", "unique", "setxor1d", "union1d", "intersect1d")
        for name, got, want in zip(names, f(padded, k, n), expected):
            if not _same(np.asarray(got), want, exact=name.startswith("sort") or name.startswith("argsort")):
                raise AssertionError(f"{name} of {what}, k={k}: {x.tolist()} -> {np.asarray(got).tolist()}, "
                                     f"NumPy: {want.tolist()}")


def runs_function():
    return kiln.qjit(lambda x: (np.sort(x), np.sort(x, kind="stable"), np.argsort(x), np.argsort(x, kind="stable")))


def sets_function():
    def sets(x, k, n):
        a, b, y = x[:k], x[k:n], x[:n]
        return (np.sort(y), np.argsort(y), np.argsort(y, kind="stable"), np.unique(y), np.setxor1d(a, b),
                np.union1d(a, b), np.intersect1d(a, b))

    return kiln.qjit(sets)


def sweep(which: str, dtypes=DTYPES) -> None:
    """One sweep's checks for each dtype, one compile per dtype (a second size reuses it)."""
    for dtype in dtypes:
        f = runs_function() if which == "runs" else sets_function()
        (check_runs if which == "runs" else check_sets)(dtype, f)
        assert f.num_compiles == 1, (dtype, f.num_compiles)


def _sweep_portable(which: str) -> None:
    """The same sweep with KILN_SORT_PORTABLE=1, in a fresh process (the
    switch is read when a library loads), for the dtypes that have AVX2 code
    (the others run the portable code either way); the compile cache is
    shared, so the libraries this session built are loaded, not rebuilt."""
    code = (f"import sys; sys.path.insert(0, 'test'); import test_sorting_runs as t; "
            f"t.sweep({which!r}, t.AVX2_DTYPES); print('ok')")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, KILN_SORT_PORTABLE="1")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


@pytest.mark.parametrize("which", ["runs", "sets"])
def test_runs_and_sets_like_numpy(which):
    """The sweep on the AVX2 code (where the CPU has it), then on the portable code."""
    sweep(which)
    _sweep_portable(which)


def test_setxor1d_of_two_sorted_runs():
    """The row that was answered unmerged: two ascending runs of 9 and 7, the
    only descent at the first element after the vector loop's last vector."""
    a = np.array([-5, -4, -2, -1, 1, 2, 3, 4, 5, -5, -4, -2, -1, 0, 1, 2], np.int32)
    f = kiln.qjit(lambda x: (np.sort(x), np.setxor1d(x[:9], x[9:])))
    s, x = f(a)
    np.testing.assert_array_equal(s, np.sort(a))
    np.testing.assert_array_equal(x, np.setxor1d(a[:9], a[9:]))
