"""Stage "jaxpr": Python's builtins and `math` functions on traced values.

In: a call of `min`, `max`, `sum`, `len`, `reversed`, `float`, `int`, `bool`, `complex`,
`print` (kiln.debugging.traced_print) or a `math` function (erf and erfc
through kiln.numpy.special_functions) that traced code
makes (found by autograph at the call site).
Out: Python's own result when no argument is traced; otherwise the kiln.numpy
equations that compute it, or a KilnTypeError naming what Python would refuse.
`abs`, `round`, `divmod` and `pow` need no replacement: they reach the traced
array's `__abs__`, `__round__`, `__divmod__` and `__pow__`.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Callable

import numpy as np

from kiln.core import KilnTypeError
from kiln.debugging import traced_print
from kiln.numpy._bindings import FUNCTIONS, tracer_method, traced
from kiln.numpy._ufunc import ufunc_entry
from kiln.numpy.special_functions import apply as apply_special
from kiln.tracing import Tracer, is_static_dim

_NO_DEFAULT = object()


def _ufunc(name: str, *inputs: Any) -> Tracer:
    return ufunc_entry(name, inputs, None, {})


def _scalar(x: Any, fn: str) -> Any:
    """A traced number as Python's numeric functions take it: 0-d only."""
    if isinstance(x, Tracer) and x.shape != ():
        raise KilnTypeError(
            f"{fn}() takes a number, but got a traced array of shape {x.aval.str_short()}; "
            f"use the NumPy function on arrays (np.{fn.split('.')[-1]} or x.astype).")
    return x


# --- min / max


def _pick(name: str, best: Any, candidate: Any) -> Any:
    """Python keeps the earlier value unless the later one is strictly better."""
    better = _ufunc("greater" if name == "max" else "less", candidate, best)
    return FUNCTIONS["where"](better, candidate, best)


def _extremum(name: str, args: tuple, key: Any, default: Any) -> Any:
    python_fn = getattr(builtins, name)
    kwargs = {} if key is None else {"key": key}
    if default is not _NO_DEFAULT:
        kwargs["default"] = default
    if len(args) == 1 and isinstance(args[0], Tracer):
        return _extremum_of_array(name, args[0], key, default)
    values = list(args[0]) if len(args) == 1 else list(args)
    if not traced(*values):
        return python_fn(values, **kwargs) if len(args) == 1 else python_fn(*args, **kwargs)
    if key is not None:
        raise KilnTypeError(
            f"{name}(..., key=...) on traced values: the key's comparison is only known at run time; "
            f"compute the keys as an array and use np.arg{name}.")
    if not values:
        if default is _NO_DEFAULT:
            raise ValueError(f"{name}() iterable argument is empty")
        return default
    best = values[0]
    for candidate in values[1:]:
        best = _pick(name, best, candidate)
    return best


def _extremum_of_array(name: str, x: Tracer, key: Any, default: Any) -> Tracer:
    if key is not None:
        raise KilnTypeError(
            f"{name}(x, key=...) over a traced array: the key's comparison is only known at run time; "
            f"compute the keys as an array and use np.arg{name}.")
    if x.ndim != 1:
        raise KilnTypeError(
            f"{name}() over a traced array of shape {x.aval.str_short()} compares its rows, whose truth value "
            f"is ambiguous; use np.{name}(x) or np.{name}(x, axis=0).")
    if default is not _NO_DEFAULT and not (is_static_dim(x.shape[0]) and x.shape[0] > 0):
        raise KilnTypeError(
            f"{name}(x, default=...) over a traced array whose size may be 0: use "
            f"np.{name}(x, initial=...) or test x.size first.")
    return FUNCTIONS[name](x)


def max_(*args: Any, key: Any = None, default: Any = _NO_DEFAULT) -> Any:
    """`max` in traced code: 2+ traced numbers, an iterable of them, or a 1-D traced array."""
    return _extremum("max", args, key, default)


def min_(*args: Any, key: Any = None, default: Any = _NO_DEFAULT) -> Any:
    """`min` in traced code, as `max_`."""
    return _extremum("min", args, key, default)


# --- sum / len


def sum_(iterable: Any, /, start: Any = 0) -> Any:
    """`sum(x)` over a traced array adds its rows (Python iterates the first axis),
    keeping the array's dtype as Python's repeated `+` does."""
    if not isinstance(iterable, Tracer):
        return builtins.sum(iterable, start)
    if iterable.ndim == 0:
        raise KilnTypeError("sum() over a 0-d traced array: it is not iterable; use the value itself")
    dtype = iterable.dtype if iterable.dtype != np.bool_ else np.dtype(np.int64)
    total = FUNCTIONS["sum"](iterable, axis=0, dtype=dtype)
    return total if isinstance(start, (int, bool)) and start == 0 else start + total


def len_(x: Any) -> Any:
    """`len(x)`: a traced array's first dim, which may be traced."""
    if isinstance(x, Tracer) and x.ndim > 0:
        return x.shape[0]
    return builtins.len(x)


def reversed_(sequence: Any) -> Any:
    """`reversed(x)` of a traced array: its rows in reverse, `x[::-1]`."""
    if isinstance(sequence, Tracer):
        if sequence.ndim == 0:
            raise KilnTypeError("reversed() of a 0-d traced array: it is not a sequence")
        return sequence[::-1]
    return builtins.reversed(sequence)


# --- conversions


def _converter(python_type: type, dtype: Any) -> Callable[..., Any]:
    name = python_type.__name__

    def convert(*args: Any, **kwargs: Any) -> Any:
        if not traced(*args, *kwargs.values()):
            return python_type(*args, **kwargs)
        if name == "complex" and len(args) == 2 and not kwargs:
            real, imag = (convert(a) for a in args)
            return real + 1j * imag
        if len(args) != 1 or kwargs:
            raise KilnTypeError(f"{name}() of a traced value takes one argument")
        x = _scalar(args[0], name)
        if name == "bool":
            return _ufunc("not_equal", x, 0)
        if name == "int" and x.dtype.kind == "f":
            x = _ufunc("trunc", x)
        return FUNCTIONS["astype"](x, dtype)

    convert.__name__ = f"{name}_"
    convert.__doc__ = f"`{name}(x)` of a traced number: a traced {np.dtype(dtype).name} scalar."
    return convert


float_ = _converter(float, np.float64)
int_ = _converter(int, np.int64)
bool_ = _converter(bool, np.bool_)
complex_ = _converter(complex, np.complex128)


# --- math


def _math(name: str, ufunc: str, result: str = "float") -> Callable[..., Any]:
    python_fn = getattr(math, name)

    def fn(*args: Any) -> Any:
        if not traced(*args):
            return python_fn(*args)
        inputs = [_scalar(a, f"math.{name}") for a in args]
        if result == "float":
            inputs = [FUNCTIONS["astype"](a, np.float64) if isinstance(a, Tracer) and a.dtype.kind != "f"
                      else a for a in inputs]
        out = _ufunc(ufunc, *inputs)
        return FUNCTIONS["astype"](out, np.int64) if result == "int" else out

    fn.__name__ = name
    fn.__doc__ = f"`math.{name}` of a traced number (NumPy's np.{ufunc}; nan where Python raises)."
    return fn


_MATH_UFUNCS = {
    "sqrt": "sqrt", "exp": "exp", "log": "log", "expm1": "expm1", "log2": "log2", "log10": "log10", "log1p": "log1p",
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh",
    "atanh": "arctanh", "atan2": "arctan2", "hypot": "hypot", "fabs": "fabs", "degrees": "degrees",
    "radians": "radians", "fmod": "fmod", "pow": "power",
}
MATH = {getattr(math, name): _math(name, ufunc) for name, ufunc in _MATH_UFUNCS.items()}
MATH.update({getattr(math, name): _math(name, name, result="int") for name in ("floor", "ceil", "trunc")})
MATH.update({getattr(math, name): _math(name, name, result="bool") for name in ("isnan", "isinf", "isfinite")})


_natural_log = MATH[math.log]


def _log(x: Any, base: Any = None) -> Any:
    """`math.log(x[, base])`."""
    if base is None:
        return _natural_log(x)
    if not traced(x, base):
        return math.log(x, base)
    return _natural_log(x) / _natural_log(base)


MATH[math.log] = _log


def _math_erf(name: str) -> Callable[..., Any]:
    python_fn = getattr(math, name)

    def fn(x: Any) -> Any:
        if not traced(x):
            return python_fn(x)
        # Python's math functions compute in float64 whatever the number's type.
        return apply_special(name, _scalar(x, f"math.{name}"), np.float64)

    fn.__name__ = name
    fn.__doc__ = f"`math.{name}` of a traced number (the C library's {name}, as Python's)."
    return fn


MATH.update({getattr(math, name): _math_erf(name) for name in ("erf", "erfc")})

# The callables traced code reaches instead of Python's own.
BUILTINS = {builtins.min: min_, builtins.max: max_, builtins.sum: sum_, builtins.len: len_,
            builtins.reversed: reversed_, builtins.float: float_, builtins.int: int_, builtins.bool: bool_,
            builtins.complex: complex_, builtins.print: traced_print}
REPLACEMENTS = {**BUILTINS, **MATH}


# --- operators that builtins reach on their own


@tracer_method("__round__")
def _round(x: Tracer, ndigits: Any = None) -> Tracer:
    """`round(x)` of a traced number is an int, half to even, as Python's;
    `round(x, n)` keeps the dtype, as NumPy's scalars do."""
    if x.ndim > 0:
        raise KilnTypeError(
            f"round() of a traced array of shape {x.aval.str_short()}: NumPy arrays do not define it; "
            "use np.round(x, decimals).")
    if ndigits is not None:
        return FUNCTIONS["round"](x, ndigits)
    if x.dtype.kind == "f":
        x = FUNCTIONS["round"](x, 0)
    return FUNCTIONS["astype"](x, np.int64)


@tracer_method("__divmod__")
def _divmod(x: Tracer, y: Any) -> tuple:
    return _ufunc("floor_divide", x, y), _ufunc("remainder", x, y)


@tracer_method("__rdivmod__")
def _rdivmod(x: Tracer, y: Any) -> tuple:
    return _ufunc("floor_divide", y, x), _ufunc("remainder", y, x)
