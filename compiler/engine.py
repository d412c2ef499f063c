"""LLVM code generation through the MLIR C API's execution engine, by
ctypes (which releases the GIL, so engines on several threads really run
at the same time, through `mlir.typed_capi`): the object file of a whole
module (`compile_module`; split_codegen.py compiles a cut module's parts),
and the thread that destroys engines once their objects are written.

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
import os
import queue
import threading

from kiln.compiler.llvm_options import apply_llvm_options
from kiln.compiler.mlir import MlirHandle, MlirStringRef, capi_pointer, ir, string_ref, typed_capi


# Where a part's JIT links the functions other parts define: the object
# file keeps them as undefined symbols (the JIT's own copy is never run).
ELSEWHERE = ctypes.c_char(0)


def compile_module(module: ir.Module, anchor: str, shared_libs: list[str], path: str, opt_level: int = 3) -> str:
    """LLVM codegen of a whole bindings `module` into the object file at
    `path`, through the C API as `compile_parts` compiles a part (the engine
    is released on the release thread, not waited for); "" on success, else
    why not (an external symbol LLVM could not resolve: the messages are
    printed above)."""
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
        if anchor and not capi.mlirExecutionEngineLookupPacked(engine, string_ref(anchor)):
            return ("LLVM could not link the module (an external symbol could not be resolved; "
                    "see the messages printed above)")
        capi.mlirExecutionEngineDumpToObjectFile(engine, string_ref(path))
        return ""
    finally:
        release(capi, engine, None, None)


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
