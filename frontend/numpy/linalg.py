"""Stage "jaxpr": dot, matmul, vdot, inner, outer, diag.

In: traced arrays. Out: dot_general tracers (inner dims that are dynamic
get a run-time check, static mismatches raise at trace time), diagonals by
gather and scatter (np.linalg.norm is in linalg_derived.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.core import KilnTypeError, KilnValueError, is_static_dim, same_dim
from kiln.numpy._base import broadcast_shapes, broadcast_to, operand, promote, require_equal_dims
from kiln.numpy._bindings import knp, numpy_function, tracer_method
from kiln.numpy.mutation import inplace
from kiln.primitives import linalg
from kiln.tracing import Tracer, bind


def _check_inner(fn: str, a: Any, b: Any, la, lb) -> None:
    if same_dim(a, b):
        return
    if is_static_dim(a) and is_static_dim(b):
        raise KilnValueError(
            f"{fn}: inner dimensions do not match: {la} (size {a}) vs {lb} (size {b})")
    require_equal_dims(a, b, "ValueError", f"{fn}: inner dimensions do not match ({{}} vs {{}})")


def _dot_general(lhs, rhs, contract, batch=((), ())):
    return bind(linalg.dot_general_p, lhs, rhs, dimension_numbers=(contract, batch))


def _into_out(fn: str, result: Tracer, out: Any, exact_dtype: bool) -> Tracer:
    """`out=` of matmul / dot: `out` must have the result's shape (and, for
    dot, its dtype exactly, as NumPy's dot demands); the result is written into it."""
    from kiln.numpy.mutation import write_out

    out_op = operand(out)
    if out_op.aval.ndim != result.aval.ndim:
        raise KilnValueError(f"np.{fn}: output array has {out_op.aval.ndim} dimensions, the result "
                             f"{result.aval.ndim}; give out the result's shape")
    for i, (d, r) in enumerate(zip(out_op.aval.shape, result.aval.shape)):
        require_equal_dims(d, r, "ValueError", f"np.{fn}: output array has size {{}} on axis {i}, the "
                           f"result {{}}; give out the result's shape")
    if exact_dtype and out_op.aval.dtype != result.aval.dtype:
        raise KilnValueError(f"np.dot: output array is not acceptable (must have the right datatype "
                             f"{result.aval.dtype}, not {out_op.aval.dtype})")
    write_out(f"np.{fn}", result, out)
    return out


@numpy_function("matmul")
def matmul(a: Any, b: Any, out: Any = None) -> Tracer:
    """`a @ b` with NumPy's rules for 1-D operands and broadcast batch dims
    (`out=` writes the result into an array of its shape, same_kind casting)."""
    if out is not None:
        return _into_out("matmul", matmul(a, b), out, exact_dtype=False)
    a, b = promote(a, b)
    if a.aval.ndim == 0 or b.aval.ndim == 0:
        raise KilnValueError("matmul: input operand does not have enough dimensions (use * for scalars)")
    from kiln.numpy.shape_ops import expand_dims, squeeze

    a_vec, b_vec = a.aval.ndim == 1, b.aval.ndim == 1
    if a_vec:
        a = expand_dims(a, 0)
    if b_vec:
        b = expand_dims(b, -1)
    _check_inner("matmul", a.aval.shape[-1], b.aval.shape[-2], "a.shape[-1]", "b.shape[-2]")
    batch = broadcast_shapes([a.aval.shape[:-2], b.aval.shape[:-2]], "matmul")
    a = broadcast_to(a, batch + a.aval.shape[-2:])
    b = broadcast_to(b, batch + (a.aval.shape[-1], b.aval.shape[-1]))
    nb = len(batch)
    out = _dot_general(a, b, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    if a_vec:
        out = squeeze(out, -2)
    if b_vec:
        out = squeeze(out, -1)
    return out


@numpy_function("dot", method="dot")
def dot(a: Any, b: Any, out: Any = None) -> Tracer:
    if out is not None:
        return _into_out("dot", dot(a, b), out, exact_dtype=True)
    a, b = promote(a, b)
    if a.aval.ndim == 0 or b.aval.ndim == 0:
        return a * b
    if b.aval.ndim == 1 or a.aval.ndim == 1 and b.aval.ndim <= 2:
        # Checked here so that a mismatch is reported as dot's; matmul then finds it proven.
        _check_inner("dot", a.aval.shape[-1], b.aval.shape[0 if b.aval.ndim == 1 else -2], "a.shape[-1]",
                     "b.shape[0]" if b.aval.ndim == 1 else "b.shape[-2]")
        return matmul(a, b)
    _check_inner("dot", a.aval.shape[-1], b.aval.shape[-2], "a.shape[-1]", "b.shape[-2]")
    return _dot_general(a, b, ((a.aval.ndim - 1,), (b.aval.ndim - 2,)))


@numpy_function("vdot")
def vdot(a: Any, b: Any) -> Tracer:
    from kiln.numpy.shape_ops import ravel

    from kiln.numpy._bindings import FUNCTIONS

    # NumPy conjugates the first argument (a no-op for real dtypes).
    a, b = FUNCTIONS["conjugate"](ravel(a)), ravel(b)
    _check_inner("vdot", a.aval.shape[0], b.aval.shape[0], "a.size", "b.size")
    return dot(a, b)


@numpy_function("inner")
def inner(a: Any, b: Any) -> Tracer:
    a, b = promote(a, b)
    if a.aval.ndim == 0 or b.aval.ndim == 0:
        return a * b
    _check_inner("inner", a.aval.shape[-1], b.aval.shape[-1], "a.shape[-1]", "b.shape[-1]")
    return _dot_general(a, b, ((a.aval.ndim - 1,), (b.aval.ndim - 1,)))


@numpy_function("outer")
def outer(a: Any, b: Any) -> Tracer:
    from kiln.numpy.shape_ops import expand_dims, ravel

    return expand_dims(ravel(a), 1) * expand_dims(ravel(b), 0)


@numpy_function("diag")
def diag(v: Any, k: int = 0) -> Tracer:
    """`np.diag`: the k-th diagonal of a matrix (a copy), or a square matrix
    with a vector on its k-th diagonal."""
    v = operand(v)
    if not isinstance(k, (int, np.integer)):
        raise KilnTypeError("np.diag: the diagonal offset k must be a Python int (a static value)")
    k = int(k)
    row0, col0 = max(-k, 0), max(k, 0)
    if v.aval.ndim == 1:
        n = v.aval.shape[0]
        out = knp.zeros((n + abs(k), n + abs(k)), dtype=v.aval.dtype)
        i = knp.arange(n)
        out[i + row0, i + col0] = v
        return out
    if v.aval.ndim != 2:
        raise KilnValueError("np.diag: input must be 1-d or 2-d")
    rows, cols = v.aval.shape
    length = knp.maximum(knp.minimum(rows - row0, cols - col0), 0)
    i = knp.arange(length)
    from kiln.numpy.shape_ops import reshape

    return reshape(v, -1)[(i + row0) * cols + i + col0]


@tracer_method("__matmul__")
def _matmul_operator(self, other):
    return matmul(self, other)


@tracer_method("__rmatmul__")
def _rmatmul_operator(self, other):
    return matmul(other, self)


@tracer_method("__imatmul__")
def _imatmul_operator(self, other):
    return inplace(self, matmul(self, other), "matmul")
