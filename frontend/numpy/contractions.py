"""Stage "jaxpr": sums of products over named axes (einsum, tensordot,
trace, kron, cross).

In: traced arrays (and, for einsum, its subscripts string, static).
Out: tracers. einsum contracts its operands pairwise, each pair as one
`dot_general` (a matmul / BLAS call after lowering) over the axes the pair
shares, in an order that keeps the intermediates small.
"""

from __future__ import annotations

import string
from typing import Any, Sequence

import numpy as np

from kiln.core import KilnTypeError, KilnValueError, is_static_dim, same_dim
from kiln.numpy._base import broadcast_shapes, broadcast_to, check, materialize, promote, require_equal_dims
from kiln.numpy._bindings import knp, numpy_function
from kiln.primitives import linalg as linalg_prims
from kiln.tracing import Tracer, bind


def _dot_general(lhs: Tracer, rhs: Tracer, contract: tuple, batch: tuple = ((), ())) -> Tracer:
    return bind(linalg_prims.dot_general_p, lhs, rhs, dimension_numbers=(contract, batch))


def _same_sizes(fn: str, a: Any, b: Any, what: str) -> None:
    if is_static_dim(a) and is_static_dim(b) and a != b:
        raise KilnValueError(f"{fn}: {what} do not match (sizes {a} and {b})")
    if not same_dim(a, b):
        require_equal_dims(a, b, "ValueError", f"{fn}: {what} do not match (sizes {{}} and {{}})")


@numpy_function("trace")
def trace(a: Any, offset: Any = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: Any = None) -> Tracer:
    """The sum of the diagonal `offset` of the plane (axis1, axis2)."""
    if out is not None:
        raise KilnTypeError("np.trace: out= is not supported by kiln; assign the result instead")
    return knp.sum(knp.diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


@numpy_function("kron")
def kron(a: Any, b: Any) -> Tracer:
    """Every element of `a` times the whole of `b`, laid out block by block."""
    a, b = promote(materialize(a), materialize(b))
    ndim = max(a.aval.ndim, b.aval.ndim)
    a = knp.reshape(a, (1,) * (ndim - a.aval.ndim) + tuple(a.aval.shape))
    b = knp.reshape(b, (1,) * (ndim - b.aval.ndim) + tuple(b.aval.shape))
    spread_a = knp.reshape(a, tuple(d for n in a.aval.shape for d in (n, 1)))
    spread_b = knp.reshape(b, tuple(d for n in b.aval.shape for d in (1, n)))
    return knp.reshape(spread_a * spread_b, tuple(m * n for m, n in zip(a.aval.shape, b.aval.shape)))


@numpy_function("cross")
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None) -> Tracer:
    """The cross product of 3-vectors (a 2-vector has a zero third component;
    two 2-vectors give the scalar z component) along the vectors' axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(materialize(a), materialize(b))
    a, b = knp.moveaxis(a, axisa, -1), knp.moveaxis(b, axisb, -1)
    na, nb = _vector_length(a), _vector_length(b)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    zero = knp.zeros((), dtype=a.aval.dtype)
    a2 = a[..., 2] if na == 3 else zero
    b2 = b[..., 2] if nb == 3 else zero
    parts = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    shape = broadcast_shapes([p.aval.shape for p in parts], "cross")
    result = knp.stack([broadcast_to(p, shape) for p in parts], axis=-1)
    return knp.moveaxis(result, -1, axisc)


def _vector_length(x: Tracer) -> int:
    """2 or 3: the static length of x's vectors; a length known only at run
    time is taken as 3 and checked when the function runs (the result's
    shape depends on it)."""
    n = x.aval.shape[-1]
    if is_static_dim(n):
        if n not in (2, 3):
            raise KilnValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
        return int(n)
    check(knp.equal(n, 3), "ValueError", "np.cross: kiln compiled this cross product for 3-vectors (their length "
          "was not known when it compiled) but a vector has length {}; give 2-vectors a static length "
          "(a constant or a slice such as x[..., :2]) to use them", n)
    return 3


@numpy_function("tensordot")
def tensordot(a: Any, b: Any, axes: Any = 2) -> Tracer:
    """Sum over `axes` of `a` and `b` (the last N of a and the first N of b,
    or two lists of axes); the result's axes are a's free axes then b's."""
    a, b = promote(materialize(a), materialize(b))
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(a.aval.ndim, b.aval.ndim):
            raise KilnValueError("np.tensordot: shape-mismatch for sum")
        axes_a, axes_b = list(range(a.aval.ndim - n, a.aval.ndim)), list(range(n))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise KilnValueError("np.tensordot: shape-mismatch for sum")
    axes_a = [ax % a.aval.ndim for ax in axes_a]
    axes_b = [ax % b.aval.ndim for ax in axes_b]
    for x, y in zip(axes_a, axes_b):
        _same_sizes("np.tensordot", a.aval.shape[x], b.aval.shape[y], "shape-mismatch for sum: summed axes")
    return _dot_general(a, b, (tuple(axes_a), tuple(axes_b)))


# --------------------------------------------------------------------------
# einsum


def _parse(subscripts: str, ndims: Sequence[int]) -> tuple[list[str], str]:
    """(input labels per operand, output labels), '...' expanded into fresh letters."""
    if not isinstance(subscripts, str):
        raise KilnTypeError("np.einsum: kiln supports the subscripts-string form (einsum('ij,jk->ik', a, b))")
    text = subscripts.replace(" ", "")
    lhs, arrow, out = text.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise KilnValueError(f"np.einsum: {len(inputs)} operand subscripts for {len(ndims)} operands")
    used = set(text) - set(".,->")
    for ch in used:
        if ch not in string.ascii_letters:
            raise KilnValueError(f"np.einsum: invalid subscript {ch!r} in einstein sum subscripts string, "
                                 "subscripts must be letters")
    spare = [c for c in string.ascii_letters if c not in used]
    ellipsis_rank = max((nd - len(s.replace("...", "")) for s, nd in zip(inputs, ndims) if "..." in s), default=0)
    ellipsis = "".join(spare[:ellipsis_rank])
    expanded = []
    for s, nd in zip(inputs, ndims):
        if "..." in s:
            rank = nd - len(s.replace("...", ""))
            s = s.replace("...", ellipsis[ellipsis_rank - rank:] if rank else "")
        if len(s) != nd:
            raise KilnValueError(f"np.einsum: operand has {nd} dimensions but subscripts {s!r} name {len(s)}")
        expanded.append(s)
    if arrow:
        out = out.replace("...", ellipsis)
        for ch in out:
            if out.count(ch) > 1:
                raise KilnValueError(f"np.einsum: output subscript {ch!r} appears more than once")
            if not any(ch in s for s in expanded):
                raise KilnValueError(f"np.einsum: output subscript {ch!r} does not appear in the inputs")
    else:
        counts = {}
        for s in expanded:
            for ch in s:
                counts[ch] = counts.get(ch, 0) + 1
        out = ellipsis + "".join(sorted(ch for ch, c in counts.items() if c == 1 and ch not in ellipsis))
    return expanded, out


def _take_diagonals(x: Tracer, labels: str) -> tuple[Tracer, str]:
    """A label repeated within one operand ('ii') keeps only the diagonal."""
    while True:
        repeated = next((ch for ch in labels if labels.count(ch) > 1), None)
        if repeated is None:
            return x, labels
        i = labels.index(repeated)
        j = labels.index(repeated, i + 1)
        _same_sizes("np.einsum", x.aval.shape[i], x.aval.shape[j], f"sizes of the repeated subscript {repeated!r}")
        x = knp.diagonal(x, 0, i, j)
        labels = "".join(ch for k, ch in enumerate(labels) if k not in (i, j)) + repeated


def _sum_out(x: Tracer, labels: str, keep: set[str]) -> tuple[Tracer, str]:
    drop = tuple(k for k, ch in enumerate(labels) if ch not in keep)
    if not drop:
        return x, labels
    return knp.sum(x, axis=drop, dtype=x.aval.dtype), "".join(ch for ch in labels if ch in keep)


def _contract(x: Tracer, xl: str, y: Tracer, yl: str, keep: set[str]) -> tuple[Tracer, str]:
    """One pairwise step: shared labels still needed are batch axes, shared
    labels needed nowhere else are summed by the dot_general."""
    shared = [ch for ch in xl if ch in yl]
    batch = [ch for ch in shared if ch in keep]
    summed = [ch for ch in shared if ch not in keep]
    for ch in shared:
        dx, dy = x.aval.shape[xl.index(ch)], y.aval.shape[yl.index(ch)]
        if is_static_dim(dx) and dx == 1 and not (is_static_dim(dy) and dy == 1):
            x = broadcast_to(x, tuple(dy if c == ch else d for c, d in zip(xl, x.aval.shape)))
        elif is_static_dim(dy) and dy == 1 and not (is_static_dim(dx) and dx == 1):
            y = broadcast_to(y, tuple(dx if c == ch else d for c, d in zip(yl, y.aval.shape)))
        else:
            _same_sizes("np.einsum", dx, dy, f"sizes of subscript {ch!r}")
    result = _dot_general(x, y, (tuple(xl.index(c) for c in summed), tuple(yl.index(c) for c in summed)),
                          (tuple(xl.index(c) for c in batch), tuple(yl.index(c) for c in batch)))
    labels = "".join(batch) + "".join(c for c in xl if c not in shared) + "".join(c for c in yl if c not in shared)
    return result, labels


def _cost(xl: str, yl: str, sizes: dict[str, Any]) -> tuple[int, int]:
    """Order key of a pair: the intermediate's size (static dims; a dynamic
    dim counts as large), then fewer labels left."""
    labels = set(xl) | set(yl)
    size = 1
    for ch in labels:
        d = sizes.get(ch)
        size *= int(d) if is_static_dim(d) else 1024
    return size, len(labels)


@numpy_function("einsum")
def einsum(subscripts: Any, *operands: Any, out: Any = None, dtype: Any = None, order: str = "K",
           casting: str = "safe", optimize: Any = False) -> Tracer:
    """`np.einsum(subscripts, *operands)`: diagonals for repeated labels,
    labels found in one operand only summed first, then pairwise contractions
    (dot_general, i.e. matmul) choosing at each step the pair whose product
    is smallest, then the output's order."""
    if out is not None or dtype is not None:
        raise KilnTypeError("np.einsum: out= and dtype= are not supported by kiln; convert or assign the result")
    ops = list(promote(*[materialize(o) for o in operands])) if len(operands) > 1 else [materialize(operands[0])]
    labels, output = _parse(subscripts, [o.aval.ndim for o in ops])
    terms = []
    for x, xl in zip(ops, labels):
        x, xl = _take_diagonals(x, xl)
        terms.append((x, xl))
    sizes: dict[str, Any] = {}
    for x, xl in terms:
        for ch, d in zip(xl, x.aval.shape):
            if ch not in sizes or (is_static_dim(sizes[ch]) and sizes[ch] == 1):
                sizes[ch] = d

    def needed(exclude: int | tuple) -> set[str]:
        skip = exclude if isinstance(exclude, tuple) else (exclude,)
        return set(output).union(*(set(tl) for k, (_, tl) in enumerate(terms) if k not in skip))

    terms = [_sum_out(x, xl, needed(k)) for k, (x, xl) in enumerate(terms)]
    while len(terms) > 1:
        pairs = [(i, j) for i in range(len(terms)) for j in range(i + 1, len(terms))]
        i, j = min(pairs, key=lambda p: _cost(terms[p[0]][1], terms[p[1]][1], sizes))
        keep = needed((i, j))
        combined = _contract(*terms[i], *terms[j], keep)
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [combined]
    x, xl = _sum_out(*terms[0], set(output))
    if xl != output:
        x = knp.transpose(x, tuple(xl.index(ch) for ch in output))
    return x if x.aval.ndim else materialize(x)
