"""Stage "jaxpr": the error function of `math` and `scipy.special` on traced values.

In: a traced array or number reaching `scipy.special.erf` / `erfc` (through the
ufunc's `__array_ufunc__`) or `math.erf` / `math.erfc` (through autograph's call
replacement, kiln.numpy.python_builtins).
Out: one `erf` / `erfc` equation in float32 or float64 (the dtype the library's
own loop would pick), which computes what the C library's erf does, the function
Python's `math.erf` calls. NumPy itself has no erf: `np.erf` stays unsupported.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kiln.core import KilnTypeError
from kiln.numpy._base import convert, operand
from kiln.primitives import elementwise as ew
from kiln.tracing import bind

_PRIMITIVES = {"erf": ew.erf_p, "erfc": ew.erfc_p}


def _loop_dtype(library_ufunc: np.ufunc, x: Any, public: str) -> np.dtype:
    """The dtype `library_ufunc`'s own loop computes `x` in (NEP 50: a Python float is float64)."""
    dtype = float if x.aval.weak_type and x.aval.dtype.kind != "b" else x.aval.dtype
    try:
        _, out = library_ufunc.resolve_dtypes((dtype, None))
    except TypeError:
        raise KilnTypeError(f"{public}: no loop for a traced {x.aval.str_short()}; pass a real number "
                            "array") from None
    if out.kind != "f" or out.itemsize not in (4, 8):
        raise KilnTypeError(f"{public} of a traced {x.aval.str_short()} computes in {out}, which kiln does not "
                            "support (float32 and float64 only); take .real or cast to float64 first")
    return out


def apply(name: str, x: Any, dtype: Any) -> Any:
    """erf/erfc of `x` computed in `dtype` (float32 or float64): one equation."""
    return bind(_PRIMITIVES[name], convert(x, dtype))


def _scipy_function(name: str) -> Callable[..., Any]:
    public = f"scipy.special.{name}"

    def fn(library_ufunc: np.ufunc, x: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise KilnTypeError(f"{public}: keyword argument {sorted(kwargs)[0]!r} is not supported by kiln on "
                                "traced values")
        x = operand(x)
        return apply(name, x, _loop_dtype(library_ufunc, x, public))

    fn.__name__ = name
    fn.__doc__ = f"`{public}(x)` of a traced array: float32 stays float32, other real dtypes give float64."
    return fn


# Ufuncs of other libraries kiln computes, by their public name (kiln.numpy._dispatch).
FOREIGN_UFUNCS = {f"scipy.special.{name}": _scipy_function(name) for name in _PRIMITIVES}
