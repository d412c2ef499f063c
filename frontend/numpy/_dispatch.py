"""Stage "jaxpr": how NumPy's own calls on traced values reach kiln.numpy.

In: `np.<ufunc>(tracer)` and its methods through `__array_ufunc__`, other
`np.<function>(tracer)` through `__array_function__` (both installed on
`Tracer` here, when kiln.numpy is imported).
Out: kiln's traced implementation as declared by the @ufunc /
@numpy_function / @ufunc_method decorators; unsupported functions raise a
`TypeError` that names them.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from kiln.core import KilnTypeError
from kiln.numpy._bindings import FUNCTIONS, UFUNC_METHODS, tracer_method
from kiln.numpy._ufunc import UFUNCS, ufunc_entry
from kiln.numpy.special_functions import FOREIGN_UFUNCS


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
    if method == "__call__" and name in FUNCTIONS:
        # Generalized ufuncs (np.matmul) are plain kiln.numpy functions; NumPy
        # passes their out= as a tuple.
        if isinstance(kwargs.get("out"), tuple) and len(kwargs["out"]) == 1:
            kwargs["out"] = kwargs["out"][0]
        return FUNCTIONS[name](*inputs, **kwargs)
    if (name, method) in UFUNC_METHODS:
        return UFUNC_METHODS[name, method](*inputs, **kwargs)
    public = _ufunc_public_name(ufunc) if name not in UFUNCS else f"np.{name}"
    if method == "__call__" and public in FOREIGN_UFUNCS and len(inputs) == 1 and "out" not in kwargs:
        return FOREIGN_UFUNCS[public](ufunc, *inputs, **kwargs)
    called = _ufunc_public_name(ufunc) + ("" if method == "__call__" else "." + method)
    raise KilnTypeError(
        f"{called}{_library_caller_note()} is not supported by kiln on traced values; "
        "see docs/numpy.md for the supported NumPy surface."
    )


def _ufunc_public_name(ufunc: np.ufunc) -> str:
    """`np.exp`, or `scipy.special.expit` for a ufunc another library defines."""
    name = ufunc.__name__
    if getattr(np, name, None) is ufunc:
        return f"np.{name}"
    for module_name, module in sorted(sys.modules.items()):
        if not any(part.startswith("_") for part in module_name.split(".")) and \
                getattr(module, name, None) is ufunc:
            return f"{module_name}.{name}"
    return f"the ufunc {name!r} (not one of NumPy's)"


def _is_third_party(filename: str) -> bool:
    return "site-packages" in filename or "dist-packages" in filename


def _library_caller_note() -> str:
    """`, called by scipy.special.logsumexp,` when NumPy was reached from inside
    another library rather than from the user's code."""
    frame = sys._getframe(1)
    outermost = None
    while frame is not None:
        module = frame.f_globals.get("__name__") or ""
        root = module.split(".")[0]
        if root not in ("kiln", "numpy") and root not in sys.stdlib_module_names:
            if not _is_third_party(frame.f_code.co_filename):
                break
            outermost = frame
        frame = frame.f_back
    if outermost is None:
        return ""
    module = outermost.f_globals.get("__name__") or ""
    public = ".".join(part for part in module.split(".") if not part.startswith("_"))
    return f" (called by {public}.{outermost.f_code.co_qualname})"


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
            f"{public}{_library_caller_note()} is not supported by kiln on traced values; see docs/numpy.md for the "
            "supported NumPy surface, or compute it from supported functions."
        )
    return impl(*args, **kwargs)
