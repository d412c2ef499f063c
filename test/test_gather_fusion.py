"""Gathers read element by element are computed where they are read
(kiln-fuse-into-element-loops after kiln-scalarize-dots; kiln-inline-splats
dropping the inputs it made unused), against NumPy: a CSR sparse
matrix-vector product written as users write it (`vals @ x[cols]` per row),
index dtypes, negative indices, empty rows, sizes 0, 1, odd and large, an
out-of-bounds column (IndexError, nothing written), and the IR: no buffer
allocated per row."""

from __future__ import annotations

import re

import numpy as np
import pytest

import kiln


def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def row_sums_of_gathers(ptr, idx, w, x):
    out = np.zeros(ptr.size - 1)
    for i in range(ptr.size - 1):
        out[i] = np.sum(w[ptr[i]:ptr[i + 1]] * x[idx[ptr[i]:ptr[i + 1]]])
    return out


def _csr(rng, m, n, nnz, index_dtype, negative=False):
    rows = np.sort(rng.integers(0, max(m, 1), size=nnz)) if m else np.zeros(0, np.int64)
    counts = np.bincount(rows, minlength=m)[:m]
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(index_dtype)
    cols = rng.integers(0, max(n, 1), size=int(ptr[-1])) if n else np.zeros(int(ptr[-1]), np.int64)
    if negative and cols.size:
        cols = np.where(rng.random(cols.size) < 0.5, cols - n, cols)
    return ptr, cols.astype(index_dtype), rng.random(int(ptr[-1])), rng.random(n)


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32, np.uint32])
def test_spmv_at_many_sizes_one_compile(index_dtype):
    f = kiln.qjit(spmv)
    rng = np.random.default_rng(0)
    for m, n, nnz in [(7, 9, 20), (33, 17, 101), (4096, 4096, 8192)]:
        args = _csr(rng, m, n, nnz, index_dtype)
        np.testing.assert_allclose(f(*args), spmv(*args), rtol=1e-12, atol=1e-12)
    assert f.num_compiles == 1
    # Sizes 0 and 1 (dims of 1 are compiled apart: they broadcast).
    for m, n, nnz in [(0, 0, 0), (1, 1, 1), (1, 5, 0), (5, 1, 3)]:
        args = _csr(rng, m, n, nnz, index_dtype)
        np.testing.assert_allclose(f(*args), spmv(*args), rtol=1e-12, atol=1e-12)


def test_negative_columns_wrap_as_in_numpy():
    f = kiln.qjit(spmv)
    rng = np.random.default_rng(1)
    for m, n, nnz in [(9, 11, 40), (1, 3, 3), (200, 57, 900)]:
        args = _csr(rng, m, n, nnz, np.int64, negative=True)
        np.testing.assert_allclose(f(*args), spmv(*args), rtol=1e-12)


def test_sum_of_products_with_a_gather():
    f = kiln.qjit(row_sums_of_gathers)
    rng = np.random.default_rng(2)
    for m, n, nnz in [(6, 8, 15), (0, 3, 0), (1, 1, 1), (301, 77, 1001)]:
        args = _csr(rng, m, n, nnz, np.int64, negative=True)
        np.testing.assert_allclose(f(*args), row_sums_of_gathers(*args), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [5, -6, 99])
def test_out_of_bounds_column_raises(bad):
    f = kiln.qjit(spmv)
    ptr = np.array([0, 2, 3], np.int64)
    cols = np.array([0, bad, 1], np.int64)
    vals, x = np.ones(3), np.arange(5.0)
    with pytest.raises(IndexError) as numpy_error:
        spmv(ptr, cols, vals, x)
    with pytest.raises(IndexError, match="out of bounds") as kiln_error:
        f(ptr, cols, vals, x)
    assert "5" in str(kiln_error.value) and str(numpy_error.value)
    assert "test_gather_fusion.py" in str(kiln_error.value)
    # The arguments are unchanged and a good call after the error works.
    np.testing.assert_array_equal(cols, [0, bad, 1])
    good = np.array([0, 4, 1], np.int64)
    np.testing.assert_allclose(f(ptr, good, vals, x), spmv(ptr, good, vals, x))


def _loop_body(ir_text: str) -> str:
    """The text of the function's row loop (the outermost `scf.while` or `scf.for`)."""
    start = re.search(r"scf\.(while|for)", ir_text).start()
    return ir_text[start:]


def test_no_buffer_per_row():
    f = kiln.qjit(spmv)
    args = _csr(np.random.default_rng(3), 10, 10, 30, np.int64)
    f(*args)
    body = _loop_body(f.stage("bufferized").split("func.func @spmv", 1)[1].split("llvm.func", 1)[0])
    assert "memref.alloc" not in body
    assert "kiln_parallel_for" not in body
