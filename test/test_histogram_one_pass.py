"""np.histogram with equal bins as one pass per histogram (issue 16,
azimint_hist): the bin of each value is computed inside the scatter loop
(kiln-fuse-into-element-loops) and the range's min and max come from one
loop (kiln-merge-sibling-reductions), and two histograms of the same data
share one loop (kiln-fuse-sibling-loops). Values against NumPy: sizes 0, 1,
odd and large, all-equal data, values on every edge, weights, float32 and
int data, NaN; a second size does not recompile."""

from __future__ import annotations

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 7, 1001, 100_003)
_rng = np.random.default_rng(16)


def _same(result, expected) -> None:
    for r, e in zip(result, expected):
        r, e = np.asarray(r), np.asarray(e)
        assert r.dtype == e.dtype and r.shape == e.shape
        if e.dtype.kind == "f":
            # float32 weights: NumPy adds float64 sums of blocks of 65536
            # values into float32 totals, kiln rounds the float64 total once
            tol = 1e-6 if e.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(r, e, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(r, e)


def _both(a, w, bins):
    return np.histogram(a, bins), np.histogram(a, bins, weights=w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32], ids=lambda d: np.dtype(d).name)
def test_counts_and_weighted_sums_every_size(dtype):
    compiled = kiln.qjit(_both)
    for n in SIZES:
        a = (_rng.standard_normal(n) * 50).astype(dtype)
        w = _rng.random(n).astype(dtype if np.dtype(dtype).kind == "f" else np.float64)
        for bins in (1, 5, 1000):
            for got, expected in zip(compiled(a, w, bins), _both(a, w, bins)):
                _same(got, expected)
    assert compiled.num_compiles <= 2  # one binary for every size (size 1 may specialize)


def test_all_equal_data_and_values_on_every_edge():
    compiled = kiln.qjit(_both)
    for a in (np.full(9, 3.0), np.full(1, -2.0), np.zeros(4)):
        for bins in (1, 2, 7):
            for got, expected in zip(compiled(a, a + 1, bins), _both(a, a + 1, bins)):
                _same(got, expected)
    for dtype in (np.float64, np.float32):
        base = (_rng.standard_normal(31) * 3).astype(dtype)
        for bins in (3, 10, 1000):
            edges = np.histogram_bin_edges(base, bins).astype(dtype)
            a = np.concatenate([base, edges, np.nextafter(edges, dtype(np.inf)), np.nextafter(edges, dtype(-np.inf))])
            w = np.arange(a.size, dtype=dtype)
            for got, expected in zip(compiled(a, w, bins), _both(a, w, bins)):
                _same(got, expected)


def test_azimint_hist_mutated_arguments_and_second_size():
    def f(data, radius, npt):
        histw = np.histogram(radius, npt, weights=data)[0]
        radius *= 2.0  # mutated after use: the histograms read the values before
        return histw, np.histogram(radius, npt)[0]

    compiled = kiln.qjit(f)
    for n in (5, 4001):
        data, radius = _rng.random(n), _rng.random(n)
        r1, r2 = radius.copy(), radius.copy()
        _same(compiled(data, r1, 50), f(data, r2, 50))
        np.testing.assert_array_equal(r1, r2)
    assert compiled.num_compiles <= 2


def test_nan_and_infinite_data_raise_as_numpy():
    compiled = kiln.qjit(lambda a: np.histogram(a, 4))
    for bad in (np.array([0.0, np.nan, 1.0]), np.array([np.inf, 0.0])):
        with pytest.raises(ValueError, match="range"):
            np.histogram(bad, 4)
        with pytest.raises(ValueError, match="range"):
            compiled(bad)
    # a NaN outside a given range counts nowhere, as in NumPy
    ranged = kiln.qjit(lambda a: np.histogram(a, 4, range=(0.0, 1.0)))
    a = np.array([0.0, np.nan, 0.5, 1.0, 2.0])
    _same(ranged(a), np.histogram(a, 4, range=(0.0, 1.0)))


@pytest.mark.compiled_only
def test_one_reduction_and_no_binning_array():
    """Two loops over the data: min and max together, then both histograms
    with the binning inside (no reduction generic, and no elementwise
    generic writes bins, masks or weights to an array)."""
    compiled = kiln.qjit(lambda data, radius, npt: np.histogram(radius, npt, weights=data)[0]
                         / np.histogram(radius, npt)[0])
    data, radius = _rng.random(11), _rng.random(11)
    np.testing.assert_allclose(compiled(data, radius, 5),
                               np.histogram(radius, 5, weights=data)[0] / np.histogram(radius, 5)[0])
    linalg = kiln.get_compilation_stage(compiled, "linalg")
    assert 'iterator_types = ["reduction"]' not in linalg
    assert linalg.count("scf.for") == 2
    # left: the two zero-filled histograms and the division
    assert linalg.count("linalg.generic") == 3
