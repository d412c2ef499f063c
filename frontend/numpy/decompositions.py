"""Stage "jaxpr": matrix decompositions of `np.linalg` (cholesky).

In: a traced square matrix. Out: a composition of existing primitives: one
`for_loop` over the columns whose body reads and writes slices of traced
size, with a run-time `check` that raises `numpy.linalg.LinAlgError` as
NumPy does (no new primitive: the loop lowers and interprets as any other).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.control_flow import for_loop
from kiln.core import KilnValueError
from kiln.numpy._base import check, operand, require_equal_dims
from kiln.numpy._bindings import knp, numpy_function
from kiln.tracing import Tracer

NOT_POSITIVE_DEFINITE = "Matrix is not positive definite"


def _float_dtype(dtype: np.dtype) -> np.dtype:
    """LAPACK's dtype for `dtype`: ints and bools compute in float64."""
    return dtype if dtype.kind in "fc" and dtype.itemsize >= 4 else np.dtype(np.float64)


@numpy_function("cholesky")
def cholesky(a: Any, upper: bool = False) -> Tracer:
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
