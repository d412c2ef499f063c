"""Stage "jaxpr": how NumPy calls reach kiln.numpy.

In: calls of kiln.numpy functions, and NumPy calls that reach a tracer
through `__array_ufunc__` / `__array_function__`.
Out: NumPy's own result when nothing is traced and no trace is active, else
kiln's traced implementation; unsupported functions raise a `TypeError`
that names them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.core import KilnTypeError
from kiln.tracing import Tracer, is_tracing

_REDUCE_METHODS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                   "logical_and": "all", "logical_or": "any"}
_ACCUMULATE_METHODS = {"add": "cumsum", "multiply": "cumprod"}


def _traced(*xs: Any) -> bool:
    for x in xs:
        if isinstance(x, Tracer):
            return True
        if isinstance(x, (list, tuple)) and _traced(*x):
            return True
    return False


def ufunc_entry(name: str, args: tuple, out: Any, kwargs: dict) -> Any:
    from kiln.numpy import ufuncs
    from kiln.numpy._base import convert
    from kiln.numpy.mutation import write_out

    if not is_tracing() and not _traced(*args, out):
        return getattr(np, name)(*args, out=out, **kwargs)
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise KilnTypeError(f"np.{name}: keyword argument(s) {sorted(kwargs)} are not supported on traced values")
    if dtype is not None:
        args = tuple(convert(a, dtype) for a in args)
    result = ufuncs.apply_ufunc(name, *args)
    if out is not None:
        return write_out(f"np.{name}", result, out)
    return result


def dispatch_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    from kiln import numpy as knp
    from kiln.numpy import ufuncs

    name = ufunc.__name__
    if method == "__call__" and name in ufuncs.UFUNCS:
        out = kwargs.pop("out", None)
        if isinstance(out, tuple):
            if len(out) != 1:
                raise KilnTypeError(f"np.{name}: out= must hold one array")
            out = out[0]
        return ufunc_entry(name, inputs, out, kwargs)
    if method == "__call__" and name in knp.FUNCTIONS and not kwargs:
        # Generalized ufuncs (np.matmul) are plain kiln.numpy functions.
        return knp.FUNCTIONS[name](*inputs)
    if method == "reduce" and name in _REDUCE_METHODS:
        return getattr(knp, _REDUCE_METHODS[name])(*inputs, **kwargs)
    if method == "accumulate" and name in ("maximum", "minimum"):
        from kiln.numpy.reductions import running_extreme

        from kiln.primitives.reduction import cummax_p, cummin_p

        return running_extreme(cummax_p if name == "maximum" else cummin_p, *inputs, **kwargs)
    if method == "accumulate" and name in _ACCUMULATE_METHODS:
        axis = kwargs.pop("axis", 0)
        return getattr(knp, _ACCUMULATE_METHODS[name])(*inputs, axis=axis, **kwargs)
    raise KilnTypeError(
        f"np.{name}{'' if method == '__call__' else '.' + method} is not supported by kiln on traced values; "
        "see docs/numpy.md for the supported NumPy surface."
    )


def _public_name(func: Any) -> str:
    """`np.linalg.inv`, `np.fft.fft`, `np.unique`: the name users call."""
    module = getattr(func, "__module__", None) or "numpy"
    submodules = [part for part in module.split(".")[1:] if not part.startswith("_")]
    return ".".join(["np", *submodules, func.__name__])


def dispatch_function(func: Any, args: tuple, kwargs: dict) -> Any:
    from kiln import numpy as knp

    name = func.__name__
    public = _public_name(func)
    # np.linalg.matmul / outer are the top-level functions; other submodules'
    # names (np.char.add, np.fft.fft) are different functions.
    impl = knp.FUNCTIONS.get(name) if public in (f"np.{name}", f"np.linalg.{name}") else None
    if impl is None:
        raise KilnTypeError(
            f"{public} is not supported by kiln on traced values; see docs/numpy.md for the "
            "supported NumPy surface, or compute it from supported functions."
        )
    return impl(*args, **kwargs)
