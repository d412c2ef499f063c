"""Stage "jaxpr": NumPy names that are not functions of arrays, as traced code sees them.

In: `np.float64(x)` and the other scalar types, `np.ndarray(shape)`, `np.mgrid[...]` /
`np.ogrid[...]` with traced bounds, and `np.random.*` (and random generators).
Out: traced arrays for the first three; for random numbers the traced generators
of kiln/numpy/random.py, and a KilnTypeError naming the function and the line for
the ones kiln does not compile (tracing NumPy's would freeze one draw for every call).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from kiln.core import SUPPORTED_DTYPES
from kiln.errors import KilnTypeError
from kiln.numpy._bindings import traced
from kiln.numpy.creation import arange, asarray, empty, linspace
from kiln.numpy.random import default_rng
from kiln.numpy.random_legacy import LEGACY_FUNCTIONS, random_state
from kiln.trace_namespace import replace_in_traced_code, replace_instances_in_traced_code
from kiln.tracing import Tracer


class _TracedTypeMeta(type):
    """A NumPy type as traced code sees it: calling it may make a traced
    array, and `isinstance` / `issubclass` / dtype uses see NumPy's type."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls.numpy_type)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls.numpy_type)

    def __repr__(cls) -> str:
        return repr(cls.numpy_type)


def _scalar_new(cls: type, value: Any = 0, *args: Any, **kwargs: Any) -> Any:
    """`np.float64(x)`: a traced value converted to the type when `x` is traced, NumPy's scalar otherwise."""
    if traced(value):
        return asarray(value, cls.numpy_type)
    return cls.numpy_type(value, *args, **kwargs)


def _traced_scalar_type(numpy_type: type) -> type:
    return _TracedTypeMeta(numpy_type.__name__, (numpy_type,),
                           {"__new__": _scalar_new, "numpy_type": numpy_type, "__module__": "numpy"})


def _ndarray_new(cls: type, shape: Any, dtype: Any = float, buffer: Any = None, offset: int = 0,
                 strides: Any = None, order: Any = None) -> Any:
    """`np.ndarray(shape, dtype)` makes a new (zero-filled) traced array; with a buffer it is NumPy's."""
    if buffer is None:
        return empty(shape, dtype)
    if traced(shape, buffer):
        raise KilnTypeError("np.ndarray(shape, buffer=...) on traced values is not supported by kiln; "
                            "use np.reshape(buffer, shape) or np.empty(shape)")
    return np.ndarray(shape, dtype, buffer, offset, strides, order)


for _dtype in SUPPORTED_DTYPES:
    replace_in_traced_code(np.dtype(_dtype).type, _traced_scalar_type(np.dtype(_dtype).type))
replace_in_traced_code(np.ndarray, _TracedTypeMeta("ndarray", (np.ndarray,), {
    "__new__": _ndarray_new, "numpy_type": np.ndarray, "__module__": "numpy"}))


class _Grid:
    """`np.mgrid` (dense) or `np.ogrid` (sparse) with static or traced slice bounds."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key: Any) -> Any:
        from kiln.numpy.shape_ops import expand_dims, stack
        from kiln.numpy._base import broadcast_to, materialize

        keys = key if isinstance(key, tuple) else (key,)
        if not all(isinstance(k, slice) for k in keys):
            raise KilnTypeError(f"np.{'ogrid' if self.sparse else 'mgrid'}[...] takes slices, got {key!r}")
        is_float = any(isinstance(v, (float, np.floating, complex, np.complexfloating))
                       or (isinstance(v, Tracer) and v.aval.dtype.kind in "fc")
                       for k in keys for v in (k.start, k.stop, k.step))
        dtype = np.float64 if is_float else np.int64
        axes = [self._axis(k, dtype) for k in keys]
        if not isinstance(key, tuple):
            return axes[0]
        count = len(axes)
        grids = [expand_dims(a, tuple(i for i in range(count) if i != n)) for n, a in enumerate(axes)]
        if self.sparse:
            return tuple(grids)
        shape = tuple(a.aval.shape[0] for a in axes)
        return stack([materialize(broadcast_to(g, shape)) for g in grids])

    @staticmethod
    def _axis(k: slice, dtype: type) -> Any:
        start = 0 if k.start is None else k.start
        step = 1 if k.step is None else k.step
        if isinstance(step, (complex, np.complexfloating)):
            # NumPy: an imaginary step is a number of points, stop included.
            return linspace(start, k.stop, int(abs(step)), dtype=dtype)
        return arange(start, k.stop, step, dtype=dtype)


replace_in_traced_code(np.mgrid, _Grid(sparse=False))
replace_in_traced_code(np.ogrid, _Grid(sparse=True))


_UNSUPPORTED_RANDOM_HINT = (
    "kiln compiles np.random.default_rng(seed) Generators (made inside or passed in as arguments) and the "
    "legacy functions {} (see docs/numpy.md, 'Random numbers'); otherwise draw the numbers outside and pass "
    "them in as an argument")


def _refuse_random(name: str, hint: str) -> None:
    caller = sys._getframe(2)
    raise KilnTypeError(
        f"{caller.f_code.co_filename}:{caller.f_lineno}: {name} is not supported inside a compiled function; {hint}.")


class _RefusingRandom:
    """What traced code sees for a NumPy random function or generator kiln does not compile."""

    def __init__(self, name: str, hint: str):
        self._name = name
        self._hint = hint

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        _refuse_random(self._name, self._hint)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _RefusingRandom(f"{self._name}.{attr}", self._hint)


_RANDOM_CONSTRUCTORS = {"default_rng": default_rng, "RandomState": random_state}
for _name in dir(np.random):
    _value = getattr(np.random, _name)
    if callable(_value) and not _name.startswith("_"):
        replacement = LEGACY_FUNCTIONS.get(_name) or _RANDOM_CONSTRUCTORS.get(_name)
        replace_in_traced_code(_value, replacement or _RefusingRandom(
            f"np.random.{_name}", _UNSUPPORTED_RANDOM_HINT.format(", ".join(sorted(LEGACY_FUNCTIONS)))))


def _captured_generator(g: Any) -> Any:
    return _RefusingRandom(
        f"the random generator {type(g).__name__}", "it comes from outside the function, so kiln cannot advance "
        "its state: pass it as an argument of the compiled function (kiln then advances its state as NumPy's "
        "would)")


for _generator in (np.random.Generator, np.random.RandomState, np.random.BitGenerator, np.random.SeedSequence):
    replace_instances_in_traced_code(_generator, _captured_generator)
