"""Stage "jaxpr": arrays NumPy builds from sizes or from a vector (tri,
tril/triu_indices and their *_from forms, vander, the window functions
bartlett, blackman, hamming, hanning, kaiser), and asfortranarray.

In: sizes (static or traced ints), arrays. Out: tracers; the index
functions return arrays whose length is known when the program runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.control_flow import for_loop
from kiln.core import INDEX_DTYPE, KilnTypeError, KilnValueError, is_static_dim
from kiln.numpy._base import broadcast_to, canonical_dtype, convert, materialize, operand
from kiln.numpy._bindings import knp, numpy_function
from kiln.numpy.creation import _creation
from kiln.tracing import Tracer


def _size(n: Any, fn: str) -> Any:
    if isinstance(n, Tracer):
        if n.aval.shape != () or n.aval.dtype.kind not in "iu":
            raise KilnTypeError(f"np.{fn}: sizes must be integers, got a traced {n.aval.str_short()}")
        return n
    if not isinstance(n, (int, np.integer)):
        raise KilnTypeError(f"np.{fn}: sizes must be integers, got {type(n).__name__}")
    return int(n)


def _grid(rows: Any, cols: Any) -> tuple[Tracer, Tracer]:
    """Row and column numbers of a rows x cols grid."""
    r = knp.reshape(knp.arange(0, rows, dtype=INDEX_DTYPE), (-1, 1))
    c = knp.reshape(knp.arange(0, cols, dtype=INDEX_DTYPE), (1, -1))
    return broadcast_to(r, (rows, cols)), broadcast_to(c, (rows, cols))


@_creation("tri")
def tri(N: Any, M: Any = None, k: Any = 0, dtype: Any = float, *, like: Any = None) -> Tracer:
    """Ones at and below diagonal `k` of an N x M array, zeros above."""
    N = knp.maximum(_size(N, "tri"), 0) if isinstance(N, Tracer) else max(_size(N, "tri"), 0)
    M = N if M is None else (knp.maximum(M, 0) if isinstance(M, Tracer) else max(_size(M, "tri"), 0))
    rows, cols = _grid(N, M)
    return knp.less_equal(cols, rows + k).astype(canonical_dtype(dtype))


def _indices(mask: Tracer) -> tuple[Tracer, Tracer]:
    rows, cols = knp.nonzero(mask)
    return rows, cols


@_creation("tril_indices")
def tril_indices(n: Any, k: Any = 0, m: Any = None) -> tuple[Tracer, Tracer]:
    """The (row, col) positions at and below diagonal `k`, in row-major order."""
    return _indices(tri(n, m, k, dtype=bool))


@_creation("triu_indices")
def triu_indices(n: Any, k: Any = 0, m: Any = None) -> tuple[Tracer, Tracer]:
    """The (row, col) positions at and above diagonal `k`, in row-major order."""
    return _indices(knp.logical_not(tri(n, m, k - 1, dtype=bool)))


def _square_from(arr: Any, fn: str) -> Tracer:
    arr = operand(arr)
    if arr.aval.ndim != 2:
        raise KilnValueError("input array must be 2-d")
    return arr


@numpy_function("tril_indices_from")
def tril_indices_from(arr: Any, k: Any = 0) -> tuple[Tracer, Tracer]:
    arr = _square_from(arr, "tril_indices_from")
    return tril_indices(arr.aval.shape[-2], k=k, m=arr.aval.shape[-1])


@numpy_function("triu_indices_from")
def triu_indices_from(arr: Any, k: Any = 0) -> tuple[Tracer, Tracer]:
    arr = _square_from(arr, "triu_indices_from")
    return triu_indices(arr.aval.shape[-2], k=k, m=arr.aval.shape[-1])


@numpy_function("vander")
def vander(x: Any, N: Any = None, increasing: bool = False) -> Tracer:
    """Columns x**0, x**1, ... (reversed unless `increasing`), each power a
    running product as NumPy computes it (so rounding agrees)."""
    x = materialize(x)
    if x.aval.ndim != 1:
        raise KilnValueError("x must be a one-dimensional array or sequence.")
    n = x.aval.shape[0]
    N = n if N is None else _size(N, "vander")
    dtype = np.promote_types(x.aval.dtype, np.int64)
    x = convert(x, dtype)
    columns = broadcast_to(knp.reshape(x, (-1, 1)), (n, knp.maximum(N - 1, 0) if isinstance(N, Tracer)
                                                         else max(N - 1, 0)))
    ones = knp.ones((n, knp.minimum(N, 1) if isinstance(N, Tracer) else min(N, 1)), dtype=dtype)
    powers = knp.cumprod(knp.concatenate((ones, columns), axis=1), axis=1)
    return powers if increasing else knp.flip(powers, 1)


def _window_positions(M: Any, fn: str) -> tuple[Any, Tracer]:
    """(M, the float64 positions 1 - M, 3 - M, ..., M - 1): M points, none when M < 1."""
    M = _size(M, fn)
    return M, knp.arange(1 - M, M, 2).astype(np.float64) if isinstance(M, Tracer) else \
        knp.asarray(np.arange(1 - M, M, 2), dtype=np.float64)


def _one_point(M: Any, values: Tracer) -> Tracer:
    """NumPy's windows of one point are [1.0] (the formulas divide 0 by 0 there)."""
    return knp.where(knp.equal(M, 1), 1.0, values)


def _cosine_window(M: Any, fn: str, coefficients: tuple) -> Tracer:
    M, n = _window_positions(M, fn)
    phase = knp.divide(knp.multiply(np.pi, n), knp.subtract(M, 1.0))
    total = coefficients[0] + knp.zeros_like(n)
    for order, c in enumerate(coefficients[1:], start=1):
        total = knp.add(total, knp.multiply(c, knp.cos(knp.multiply(float(order), phase))))
    return _one_point(M, total)


@_creation("bartlett")
def bartlett(M: Any) -> Tracer:
    """The triangular window of M points."""
    M, n = _window_positions(M, "bartlett")
    ratio = knp.divide(n, knp.subtract(M, 1.0))
    return _one_point(M, knp.where(knp.less_equal(n, 0), knp.add(1.0, ratio), knp.subtract(1.0, ratio)))


@_creation("blackman")
def blackman(M: Any) -> Tracer:
    return _cosine_window(M, "blackman", (0.42, 0.5, 0.08))


@_creation("hamming")
def hamming(M: Any) -> Tracer:
    return _cosine_window(M, "hamming", (0.54, 0.46))


@_creation("hanning")
def hanning(M: Any) -> Tracer:
    return _cosine_window(M, "hanning", (0.5, 0.5))


def _i0(x: Tracer) -> Tracer:
    """The modified Bessel function of order 0 for x >= 0: its power series
    sum ((x/2)^k / k!)^2 (200 terms: float64-exact up to x = 140), and its
    asymptotic form e^x / sqrt(2 pi x) (1 + 1/(8x) + 9/(128x^2) + 225/(3072x^3)) beyond."""
    half = knp.multiply(x, 0.5)

    @for_loop(1, 201, 1)
    def series(k, term, total):
        term = knp.multiply(term, knp.square(knp.divide(half, k.astype(np.float64))))
        return term, knp.add(total, term)

    _, total = series(knp.ones_like(x), knp.ones_like(x))
    big = knp.maximum(x, 1.0)
    inv = knp.divide(1.0, big)
    tail = knp.add(1.0, knp.multiply(inv, knp.add(0.125, knp.multiply(inv, knp.add(
        9.0 / 128.0, knp.multiply(inv, 225.0 / 3072.0))))))
    asymptotic = knp.multiply(knp.divide(knp.exp(big), knp.sqrt(knp.multiply(2 * np.pi, big))), tail)
    return knp.where(knp.greater(x, 140.0), asymptotic, total)


@_creation("kaiser")
def kaiser(M: Any, beta: Any) -> Tracer:
    """The Kaiser window: i0(beta sqrt(1 - ((n - alpha) / alpha)^2)) / i0(beta), alpha = (M - 1) / 2."""
    M = _size(M, "kaiser")
    n = knp.arange(0, M).astype(np.float64) if isinstance(M, Tracer) else \
        knp.asarray(np.arange(0, M), dtype=np.float64)
    alpha = knp.divide(knp.subtract(M, 1.0), 2.0)
    beta = convert(operand(beta), np.float64)
    ratio = knp.divide(knp.subtract(n, alpha), alpha)
    values = knp.divide(_i0(knp.multiply(beta, knp.sqrt(knp.subtract(1.0, knp.square(ratio))))),
                        _i0(knp.abs(beta) + knp.zeros((), np.float64)))
    return _one_point(M, values)


@_creation("asfortranarray")
def asfortranarray(a: Any, dtype: Any = None, *, like: Any = None) -> Tracer:
    """The values of `a` as a new array (kiln lays arrays out in C order;
    the values, and every result computed from them, are NumPy's)."""
    a = materialize(a)
    result = knp.copy(a) if dtype is None else knp.asarray(a, dtype=dtype)
    return knp.reshape(result, (1,)) if result.aval.ndim == 0 else result
