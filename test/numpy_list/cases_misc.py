"""The NumPy list, family "misc": selection, elementwise helpers, small
linear algebra (dot, kron, einsum, ...), comparisons and index loops
(issue 15, part "the list and the general surface")."""

from __future__ import annotations

import numpy as np

from test.numpy_list.args import bools, floats, ints, mat, two_vecs, vec
from test.numpy_list.case import Case


def _case(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "misc", True, **kw)


def _add(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "misc", False, **kw)


def _with_nans(n, rng):
    a = floats(rng, n, 3)
    a[a > 1.2] = np.nan
    a[a < -1.6] = np.inf
    a[(a > -1.6) & (a < -1.4)] = -np.inf
    return (a,)


def where(a, b):
    return np.where(a > 0, a, b), np.where(a > b, 1.0, 0), np.where(a > 0, a, 2.5)


def select(a):
    return np.select([a < -1, a > 1], [a * 2, a * 3]), np.select([a > 0], [a], default=-1.0)


def piecewise(a):
    return np.piecewise(a, [a < 0, a >= 0], [-1.0, 1.0]), np.piecewise(a, [a < 0], [lambda v: v * 2, lambda v: v])


def nan_to_num(a):
    return np.nan_to_num(a), np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0)


def clip(a):
    return np.clip(a, -1, 1), np.clip(a, a.min(initial=0.0), 0.5), np.clip(a, None, 0.0)


def fill_diagonal(a):
    np.fill_diagonal(a, 5.0)
    return a


def fill_diagonal_wrap(a):
    np.fill_diagonal(a, np.arange(3.0), wrap=True)
    return a


def diff(a):
    return np.diff(a), np.diff(a, 2), np.diff(a, axis=0), np.diff(a, n=1, axis=1)


def ediff1d(a):
    return np.ediff1d(a), np.ediff1d(a, to_begin=0.0), np.ediff1d(a, to_end=[1.0, 2.0])


def ptp(a):
    return np.ptp(a), np.ptp(a, axis=1)


def trace(a):
    return np.trace(a), np.trace(a, 1), np.trace(a[None], axis1=1, axis2=2)


def cross(a, b):
    return np.cross(a, b), np.cross(a, np.array([1.0, -2.0])), np.cross(np.array([0.5, 2.0]), np.array([1.0, 3.0]))


def kron(a, b):
    return np.kron(a, b), np.kron(a[:, 0], b[0])


def einsum(a, b):
    return (np.einsum("ij,jk->ik", a, b.T), np.einsum("ij->j", a), np.einsum("ii", a @ b.T),
            np.einsum("ij,ij->i", a, b), np.einsum("i,j->ij", a[:, 0], b[:, 1]))


def einsum_chain(a, b, c):
    return np.einsum("ij,jk,kl->il", a, b, c), np.einsum("bij,bjk->bik", a[None], b[None])


def _chain_args(n, rng):
    return floats(rng, n, 3), floats(rng, 3, 4), floats(rng, 4, n)


def tensordot(a, b):
    return np.tensordot(a, b, axes=([0], [0])), np.tensordot(a, b.T, axes=1), np.tensordot(a, b, axes=2)


def inner(a, b):
    return np.inner(a, b), np.inner(a[:, 0], b[:, 0])


def outer(a, b):
    return np.outer(a, b), np.outer(a[:, None], b)


def vdot(a, b):
    return np.vdot(a, b), np.vdot(a.ravel(), b.ravel())


def dot(a, b):
    return np.dot(a, b.T), np.dot(a[:, 0], b[:, 0]), np.dot(a, 2.0)


def matmul_op(a, b):
    return a @ b.T, a[:, 0] @ b, b.T @ a


def polyval(p, x):
    return np.polyval(p, x), np.polyval(p[:2], 2.0)


def _polyval_args(n, rng):
    return floats(rng, n), floats(rng, 7)


def polyfit(x, y):
    return np.polyfit(x, y, 2), np.polyfit(x, y, 1, w=np.abs(x) + 1.0)


def gradient(f, x):
    return np.gradient(f), np.gradient(f, 0.5), np.gradient(f, x), np.gradient(f, np.arange(len(f)) * 0.25)


def _gradient_args(n, rng):
    return floats(rng, n), np.cumsum(rng.uniform(0.1, 1.0, n))


def gradient_2d(a):
    return np.gradient(a), np.gradient(a, 2.0, axis=1), np.gradient(a.astype(np.float32), axis=0)


def heaviside(a):
    return np.heaviside(a, 0.5), np.heaviside(a, a)


def logaddexp(a, b):
    return np.logaddexp(a, b), np.logaddexp2(a, b)


def average(a, w):
    return np.average(a), np.average(a, weights=w), np.average(a, axis=None, weights=w, returned=True)


def _average_args(n, rng):
    return floats(rng, n + 1), floats(rng, n + 1, low=0.1, high=1.0)


def average_axis(a):
    return np.average(a, axis=0), np.average(a, axis=1, weights=np.arange(1.0, 4.0))


def isclose(a, b):
    return np.isclose(a, b), np.isclose(a, a + 1e-9), np.isclose(a, b, rtol=0.5, atol=0.1, equal_nan=True)


def allclose(a, b):
    return np.allclose(a, b), np.allclose(a, a + 1e-9), np.allclose(a, b, atol=10.0)


def array_equal(a, b):
    return np.array_equal(a, b), np.array_equal(a, a.copy()), np.array_equal(a, a[:1])


def ndindex(a):
    total = np.zeros_like(a)
    for i, j in np.ndindex(a.shape):
        total[i, j] = a[i, j] * (i + j)
    return total


def ndenumerate(a):
    out = np.zeros_like(a)
    for (i, j), v in np.ndenumerate(a):
        out[i, j] = v + i - j
    return out


def nditer(a):
    total = 0.0
    for v in np.nditer(a):
        total += v
    return total


def round_(a):
    return np.round(a), np.round(a, 2), np.round(a, -1)


def trapezoid(y, x):
    return np.trapezoid(y), np.trapezoid(y, x), np.trapezoid(y, dx=0.5)


def sinc(a):
    return np.sinc(a), np.sinc(a * 0)


def roots(p):
    return np.roots(p)


def roots_of_real(p):
    # NumPy's dtype is float64 when every root is real; kiln's is complex128 always.
    return np.roots(p).astype(np.complex128)


def _padded_poly(n, rng):
    """Coefficients with leading and trailing zeros (n of them in all) around n + 2 values."""
    core = floats(rng, n + 2)
    return (np.concatenate([np.zeros(n // 2), core, np.zeros(n - n // 2)]),)


def as_strided(a):
    return np.lib.stride_tricks.as_strided(a, shape=(a.shape[0] - 1, 2), strides=(8, 8))


def as_strided_row_pairs(m):
    # sliding windows of 2 rows over a C-contiguous matrix, strides from m.strides
    rows, cols = m.shape
    return np.lib.stride_tricks.as_strided(m, shape=(rows - 1, 2, cols), strides=(m.strides[0], m.strides[0],
                                                                                 m.strides[1])).sum(axis=1)


def as_strided_windows(a):
    """Overlapping windows of 3 rows, from the array's own strides, read-only."""
    rows, row = a.strides
    windows = np.lib.stride_tricks.as_strided(a, shape=(a.shape[0] - 2, 3, a.shape[1]), strides=(rows, rows, row),
                                              writeable=False)
    return windows.sum(axis=1), windows[:, ::-1, 0]


def matmul_out(a, b, out):
    np.matmul(a, b, out=out)
    return out


def _matmul_out_args(n, rng):
    return floats(rng, n, 3), floats(rng, 3, 4), np.zeros((n, 4))


def dot_out(a, b, out):
    r = np.dot(a, b, out=out)
    return r, out


CASES = [
    _case("numpy.where", where, two_vecs()),
    _case("numpy.select", select, vec()),
    _add("numpy.piecewise", piecewise, vec()),
    _add("numpy.nan_to_num", nan_to_num, _with_nans),
    _add("numpy.clip", clip, mat()),
    _case("numpy.fill_diagonal", fill_diagonal, mat(None)),
    _case("numpy.fill_diagonal", fill_diagonal, mat(4)),
    _case("numpy.fill_diagonal", fill_diagonal_wrap, lambda n, rng: (floats(rng, 3 * n + 1, 2),)),
    _case("numpy.diff", diff, mat(4)),
    _case("numpy.ediff1d", ediff1d, vec()),
    _case("numpy.ptp", ptp, mat()),
    _case("numpy.trace", trace, mat(None)),
    _case("numpy.trace", trace, mat(4)),
    _case("numpy.cross", cross, lambda n, rng: (floats(rng, n, 3), floats(rng, n, 3))),
    _case("numpy.kron", kron, lambda n, rng: (floats(rng, n, 2), floats(rng, 3, 2))),
    _add("numpy.einsum", einsum, lambda n, rng: (floats(rng, n, n), floats(rng, n, n)), rtol=1e-10),
    _add("numpy.einsum", einsum_chain, _chain_args, rtol=1e-10),
    _add("numpy.tensordot", tensordot, lambda n, rng: (floats(rng, n, 3), floats(rng, n, 3)), rtol=1e-10),
    _add("numpy.inner", inner, lambda n, rng: (floats(rng, n, 3), floats(rng, 4, 3)), rtol=1e-10),
    _case("numpy.outer", outer, two_vecs()),
    _case("numpy.vdot", vdot, lambda n, rng: (floats(rng, n, 3, dtype=np.complex128),
                                              floats(rng, n, 3, dtype=np.complex128)), rtol=1e-10),
    _case("numpy.dot", dot, lambda n, rng: (floats(rng, n, 3), floats(rng, n, 3)), rtol=1e-10),
    _case("ndarray.__matmul__", matmul_op, lambda n, rng: (floats(rng, n, 3), floats(rng, n, 3)), rtol=1e-10),
    _add("numpy.polyval", polyval, _polyval_args, rtol=1e-10),
    _add("numpy.polyfit", polyfit, two_vecs(), rtol=1e-9,
         note="`deg` a Python int; `cov=` refused; no RankWarning for a rank-deficient fit"),
    _add("numpy.gradient", gradient, _gradient_args, rtol=1e-10,
         note="edge_order=1 (edge_order=2 refused); coordinate arrays: uniform steps checked at run time"),
    _add("numpy.gradient", gradient_2d, lambda n, rng: (floats(rng, n, 3),), rtol=1e-6),
    _add("numpy.heaviside", heaviside, lambda n, rng: (np.round(floats(rng, n)),)),
    _case("numpy.logaddexp", logaddexp, two_vecs()),
    _case("numpy.logaddexp2", logaddexp, two_vecs()),
    _add("numpy.average", average, _average_args, rtol=1e-10),
    _add("numpy.average", average_axis, mat(), rtol=1e-10),
    _add("numpy.isclose", isclose, lambda n, rng: (_with_nans(n, rng)[0], _with_nans(n, rng)[0])),
    _add("numpy.allclose", allclose, two_vecs()),
    _case("numpy.array_equal", array_equal, two_vecs()),
    _case("numpy.ndindex", ndindex, mat()),
    _case("numpy.ndenumerate", ndenumerate, mat()),
    _case("numpy.nditer", nditer, mat()),
    _add("numpy.round", round_, mat()),
    _add("numpy.trapezoid", trapezoid, two_vecs()),
    _case("numpy.sinc", sinc, vec()),
    _case("numpy.roots", roots_of_real, lambda n, rng: (floats(rng, n + 2),), rtol=1e-10,
          note="complex result for real coefficients, even when every root is real (NumPy: float64 then)"),
    _case("numpy.roots", roots_of_real, _padded_poly, rtol=1e-10),
    _case("numpy.roots", roots, lambda n, rng: (floats(rng, n + 2, dtype=np.complex128),), rtol=1e-10),
    _case("numpy.lib.stride_tricks.as_strided", as_strided, vec(),
          note="a copy (writes to it are refused); x C-contiguous, offsets inside x"),
    _case("numpy.lib.stride_tricks.as_strided", as_strided_windows, lambda n, rng: (floats(rng, n + 2, 3),)),
    _case("numpy.lib.stride_tricks.as_strided", as_strided_row_pairs, lambda n, rng: (floats(rng, n + 1, 3),)),
    _add("numpy.matmul out=", matmul_out, _matmul_out_args, rtol=1e-10),
    _add("numpy.dot out=", dot_out, _matmul_out_args, rtol=1e-10),
]
