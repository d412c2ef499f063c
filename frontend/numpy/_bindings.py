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
import inspect
from typing import Any, Callable

import numpy as np

from kiln.core import KilnInternalError, KilnTypeError
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
    """Outside a trace, on concrete values, call NumPy's own function
    (`np.<name>`, or `np.linalg.<name>` for the decompositions)."""
    np_fn = getattr(np, name, None) or getattr(np.linalg, name, None)

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
            publish(name, _with_eager_fallback(name, _keywords_checked(f"np.{name}", impl, getattr(np, name, None))))
        if method is not None:
            install_on_tracer(method, _keywords_checked(f"x.{method}", impl, getattr(np, method, None)))
        return impl

    return register


def _keyword_names(fn: Any) -> set[str] | None:
    """The keywords `fn` accepts (None: any, or unknown)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _keywords_checked(label: str, impl: Callable[..., Any], numpy_fn: Any) -> Callable[..., Any]:
    """`impl`, refusing a keyword it lacks by name: one NumPy has but kiln does
    not support (`np.sum(x, where=m)`), or one NumPy does not have either.
    The signatures are read on the first call with keywords, not when the
    function is declared (`inspect.signature` of ~400 functions was a third
    of importing kiln.numpy)."""
    known: list = []

    def keywords() -> tuple:
        if not known:
            accepted = _keyword_names(impl)
            numpy_accepts = _keyword_names(numpy_fn) if accepted is not None else None
            first = next(iter(inspect.signature(impl).parameters), None) if accepted is not None else None
            supported = "" if accepted is None else ", ".join(sorted(
                accepted & numpy_accepts if numpy_accepts is not None else accepted - {first}))
            known.append((accepted, numpy_accepts, supported))
        return known[0]

    @functools.wraps(impl)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            accepted, numpy_accepts, supported = keywords()
            unknown = [k for k in kwargs if k not in accepted] if accepted is not None else []
            if unknown:
                keyword = unknown[0]
                if numpy_accepts is not None and keyword not in numpy_accepts:
                    raise KilnTypeError(f"{label}() got an unexpected keyword argument {keyword!r}")
                raise KilnTypeError(
                    f"{label}: keyword argument {keyword!r} is not supported by kiln on traced values "
                    f"(supported: {supported or 'none'}); see docs/numpy.md, or compute it from "
                    "supported functions.")
        return impl(*args, **kwargs)

    return checked


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
