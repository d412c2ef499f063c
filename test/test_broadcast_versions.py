"""Readers of broadcasts versioned for size-1 dims (kiln-legalize-dynamic's
`scf.if`; kiln-sink-into-broadcast-versions copies the reader into both
branches): NumPy's values in the common branch and in the size-1 one (a
window that the end of the array cuts to one element broadcasts against
the weights, as in NumPy), sizes 0, 1, odd and large, float32 weights with
float64 data, and no broadcast copy left in the common branch."""

import numpy as np
import pytest

import kiln
from kiln.compiler.pipeline import DEFAULT_PIPELINE

rng = np.random.default_rng(2718)


def window_sums(x, w):
    """A 1-d convolution over axis 1 of x, written as NumPy users write it;
    the last window is cut to one element when w has two taps, which NumPy
    broadcasts against both taps."""
    k = w.shape[0]
    out = np.zeros((x.shape[0], x.shape[1], w.shape[2]))
    for i in range(x.shape[1]):
        out[:, i, :] = np.sum(x[:, i:i + k, :, np.newaxis] * w[np.newaxis], axis=(1, 2))
    return out


@pytest.mark.parametrize("n, m, c, k, d", [(0, 3, 2, 2, 3), (1, 1, 1, 1, 1), (3, 7, 5, 2, 4), (2, 9, 3, 1, 6),
                                           (5, 64, 16, 2, 33)])
@pytest.mark.parametrize("wdtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_window_sums_match_numpy(n, m, c, k, d, wdtype):
    x = rng.standard_normal((n, m, c))
    w = rng.standard_normal((k, c, d)).astype(wdtype)
    np.testing.assert_allclose(kiln.qjit(window_sums)(x, w), window_sums(x, w), rtol=1e-6, atol=1e-6)


def test_scaled_rows_match_numpy_and_leave_arguments_alone():
    def scaled(a, s, lo, hi):
        part = a[lo:hi, None, :] * s[None, :, None]  # a row range broadcast against s
        return part.sum(axis=2), part.max(axis=0)

    a = rng.standard_normal((6, 5))
    s = rng.standard_normal(4)
    before = a.copy()
    f = kiln.qjit(scaled)
    for lo, hi in ((0, 6), (2, 3), (5, 6), (3, 3)):
        if hi - lo == 0:
            with pytest.raises(ValueError):
                f(a, s, lo, hi)
            continue
        for got, want in zip(f(a, s, lo, hi), scaled(a, s, lo, hi)):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_array_equal(a, before)


def _buffers_of_rank(text: str, rank: int) -> int:
    pattern = "memref<" + "?x" * rank
    return sum(1 for line in text.splitlines() if "memref.alloc" in line and pattern in line.split(":")[-1]
               and "?x" * (rank + 1) not in line.split(":")[-1])


def test_common_branch_reads_the_operand_without_a_copy():
    """The 4-d window copy the common branch made is gone: only the size-1
    branch's copy (one call of runtime/broadcast.c) is left."""
    without = [(stage, [s for s in specs if s != "kiln-sink-into-broadcast-versions"])
               for stage, specs in DEFAULT_PIPELINE]
    assert without != DEFAULT_PIPELINE
    x, w = rng.standard_normal((3, 7, 5)), rng.standard_normal((2, 5, 4))
    counts = {}
    for label, pipeline in (("with", None), ("without", without)):
        f = kiln.qjit(window_sums, pipelines=pipeline, keep_intermediate=True)
        np.testing.assert_allclose(f(x, w), window_sums(x, w), rtol=1e-12)
        counts[label] = _buffers_of_rank(kiln.get_compilation_stage(f, "bufferized"), 4)
    assert counts["with"] < counts["without"], counts
