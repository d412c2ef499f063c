"""`kiln.numpy`: the NumPy surface on traced values (stage "jaxpr").

Inside a `@kiln.qjit` function these functions record equations; outside
one, on concrete arrays, they are NumPy's own. NumPy's functions reach the
same code through `__array_ufunc__` / `__array_function__`, so `np.exp(x)`
works on a tracer too.

>>> import kiln, kiln.numpy as knp
>>> @kiln.qjit
... def f(x):
...     return knp.exp(x) * 2.0
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from kiln.numpy import creation, indexing, linalg, mutation, reductions, shape_ops, ufuncs
from kiln.numpy._base import broadcast_to as _broadcast_to
from kiln.numpy._base import canonical_dtype, convert, materialize, operand, shape_product
from kiln.numpy._dispatch import _traced, dispatch_function, dispatch_ufunc
from kiln.primitives import elementwise
from kiln.tracing import Tracer, bind, is_tracing

# dtypes, so `knp.float32` works like `np.float32`
from numpy import (  # noqa: F401
    bool_, complex64, complex128, dtype, e, float16, float32, float64, inf, int8, int16, int32, int64,
    nan, newaxis, pi, uint8, uint16, uint32, uint64,
)


def _with_eager_fallback(name: str, impl: Callable[..., Any]) -> Callable[..., Any]:
    """Outside a trace, on concrete values, call NumPy's own function."""
    np_fn = getattr(np, name, None)

    @functools.wraps(impl)
    def fn(*args, **kwargs):
        if np_fn is not None and not is_tracing() and not _traced(*args, *kwargs.values()):
            return np_fn(*args, **kwargs)
        return impl(*args, **kwargs)

    fn.__name__ = name
    return fn


def _astype(x: Any, dtype: Any, copy: bool = True) -> Tracer:
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


def _clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Tracer:
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    if kwargs:
        raise TypeError(f"clip: unexpected keyword arguments {sorted(kwargs)}")
    result = operand(a)
    a_min, a_max = _reachable_bound(result, a_min, True), _reachable_bound(result, a_max, False)
    if a_min is not None:
        result = ufuncs.apply_ufunc("maximum", result, a_min)
    if a_max is not None:
        result = ufuncs.apply_ufunc("minimum", result, a_max)
    if result is operand(a):
        result = mutation.copy(result)  # both bounds ignored: still a new array
    if out is not None:
        return mutation.write_out("np.clip", result, out)
    return result


def _round(a: Any, decimals: int = 0) -> Tracer:
    """Half to even at `decimals` digits, as NumPy: a negative `decimals`
    divides by a power of ten first; integers stay integers."""
    a = operand(a)
    is_int = a.aval.dtype.kind in "iub"
    if is_int and decimals >= 0:
        return ufuncs.apply_ufunc("positive", a)
    if decimals == 0:
        return ufuncs.apply_ufunc("rint", a)
    if decimals > 0:
        scale = 10.0 ** decimals
        return ufuncs.apply_ufunc("true_divide", ufuncs.apply_ufunc("rint", ufuncs.apply_ufunc("multiply", a, scale)),
                                  scale)
    factor = 10 ** -decimals
    rounded = ufuncs.apply_ufunc("multiply", ufuncs.apply_ufunc("rint", ufuncs.apply_ufunc("true_divide", a, factor)),
                                 factor)
    return convert(rounded, a.aval.dtype) if is_int else rounded


def _real(a: Any) -> Tracer:
    a = operand(a)
    if a.aval.dtype.kind != "c":
        return a
    return bind(elementwise.real_p, a)


def _imag(a: Any) -> Tracer:
    a = operand(a)
    if a.aval.dtype.kind != "c":
        return creation.zeros_like(a)
    return bind(elementwise.imag_p, a)


def _shape(a: Any) -> tuple:
    return operand(a).aval.shape


def _ndim(a: Any) -> int:
    return operand(a).aval.ndim


def _size(a: Any) -> Any:
    return shape_product(operand(a).aval.shape)


def _readonly_view(x: Any, result: Any) -> Any:
    """Mark a broadcast result read-only, as NumPy's broadcast_to view is."""
    from kiln.tracing import current_builder

    if isinstance(result, Tracer) and result is not x:
        current_builder().readonly.add(id(result))
    return result


_IMPLS: dict[str, Callable[..., Any]] = {
    # creation
    "zeros": creation.zeros, "ones": creation.ones, "full": creation.full, "empty": creation.empty,
    "zeros_like": creation.zeros_like, "ones_like": creation.ones_like, "full_like": creation.full_like,
    "empty_like": creation.empty_like, "arange": creation.arange, "linspace": creation.linspace,
    "eye": creation.eye, "asarray": creation.asarray, "array": creation.array,
    "copy": mutation.copy,
    # shapes
    "reshape": shape_ops.reshape, "ravel": shape_ops.ravel, "transpose": shape_ops.transpose,
    "swapaxes": shape_ops.swapaxes, "moveaxis": shape_ops.moveaxis, "expand_dims": shape_ops.expand_dims,
    "squeeze": shape_ops.squeeze, "broadcast_to": lambda x, shape: _readonly_view(x, materialize(_broadcast_to(x, shape))),
    "concatenate": shape_ops.concatenate, "copyto": mutation.copyto,
    "stack": shape_ops.stack, "atleast_1d": shape_ops.atleast_1d, "where": shape_ops.where,
    "flip": shape_ops.flip, "diff": shape_ops.diff,
    "shape": _shape, "ndim": _ndim, "size": _size,
    # reductions
    "sum": reductions.sum, "prod": reductions.prod, "max": reductions.max, "min": reductions.min,
    "amax": reductions.max, "amin": reductions.min, "mean": reductions.mean, "var": reductions.var,
    "std": reductions.std, "argmax": reductions.argmax, "argmin": reductions.argmin,
    "any": reductions.any, "all": reductions.all, "cumsum": reductions.cumsum, "cumprod": reductions.cumprod,
    # linear algebra
    "dot": linalg.dot, "matmul": linalg.matmul, "vdot": linalg.vdot, "inner": linalg.inner,
    "outer": linalg.outer,
    # misc
    "real": _real, "imag": _imag,
    "clip": _clip, "round": _round, "around": _round, "astype": _astype,
    "take": lambda a, indices, axis=None: _take(a, indices, axis),
}


def _take(a: Any, indices: Any, axis: Any = None) -> Tracer:
    a = operand(a)
    if axis is None:
        return indexing.getitem(shape_ops.ravel(a), operand(indices))
    axis = axis % a.aval.ndim
    return indexing.getitem(a, (slice(None),) * axis + (operand(indices),))


FUNCTIONS: dict[str, Callable[..., Any]] = {name: _with_eager_fallback(name, impl) for name, impl in _IMPLS.items()}
FUNCTIONS.update(ufuncs.PUBLIC)
globals().update(FUNCTIONS)
abs = FUNCTIONS["absolute"]  # noqa: A001


# --- methods of traced arrays (x.sum(), x.reshape(...), ...)


def _method(fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    return method


def _reshape_method(self, *shape, order="C"):
    return shape_ops.reshape(self, *shape, order=order)


def _transpose_method(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = tuple(axes[0])
    return shape_ops.transpose(self, axes or None)


_TRACER_METHODS: dict[str, Callable[..., Any]] = {
    name: _method(_IMPLS[name])
    for name in ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all",
                 "cumsum", "cumprod", "ravel", "squeeze", "swapaxes", "clip", "round", "astype", "copy",
                 "dot", "take")
}
_TRACER_METHODS["reshape"] = _reshape_method
_TRACER_METHODS["transpose"] = _transpose_method
_TRACER_METHODS["flatten"] = _method(lambda x: shape_ops.ravel(mutation.copy(x)))  # copy first: never a view
_TRACER_METHODS["fill"] = _method(mutation.fill)
_TRACER_METHODS["conj"] = _TRACER_METHODS["conjugate"] = _method(ufuncs.PUBLIC["conjugate"])


def _dispatch_ufunc(ufunc, method, inputs, kwargs):
    return dispatch_ufunc(ufunc, method, inputs, kwargs)


def _dispatch_function(func, args, kwargs):
    return dispatch_function(func, args, kwargs)


def _getitem(x: Tracer, idx: Any) -> Tracer:
    result = indexing.getitem(x, idx)
    parts = idx if isinstance(idx, tuple) else (idx,)
    if result.aval.ndim == 0 and result is not x and not [p for p in parts if p is Ellipsis]:
        # NumPy gives a scalar, a copy: a later write to x must not change it
        # (`v = x[0]; x[0] = 5` leaves v alone), and it takes no writes itself.
        # x[..., 0] stays a 0-d view.
        from kiln.tracing import current_builder

        scalar = mutation.copy(result)
        current_builder().scalars.add(id(scalar))
        return scalar
    return result


def _setitem(x: Tracer, idx: Any, value: Any) -> None:
    mutation.setitem(x, idx, value)


def _inplace(name: str, x: Tracer, other: Any) -> Tracer:
    return mutation.inplace(name, x, other)


def _shape_product(shape: tuple) -> Any:
    return shape_product(shape)
