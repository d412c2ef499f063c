"""Stage "jaxpr": attributes of traced arrays that NumPy users read
(itemsize, nbytes, strides, flags, flat, real, imag) and `x.view(dtype)`.

In: a tracer. Out: Python ints (what is known when kiln compiles), traced
ints (what depends on run-time sizes), or tracers (flat, real, imag, view).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kiln.core import KilnTypeError, KilnValueError, is_static_dim
from kiln.numpy._base import canonical_dtype, materialize, shape_product
from kiln.numpy._bindings import knp, tracer_method, tracer_property
from kiln.numpy.creation import _creation
from kiln.primitives import elementwise as ew, indexing as index_prims, shape as shape_prims
from kiln.trace_namespace import replace_in_traced_code
from kiln.tracing import Tracer, bind, current_builder


@tracer_property("itemsize")
def _itemsize(self) -> int:
    return self.aval.dtype.itemsize


@tracer_property("nbytes")
def _nbytes(self) -> Any:
    return shape_product(self.aval.shape) * self.aval.dtype.itemsize


def _c_strides(shape: tuple, itemsize: int) -> list:
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step = step * d if not (is_static_dim(d) and d == 1) else step
    return strides[::-1]


def _strides(x: Tracer) -> list:
    """NumPy's strides of `x`, following the view equations back to the
    array they view (an argument or a new array: C-contiguous)."""
    builder = current_builder()
    x = builder.lift(x)
    step = builder.aliases.view_steps.get(id(x))
    if step is None:
        return _c_strides(x.aval.shape, x.aval.dtype.itemsize)
    prim, base, params = step
    base_strides = _strides(base)
    if prim is index_prims.slice_p:
        return [s * k for s, k in zip(base_strides, params["strides"])]
    if prim is shape_prims.transpose_p:
        return [base_strides[p] for p in params["permutation"]]
    if prim is shape_prims.reverse_p:
        return [-s if d in params["dimensions"] else s for d, s in enumerate(base_strides)]
    if prim is shape_prims.match_dims_p:
        return base_strides
    if prim is shape_prims.reshape_p and builder.aliases.is_contiguous(base):
        return _c_strides(x.aval.shape, x.aval.dtype.itemsize)
    raise KilnValueError(
        f"x.strides: kiln cannot tell NumPy's strides of this view ({prim.name} of a non-contiguous array); "
        "take the strides of the array it views, or copy it first (x.copy().strides)")


@tracer_property("strides")
def _strides_property(self) -> tuple:
    """NumPy's strides in bytes: ints, or traced ints where they depend on run-time sizes."""
    return tuple(_strides(self))


def _is_c_contiguous(shape: tuple, strides: list, itemsize: int) -> Any:
    """NumPy's rule: empty arrays are contiguous; otherwise each axis longer than 1 has the C stride."""
    expected = _c_strides(shape, itemsize)
    ok: Any = True
    for d, s, e in zip(shape, strides, expected):
        if is_static_dim(d) and d == 1:
            continue
        if is_static_dim(s) and is_static_dim(e):
            if s != e and is_static_dim(d):
                ok = False
            elif s != e:
                ok = knp.logical_and(ok, knp.less_equal(d, 1))
            continue
        ok = knp.logical_and(ok, knp.logical_or(knp.equal(s, e), knp.less_equal(d, 1)))
    size = shape_product(shape)
    if is_static_dim(size):
        return True if size == 0 else ok
    return knp.logical_or(knp.equal(size, 0), ok)


@dataclass(frozen=True)
class TracedFlags:
    """`x.flags` of a traced array: contiguity as NumPy computes it
    (Python bools, or traced bools where run-time sizes decide)."""

    c_contiguous: Any
    f_contiguous: Any

    @property
    def contiguous(self) -> Any:
        return self.c_contiguous

    def __getitem__(self, key: str) -> Any:
        names = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "CONTIGUOUS": "c_contiguous",
                 "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "FORTRAN": "f_contiguous"}
        if key not in names:
            raise KilnTypeError(f"x.flags[{key!r}]: kiln's traced flags hold C_CONTIGUOUS and F_CONTIGUOUS only")
        return getattr(self, names[key])


@tracer_property("flags")
def _flags(self) -> TracedFlags:
    strides = _strides(self)
    shape, itemsize = tuple(self.aval.shape), self.aval.dtype.itemsize
    c = _is_c_contiguous(shape, strides, itemsize)
    f = _is_c_contiguous(shape[::-1], strides[::-1], itemsize)
    return TracedFlags(c, f)


@tracer_property("flat")
def _flat(self) -> Tracer:
    """`x.flat` as the flattened array: a view when `x` is contiguous (reads,
    writes and iteration reach `x` as NumPy's flatiter does)."""
    return knp.reshape(materialize(self), -1)


def _part(x: Tracer, name: str) -> Tracer:
    x = materialize(x)
    if x.aval.dtype.kind != "c":
        return knp.real(x) if name == "real" else knp.imag(x)
    part = knp.real(x) if name == "real" else knp.imag(x)
    current_builder().aliases.copy_for_view(
        part, x, f"x.{name} of a complex array",
        f"write the whole value instead (z[...] = new_{name} + 1j * z.{'imag' if name == 'real' else 'real'} "
        f"or np.copyto), or copy x.{name} first")
    return part


@tracer_property("real")
def _real(self) -> Tracer:
    return _part(self, "real")


@tracer_property("imag")
def _imag(self) -> Tracer:
    return _part(self, "imag")


_builtin_type = type


@tracer_method("view")
def _view(self, dtype: Any = None, type: Any = None) -> Tracer:
    """`x.view()` is `x`; `x.view(dtype)` reads the same bits as a dtype of the same width."""
    if type is not None or (isinstance(dtype, _builtin_type) and issubclass(dtype, np.ndarray)):
        raise KilnTypeError("x.view(type): ndarray subclasses are not supported by kiln")
    x = materialize(self)
    if dtype is None or canonical_dtype(dtype) == x.aval.dtype:
        return x
    new = canonical_dtype(dtype)
    if new.itemsize != x.aval.dtype.itemsize or "b" in (new.kind, x.aval.dtype.kind):
        raise KilnTypeError(
            f"x.view({new}): kiln reinterprets bits only between dtypes of the same width other than bool "
            f"({x.aval.dtype} is {x.aval.dtype.itemsize} bytes, {new} {new.itemsize}); convert with astype")
    result = bind(ew.bitcast_convert_p, x, new_dtype=new)
    current_builder().aliases.copy_for_view(result, x, f"x.view({new})",
                                            "write to the original array, or copy the view first")
    return result


@_creation("frombuffer")
def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0, *, like: Any = None) -> Any:
    """`np.frombuffer` of a traced array: its bytes as `dtype` (a read-only
    1-D view; dtypes of the same width); of a concrete buffer, NumPy's own."""
    if not isinstance(buffer, Tracer):
        return np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    if count != -1 or offset != 0:
        raise KilnTypeError("np.frombuffer of a traced array: count= and offset= are not supported by kiln; "
                            "slice the result instead")
    result = _view(knp.ravel(buffer), canonical_dtype(dtype))
    current_builder().aliases.readonly.add(id(result))
    return result


_NUMPY_AS_STRIDED = np.lib.stride_tricks.as_strided
_AS_STRIDED = "np.lib.stride_tricks.as_strided"


def as_strided(x: Any, shape: Any = None, strides: Any = None, subok: bool = False, writeable: bool = True) -> Any:
    """`np.lib.stride_tricks.as_strided` of a traced array: element `i` of the
    result is the element of `x` at byte offset `sum(i[k] * strides[k])` from
    `x`'s first element, read into a new array (a gather of `x` flattened).

    NumPy returns a view; kiln's result is a copy whose writes are refused
    (`writeable=False` makes it read-only, as in NumPy). `x` must be
    C-contiguous (an argument, a new array, a contiguous slice), strides
    whole multiples of the itemsize, and every offset inside `x`: NumPy
    would read whatever memory lies there, kiln raises a ValueError."""
    if not isinstance(x, Tracer):
        return _NUMPY_AS_STRIDED(x, shape=shape, strides=strides, subok=subok, writeable=writeable)
    if subok:
        raise KilnTypeError(f"{_AS_STRIDED}(subok=True): ndarray subclasses are not supported by kiln; drop subok")
    from kiln.numpy._base import check, operand
    from kiln.numpy.creation import _refuse_negative_dims

    x = materialize(x)
    itemsize = x.aval.dtype.itemsize
    shape = tuple(x.aval.shape) if shape is None else (tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
    strides = tuple(_strides(x)) if strides is None else (
        tuple(strides) if isinstance(strides, (tuple, list)) else (strides,))
    if len(shape) != len(strides):
        raise KilnValueError(f"{_AS_STRIDED}: mismatch in length of strides and shape "
                             f"({len(strides)} strides for {len(shape)} dimensions)")
    contiguous = _is_c_contiguous(tuple(x.aval.shape), _strides(x), itemsize)
    fix = "copy it first (np.ascontiguousarray(x)), or build the window by indexing"
    if contiguous is False:
        raise KilnValueError(f"{_AS_STRIDED}: kiln reinterprets C-contiguous arrays only, and x is a "
                             f"non-contiguous view; {fix}")
    check(contiguous, "ValueError", f"{_AS_STRIDED}: kiln reinterprets C-contiguous arrays only, and x is a "
                                    f"non-contiguous view at run time; {fix}")
    _refuse_negative_dims(shape)
    steps = []
    for s in strides:
        if is_static_dim(s):
            if int(s) % itemsize:
                raise KilnValueError(f"{_AS_STRIDED}: stride {int(s)} is not a multiple of the itemsize "
                                     f"({itemsize} bytes of {x.aval.dtype}); kiln reads whole elements")
            steps.append(int(s) // itemsize)
        else:
            check(knp.equal(knp.remainder(s, itemsize), 0), "ValueError",
                  f"{_AS_STRIDED}: a stride is not a multiple of the itemsize ({itemsize} bytes); "
                  "kiln reads whole elements")
            steps.append(knp.floor_divide(s, itemsize))
    # Offsets (in elements) of every result element, and their range.
    offsets: Any = 0
    low: Any = 0
    high: Any = 0
    rank = len(shape)
    for k, (d, step) in enumerate(zip(shape, steps)):
        axis = knp.multiply(knp.arange(d), step)
        offsets = knp.add(offsets, axis[(None,) * k + (slice(None),) + (None,) * (rank - k - 1)])
        reach = knp.multiply(knp.subtract(d, 1), step)
        low = knp.add(low, knp.minimum(reach, 0))
        high = knp.add(high, knp.maximum(reach, 0))
    size = shape_product(shape)
    n = shape_product(tuple(x.aval.shape))
    inside = knp.logical_and(knp.greater_equal(low, 0), knp.less(high, n))
    if not isinstance(inside, Tracer) and not isinstance(size, Tracer):
        inside = bool(inside) or size == 0
    else:
        inside = knp.logical_or(knp.equal(size, 0), inside)
    check(inside, "ValueError", f"{_AS_STRIDED}: the strides reach outside x (up to element {{}} of {{}}, or "
                                "before its first); NumPy would read memory that is not x's, kiln refuses: "
                                "keep every offset inside x", high, n)
    result = knp.take(knp.ravel(x), knp.broadcast_to(operand(offsets), shape) if rank else offsets)
    builder = current_builder()
    if writeable:
        builder.aliases.copy_for_view(result, x, f"{_AS_STRIDED}(x, ...)",
                                      "write to x itself, or copy the strided array first (.copy())")
    else:
        builder.aliases.readonly.add(id(result))
    return result


replace_in_traced_code(_NUMPY_AS_STRIDED, as_strided)
