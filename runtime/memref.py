"""Runtime: the memref ABI (MLIR's C interface) and result ownership.

In: NumPy arrays and Python scalars (arguments); descriptors filled by the
compiled code (results).
Out: ctypes descriptors `{allocated, aligned, offset, sizes[r], strides[r]}`
for arguments; NumPy arrays for results that own their malloc'd buffer
without copying (the buffer is freed when the array dies).
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None


@functools.lru_cache(maxsize=None)
def descriptor_type(rank: int) -> type:
    """The ctypes struct of a ranked memref descriptor of `rank`."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


@functools.lru_cache(maxsize=None)
def results_type(ranks: tuple) -> type:
    """The struct the C interface fills for several results."""
    fields = [(f"r{i}", descriptor_type(r)) for i, r in enumerate(ranks)]
    return type(f"Results{len(ranks)}", (ctypes.Structure,), {"_fields_": fields})


def descriptor_for(array: np.ndarray):
    """A descriptor viewing a C-contiguous array (no copy)."""
    rank = array.ndim
    desc = descriptor_type(rank)()
    ptr = array.ctypes.data
    desc.allocated = ptr
    desc.aligned = ptr
    desc.offset = 0
    if rank:
        itemsize = array.itemsize
        desc.sizes[:] = array.shape
        desc.strides[:] = [s // itemsize for s in array.strides]
    return desc


class OwnedBuffer:
    """Owns a buffer malloc'd by compiled code; NumPy arrays view it via
    `__array_interface__` and keep this object alive as their base. A view
    of a buffer another OwnedBuffer frees holds that one in `parent`."""

    __slots__ = ("allocated", "parent", "__array_interface__")

    def __init__(self, allocated: int, interface: dict, parent: "OwnedBuffer | None" = None):
        self.allocated = allocated
        self.parent = parent
        self.__array_interface__ = interface

    def __del__(self):
        if self.allocated:
            _free(self.allocated)
            self.allocated = 0


def free(ptr: int) -> None:
    if ptr:
        _free(ptr)


def array_interface(desc, dtype: np.dtype) -> dict:
    rank = len(desc.sizes) if hasattr(desc, "sizes") else 0
    shape = tuple(desc.sizes[:]) if rank else ()
    strides = tuple(s * dtype.itemsize for s in desc.strides[:]) if rank else None
    data = (desc.aligned or 0) + desc.offset * dtype.itemsize
    return {"version": 3, "shape": shape, "typestr": dtype.str, "data": (data, False), "strides": strides}


def owned_array(desc, dtype: np.dtype, parent: OwnedBuffer | None = None) -> np.ndarray:
    """A NumPy array over the descriptor's data. Without `parent` it owns
    (and will free) the allocation; with one it keeps `parent` alive."""
    dtype = np.dtype(dtype)
    interface = array_interface(desc, dtype)
    owner = OwnedBuffer(0 if parent is not None else (desc.allocated or 0), interface, parent)
    return np.asarray(owner)
