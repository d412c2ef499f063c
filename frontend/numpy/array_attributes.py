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


def as_strided(x: Any, shape: Any = None, strides: Any = None, subok: bool = False, writeable: bool = True) -> Any:
    """`np.lib.stride_tricks.as_strided(x, shape, strides)` of a C-contiguous
    array: element i of the result is the element of `x` at byte offset
    sum(i_k * strides_k) from its first one (strides may be traced ints, as
    `x.strides` gives them). kiln gathers those elements into a new array
    that stands for NumPy's view: writing to it, or reading it after `x`
    changed, is refused; offsets outside `x` (undefined memory in NumPy)
    raise ValueError when the code runs.

    >>> windows = as_strided(a, shape=(a.shape[0] - 2, 3), strides=(a.strides[0], a.strides[0]))
    """
    if not isinstance(x, Tracer):
        return np.lib.stride_tricks.as_strided(x, shape, strides, subok, writeable)
    from kiln.numpy._base import check
    from kiln.numpy.creation import iota

    x = materialize(x)
    builder = current_builder()
    what = "np.lib.stride_tricks.as_strided"
    if not builder.aliases.is_contiguous(x):
        raise KilnValueError(f"{what}: kiln takes strides over a C-contiguous array, and this one is a "
                             "non-contiguous view; pass np.ascontiguousarray(x) (a copy) instead")
    shape = tuple(x.aval.shape) if shape is None else tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    strides = tuple(_strides(x)) if strides is None else tuple(strides)
    if len(strides) != len(shape):
        raise KilnValueError("mismatch in length of strides and shape")
    itemsize = x.aval.dtype.itemsize
    index: Any = knp.zeros((), dtype=np.int64)
    for axis, (dim, stride) in enumerate(zip(shape, strides)):
        if isinstance(stride, Tracer):
            check(knp.equal(knp.remainder(stride, itemsize), 0), "ValueError",
                  f"{what}: stride {axis} is not a multiple of the itemsize {itemsize}")
        elif stride % itemsize:
            raise KilnValueError(f"{what}: stride {stride} (axis {axis}) is not a multiple of the itemsize "
                                 f"{itemsize}; kiln reads whole elements")
        along = iota(dim).astype(np.int64) * (stride // itemsize)
        index = knp.expand_dims(index, -1) + along
    size = shape_product(x.aval.shape)
    check(knp.all(knp.logical_and(knp.greater_equal(index, 0), knp.less(index, size))), "ValueError",
          f"{what}: the shape and strides reach outside the array (memory NumPy would read undefined)")
    result = knp.reshape(knp.take(knp.reshape(x, -1), knp.reshape(index, -1)), shape)
    builder.aliases.copy_for_view(result, x, f"the result of {what}",
                                  "copy it first (.copy()) and write the copy, or build the values by indexing")
    return result


replace_in_traced_code(np.lib.stride_tricks.as_strided, as_strided)
