"""Stage "jaxpr": how NumPy's own calls on traced values reach kiln.numpy.

In: `np.<ufunc>(tracer)` and its methods through `__array_ufunc__`, other
`np.<function>(tracer)` through `__array_function__` (both installed on
`Tracer` here, when kiln.numpy is imported).
Out: kiln's traced implementation as declared by the @ufunc /
@numpy_function / @ufunc_method decorators; unsupported functions raise a
`TypeError` that names them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kiln.core import KilnTypeError
from kiln.numpy._bindings import FUNCTIONS, UFUNC_METHODS, tracer_method
from kiln.numpy._ufunc import UFUNCS, ufunc_entry


@tracer_method("__array_ufunc__")
def dispatch_ufunc(self: Any, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    name = ufunc.__name__
    if method == "__call__" and name in UFUNCS:
        out = kwargs.pop("out", None)
        if isinstance(out, tuple):
            if len(out) != 1:
                raise KilnTypeError(f"np.{name}: out= must hold one array")
            out = out[0]
        return ufunc_entry(name, inputs, out, kwargs)
    if method == "__call__" and name in FUNCTIONS and not kwargs:
        # Generalized ufuncs (np.matmul) are plain kiln.numpy functions.
        return FUNCTIONS[name](*inputs)
    if (name, method) in UFUNC_METHODS:
        return UFUNC_METHODS[name, method](*inputs, **kwargs)
    raise KilnTypeError(
        f"np.{name}{'' if method == '__call__' else '.' + method} is not supported by kiln on traced values; "
        "see docs/numpy.md for the supported NumPy surface."
    )


def _public_name(func: Any) -> str:
    """`np.linalg.inv`, `np.fft.fft`, `np.unique`: the name users call."""
    module = getattr(func, "__module__", None) or "numpy"
    submodules = [part for part in module.split(".")[1:] if not part.startswith("_")]
    return ".".join(["np", *submodules, func.__name__])


@tracer_method("__array_function__")
def dispatch_function(self: Any, func: Any, types: tuple, args: tuple, kwargs: dict) -> Any:
    name = func.__name__
    public = _public_name(func)
    # np.linalg.matmul / outer are the top-level functions; other submodules'
    # names (np.char.add, np.fft.fft) are different functions.
    impl = FUNCTIONS.get(name) if public in (f"np.{name}", f"np.linalg.{name}") else None
    if impl is None:
        raise KilnTypeError(
            f"{public} is not supported by kiln on traced values; see docs/numpy.md for the "
            "supported NumPy surface, or compute it from supported functions."
        )
    return impl(*args, **kwargs)
