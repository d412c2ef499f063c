"""Stage "jaxpr": matrix decompositions of `np.linalg` (cholesky, solve, inv).

In: a traced square matrix (and right-hand sides). Out: a composition of
existing primitives: `for_loop`s over the columns whose bodies read and
write slices of traced size, with run-time `check`s that raise
`numpy.linalg.LinAlgError` as NumPy does (no new primitive: the loops lower
and interpret as any other).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.control_flow import for_loop
from kiln.core import KilnValueError
from kiln.numpy._base import check, operand, require_equal_dims
from kiln.numpy._bindings import knp
from kiln.tracing import Tracer

NOT_POSITIVE_DEFINITE = "Matrix is not positive definite"


def _float_dtype(dtype: np.dtype) -> np.dtype:
    """LAPACK's dtype for `dtype`: ints and bools compute in float64."""
    return dtype if dtype.kind in "fc" and dtype.itemsize >= 4 else np.dtype(np.float64)


def cholesky_loops(a: Any, upper: bool = False) -> Tracer:
    """`np.linalg.cholesky(a)`: the lower-triangular `L` with `L @ L.conj().T
    == a`, reading only the lower triangle of `a` (LAPACK potrf, column by
    column); `upper=True` gives `L.conj().T`. A matrix that is not positive
    definite (a pivot <= 0) raises `numpy.linalg.LinAlgError`."""
    a = operand(a)
    if a.aval.ndim != 2:
        raise KilnValueError(
            f"np.linalg.cholesky: kiln supports one 2-D matrix, got a {a.aval.ndim}-D array; for a stack of "
            "matrices, loop over it")
    require_equal_dims(a.aval.shape[0], a.aval.shape[1], "LinAlgError",
                       "Last 2 dimensions of the array must be square (np.linalg.cholesky of a {}x{} matrix)")
    dtype = _float_dtype(a.aval.dtype)
    a = knp.astype(a, dtype)
    n = a.aval.shape[0]
    lower = knp.zeros((n, n), dtype=dtype)
    complex_ = dtype.kind == "c"

    @for_loop(0, n, 1)
    def column(j):
        row = lower[j, :j]
        conj_row = knp.conjugate(row) if complex_ else row
        pivot = a[j, j] - knp.dot(row, conj_row)
        if complex_:
            pivot = knp.real(pivot)
        # A NaN pivot passes, as in NumPy (OpenBLAS's potrf tests `<= 0` only):
        # the NaNs then spread through the rest of the factor.
        check(knp.logical_not(pivot <= 0), "LinAlgError", NOT_POSITIVE_DEFINITE)
        diagonal = knp.sqrt(pivot)
        lower[j, j] = diagonal
        lower[j + 1:, j] = (a[j + 1:, j] - lower[j + 1:, :j] @ conj_row) / diagonal

    column()
    if upper:
        return knp.transpose(knp.conjugate(lower) if complex_ else lower).copy()
    return lower


SINGULAR = "Singular matrix"


def _pivot_size(x: Any) -> Any:
    """LAPACK's pivot measure (i?amax): |x| for reals, |re| + |im| for complex."""
    if x.aval.dtype.kind == "c":
        return knp.abs(knp.real(x)) + knp.abs(knp.imag(x))
    return knp.abs(x)


def _square(a: Any, fn: str) -> Any:
    a = operand(a)
    if a.aval.ndim != 2:
        raise KilnValueError(f"np.linalg.{fn}: kiln supports one 2-D matrix, got a {a.aval.ndim}-D array; for a "
                             "stack of matrices, loop over it")
    require_equal_dims(a.aval.shape[0], a.aval.shape[1], "LinAlgError",
                       f"Last 2 dimensions of the array must be square (np.linalg.{fn} of a {{}}x{{}} matrix)")
    return a


def solve_loops(a: Any, b: Any) -> Tracer:
    """`np.linalg.solve(a, b)`: `x` with `a @ x == b`, for `b` of shape (n,)
    or (n, k), by LU with partial pivoting (LAPACK gesv: the first largest
    pivot of each column, rows swapped, then forward elimination and back
    substitution). A zero pivot raises `numpy.linalg.LinAlgError`."""
    a = _square(a, "solve")
    b = operand(b)
    if b.aval.ndim not in (1, 2):
        raise KilnValueError(f"np.linalg.solve: b must be 1-D or 2-D, got a {b.aval.ndim}-D array")
    require_equal_dims(b.aval.shape[0], a.aval.shape[0], "ValueError",
                       "np.linalg.solve: b has {} rows but a has {}; they must match")
    dtype = _float_dtype(np.result_type(a.aval.dtype, b.aval.dtype))
    vector = b.aval.ndim == 1
    n = a.aval.shape[0]
    lu = knp.astype(a, dtype)
    x = knp.astype(knp.reshape(b, (n, 1)) if vector else b, dtype)

    @for_loop(0, n, 1)
    def eliminate(k):
        p = k + knp.argmax(_pivot_size(lu[k:, k]))
        check(knp.not_equal(lu[p, k], 0), "LinAlgError", SINGULAR)
        lu[[k, p]] = lu[[p, k]]
        x[[k, p]] = x[[p, k]]
        factors = lu[k + 1:, k] / lu[k, k]
        lu[k + 1:, k:] -= knp.outer(factors, lu[k, k:])
        x[k + 1:] -= knp.outer(factors, x[k])

    eliminate()

    @for_loop(0, n, 1)
    def substitute(i):
        k = n - 1 - i
        x[k] = (x[k] - lu[k, k + 1:] @ x[k + 1:]) / lu[k, k]

    substitute()
    return knp.reshape(x, (n,)) if vector else x


def inv_loops(a: Any) -> Tracer:
    """`np.linalg.inv(a)`: `solve(a, identity)`; a singular matrix raises
    `numpy.linalg.LinAlgError`."""
    a = _square(a, "inv")
    return solve_loops(a, knp.eye(a.aval.shape[0], dtype=_float_dtype(a.aval.dtype)))
