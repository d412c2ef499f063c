"""Runtime: calling a compiled library on NumPy arrays.

In: a shared library exporting the packed entry point
`_mlir__mlir_ciface_<name>` and `kiln_invoke`, plus the signature
(dtype and rank of each argument and result).
Out: NumPy results (owning their buffers), or the `ValueError` /
`IndexError` of the run-time check that failed, worded by the message the
library itself holds (see `check_error`).

The hot path does no per-call signature work. It runs in C
(`fastcall.c`, built on first use as a CPython extension) when a C compiler
with Python's headers is available; otherwise in Python, where each thread
owns a call frame laid out once per executable (descriptor words, pointer
slots, the packed argument array, scratch for scalars) and a call only
writes pointers and sizes into it. `KILN_FASTCALL=0` forces the Python path.
"""

from __future__ import annotations

import ctypes
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from kiln.errors import CHECK_ERRORS, KilnInternalError, KilnValueError
from kiln.runtime import toolchain
from kiln.runtime.debug_print import install_print_hook
from kiln.runtime.memref import (
    GLOBAL_ALLOCATED,
    BufferView,
    OwnedBuffer,
    contiguous_strides,
    count_released_by_c,
    data_pointer,
    descriptor_words,
    own_buffer,
    register_owner_type,
    tune_malloc,
)

_WORD = 8
OUT_OF_MEMORY = -1  # support.c's KILN_OUT_OF_MEMORY: an allocation of the compiled code failed
PYTHON_ERROR = -2  # support.c's KILN_PYTHON_ERROR: a signal handler raised during the call
_SCRATCH_WORDS = 2  # room for any scalar kiln supports (complex128)
_FASTCALL_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fastcall.c")
_fastcall_state: dict = {}


def fastcall_module():
    """The C hot path (`kiln_fastcall`), or None when disabled or unbuildable."""
    if "module" not in _fastcall_state:
        module = None
        if os.environ.get("KILN_FASTCALL", "1") != "0":
            try:
                module = toolchain.python_extension(_FASTCALL_SOURCE, "kiln_fastcall")
            except (toolchain.ToolchainError, OSError, ImportError):
                module = None  # no compiler or no Python headers: the Python path serves
            if module is not None:
                register_owner_type(module.OwnedBuffer, module.live_buffers)
        _fastcall_state["module"] = module
    return _fastcall_state["module"]


# support.c's kiln_interrupt_hooks: four C API functions, the main thread's
# id, words the libraries share (zero at first), PyCapsule_GetPointer, and the
# count of buffers kiln_release_buffer freed.
_HOOK_WORDS = 11
_RELEASED_WORD = 10
_interrupt_hooks: list = []


def interrupt_hooks() -> int:
    """The address of the process-wide block every loaded library gets
    through `kiln_set_interrupt_hooks`: with it, compiled loops run Python's
    pending signal handlers while a call of the main thread lasts
    (support.c, "Interrupts")."""
    if not _interrupt_hooks:
        api = ctypes.pythonapi
        # malloc'd and never freed: the watchdog thread reads it until the
        # process ends, after Python has freed its own objects.
        calloc = ctypes.CDLL(None).calloc
        calloc.argtypes, calloc.restype = [ctypes.c_size_t, ctypes.c_size_t], ctypes.c_void_p
        block = (ctypes.c_uint64 * _HOOK_WORDS).from_address(calloc(_HOOK_WORDS, 8))
        for i, name in enumerate(("PyGILState_Ensure", "PyGILState_Release", "PyErr_CheckSignals", "PyErr_Fetch")):
            block[i] = ctypes.cast(getattr(api, name), ctypes.c_void_p).value
        block[4] = threading.main_thread().ident
        block[9] = ctypes.cast(api.PyCapsule_GetPointer, ctypes.c_void_p).value
        _interrupt_hooks.append(block)
        count_released_by_c(lambda: block[_RELEASED_WORD])
    return ctypes.addressof(_interrupt_hooks[0])


def _raise_python_error(failure: Sequence[int]) -> None:
    """Raise the exception a signal handler raised inside a compiled call
    (support.c's kiln_poll fetched its type, value and traceback references;
    PyErr_Restore takes them over, and a `pythonapi` call raises what it sets)."""
    restore = ctypes.pythonapi.PyErr_Restore
    restore.argtypes = [ctypes.c_void_p] * 3
    restore.restype = None
    restore(failure[1] or None, failure[2] or None, failure[3] or None)
    raise KilnInternalError("a signal handler's exception was lost on its way out of a compiled call")


@dataclass(frozen=True)
class ValueSpec:
    dtype: np.dtype
    rank: int


class _CallFrame:
    """One thread's memory for calls of one executable.

    words: every result descriptor (in order, as the C interface's result
    struct), then every argument descriptor, then scalar scratch;
    slots[i]: address of result struct / argument descriptor i;
    packed[i]: address of slots[i] (MLIR's packed `void **` calling form).
    """

    def __init__(self, exe: "Executable"):
        total = exe.arg_scratch_offset + _SCRATCH_WORDS * len(exe.args)
        self.words = (ctypes.c_int64 * max(total, 1))()
        base = ctypes.addressof(self.words)
        addresses = ([base] if exe.results else []) + [base + _WORD * o for o in exe.arg_offsets]
        self.slots = (ctypes.c_void_p * max(len(addresses), 1))(*addresses)
        slot_base = ctypes.addressof(self.slots)
        self.packed = (ctypes.c_void_p * max(len(addresses), 1))(
            *[slot_base + ctypes.sizeof(ctypes.c_void_p) * i for i in range(len(addresses))])
        self.packed_address = ctypes.addressof(self.packed)
        self.failure = (ctypes.c_int64 * 4)()
        self.failure_address = ctypes.addressof(self.failure)
        # A scalar argument is copied into its scratch words; its descriptor
        # points there once and for all.
        self.scalar_views: list[np.ndarray | None] = []
        scratch = np.frombuffer(self.words, dtype=np.int64)
        for i, (spec, offset) in enumerate(zip(exe.args, exe.arg_offsets)):
            if spec.rank:
                self.scalar_views.append(None)
                continue
            start = exe.arg_scratch_offset + _SCRATCH_WORDS * i
            view = scratch[start:start + _SCRATCH_WORDS].view(np.uint8)[: spec.dtype.itemsize].view(spec.dtype)
            self.scalar_views.append(view.reshape(()))
            address = base + _WORD * start
            self.words[offset:offset + 3] = (address, address, 0)


class Executable:
    """One compiled function: `exe(values) -> list of NumPy arrays`.

    `values` has one entry per argument: a NumPy array of the declared
    dtype and rank (any memory layout), or a scalar for a rank-0 argument.
    `written` lists the arguments the library writes in place (the final
    value of a written argument is in its buffer, not a result): when the
    call passed a copy of one (a scalar's scratch words, a non-contiguous
    or unaligned array), the copy's contents go back into the caller's
    array after a successful call.
    """

    def __init__(self, library: str | None, name: str, args: list[ValueSpec], results: list[ValueSpec],
                 written: Sequence[int] = (), image: Any = None):
        self.name = name
        self.written = tuple(written)
        self.args = [ValueSpec(np.dtype(a.dtype), a.rank) for a in args]
        self.results = [ValueSpec(np.dtype(r.dtype), r.rank) for r in results]
        tune_malloc()
        # Word offsets of each descriptor in a call frame.
        offset = 0
        self.result_offsets = []
        for r in self.results:
            self.result_offsets.append(offset)
            offset += descriptor_words(r.rank)
        self.result_words = offset
        self.arg_offsets = []
        for a in self.args:
            self.arg_offsets.append(offset)
            offset += descriptor_words(a.rank)
        self.arg_scratch_offset = offset
        self._array_args = [(i, o, a.rank) for i, (a, o) in enumerate(zip(self.args, self.arg_offsets)) if a.rank]
        self._result_plan = [(o, r.rank, r.dtype, r.dtype.str, r.dtype.itemsize)
                             for r, o in zip(self.results, self.result_offsets)]
        self._local = threading.local()
        # A first call's code in the JIT (compiler/engine.py's JitImage): its
        # entry, with kiln's support library's runtime, until `adopt` gets
        # the linked library. A call holds the image until it returns.
        self._image = image
        self._library: str | None = None
        self._linked = threading.Event()
        self._link_failure = ""
        if image is not None:
            # The support code the JIT linked the image's code to (the copy its checks and
            # buffers use), as the JIT finds it.
            self._bind(image.symbol, image.entry)
        else:
            self.adopt(library)

    def _bind(self, symbol: "Callable[[str], int | None]", packed_fn: int) -> None:
        """Call `packed_fn` through the runtime functions `symbol(name)` finds (their addresses)."""
        install_print_hook(symbol("kiln_set_print_hook"))
        invoke = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
            symbol("kiln_invoke"))
        set_hooks = symbol("kiln_set_interrupt_hooks")  # (absent: exported by a kiln before interrupts)
        if set_hooks:
            ctypes.CFUNCTYPE(None, ctypes.c_void_p)(set_hooks)(interrupt_hooks())
        # The C destructor of result owners on the Python path (absent from
        # libraries exported by an older kiln: their owners free in Python).
        release = symbol("kiln_release_buffer")
        fastcall = fastcall_module()
        caller = None if fastcall is None else fastcall.Caller(
            ctypes.cast(invoke, ctypes.c_void_p).value, packed_fn,
            [(a.dtype, a.rank) for a in self.args], [(r.dtype, r.rank) for r in self.results],
            list(self.written))
        # (Attribute by attribute under the GIL: a call reads the image first, so a call that
        # finds the new caller finds an image it needs no more.)
        self._release = release if release and set_hooks else 0
        self._invoke = invoke
        self._packed_fn = packed_fn
        self._caller = caller

    def adopt(self, library: str) -> None:
        """Call the linked shared `library` from now on (and let the JIT's
        image go once the calls in progress return)."""
        lib = ctypes.CDLL(library)

        def symbol(name: str) -> int | None:
            try:
                return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
            except AttributeError:
                return None

        entry = symbol(f"_mlir__mlir_ciface_{self.name}")
        if not entry:
            raise AttributeError(f"{library} has no entry point _mlir__mlir_ciface_{self.name}")
        self._lib = lib  # (loaded for good: results may point at its constants)
        self._bind(symbol, entry)
        self._library = library
        self._image = None
        self._linked.set()

    def link_failed(self, reason: str) -> None:
        """The library of a first call's code could not be linked: the code
        keeps running from the JIT; `library` raises `reason`."""
        self._link_failure = reason
        self._linked.set()

    @property
    def library(self) -> str:
        """The path of the function's shared library (a first call's is
        linked behind it: this waits for it)."""
        self._linked.wait()
        if self._library is None:
            raise KilnInternalError(f"the library of {self.name} could not be linked: {self._link_failure}")
        return self._library

    def _frame(self) -> _CallFrame:
        frame = getattr(self._local, "frame", None)
        if frame is None:
            frame = self._local.frame = _CallFrame(self)
        return frame

    def __call__(self, values: Sequence[Any]) -> list:
        """Run on `values`; results of rank 0 come back as NumPy scalars."""
        image = self._image  # (held until the call's messages are read)
        caller = self._caller
        if caller is None:
            return self.call_python(values)
        out = caller(values)
        if type(out) is tuple:  # (kind, value, value, message) of a failed run-time check
            if out[0] == PYTHON_ERROR:
                _raise_python_error(out)
            raise check_error(out)
        del image
        return out

    def call_python(self, values: Sequence[Any]) -> list:
        """`__call__` without the C hot path (same behaviour)."""
        image = self._image  # (held until the call's messages are read)
        invoke, packed_fn = self._invoke, self._packed_fn
        frame = self._frame()
        words = frame.words
        keep = {}  # contiguous copies must outlive the call
        inputs = set()
        for i, view in enumerate(frame.scalar_views):
            if view is not None:
                try:
                    view[()] = values[i]
                except OverflowError:
                    raise OverflowError(f"scalar argument {i} (after the implicit dims): {values[i]!r} does not "
                                        f"fit in {view.dtype}; pass a float or a NumPy array") from None
        for i, offset, rank in self._array_args:
            a = values[i]
            flags = a.flags
            if not (flags.c_contiguous and flags.aligned):
                a = np.array(a, order="C")  # a fresh copy: contiguous and aligned
                keep[i] = a
            ptr = data_pointer(a)
            inputs.add(ptr)
            shape = a.shape
            words[offset:offset + 3 + 2 * rank] = (ptr, ptr, 0, *shape, *contiguous_strides(shape))
        code = invoke(packed_fn, frame.packed_address, frame.failure_address)
        if code:
            if code == PYTHON_ERROR:
                _raise_python_error(frame.failure)
            raise check_error(frame.failure)
        results = self._adopt_results(words[:self.result_words], inputs) if self.results else []
        for i in self.written:
            if isinstance(values[i], np.ndarray):
                if frame.scalar_views[i] is not None:
                    values[i][()] = frame.scalar_views[i]
                elif i in keep:
                    np.copyto(values[i], keep[i])
        if frame.failure[1] and not frame.failure[0]:  # (a library older than warnings leaves a stale record)
            warn_of_call(frame.failure)
        del image
        return results

    def _adopt_results(self, words: list, inputs: set) -> list:
        """NumPy results that own their buffers. A result aliasing an
        argument (or a constant of the library) is copied; results sharing
        one buffer share one owner. Results have the identity layout, so
        their strides are row-major and need not be read."""
        owners: dict[int, OwnedBuffer] = {}
        out = []
        for offset, rank, dtype, typestr, itemsize in self._result_plan:
            allocated = words[offset]
            shape = tuple(words[offset + 3:offset + 3 + rank])
            interface = {"version": 3, "shape": shape, "typestr": typestr, "strides": None,
                         "data": (words[offset + 1] + words[offset + 2] * itemsize, False)}
            if allocated in inputs or allocated == GLOBAL_ALLOCATED or 0 in shape:
                value = np.array(BufferView(None, interface)) if 0 not in shape else np.empty(shape, dtype)
            else:
                owner = owners.get(allocated)
                if owner is None:
                    owner = owners[allocated] = own_buffer(allocated, self._release)
                value = np.asarray(BufferView(owner, interface))
            out.append(value[()] if rank == 0 else value)
        if len(owners) < len(out):
            self._free_unreferenced(words, inputs, owners)
        return out

    def _free_unreferenced(self, words: list, inputs: set, owners: dict) -> None:
        """Free result buffers no array views (those of empty results)."""
        for offset, _, _, _, _ in self._result_plan:
            allocated = words[offset]
            if allocated not in owners and allocated not in inputs and allocated != GLOBAL_ALLOCATED:
                owners[allocated] = own_buffer(allocated, self._release)


def warn_of_call(record: Sequence[int]) -> None:
    """Warn with each message of a successful call's record `(0, message
    address...)`: the checks of a warning kind that failed (once each)."""
    for address in record[1:]:
        if address:
            warnings.warn(ctypes.string_at(address).decode(), RuntimeWarning, stacklevel=5)


def check_error(failure: Sequence[int]) -> Exception:
    """The exception of a failure record `(kind code, value0, value1, message
    address)` filled by support.c's `kiln_check_failed`: the message is a
    NUL-terminated constant of the compiled library (placed there by
    kiln-lower-checks), whose `{}`s take the two values."""
    kind, v0, v1, message_address = failure[0], failure[1], failure[2], failure[3]
    if kind == OUT_OF_MEMORY:
        if v0 == -2:
            return KilnValueError("negative dimensions are not allowed: a size computed at run time is "
                                  "negative (kiln-check-alloc-sizes)")
        if v0 < 0:
            return MemoryError("compiled code could not allocate an array: a size computed at run time needs "
                               "more than 2**62 bytes")
        return MemoryError(f"compiled code could not allocate {v0} bytes (malloc failed)")
    if not 1 <= kind <= len(CHECK_ERRORS) or not message_address:
        return KilnInternalError(f"a run-time check failed with an unknown kind {kind} or no message (the "
                                 "library and the runtime disagree on kiln_check_failed)")
    error = list(CHECK_ERRORS.values())[kind - 1]
    return error(ctypes.string_at(message_address).decode().format(v0, v1))
