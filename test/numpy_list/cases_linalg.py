"""The NumPy list, family "linalg": numpy.linalg through LAPACK (issue 15).

In: nothing. Out: `CASES`, each a function as a user writes it and its
arguments at size n: well-conditioned matrices (random plus n on the
diagonal), ill-conditioned ones (Hilbert), singular and non-positive-definite
ones (NumPy raises LinAlgError: kiln must too), stacks, and each dtype family.
kiln calls the LAPACK routines NumPy calls, on the same float64/complex128
data, so results agree to rounding even where the problem is ill-conditioned.
"""

from __future__ import annotations

import numpy as np

from test.numpy_list.case import Case

FAMILY = "linalg"
NUMBA_LINALG = {"cholesky", "cond", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq", "matrix_power",
                "matrix_rank", "norm", "pinv", "qr", "slogdet", "solve", "svd"}


def _floats(rng, shape, dtype=np.float64):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(-4, 5, shape).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def _well(rng, n, dtype=np.float64, batch=()):
    """Random plus n on the diagonal: well-conditioned at every size."""
    a = _floats(rng, (*batch, n, n), dtype)
    return (a + (n + 1) * np.eye(n, dtype=np.int64)).astype(dtype)


def _spd(rng, n, dtype=np.float64, batch=()):
    """Hermitian positive definite."""
    a = _floats(rng, (*batch, n, n), dtype)
    return (a @ np.swapaxes(a, -1, -2).conj() + n * np.eye(n)).astype(dtype)


def _hilbert(n, dtype=np.float64):
    i = np.arange(n)
    return (1.0 / (i[:, None] + i[None, :] + 1)).astype(dtype)


def _symmetric(rng, n, dtype=np.float64):
    a = _floats(rng, (n, n), dtype)
    return (a + a.T.conj()).astype(dtype)


def case(name: str, fn, make_args, **kw) -> Case:
    short = name.rpartition(".")[2]
    return Case(f"numpy.linalg.{name}", fn, make_args, FAMILY, short in NUMBA_LINALG, **kw)


CASES = [
    # solve: vectors, matrices, stacks, dtypes; singular raises.
    case("solve", lambda a, b: np.linalg.solve(a, b), lambda n, rng: (_well(rng, n), _floats(rng, n))),
    case("solve", lambda a, b: np.linalg.solve(a, b), lambda n, rng: (_well(rng, n), _floats(rng, (n, 3)))),
    case("solve", lambda a, b: np.linalg.solve(a, b),
         lambda n, rng: (_well(rng, n, batch=(2,)), _floats(rng, (2, n, 2)))),
    case("solve", lambda a, b: np.linalg.solve(a, b),
         lambda n, rng: (_well(rng, n, np.float32), _floats(rng, n, np.float32))),
    case("solve", lambda a, b: np.linalg.solve(a, b),
         lambda n, rng: (_well(rng, n, np.complex128), _floats(rng, (n, 2), np.complex128))),
    case("solve", lambda a, b: np.linalg.solve(a, b), lambda n, rng: (_well(rng, n, np.int64), _floats(rng, n))),
    case("solve", lambda a, b: np.linalg.solve(a, b), lambda n, rng: (np.zeros((n, n)), _floats(rng, n)),
         note="a singular matrix raises LinAlgError"),
    # inv
    case("inv", lambda a: np.linalg.inv(a), lambda n, rng: (_well(rng, n),)),
    case("inv", lambda a: np.linalg.inv(a), lambda n, rng: (_hilbert(n),), rtol=1e-9),
    case("inv", lambda a: np.linalg.inv(a), lambda n, rng: (_well(rng, n, np.complex64, batch=(3,)),)),
    case("inv", lambda a: np.linalg.inv(a), lambda n, rng: (np.ones((n, n)),), sizes=(2, 5), second_size=7),
    # det / slogdet
    case("det", lambda a: np.linalg.det(a), lambda n, rng: (_well(rng, n),)),
    case("det", lambda a: np.linalg.det(a), lambda n, rng: (_hilbert(n),), rtol=1e-9),
    case("det", lambda a: np.linalg.det(a), lambda n, rng: (_floats(rng, (2, 3, n, n), np.complex128),)),
    case("det", lambda a: np.linalg.det(a), lambda n, rng: (np.ones((n, n), np.int32),)),
    case("slogdet", lambda a: np.linalg.slogdet(a), lambda n, rng: (_floats(rng, (n, n)),)),
    case("slogdet", lambda a: np.linalg.slogdet(a), lambda n, rng: (_floats(rng, (2, n, n), np.float32),)),
    case("slogdet", lambda a: np.linalg.slogdet(a), lambda n, rng: (np.ones((n, n)),),
         note="a singular matrix gives (0, -inf)"),
    # cholesky
    case("cholesky", lambda a: np.linalg.cholesky(a), lambda n, rng: (_spd(rng, n),)),
    case("cholesky", lambda a: np.linalg.cholesky(a, upper=True), lambda n, rng: (_spd(rng, n, batch=(2,)),)),
    case("cholesky", lambda a: np.linalg.cholesky(a), lambda n, rng: (_spd(rng, n, np.complex128),)),
    case("cholesky", lambda a: np.linalg.cholesky(a), lambda n, rng: (_spd(rng, n, np.float32),)),
    case("cholesky", lambda a: np.linalg.cholesky(a), lambda n, rng: (-np.eye(n),),
         note="a matrix that is not positive definite raises LinAlgError"),
    # qr
    case("qr", lambda a: np.linalg.qr(a), lambda n, rng: (_floats(rng, (n, 3)),)),
    case("qr", lambda a: np.linalg.qr(a, mode="complete"), lambda n, rng: (_floats(rng, (n, 4)),)),
    case("qr", lambda a: np.linalg.qr(a, mode="r"), lambda n, rng: (_floats(rng, (3, n)),)),
    case("qr", lambda a: np.linalg.qr(a), lambda n, rng: (_floats(rng, (2, n, n), np.complex128),)),
    case("qr", lambda a: np.linalg.qr(a, mode="raw"), lambda n, rng: (_floats(rng, (n, 3)),)),
    case("qr", lambda a: np.linalg.qr(a, mode="raw"), lambda n, rng: (_floats(rng, (2, 3, n), np.complex128),)),
    # eigh / eigvalsh
    case("eigh", lambda a: np.linalg.eigh(a), lambda n, rng: (_symmetric(rng, n),), rtol=1e-9, atol=1e-12),
    case("eigh", lambda a: np.linalg.eigh(a, UPLO="U"), lambda n, rng: (_symmetric(rng, n, np.complex128),),
         rtol=1e-9, atol=1e-12),
    case("eigvalsh", lambda a: np.linalg.eigvalsh(a), lambda n, rng: (_spd(rng, n, batch=(2,)),)),
    case("eigvalsh", lambda a: np.linalg.eigvalsh(a), lambda n, rng: (_hilbert(n),), rtol=1e-9, atol=1e-15),
    # eig / eigvals: a real matrix must have real eigenvalues (the dtype is fixed when kiln compiles).
    case("eig", lambda a: np.linalg.eig(a), lambda n, rng: (_symmetric(rng, n),), rtol=1e-9, atol=1e-12,
         note="real input needs real eigenvalues (as Numba)"),
    case("eig", lambda a: np.linalg.eig(a), lambda n, rng: (_floats(rng, (n, n), np.complex128),), rtol=1e-9,
         atol=1e-12),
    case("eigvals", lambda a: np.linalg.eigvals(a), lambda n, rng: (_spd(rng, n),), rtol=1e-9,
         note="real input needs real eigenvalues (as Numba)"),
    case("eigvals", lambda a: np.linalg.eigvals(a), lambda n, rng: (_floats(rng, (2, n, n), np.complex64),)),
    # svd
    case("svd", lambda a: np.linalg.svd(a), lambda n, rng: (_floats(rng, (n, 3)),), rtol=1e-9, atol=1e-12),
    case("svd", lambda a: np.linalg.svd(a, full_matrices=False), lambda n, rng: (_floats(rng, (4, n)),),
         rtol=1e-9, atol=1e-12),
    case("svd", lambda a: np.linalg.svd(a, compute_uv=False), lambda n, rng: (_floats(rng, (2, n, n)),)),
    case("svd", lambda a: np.linalg.svd(a, compute_uv=False), lambda n, rng: (_hilbert(n),), atol=1e-15),
    case("svd", lambda a: np.linalg.svd(a, full_matrices=False), lambda n, rng: (_floats(rng, (n, n), np.complex128),),
         rtol=1e-9, atol=1e-12),
    case("svdvals", lambda a: np.linalg.svdvals(a), lambda n, rng: (_floats(rng, (n, 3), np.float32),)),
    # lstsq: (x, residuals, rank, s); residuals exist only when rank == N < M.
    case("lstsq", lambda a, b: np.linalg.lstsq(a, b), lambda n, rng: (_floats(rng, (n, 3)), _floats(rng, n)),
         rtol=1e-9, atol=1e-12),
    case("lstsq", lambda a, b: np.linalg.lstsq(a, b, rcond=1e-3),
         lambda n, rng: (_floats(rng, (4, n)), _floats(rng, (4, 2))), rtol=1e-9, atol=1e-12),
    case("lstsq", lambda a, b: np.linalg.lstsq(a, b), lambda n, rng: (np.ones((n, 3)), _floats(rng, (n, 2))),
         rtol=1e-9, atol=1e-12, note="rank-deficient: no residuals"),
    # pinv, matrix_rank, matrix_power
    case("pinv", lambda a: np.linalg.pinv(a), lambda n, rng: (_floats(rng, (n, 3)),), rtol=1e-9, atol=1e-12),
    case("pinv", lambda a: np.linalg.pinv(a, rtol=None), lambda n, rng: (_floats(rng, (2, 4, n), np.complex128),),
         rtol=1e-9, atol=1e-12, sizes=(1, 5, 17)),
    case("matrix_rank", lambda a: np.linalg.matrix_rank(a), lambda n, rng: (_floats(rng, (n, 3)),)),
    case("matrix_rank", lambda a: np.linalg.matrix_rank(a),
         lambda n, rng: (np.outer(_floats(rng, n), _floats(rng, 4)),)),
    case("matrix_rank", lambda a: np.linalg.matrix_rank(a), lambda n, rng: (_hilbert(n),)),
    case("matrix_rank", lambda a: np.linalg.matrix_rank(a, hermitian=True), lambda n, rng: (_spd(rng, n),)),
    case("matrix_rank", lambda a: np.linalg.matrix_rank(a), lambda n, rng: (_floats(rng, n),)),
    case("matrix_power", lambda a: np.linalg.matrix_power(a, 5), lambda n, rng: (_floats(rng, (n, n)),)),
    case("matrix_power", lambda a: np.linalg.matrix_power(a, 0), lambda n, rng: (_floats(rng, (2, n, n)),)),
    case("matrix_power", lambda a: np.linalg.matrix_power(a, -2), lambda n, rng: (_well(rng, n),), rtol=1e-9),
    case("matrix_power", lambda a: np.linalg.matrix_power(a, 3), lambda n, rng: (_floats(rng, (n, n), np.int64),)),
    # norm: every order
    case("norm", lambda x: np.linalg.norm(x), lambda n, rng: (_floats(rng, (n, 3)),)),
    case("norm", lambda x: np.linalg.norm(x, 3), lambda n, rng: (_floats(rng, n),)),
    case("norm", lambda x: np.linalg.norm(x, np.inf), lambda n, rng: (_floats(rng, n, np.complex128),)),
    case("norm", lambda x: np.linalg.norm(x, 0), lambda n, rng: (_floats(rng, n, np.int64),)),
    case("norm", lambda x: np.linalg.norm(x, 1, axis=1, keepdims=True), lambda n, rng: (_floats(rng, (n, 4)),)),
    case("norm", lambda x: np.linalg.norm(x, "fro"), lambda n, rng: (_floats(rng, (n, 3), np.float32),)),
    case("norm", lambda x: np.linalg.norm(x, "nuc"), lambda n, rng: (_floats(rng, (n, 3)),)),
    case("norm", lambda x: np.linalg.norm(x, 2), lambda n, rng: (_floats(rng, (n, 3)),)),
    case("norm", lambda x: np.linalg.norm(x, -2), lambda n, rng: (_floats(rng, (3, n)),), sizes=(1, 5, 17)),
    case("norm", lambda x: np.linalg.norm(x, np.inf), lambda n, rng: (_floats(rng, (n, 3)),)),
    case("norm", lambda x: np.linalg.norm(x, -1, axis=(2, 0)), lambda n, rng: (_floats(rng, (3, 2, n)),),
         sizes=(1, 5, 17)),
    case("norm", lambda x: np.linalg.norm(x, 2, axis=(1, 2), keepdims=True),
         lambda n, rng: (_floats(rng, (2, n, 3)),)),
    # cond
    case("cond", lambda a: np.linalg.cond(a), lambda n, rng: (_floats(rng, (n, n)),), rtol=1e-9,
         note="empty matrices raise LinAlgError"),
    case("cond", lambda a: np.linalg.cond(a, -2), lambda n, rng: (_floats(rng, (n, 3)),), rtol=1e-9),
    case("cond", lambda a: np.linalg.cond(a, 1), lambda n, rng: (_well(rng, n),), rtol=1e-9),
    case("cond", lambda a: np.linalg.cond(a, "fro"), lambda n, rng: (_floats(rng, (2, n, n), np.complex128),),
         rtol=1e-9),
    case("cond", lambda a: np.linalg.cond(a, np.inf), lambda n, rng: (np.ones((n, n)),), rtol=1e-9,
         note="a singular matrix gives inf"),
]
