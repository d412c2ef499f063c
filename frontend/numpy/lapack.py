"""Stage "jaxpr": `np.linalg`'s decompositions through LAPACK.

In: traced arrays (stacks of matrices `(..., M, N)` where NumPy takes them).
Out: one `lapack` equation per call (kiln/primitives/lapack.py) on the
matrices flattened to one batch axis, computed in float64 / complex128 and
cast to the result dtype as NumPy's linalg does, with a run-time `check` of
its `info` that raises `numpy.linalg.LinAlgError` with NumPy's message.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from kiln.core import INDEX_DTYPE, KilnTypeError, KilnValueError, is_static_dim
from kiln.errors import KilnLinAlgError
from kiln.numpy._base import (broadcast_shapes, broadcast_to, check, convert, operand, require_equal_dims,
                              shape_product, split_shape)
from kiln.numpy._bindings import knp, numpy_function
from kiln.primitives.lapack import QR_MODES, lapack_p
from kiln.tracing import Tracer, bind

try:  # NumPy's result types, so that `np.linalg.qr(a).Q` works in kiln too
    from numpy.linalg._linalg import EighResult, EigResult, QRResult, SlogdetResult, SVDResult
except ImportError:  # pragma: no cover - older NumPy
    EighResult = EigResult = QRResult = SlogdetResult = SVDResult = None

SINGULAR = "Singular matrix"
NOT_POSITIVE_DEFINITE = "Matrix is not positive definite"
EIGENVALUES = "Eigenvalues did not converge"
SVD = "SVD did not converge"
LSTSQ = "SVD did not converge in Linear Least Squares"


def _result(kind, *values):
    return kind(*values) if kind is not None else tuple(values)


def linalg_dtypes(fn: str, *xs: Any) -> tuple[np.dtype, np.dtype]:
    """(compute dtype, result dtype) as NumPy's linalg: float64 or
    complex128 to compute; float32/complex64 results only when every
    operand is single precision; ints and bools as float64."""
    complex_ = any(x.aval.dtype.kind == "c" for x in xs)
    single = True
    for x in xs:
        dtype = x.aval.dtype
        if dtype.kind in "fc":
            if dtype not in (np.float32, np.float64, np.complex64, np.complex128):
                raise KilnTypeError(f"np.linalg.{fn}: array type {dtype.name} is unsupported in linalg; "
                                    "convert it to float32 or float64 first")
            single = single and dtype in (np.float32, np.complex64)
        else:
            single = False
    compute = np.dtype(np.complex128 if complex_ else np.float64)
    result = {(False, True): np.float32, (True, True): np.complex64}.get((complex_, single), compute)
    return compute, np.dtype(result)


def real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32 if dtype in (np.float32, np.complex64) else np.float64)


def require_stacked(a: Any, fn: str, square: bool) -> Any:
    """`a` as a traced stack of matrices (at least 2-D; square if asked),
    with NumPy's LinAlgError otherwise."""
    a = operand(a)
    if a.aval.ndim < 2:
        raise KilnLinAlgError(f"np.linalg.{fn}: {a.aval.ndim}-dimensional array given. Array must be at least "
                              "two-dimensional")
    if square:
        require_equal_dims(a.aval.shape[-2], a.aval.shape[-1], "LinAlgError",
                           f"Last 2 dimensions of the array must be square (np.linalg.{fn} of a {{}}x{{}} matrix)")
    return a


def min_dim(m: Any, n: Any) -> Any:
    if is_static_dim(m) and is_static_dim(n):
        return min(int(m), int(n))
    return knp.minimum(m, n)


def flatten_batch(x: Any, core: int, dtype: np.dtype) -> tuple[Any, tuple]:
    """`x` as `dtype` with its leading dims merged into one: (array, batch shape)."""
    batch = tuple(x.aval.shape[:x.aval.ndim - core])
    x = convert(x, dtype)
    if not batch:  # one matrix: a unit batch axis, no reshape to check
        return knp.expand_dims(x, 0), batch
    return knp.reshape(x, (shape_product(batch), *x.aval.shape[x.aval.ndim - core:])), batch


def run_kernel(kernel: str, arrays: list, results: list[tuple[tuple, Any]], options: tuple = ()) -> list:
    """Bind `lapack` for `kernel`; `results` are (shape, dtype) pairs."""
    shapes, dyn = [], []
    for shape, _ in results:
        static, dims = split_shape(shape)
        shapes.append(static)
        dyn += dims
    return bind(lapack_p, *arrays, *dyn, kernel=kernel, options=tuple(int(o) for o in options),
                shapes=tuple(shapes), dtypes=tuple(np.dtype(d).name for _, d in results))


def raise_on_failure(info: Any, message: str) -> None:
    check(knp.all(knp.equal(info, 0)), "LinAlgError", message)


def _unflatten(x: Any, batch: tuple, dtype: np.dtype | None = None) -> Any:
    x = x if dtype is None else convert(x, dtype)
    if not batch:
        return knp.squeeze(x, 0)
    return knp.reshape(x, (*batch, *x.aval.shape[1:]))


@numpy_function("solve")
def solve(a: Any, b: Any) -> Tracer:
    """`np.linalg.solve(a, b)`: `x` with `a @ x == b` by LAPACK gesv (LU with
    partial pivoting); `b` is a vector `(M,)` or a stack `(..., M, K)`, the
    stacks broadcast. A singular matrix raises LinAlgError."""
    a, b = require_stacked(a, "solve", True), operand(b)
    if b.aval.ndim == 0:
        raise KilnValueError("np.linalg.solve: b must be at least 1-dimensional (a vector (M,) or matrices "
                             "(..., M, K))")
    compute, result = linalg_dtypes("solve", a, b)
    n = a.aval.shape[-1]
    vector = b.aval.ndim == 1
    b_core = (b.aval.shape[0], 1) if vector else tuple(b.aval.shape[-2:])
    require_equal_dims(b_core[0], n, "ValueError", "np.linalg.solve: b has {} rows but a has {}; they must match")
    batch = broadcast_shapes([tuple(a.aval.shape[:-2]), () if vector else tuple(b.aval.shape[:-2])], "solve")
    a = broadcast_to(a, (*batch, n, n))
    b = broadcast_to(knp.reshape(b, (n, 1)) if vector else b, (*batch, n, b_core[1]))
    a3, _ = flatten_batch(a, 2, compute)
    b3, _ = flatten_batch(b, 2, compute)
    count = a3.aval.shape[0]
    x, info = run_kernel("solve", [a3, b3], [((count, n, b_core[1]), compute), ((count,), INDEX_DTYPE)])
    raise_on_failure(info, SINGULAR)
    x = _unflatten(x, batch, result)
    return knp.reshape(x, (*batch, n)) if vector else x


def inverse(a: Any, fn: str = "inv", raise_singular: bool = True) -> tuple[Any, np.dtype]:
    """The inverses of a stack of square matrices in the compute dtype (NaN
    where singular unless `raise_singular`), and the result dtype."""
    a = require_stacked(a, fn, True)
    compute, result = linalg_dtypes(fn, a)
    a3, batch = flatten_batch(a, 2, compute)
    x, info = run_kernel("inv", [a3], [(a3.aval.shape, compute), ((a3.aval.shape[0],), INDEX_DTYPE)])
    if raise_singular:
        raise_on_failure(info, SINGULAR)
    return _unflatten(x, batch), result


@numpy_function("inv")
def inv(a: Any) -> Tracer:
    """`np.linalg.inv(a)`: by LAPACK gesv against the identity, as NumPy; a
    singular matrix raises LinAlgError."""
    x, result = inverse(a)
    return convert(x, result)


@numpy_function("cholesky")
def cholesky(a: Any, *, upper: bool = False) -> Tracer:
    """`np.linalg.cholesky(a, upper=False)`: `L` with `L @ L.conj().T == a`
    (LAPACK potrf, reading the lower triangle; `upper=True`: `U` from the
    upper one). A matrix that is not positive definite raises LinAlgError."""
    a = require_stacked(a, "cholesky", True)
    compute, result = linalg_dtypes("cholesky", a)
    a3, batch = flatten_batch(a, 2, compute)
    factor, info = run_kernel("cholesky", [a3], [(a3.aval.shape, compute), ((a3.aval.shape[0],), INDEX_DTYPE)],
                              (bool(upper),))
    raise_on_failure(info, NOT_POSITIVE_DEFINITE)
    return _unflatten(factor, batch, result)


def _slogdet_kernel(a: Any, fn: str) -> tuple:
    a = require_stacked(a, fn, True)
    compute, result = linalg_dtypes(fn, a)
    a3, batch = flatten_batch(a, 2, compute)
    count = a3.aval.shape[0]
    sign, logdet, det_ = run_kernel("slogdet", [a3], [((count, 1), compute), ((count, 1), np.float64),
                                                      ((count, 1), compute)])
    return [knp.reshape(v, batch) for v in (sign, logdet, det_)], result


@numpy_function("slogdet")
def slogdet(a: Any) -> Any:
    """`np.linalg.slogdet(a)`: (sign, log|det|) from LAPACK getrf; a singular
    matrix gives (0, -inf)."""
    (sign, logdet, _), result = _slogdet_kernel(a, "slogdet")
    return _result(SlogdetResult, convert(sign, result), convert(logdet, real_dtype(result)))


@numpy_function("det")
def det(a: Any) -> Tracer:
    """`np.linalg.det(a)`: sign * exp(log|det|) from LAPACK getrf, as NumPy."""
    (_, _, value), result = _slogdet_kernel(a, "det")
    return convert(value, result)


@numpy_function("qr")
def qr(a: Any, mode: str = "reduced") -> Any:
    """`np.linalg.qr(a, mode)`: LAPACK geqrf then orgqr/ungqr; modes
    'reduced' (Q (..., M, K), R (..., K, N)), 'complete' (Q (..., M, M)),
    'r' (R only), 'raw' ((h (..., N, M), tau (..., K)), geqrf's Householder
    form as NumPy returns it) and the deprecated 'full' / 'f' (= 'reduced')
    and 'economic' / 'e' (h untransposed)."""
    if mode in ("f", "full"):
        warnings.warn("The 'full' option is deprecated in favor of 'reduced'.\nFor backward compatibility let "
                      "mode default.", DeprecationWarning, stacklevel=2)
        mode = "reduced"
    elif mode in ("e", "economic"):
        warnings.warn("The 'economic' option is deprecated.", DeprecationWarning, stacklevel=2)
        return knp.swapaxes(qr(a, "raw")[0], -1, -2)
    if mode not in QR_MODES:
        raise KilnValueError(f"Unrecognized mode '{mode}'")
    a = require_stacked(a, "qr", False)
    compute, result = linalg_dtypes("qr", a)
    a3, batch = flatten_batch(a, 2, compute)
    count, m, n = a3.aval.shape
    k = min_dim(m, n)
    q_shape = {"reduced": (count, m, k), "complete": (count, m, m), "r": (count, 0, 0), "raw": (count, n, m)}[mode]
    r_shape = {"complete": (count, m, n), "raw": (count, 1, k)}.get(mode, (count, k, n))
    q, r, info = run_kernel("qr", [a3], [(q_shape, compute), (r_shape, compute),
                                         ((count,), INDEX_DTYPE)], (QR_MODES.index(mode),))
    raise_on_failure(info, "Incorrect argument found while performing LAPACK routine")
    if mode == "raw":
        tau = knp.reshape(r, (count, k))
        return _unflatten(q, batch, result), _unflatten(tau, batch, result)
    r = _unflatten(r, batch, result)
    if mode == "r":
        return r
    return _result(QRResult, _unflatten(q, batch, result), r)


def _uplo(UPLO: Any) -> bool:
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise KilnValueError("UPLO argument must be 'L' or 'U'")
    return UPLO.upper() == "U"


def _eigh(a: Any, UPLO: Any, vectors: bool, fn: str) -> tuple:
    upper = _uplo(UPLO)
    a = require_stacked(a, fn, True)
    compute, result = linalg_dtypes(fn, a)
    a3, batch = flatten_batch(a, 2, compute)
    count, n = a3.aval.shape[:2]
    values, vecs, info = run_kernel("eigh", [a3], [((count, n), np.float64),
                                                   ((count, n, n) if vectors else (count, 0, 0), compute),
                                                   ((count,), INDEX_DTYPE)], (upper, vectors))
    raise_on_failure(info, EIGENVALUES)
    return _unflatten(values, batch, real_dtype(result)), _unflatten(vecs, batch, result)


@numpy_function("eigh")
def eigh(a: Any, UPLO: str = "L") -> Any:
    """`np.linalg.eigh(a, UPLO)`: ascending eigenvalues and eigenvectors of a
    Hermitian matrix (LAPACK syevd/heevd, reading one triangle)."""
    return _result(EighResult, *_eigh(a, UPLO, True, "eigh"))


@numpy_function("eigvalsh")
def eigvalsh(a: Any, UPLO: str = "L") -> Tracer:
    """`np.linalg.eigvalsh(a, UPLO)`: the eigenvalues of `eigh`."""
    return _eigh(a, UPLO, False, "eigvalsh")[0]


def _eig(a: Any, vectors: bool, fn: str, always_complex: bool = False) -> tuple:
    """geev's eigenvalues (and vectors); for a real matrix real results
    (checked), or with `always_complex` complex ones of its precision."""
    a = require_stacked(a, fn, True)
    compute, result = linalg_dtypes(fn, a)
    finite = knp.isfinite(knp.real(a)) & knp.isfinite(knp.imag(a)) if a.aval.dtype.kind == "c" else knp.isfinite(a)
    check(knp.all(finite), "LinAlgError", "Array must not contain infs or NaNs")
    a3, batch = flatten_batch(a, 2, compute)
    count, n = a3.aval.shape[:2]
    cdouble = np.dtype(np.complex128)
    values, vecs, info = run_kernel("eig", [a3], [((count, n), cdouble),
                                                  ((count, n, n) if vectors else (count, 0, 0), cdouble),
                                                  ((count,), INDEX_DTYPE)], (vectors,))
    raise_on_failure(info, EIGENVALUES)
    if compute.kind == "f" and always_complex:
        result = np.result_type(result, np.complex64)
    elif compute.kind == "f":
        # NumPy's result is real only when every eigenvalue is: kiln fixes the dtype when it compiles.
        check(knp.all(knp.equal(knp.imag(values), 0)), "ValueError",
              f"np.linalg.{fn}: this real matrix has complex eigenvalues, where NumPy returns a complex array; "
              "kiln fixes the result dtype when it compiles, as real for a real matrix: pass a complex matrix "
              "(a.astype(np.complex128)) to get complex results")
        values, vecs = knp.real(values), knp.real(vecs)
    return _unflatten(values, batch, result), _unflatten(vecs, batch, result)


@numpy_function("eig")
def eig(a: Any) -> Any:
    """`np.linalg.eig(a)`: eigenvalues and right eigenvectors (LAPACK geev).
    A real matrix must have real eigenvalues (see docs/numpy.md)."""
    return _result(EigResult, *_eig(a, True, "eig"))


@numpy_function("eigvals")
def eigvals(a: Any) -> Tracer:
    """`np.linalg.eigvals(a)`: the eigenvalues of `eig`."""
    return _eig(a, False, "eigvals")[0]


def complex_eigenvalues(a: Any, fn: str) -> Tracer:
    """The eigenvalues of `eigvals` as a complex array even for a real matrix
    (computed by the real geev, so in NumPy's order)."""
    return _eig(a, False, fn, always_complex=True)[0]


def singular_values(a: Any, fn: str) -> tuple[Any, np.dtype]:
    """The singular values of a stack (compute dtype's real, descending) and the result dtype."""
    a = require_stacked(a, fn, False)
    compute, result = linalg_dtypes(fn, a)
    a3, batch = flatten_batch(a, 2, compute)
    count, m, n = a3.aval.shape
    _, s, _, info = run_kernel("svd", [a3], [((count, 0, 0), compute), ((count, min_dim(m, n)), np.float64),
                                             ((count, 0, 0), compute), ((count,), INDEX_DTYPE)], (False, False))
    raise_on_failure(info, SVD)
    return _unflatten(s, batch), result


@numpy_function("svd")
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """`np.linalg.svd`: LAPACK gesdd (full, reduced, or values only)."""
    if hermitian:
        raise KilnValueError("np.linalg.svd: hermitian=True is not supported by kiln; call it with "
                             "hermitian=False (the default), which gives the same decomposition")
    if not compute_uv:
        s, result = singular_values(a, "svd")
        return convert(s, real_dtype(result))
    a = require_stacked(a, "svd", False)
    compute, result = linalg_dtypes("svd", a)
    a3, batch = flatten_batch(a, 2, compute)
    count, m, n = a3.aval.shape
    k = min_dim(m, n)
    u_cols, vt_rows = (m, n) if full_matrices else (k, k)
    u, s, vt, info = run_kernel("svd", [a3], [((count, m, u_cols), compute), ((count, k), np.float64),
                                              ((count, vt_rows, n), compute), ((count,), INDEX_DTYPE)],
                                (bool(full_matrices), True))
    raise_on_failure(info, SVD)
    return _result(SVDResult, _unflatten(u, batch, result), _unflatten(s, batch, real_dtype(result)),
                   _unflatten(vt, batch, result))


@numpy_function("svdvals")
def svdvals(x: Any) -> Tracer:
    """`np.linalg.svdvals(x)`: `svd(x, compute_uv=False)`."""
    s, result = singular_values(x, "svdvals")
    return convert(s, real_dtype(result))


@numpy_function("lstsq")
def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple:
    """`np.linalg.lstsq(a, b, rcond)`: LAPACK gelsd. Returns (x, residuals,
    rank, s); residuals has one entry per column of b when rank == N < M,
    else none (a size known when the call runs)."""
    a, b = operand(a), operand(b)
    vector = b.aval.ndim == 1
    if a.aval.ndim != 2 or b.aval.ndim not in (1, 2):
        dims = a.aval.ndim if a.aval.ndim != 2 else b.aval.ndim
        raise KilnLinAlgError(f"np.linalg.lstsq: {dims}-dimensional array given. Array must be two-dimensional")
    m, n = a.aval.shape
    require_equal_dims(b.aval.shape[0], m, "LinAlgError", "Incompatible dimensions (b has {} rows, a has {})")
    compute, result = linalg_dtypes("lstsq", a, b)
    b2 = knp.reshape(b, (m, 1)) if vector else b
    k = b2.aval.shape[1]
    if rcond is None:
        rcond = np.finfo(np.float64).eps * knp.maximum(m, n) if not (is_static_dim(m) and is_static_dim(n)) \
            else np.finfo(np.float64).eps * max(int(m), int(n))
    rcond = convert(operand(rcond), np.float64)
    a3 = knp.reshape(convert(a, compute), (1, m, n))
    b3 = knp.reshape(convert(b2, compute), (1, m, k))
    x, s, rank, resid, info = run_kernel(
        "lstsq", [a3, b3, rcond], [((1, n, k), compute), ((1, min_dim(m, n)), np.float64), ((1,), INDEX_DTYPE),
                                   ((1, k), np.float64), ((1,), INDEX_DTYPE)])
    raise_on_failure(info, LSTSQ)
    rank = convert(knp.reshape(rank, ()), np.int32)  # NumPy's gufunc gives the rank as a C int
    x = knp.reshape(convert(x, result), (n,) if vector else (n, k))
    resid = convert(knp.reshape(resid, (k,)), real_dtype(result))
    # NumPy returns residuals only for a full-rank overdetermined system.
    full = knp.logical_and(knp.equal(rank, n), knp.greater(m, n))
    resid = resid[knp.broadcast_to(full, (k,))]
    return x, resid, rank, convert(knp.reshape(s, s.aval.shape[1:]), real_dtype(result))
