"""LLVM code generation through the MLIR C API's execution engine, by
ctypes (which releases the GIL, so engines on several threads really run
at the same time, through `mlir.typed_capi`): the object file of a whole
module (`compile_module`; split_codegen.py compiles a cut module's parts),
the thread that destroys engines once their objects are written, and the
code a first call runs straight from its engines (`JitImage`, with
`Trampolines` between a cut module's parts) while its library is linked
behind it (docs/architecture.md, "The first call runs in the JIT").

Why ctypes and not the bindings' `ExecutionEngine`: an engine's
destruction (its JIT session, the LLVM module it holds) costs ~2-2.5 ms,
and the bindings run it when the Python object dies, on the first call's
path; here `release` hands it to a thread of its own. The C API's engine
optimizes at the level it is given but runs codegen at its default level
whatever the level (docs/benchmarks.md, session 15).
"""

from __future__ import annotations

import atexit
import ctypes
import mmap
import os
import platform
import queue
import struct
import sys
import threading

from kiln.compiler.llvm_options import apply_llvm_options
from kiln.compiler.mlir import MlirHandle, MlirStringRef, capi_pointer, ir, string_ref, typed_capi


# Where a part's JIT links the functions other parts define: the object
# file keeps them as undefined symbols (the JIT's own copy is never run).
ELSEWHERE = ctypes.c_char(0)


def compile_module(module: ir.Module, anchor: str, shared_libs: list[str], path: str, opt_level: int = 3,
                   keep: list | None = None) -> str:
    """LLVM codegen of a whole bindings `module` into the object file at
    `path`, through the C API as `compile_parts` compiles a part (the engine
    is released on the release thread, not waited for); "" on success, else
    why not (an external symbol LLVM could not resolve: the messages are
    printed above). With `keep` (a list), the engine is not released and
    writes no object: `keep` gets a `JitImage` whose `entry` is the packed
    `anchor` and whose `dump` writes the object to `path` later."""
    capi = typed_capi()
    apply_llvm_options()
    libraries = (MlirStringRef * len(shared_libs))(*[string_ref(lib) for lib in shared_libs])
    engine = capi.mlirExecutionEngineCreate(MlirHandle(capi_pointer(module, "Module")), opt_level,
                                            len(shared_libs),
                                            libraries, True, True)
    if not engine.ptr:
        return "LLVM could not translate or optimize the module (see the messages printed above)"
    try:
        # Compile (and link in the JIT) through the entry: dumping would otherwise look up the
        # packed wrapper of every function, which internal functions no longer have.
        entry = capi.mlirExecutionEngineLookupPacked(engine, string_ref(anchor)) if anchor else None
        if anchor and not entry:
            return ("LLVM could not link the module (an external symbol could not be resolved; "
                    "see the messages printed above)")
        if keep is not None:
            keep.append(JitImage([(capi, engine, None, None)], [path], entry, shared_libs))
            engine = None
            return ""
        capi.mlirExecutionEngineDumpToObjectFile(engine, string_ref(path))
        return ""
    finally:
        if engine is not None:
            release(capi, engine, None, None)


# The libraries an image's code calls into, opened once more by kiln: LLVM closes
# the ones its engines opened when the process exits (its static destructors),
# which would unmap the support code under its own worker threads.
_PINNED: dict[str, ctypes.CDLL] = {}


def _pin_libraries(paths: list[str]) -> None:
    """Keep `paths` loaded until the process ends (an image runs their code)."""
    for path in paths:
        if path not in _PINNED:
            _PINNED[path] = ctypes.CDLL(path)


def jit_supported() -> bool:
    """Whether a first call can run from its engines: Linux on x86-64, where
    `Trampolines` know the machine code of a jump."""
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


class Trampolines:
    """Jumps in executable memory, one per function a part of a cut module
    calls in another part: each part's engine links such a call to its
    jump (`mlirExecutionEngineRegisterSymbol`) before the other part is
    compiled, and `aim` points the jump at the function once it is. A jump
    is `jmp *0(%rip)` followed by the target's address (x86-64)."""

    SIZE = 16
    _CODE = b"\xff\x25\x00\x00\x00\x00"

    def __init__(self, names: list[str]):
        self.index = {name: i for i, name in enumerate(names)}
        self._memory = mmap.mmap(-1, max(len(names), 1) * self.SIZE,
                                 prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        view = ctypes.c_char.from_buffer(self._memory)
        self._base = ctypes.addressof(view)
        del view  # (a live export would keep the map from closing)
        for i in range(len(names)):
            self._memory[i * self.SIZE:(i + 1) * self.SIZE] = self._CODE + bytes(8) + b"\xcc\xcc"

    def address(self, name: str) -> int:
        return self._base + self.SIZE * self.index[name]

    def aim(self, name: str, target: int) -> None:
        struct.pack_into("<Q", self._memory, self.SIZE * self.index[name] + len(self._CODE), target)


def trampolines(names: list[str]) -> "Trampolines | None":
    """`Trampolines` for `names`, or None where memory cannot be both
    written and executed (a hardened kernel): the first call then waits
    for its library."""
    try:
        return Trampolines(names)
    except (OSError, ValueError):
        return None


class JitImage:
    """A compiled function living in the engines of this process: `entry` is
    the address of its packed entry point. Its engines (and `trampolines`)
    are released when the image is no longer referenced: a `runtime.Executable`
    holds it until the function's library is linked, and a call in progress
    holds it until the call returns. `dump` writes each engine's object file
    (`paths[i]` for the i-th engine), for the library. The shared
    `libraries` the engines linked the code to stay loaded for good."""

    def __init__(self, handles: list, paths: list[str], entry: int, libraries: list[str],
                 trampolines: "Trampolines | None" = None):
        _pin_libraries(libraries)
        self.handles = handles
        self.paths = paths
        self.entry = entry
        self.trampolines = trampolines

    def symbol(self, name: str) -> int | None:
        """The address the JIT links `name` to (kiln's runtime functions: the
        copy of the support code the image's code calls)."""
        capi, jit, _, _ = self.handles[0]
        return capi.mlirExecutionEngineLookup(jit, string_ref(name)) or None

    def dump(self) -> list[str]:
        for (capi, jit, _, _), path in zip(self.handles, self.paths):
            capi.mlirExecutionEngineDumpToObjectFile(jit, string_ref(path))
        return self.paths

    def __del__(self) -> None:
        if sys.is_finalizing():
            return  # the process is ending: nothing to give back
        handles, self.handles = self.handles, []
        for handle in handles:
            release(*handle)
        # (The trampolines' memory is unmapped with them: no call is in progress.)


_RELEASE_QUEUE: "queue.SimpleQueue | None" = None
_RELEASE_LOCK = threading.Lock()
# Held while an engine is destroyed, and by a fork (os.register_at_fork): a
# child never inherits LLVM in the middle of a destruction, and starts a
# release thread of its own.
_BUSY = threading.Lock()


def _after_fork_in_child() -> None:
    global _RELEASE_QUEUE, _BUSY
    _RELEASE_QUEUE = None
    _BUSY = threading.Lock()


os.register_at_fork(before=lambda: _BUSY.acquire(), after_in_parent=lambda: _BUSY.release(),
                    after_in_child=_after_fork_in_child)


def release(capi: ctypes.CDLL, engine: "MlirHandle | None", module: "MlirHandle | None",
            ctx: "MlirHandle | None") -> None:
    """Destroy a part's engine, module and context on a thread of their own:
    an engine's destruction (its JIT session, the LLVM module it holds) costs
    ~2-2.5 ms, which the first call would otherwise wait for once per part.
    The thread drains its queue before the interpreter exits (atexit), so
    no LLVM object is torn down while the process's own exit runs; a fork
    waits for a destruction in progress, and the child gets its own thread."""
    global _RELEASE_QUEUE
    with _RELEASE_LOCK:
        if _RELEASE_QUEUE is None:
            pending: queue.SimpleQueue = queue.SimpleQueue()

            def drain() -> None:
                while True:
                    item = pending.get()
                    if item is None:
                        return
                    with _BUSY:
                        _destroy(*item)

            releaser = threading.Thread(target=drain, name="kiln-codegen-release", daemon=True)
            releaser.start()

            def finish() -> None:
                pending.put(None)
                releaser.join()

            atexit.register(finish)
            _RELEASE_QUEUE = pending
    _RELEASE_QUEUE.put((capi, engine, module, ctx))


def _destroy(capi: ctypes.CDLL, engine: "MlirHandle | None", module: "MlirHandle | None",
             ctx: "MlirHandle | None") -> None:
    if engine is not None and engine.ptr:
        capi.mlirExecutionEngineDestroy(engine)
    if module is not None and module.ptr:
        capi.mlirModuleDestroy(module)
    if ctx is not None:
        capi.mlirContextDestroy(ctx)
