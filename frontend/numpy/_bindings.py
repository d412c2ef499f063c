"""Stage "jaxpr": how a kiln.numpy function declares the names it answers to.

In: implementations in the family modules of kiln.numpy, decorated with
`@numpy_function("cumprod", method="cumprod")`, `@ufunc_method("add",
"reduce")` or `@tracer_method("__getitem__")` (ufuncs: `@ufunc` in ufuncs.py).
Out: `FUNCTIONS` (`knp.NAME`, and `np.NAME` on traced values through
`__array_function__`), `UFUNC_METHODS` (`np.add.reduce`, ...), and methods,
properties and operators installed on `Tracer`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from kiln.core import KilnInternalError
from kiln.tracing import Tracer, is_tracing

# NumPy name -> kiln.numpy's public function (NumPy's own outside a trace).
FUNCTIONS: dict[str, Callable[..., Any]] = {}
# (ufunc name, method) -> implementation of `np.<ufunc>.<method>` on traced values.
UFUNC_METHODS: dict[tuple[str, str], Callable[..., Any]] = {}


class _PublicFunctions:
    """`knp.NAME` for the family modules themselves: kiln.numpy's public
    functions, looked up when called (after every family has declared its
    own), so a family module imports only this leaf, never the package."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        try:
            return FUNCTIONS[name]
        except KeyError:
            raise KilnInternalError(f"kiln.numpy has no function {name!r}") from None


knp = _PublicFunctions()


def traced(*xs: Any) -> bool:
    """Whether any of `xs` (or an element of a list or tuple in them) is traced."""
    for x in xs:
        if isinstance(x, Tracer):
            return True
        if isinstance(x, (list, tuple)) and traced(*x):
            return True
    return False


def _with_eager_fallback(name: str, impl: Callable[..., Any]) -> Callable[..., Any]:
    """Outside a trace, on concrete values, call NumPy's own function."""
    np_fn = getattr(np, name, None)

    @functools.wraps(impl)
    def fn(*args, **kwargs):
        if np_fn is not None and not is_tracing() and not traced(*args, *kwargs.values()):
            return np_fn(*args, **kwargs)
        return impl(*args, **kwargs)

    fn.__name__ = name
    return fn


def publish(name: str, public: Callable[..., Any]) -> None:
    """Make `public` kiln.numpy's `name` (and what `np.name` reaches)."""
    if name in FUNCTIONS:
        raise KilnInternalError(f"kiln.numpy.{name} is declared twice")
    FUNCTIONS[name] = public


def install_on_tracer(name: str, value: Any) -> None:
    """A method, property or operator of traced arrays."""
    setattr(Tracer, name, value)


def numpy_function(*names: str, method: str | None = None) -> Callable[[Callable], Callable]:
    """Declare `impl` as NumPy's function(s) `names` on traced values and,
    with `method`, as the method `x.method(...)` of traced arrays.

    >>> @numpy_function("cumprod", method="cumprod")
    ... def cumprod(x, axis=None, dtype=None): ...
    """

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            publish(name, _with_eager_fallback(name, impl))
        if method is not None:
            install_on_tracer(method, impl)
        return impl

    return register


def ufunc_method(ufunc_name: str, method: str) -> Callable[[Callable], Callable]:
    """Declare `impl` as `np.<ufunc_name>.<method>` (reduce, accumulate) on traced values."""

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        UFUNC_METHODS[ufunc_name, method] = impl
        return impl

    return register


def tracer_method(name: str) -> Callable[[Callable], Callable]:
    """Declare `fn(self, ...)` as the method or operator `name` of traced arrays."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        install_on_tracer(name, fn)
        return fn

    return register


def tracer_property(name: str) -> Callable[[Callable], Callable]:
    """Declare `fn(self)` as the read-only attribute `name` of traced arrays."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        install_on_tracer(name, property(fn))
        return fn

    return register
