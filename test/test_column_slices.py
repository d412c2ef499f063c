"""Columns read and written in loops (`a[:, j]`, kiln-rank-reducing-slices
makes them strided views instead of copies): NumPy's values and NumPy's
writes to arguments for recursive filters along columns, strided and
transposed views, sizes 0, 1, odd and large; no per-column copy left in
the bufferized loop."""

import numpy as np
import pytest

import kiln
from kiln.compiler.pipeline import DEFAULT_PIPELINE

rng = np.random.default_rng(4242)


def smooth_columns(img, a, b):
    """A first-order recursive (IIR) filter along each row, one column at a
    time, then back again: what image-processing code does column by column."""
    out = np.empty_like(img)
    out[:, 0] = img[:, 0]
    for j in range(1, img.shape[1]):
        out[:, j] = a * img[:, j] + b * out[:, j - 1]
    for j in range(img.shape[1] - 2, -1, -1):
        out[:, j] = 0.5 * (out[:, j] + out[:, j + 1])
    return out


def running_columns_in_place(x):
    """Cumulative sums over columns written into the argument."""
    for j in range(1, x.shape[1]):
        x[:, j] += x[:, j - 1]


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (1, 5), (7, 2), (13, 31), (200, 301)])
def test_column_recursions_match_numpy(shape):
    img = rng.standard_normal(shape)
    np.testing.assert_allclose(kiln.qjit(smooth_columns)(img, 0.3, 0.7), smooth_columns(img, 0.3, 0.7),
                               rtol=1e-12, atol=1e-12)
    x, y = img.copy(), img.copy()
    kiln.qjit(running_columns_in_place)(x)
    running_columns_in_place(y)
    np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def test_columns_of_views_and_float32():
    big = rng.standard_normal((40, 30)).astype(np.float32)
    f = kiln.qjit(smooth_columns)
    for view in (big[::3, 1:], big.T, big[5:6, :]):
        np.testing.assert_allclose(f(view, 0.25, 0.75), smooth_columns(view, 0.25, 0.75), rtol=1e-5, atol=1e-6)
    # A write through a column of a strided view lands in the caller's array.
    target, want = big.copy(), big.copy()
    kiln.qjit(running_columns_in_place)(target[::2, ::3])
    running_columns_in_place(want[::2, ::3])
    np.testing.assert_allclose(target, want, rtol=1e-5, atol=1e-5)


def test_no_column_copies_in_the_loop():
    """With the pass the loops read and write the columns in place: fewer
    buffers of one column are allocated than without it."""
    without = [(stage, [s for s in specs if s != "kiln-rank-reducing-slices"]) for stage, specs in DEFAULT_PIPELINE]
    assert without != DEFAULT_PIPELINE
    img = rng.standard_normal((9, 11))
    counts = {}
    for label, pipeline in (("with", None), ("without", without)):
        f = kiln.qjit(smooth_columns, pipelines=pipeline, keep_intermediate=True)
        np.testing.assert_allclose(f(img, 0.3, 0.7), smooth_columns(img, 0.3, 0.7), rtol=1e-12)
        text = kiln.get_compilation_stage(f, "bufferized")
        counts[label] = sum(1 for line in text.splitlines() if "memref.alloc" in line and "x1xf64>" in line)
    assert counts["with"] < counts["without"], counts
    assert counts["with"] == 0, counts
