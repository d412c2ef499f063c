"""Stage "jaxpr": element-wise NumPy functions that are not ufuncs (clip,
round, real, imag, astype), built from ufuncs and primitives.

In: traced arrays, bounds, decimals, dtypes.
Out: tracers with NumPy's result dtypes; each returns a new array.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.numpy._base import canonical_dtype, convert, operand
from kiln.numpy._bindings import numpy_function
from kiln.numpy._ufunc import apply_ufunc
from kiln.numpy.creation import zeros_like
from kiln.numpy import mutation
from kiln.primitives import elementwise as ew
from kiln.tracing import Tracer, bind


@numpy_function("astype", method="astype")
def astype(x: Any, dtype: Any, copy: bool = True) -> Tracer:
    result = convert(operand(x), canonical_dtype(dtype))
    return mutation.copy(result) if copy and result is x else result


def _reachable_bound(a: Any, bound: Any, is_min: bool) -> Any:
    """np.clip ignores a Python int bound beyond an integer array's range on
    its own side (clip(uint8, -1, 2) is fine); one beyond the other side
    still overflows, as in NumPy."""
    if type(bound) is not int or a.aval.dtype.kind not in "iu":
        return bound
    info = np.iinfo(a.aval.dtype)
    return None if (bound < info.min if is_min else bound > info.max) else bound


@numpy_function("clip", method="clip")
def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Tracer:
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    if kwargs:
        raise TypeError(f"clip: unexpected keyword arguments {sorted(kwargs)}")
    result = operand(a)
    a_min, a_max = _reachable_bound(result, a_min, True), _reachable_bound(result, a_max, False)
    if a_min is not None:
        result = apply_ufunc("maximum", result, a_min)
    if a_max is not None:
        result = apply_ufunc("minimum", result, a_max)
    if result is operand(a):
        result = mutation.copy(result)  # both bounds ignored: still a new array
    if out is not None:
        return mutation.write_out("np.clip", result, out)
    return result


@numpy_function("round", "around", method="round")
def round_(a: Any, decimals: int = 0) -> Tracer:
    """Half to even at `decimals` digits, as NumPy: a negative `decimals`
    divides by a power of ten first; integers stay integers."""
    a = operand(a)
    is_int = a.aval.dtype.kind in "iub"
    if is_int and decimals >= 0:
        return apply_ufunc("positive", a)
    if decimals == 0:
        return apply_ufunc("rint", a)
    if decimals > 0:
        scale = 10.0 ** decimals
        return apply_ufunc("true_divide", apply_ufunc("rint", apply_ufunc("multiply", a, scale)), scale)
    factor = 10 ** -decimals
    rounded = apply_ufunc("multiply", apply_ufunc("rint", apply_ufunc("true_divide", a, factor)), factor)
    return convert(rounded, a.aval.dtype) if is_int else rounded


@numpy_function("real")
def real(a: Any) -> Tracer:
    a = operand(a)
    if a.aval.dtype.kind != "c":
        return a
    return bind(ew.real_p, a)


@numpy_function("imag")
def imag(a: Any) -> Tracer:
    a = operand(a)
    if a.aval.dtype.kind != "c":
        return zeros_like(a)
    return bind(ew.imag_p, a)
