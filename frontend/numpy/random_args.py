"""Stage "jaxpr": the arguments of traced random draws, read as NumPy reads
them (kiln/numpy/random.py and random_vectors.py share these).

In: `size` and distribution parameters as the user passes them (Python
numbers, lists, NumPy arrays, tracers). Out: shapes, static-or-traced tests
and traced parameters of the right dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.numpy._base import convert, operand
from kiln.numpy._bindings import knp, traced
from kiln.tracing import Tracer


def _size_shape(size: Any) -> tuple | None:
    """`size` as a shape (None: one value, returned as a 0-d array)."""
    if size is None:
        return None
    if isinstance(size, (tuple, list)):
        return tuple(size)
    return (size,)


def _static(*xs: Any) -> bool:
    return not traced(*xs)


def _static_scalars(*xs: Any) -> bool:
    return _static(*xs) and all(np.ndim(x) == 0 for x in xs)


def _ndim(x: Any) -> int:
    return x.aval.ndim if isinstance(x, Tracer) else np.ndim(x)


def _scalar(x: Any, dtype: Any, name: str, what: str) -> Any:
    """A distribution parameter (a scalar or an array, NumPy broadcasts them
    against each other and `size`) as a traced value of `dtype`."""
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    return convert(operand(x), np.dtype(dtype))


def _all(condition: Any) -> Any:
    """A check's predicate over scalar or array parameters."""
    return knp.all(condition) if _ndim(condition) else condition
