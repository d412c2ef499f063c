"""Runtime: the memref ABI (MLIR's C interface) and result ownership.

In: NumPy arrays and scalars (arguments); descriptors filled by the compiled
code (results).
Out: descriptor words `{allocated, aligned, offset, sizes[r], strides[r]}`
(all 64-bit) for arguments; NumPy arrays for results that own their
malloc'd buffer without copying (the buffer is freed when the last array
viewing it dies).
"""

from __future__ import annotations

import abc
import ctypes

import numpy as np

_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None

# glibc's malloc returns large freed blocks to the OS (munmap, or trimming
# the heap top), so the next call's buffers of the same size page-fault
# again: three 1.6 MB results cost ~1 ms of faults against ~50 us of work.
# Once a compiled library is loaded, blocks up to 32 MiB come from the heap
# and up to 128 MiB of free heap top is kept (KILN_MALLOC_TUNING=0 keeps
# glibc's defaults). Process-wide: NumPy's allocations benefit the same way.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_malloc_tuned = False


def tune_malloc() -> bool:
    """Apply the malloc settings above once (glibc only); True if applied."""
    global _malloc_tuned
    if _malloc_tuned:
        return True
    import os
    if os.environ.get("KILN_MALLOC_TUNING", "1") == "0":
        return False
    mallopt = getattr(_libc, "mallopt", None)
    if mallopt is None:
        return False  # not glibc
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    _malloc_tuned = bool(mallopt(_M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(_M_TRIM_THRESHOLD, 128 << 20))
    return _malloc_tuned


# `memref.get_global` descriptors carry this `allocated` pointer: the data
# is a constant inside the library, never to be freed.
GLOBAL_ALLOCATED = 0xDEADBEEF

_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def descriptor_words(rank: int) -> int:
    """How many 64-bit words a ranked memref descriptor of `rank` takes."""
    return 3 + 2 * rank


def data_pointer(array: np.ndarray) -> int:
    """The address of the first element of `array` (cheaper than
    `array.ctypes.data`, which builds a helper object)."""
    try:
        return _addressof(_from_buffer(array))
    except (TypeError, ValueError):  # read-only or empty
        return array.ctypes.data


def contiguous_strides(shape: tuple) -> tuple:
    """Row-major strides in elements. The compiled code expects these exact
    strides (identity layout), which NumPy need not report for size-1 dims."""
    rank = len(shape)
    if rank == 1:
        return (1,)
    strides = [1] * rank
    step = 1
    for axis in range(rank - 1, 0, -1):
        step *= shape[axis]
        strides[axis - 1] = step
    return tuple(strides)


class OwnedBuffer(metaclass=abc.ABCMeta):
    """Owns one buffer malloc'd by compiled code and frees it when it dies.
    NumPy arrays over the buffer reach it through their base chain.

    Made by `own_buffer` on the Python call path. No Python code runs when
    it dies: it holds a capsule whose destructor is the library's C function
    `kiln_release_buffer` (support.c), so a KeyboardInterrupt never lands in
    (and is never swallowed by) the death of a result. The C hot path owns
    its results with `kiln_fastcall.OwnedBuffer` (a registered virtual
    subclass), made and freed without running Python code at all."""

    __slots__ = ("allocated", "_capsule", "__weakref__")
    made = 0  # owners made with a capsule, process-wide (support.c counts their frees)

    def __init__(self, allocated: int, capsule: object = None):
        self._capsule = capsule
        self.allocated = allocated


class _PythonFreedBuffer(OwnedBuffer):
    """The owner for a library without `kiln_release_buffer` (exported by an
    older kiln): frees in `__del__`, where a KeyboardInterrupt can land."""

    __slots__ = ()
    live = 0  # buffers owned and not yet freed, process-wide

    def __init__(self, allocated: int):
        super().__init__(allocated)
        _PythonFreedBuffer.live += 1

    # `free` is bound at definition: at interpreter exit the module's
    # globals may already be None when the last buffers die. An __init__
    # interrupted before its first line leaves no `allocated`.
    def __del__(self, free=_free):
        allocated = getattr(self, "allocated", 0)
        if allocated:
            self.allocated = 0
            free(allocated)
            type(self).live -= 1


_CAPSULE_NAME = b"kiln.buffer"  # support.c's KILN_BUFFER_CAPSULE; alive as long as the module
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_new.restype = ctypes.py_object


def own_buffer(allocated: int, release: int) -> OwnedBuffer:
    """The owner of the result buffer at `allocated`; `release` is the
    address of the library's `kiln_release_buffer` (0: free it in Python).
    A KeyboardInterrupt landing between the call and this leaks the buffer
    (the Python path runs bytecode there; the C hot path does not)."""
    if not release:
        return _PythonFreedBuffer(allocated)
    OwnedBuffer.made += 1
    return OwnedBuffer(allocated, _capsule_new(allocated, _CAPSULE_NAME, release))


# Counters of the other owner types (the C hot path's), for live_buffers().
_other_owner_counts: list = []


def register_owner_type(owner_type: type, count_live) -> None:
    """Count `owner_type` (called with no arguments, `count_live` says how
    many of its buffers are alive) as an OwnedBuffer."""
    OwnedBuffer.register(owner_type)
    _other_owner_counts.append(count_live)


class BufferView:
    """An `__array_interface__` over part of a buffer; `owner` (an
    OwnedBuffer, or None for borrowed memory) stays alive as long as any
    array made from this view."""

    __slots__ = ("owner", "__array_interface__")

    def __init__(self, owner: OwnedBuffer | None, interface: dict):
        self.owner = owner
        self.__array_interface__ = interface


# Reads support.c's count of the buffers kiln_release_buffer freed (set by
# the runtime with the block it hands the libraries).
_released_by_c: list = []


def count_released_by_c(count) -> None:
    _released_by_c.append(count)


def live_buffers() -> int:
    """How many result buffers are alive (owned by NumPy arrays and not yet freed)."""
    released = sum(count() for count in _released_by_c)
    return (OwnedBuffer.made - released + _PythonFreedBuffer.live
            + sum(count() for count in _other_owner_counts))
