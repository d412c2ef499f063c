"""Stage "call", before the signature: arrays from other libraries as NumPy arrays.

In: a call argument that is not a NumPy array or scalar (a torch CPU tensor, a
jax CPU array, a memmap, any object with `__array__` or only `__dlpack__`).
Out: a NumPy array viewing the same memory where the library allows it, or None.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kiln.core import SUPPORTED_DTYPES
from kiln.tracing import Tracer

# One conversion per argument type, chosen on first sight (None: not an array).
_CONVERTERS: dict[type, Callable[[Any], np.ndarray] | None] = {}
# The ndarray subclasses that mean nothing beyond their data (a masked
# array's mask, any other subclass's own behaviour, would be lost: the
# general path refuses those, naming why).
PLAIN_SUBCLASSES = (np.matrix, np.memmap)


def _converter_for(t: type) -> Callable[[Any], np.ndarray] | None:
    if issubclass(t, Tracer):
        return None
    if issubclass(t, np.ndarray):
        return np.asarray if issubclass(t, PLAIN_SUBCLASSES) else None
    if hasattr(t, "__array__"):
        return np.asarray
    if hasattr(t, "__dlpack__"):
        return np.from_dlpack
    return None


def foreign_array(x: Any) -> np.ndarray | None:
    """`x` as a NumPy array of a supported dtype, or None when it is not an
    array kiln accepts (the caller reports why on its general path)."""
    t = type(x)
    try:
        convert = _CONVERTERS[t]
    except KeyError:
        convert = _CONVERTERS[t] = _converter_for(t)
    if convert is None:
        return None
    try:
        arr = convert(x)
    except (TypeError, ValueError, RuntimeError, BufferError):
        return None
    if arr.dtype not in SUPPORTED_DTYPES:
        return None
    return arr
