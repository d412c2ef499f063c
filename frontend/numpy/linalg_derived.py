"""Stage "jaxpr": `np.linalg` functions built on the LAPACK kernels: norm
(every order), cond, pinv, matrix_rank, matrix_power; np.roots (the
eigenvalues of the companion matrix) and np.polyfit (lstsq on the scaled
Vandermonde matrix).

In: traced arrays and static orders/exponents. Out: compositions of the
decompositions of kiln/numpy/lapack.py with reductions and matmuls, in the
order NumPy computes them (so that rounding agrees).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kiln.core import KilnTypeError, KilnValueError, is_static_dim
from kiln.errors import KilnLinAlgError
from kiln.numpy._base import check, convert, dims_equal, operand, require_equal_dims, shape_product
from kiln.numpy._bindings import knp, numpy_function
from kiln.numpy.lapack import (complex_eigenvalues, inverse, linalg_dtypes, lstsq, real_dtype, require_stacked,
                               singular_values, svd)
from kiln.trace_namespace import replace_in_traced_code
from kiln.tracing import Tracer

_NO_VALUE = object()


def _max_or_zero(s: Any, axis: int = -1, keepdims: bool = False) -> Any:
    """`s.max(axis, initial=0)` for non-negative `s` (an empty axis gives 0)."""
    pad_shape = list(s.aval.shape)
    pad_shape[axis] = 1
    padded = knp.concatenate([s, knp.zeros(tuple(pad_shape), dtype=s.aval.dtype)], axis=axis)
    return knp.max(padded, axis=axis, keepdims=keepdims)


def _normalize_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise KilnValueError(f"np.linalg.norm: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


@numpy_function("norm")
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tracer:
    """`np.linalg.norm(x, ord, axis, keepdims)`: vector norms of every order
    along one axis; matrix norms over two axes: 'fro', 'nuc', ±1, ±2 (from
    the singular values) and ±inf."""
    x = operand(x)
    if x.aval.dtype.kind not in "fc":
        x = convert(x, np.float64)
    ndim = x.aval.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and ndim == 2) or (ord == 2 and ndim == 1):
            if x.aval.dtype.kind == "c":  # as NumPy: the real parts' dot plus the imaginary parts'
                re, im = knp.real(x), knp.imag(x)
                result = knp.sqrt(knp.sum(re * re) + knp.sum(im * im))
            else:
                result = knp.sqrt(knp.sum(x * x))
            return knp.reshape(result, (1,) * ndim) if keepdims else result
        axis = tuple(range(ndim))
    elif not isinstance(axis, tuple):
        if not isinstance(axis, (int, np.integer)):
            raise KilnTypeError("'axis' must be None, an integer or a tuple of integers")
        axis = (int(axis),)
    magnitude = knp.abs(x)
    if len(axis) == 1:
        if isinstance(ord, str):
            raise KilnValueError(f"Invalid norm order '{ord}' for vectors")
        if ord == math.inf:
            return _max_or_zero(magnitude, axis[0], keepdims)
        if ord == -math.inf:
            return knp.min(magnitude, axis=axis, keepdims=keepdims)
        if ord == 0:
            nonzero = convert(knp.not_equal(x, 0), real_dtype(x.aval.dtype) if x.aval.dtype.kind == "c"
                              else x.aval.dtype)
            return knp.sum(nonzero, axis=axis, keepdims=keepdims)
        if ord == 1:
            return knp.sum(magnitude, axis=axis, keepdims=keepdims)
        if ord is None or ord == 2:
            squares = knp.real(knp.conjugate(x) * x) if x.aval.dtype.kind == "c" else x * x
            return knp.sqrt(knp.sum(squares, axis=axis, keepdims=keepdims))
        power = knp.sum(magnitude ** ord, axis=axis, keepdims=keepdims)
        return power ** (1.0 / ord)
    if len(axis) != 2:
        raise KilnValueError("Improper number of dimensions to norm.")
    row, col = _normalize_axis(axis[0], ndim), _normalize_axis(axis[1], ndim)
    if row == col:
        raise KilnValueError("Duplicate axes given.")
    if ord in (2, -2, "nuc"):
        s, _ = singular_values(_to_last_two(x, row, col), "norm")
        s = convert(s, real_dtype(x.aval.dtype))
        result = _max_or_zero(s) if ord == 2 else knp.min(s, axis=-1) if ord == -2 else knp.sum(s, axis=-1)
    elif ord in (1, -1):
        sums = knp.sum(magnitude, axis=row)
        pick = _max_or_zero if ord == 1 else (lambda v, a: knp.min(v, axis=a))
        result = pick(sums, col - 1 if col > row else col)
    elif ord in (math.inf, -math.inf):
        sums = knp.sum(magnitude, axis=col)
        pick = _max_or_zero if ord == math.inf else (lambda v, a: knp.min(v, axis=a))
        result = pick(sums, row - 1 if row > col else row)
    elif ord is None or ord in ("fro", "f"):
        squares = knp.real(knp.conjugate(x) * x) if x.aval.dtype.kind == "c" else x * x
        result = knp.sqrt(knp.sum(squares, axis=(row, col)))
    else:
        raise KilnValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(x.aval.shape)
        shape[row] = shape[col] = 1
        result = knp.reshape(result, tuple(shape))
    return result


def _to_last_two(x: Any, row: int, col: int) -> Any:
    """`x` with axes (row, col) moved to the end, in that order."""
    rest = [i for i in range(x.aval.ndim) if i not in (row, col)]
    return knp.transpose(x, (*rest, row, col))


@numpy_function("cond")
def cond(x: Any, p: Any = None) -> Tracer:
    """`np.linalg.cond(x, p)`: the ratio of extreme singular values (p None,
    ±2) or `norm(x, p) * norm(inv(x), p)`; a singular matrix gives inf."""
    x = require_stacked(x, "cond", False)
    m, n = x.aval.shape[-2:]
    matrix_size = shape_product((m, n))
    if is_static_dim(matrix_size):
        if matrix_size == 0:
            raise KilnLinAlgError("cond is not defined on empty arrays")
    else:
        check(knp.not_equal(matrix_size, 0), "LinAlgError", "cond is not defined on empty arrays")
    _, result = linalg_dtypes("cond", x)
    if p is None or p in (2, -2):
        s, result = singular_values(x, "cond")
        s = convert(s, real_dtype(result))
        first, last = s[..., 0], s[..., -1]
        r = first / last if p != -2 else last / first
    else:
        require_equal_dims(m, n, "LinAlgError", "Last 2 dimensions of the array must be square (np.linalg.cond "
                                                "of a {}x{} matrix)")
        inverse_x, _ = inverse(x, "cond", raise_singular=False)
        r = convert(norm(x, p, axis=(-2, -1)) * norm(inverse_x, p, axis=(-2, -1)), real_dtype(result))
    # A NaN from a singular matrix (not from NaNs in x) means an infinite condition number.
    nan_from_singular = knp.logical_and(knp.isnan(r), knp.logical_not(knp.any(knp.isnan(x), axis=(-2, -1))))
    return knp.where(nan_from_singular, convert(math.inf, r.aval.dtype), r)


@numpy_function("pinv")
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NO_VALUE) -> Tracer:
    """`np.linalg.pinv(a, rcond, rtol=)`: from the reduced SVD, singular
    values at most `rcond * max(s)` dropped."""
    a = require_stacked(a, "pinv", False)
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            m, n = a.aval.shape[-2:]
            biggest = knp.maximum(m, n) if not (is_static_dim(m) and is_static_dim(n)) else max(int(m), int(n))
            rcond = biggest * np.finfo(a.aval.dtype if a.aval.dtype.kind in "fc" else np.float64).eps
        else:
            rcond = rtol
    elif rtol is not _NO_VALUE:
        raise KilnValueError("`rtol` and `rcond` can't be both set.")
    rcond = convert(operand(rcond), np.float64)
    u, s, vt = svd(knp.conjugate(a), full_matrices=False, hermitian=hermitian)
    cutoff = knp.expand_dims(rcond, -1) * _max_or_zero(s, keepdims=True)
    large = knp.greater(s, cutoff)
    s = knp.where(large, knp.divide(convert(1, s.aval.dtype), s), convert(0, s.aval.dtype))
    return knp.matmul(knp.swapaxes(vt, -1, -2), knp.expand_dims(s, -1) * knp.swapaxes(u, -1, -2))


@numpy_function("matrix_rank")
def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Tracer:
    """`np.linalg.matrix_rank(A, tol, hermitian, rtol=)`: the singular values
    above `tol` (default `max(s) * max(M, N) * eps`)."""
    if rtol is not None and tol is not None:
        raise KilnValueError("`tol` and `rtol` can't be both set.")
    A = operand(A)
    if A.aval.ndim < 2:
        return convert(knp.logical_not(knp.all(knp.equal(A, 0))), np.int64)
    if hermitian:
        s = knp.abs(knp.eigvalsh(A))
    else:
        s, result = singular_values(A, "matrix_rank")
        s = convert(s, real_dtype(result))
    if tol is None:
        if rtol is None:
            m, n = A.aval.shape[-2:]
            eps = np.finfo(s.aval.dtype).eps
            if is_static_dim(m) and is_static_dim(n):
                rtol = s.aval.dtype.type(max(int(m), int(n))) * eps
            else:
                rtol = convert(knp.maximum(m, n), s.aval.dtype) * eps
        else:
            rtol = knp.expand_dims(operand(rtol), -1)
        tol = _max_or_zero(s, keepdims=True) * rtol
    else:
        tol = knp.expand_dims(operand(tol), -1)
    return knp.sum(knp.greater(s, tol), axis=-1)


@numpy_function("matrix_power")
def matrix_power(a: Any, n: Any) -> Tracer:
    """`np.linalg.matrix_power(a, n)` for a static int `n`: repeated
    squaring as NumPy (`inv` first when `n < 0`)."""
    a = require_stacked(a, "matrix_power", True)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise KilnTypeError("exponent must be an integer (np.linalg.matrix_power takes a Python int exponent: "
                            "kiln unrolls the squarings when it compiles)")
    n = int(n)
    if n == 0:
        identity = knp.eye(a.aval.shape[-1], dtype=a.aval.dtype)
        return knp.copy(knp.broadcast_to(identity, a.aval.shape))
    if n < 0:
        a = knp.inv(a)
        n = -n
    if n == 1:
        return a
    if n == 2:
        return knp.matmul(a, a)
    if n == 3:
        return knp.matmul(knp.matmul(a, a), a)
    z = result = None
    while n > 0:
        z = a if z is None else knp.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else knp.matmul(result, z)
    return result


@numpy_function("roots")
def roots(p: Any) -> Tracer:
    """`np.roots(p)`: NumPy's algorithm, the eigenvalues of the companion
    matrix of `p` with its leading and trailing zeros stripped (their counts,
    and so the result's length, are known when the code runs), followed by
    one 0 per trailing zero. kiln's result dtype is fixed when it compiles:
    complex (complex128, or complex64 for float32/complex64 coefficients) even
    when every root is real, where NumPy returns a real array then.

    >>> np.roots(np.array([1.0, -3.0, 2.0]))  # [2, 1] as complex128
    """
    p = operand(p)
    if p.aval.ndim == 0:
        p = knp.reshape(p, (1,))
    if p.aval.ndim != 1:
        raise KilnValueError(f"np.roots: Input must be a rank-1 array (got {p.aval.str_short()})")
    if p.aval.dtype.kind not in "fc":
        p = convert(p, np.dtype(np.float64))
    complex_dtype = np.result_type(p.aval.dtype, np.complex64)
    length = p.aval.shape[0]
    nonzero = knp.not_equal(p, 0)
    positions = knp.arange(length)
    found = knp.any(nonzero)
    # The first and last non-zero coefficients (length and -1 when there is none).
    sentinel = knp.full(1, -1, dtype=positions.aval.dtype)
    first = length - 1 - knp.max(knp.concatenate([knp.where(nonzero, length - 1 - positions, -1), sentinel]))
    last = knp.max(knp.concatenate([knp.where(nonzero, positions, -1), sentinel]))
    degree = knp.maximum(last - first, 0)  # the companion matrix's size
    trailing = knp.where(found, length - 1 - last, 0)
    lead = knp.sum(knp.where(knp.equal(positions, first), p, 0))
    # -p[first+1 : last+1] / p[first], the companion matrix's first row.
    row = knp.negative(p[knp.minimum(first + 1, length):knp.maximum(last + 1, 0)]) / lead
    rows = knp.reshape(knp.arange(degree), (-1, 1))
    companion = knp.where(knp.equal(rows, 0), knp.reshape(row, (1, -1)),
                          knp.eye(degree, degree, -1, dtype=p.aval.dtype))
    values = complex_eigenvalues(companion, "roots")
    return knp.concatenate([values, knp.zeros(trailing, dtype=complex_dtype)])


# NumPy's np.roots would iterate the traced coefficients before kiln could answer.
replace_in_traced_code(np.roots, roots)


def _same_length(a: Any, b: Any, message: str) -> None:
    """Dims `a` and `b` are equal, else NumPy's TypeError (at trace time when both are
    static, else when the call runs)."""
    if is_static_dim(a) and is_static_dim(b):
        if int(a) != int(b):
            raise KilnTypeError(message)
        return
    check(dims_equal(a, b), "TypeError", message)


@numpy_function("polyfit")
def polyfit(x: Any, y: Any, deg: Any, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """`np.polyfit(x, y, deg, rcond, full, w)`: NumPy's algorithm, least squares
    (`np.linalg.lstsq`) on the Vandermonde matrix of `x` (weighted rows with `w`)
    whose columns are scaled to unit norm, the coefficients unscaled after; highest
    power first. `deg` is a Python int. An empty `x` raises TypeError when the call
    runs. Not done: `cov=` (a TypeError naming it), and NumPy's RankWarning for a
    rank-deficient fit (the coefficients are NumPy's).

    >>> np.polyfit(np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 5.0]), 1)  # [2, 1]
    """
    if cov is not False:
        raise KilnTypeError("np.polyfit: cov= is not supported by kiln; compute the covariance from "
                            "np.linalg.inv of the scaled normal matrix, or call polyfit outside kiln.qjit")
    if not isinstance(deg, (int, np.integer)):
        raise KilnTypeError(f"np.polyfit: deg must be a Python int (the number of coefficients fixes the "
                            f"result's shape); got {type(deg).__name__}. Pass it as a constant or mark it "
                            "static (static_argnums)")
    order = int(deg) + 1
    x = knp.add(operand(x), 0.0)
    y = knp.add(operand(y), 0.0)
    if deg < 0:
        raise KilnValueError("expected deg >= 0")
    if x.aval.ndim != 1:
        raise KilnTypeError("expected 1D vector for x")
    n = x.aval.shape[0]
    if is_static_dim(n):
        if int(n) == 0:
            raise KilnTypeError("expected non-empty vector for x")
    else:
        check(knp.greater(n, 0), "TypeError", "expected non-empty vector for x")
    if y.aval.ndim not in (1, 2):
        raise KilnTypeError("expected 1D or 2D array for y")
    _same_length(n, y.aval.shape[0], "expected x and y to have same length")
    if rcond is None:
        eps = np.finfo(x.aval.dtype).eps
        rcond = knp.multiply(n, eps) if not is_static_dim(n) else int(n) * eps
    lhs = knp.vander(x, order)
    rhs = y
    if w is not None:
        w = knp.add(operand(w), 0.0)
        if w.aval.ndim != 1:
            raise KilnTypeError("expected a 1-d array for weights")
        _same_length(w.aval.shape[0], y.aval.shape[0], "expected w and y to have the same length")
        lhs = lhs * knp.reshape(w, (-1, 1))
        rhs = rhs * (knp.reshape(w, (-1, 1)) if rhs.aval.ndim == 2 else w)
    scale = knp.sqrt(knp.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = knp.transpose(knp.transpose(c) / scale)
    if full:
        return c, resids, rank, s, rcond
    return c
