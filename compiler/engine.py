"""LLVM code generation through the MLIR C API's execution engine, by
ctypes (which releases the GIL, so engines on several threads really run
at the same time): the C API with the signatures kiln calls it by, the
object file of a whole module (`compile_module`; split_codegen.py compiles
a cut module's parts), and the thread that destroys engines once their
objects are written.

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
from kiln.compiler.mlir import _capi_library, capi_pointer, ir


class StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


class Handle(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


_CAPI: list[ctypes.CDLL] = []


def engine_capi() -> ctypes.CDLL:
    """The MLIR C API library with the signatures kiln's codegen calls it by:
    an object of its own (argtypes belong to a library object, and
    mlir.py's declares some of the same functions with its own types)."""
    if not _CAPI:
        capi = ctypes.CDLL(_capi_library()._name)
        handle, string = Handle, StringRef
        for name, args, result in (
                ("mlirExecutionEngineCreate", [handle, ctypes.c_int, ctypes.c_int, ctypes.POINTER(string),
                                               ctypes.c_bool, ctypes.c_bool], handle),
                ("mlirExecutionEngineRegisterSymbol", [handle, string, ctypes.c_void_p], None),
                ("mlirExecutionEngineLookupPacked", [handle, string], ctypes.c_void_p),
                ("mlirExecutionEngineDumpToObjectFile", [handle, string], None),
                ("mlirExecutionEngineDestroy", [handle], None),
                ("mlirContextCreateWithThreading", [ctypes.c_bool], handle),
                ("mlirContextDestroy", [handle], None),
                ("mlirGetDialectHandle__llvm__", [], handle),
                ("mlirDialectHandleLoadDialect", [handle, handle], handle),
                ("mlirModuleCreateParse", [handle, string], handle),
                ("mlirModuleDestroy", [handle], None),
                ("mlirModuleGetBody", [handle], handle),
                ("mlirBlockGetFirstOperation", [handle], handle),
                ("mlirBlockGetNextInRegion", [handle], handle),
                ("mlirOperationGetNextInBlock", [handle], handle),
                ("mlirOperationGetName", [handle], handle),
                ("mlirIdentifierStr", [handle], string),
                ("mlirOperationGetRegion", [handle, ctypes.c_ssize_t], handle),
                ("mlirRegionGetFirstBlock", [handle], handle),
                ("mlirOperationGetAttributeByName", [handle, string], handle),
                ("mlirOperationSetAttributeByName", [handle, string, handle], None),
                ("mlirStringAttrGetValue", [handle], string),
                ("mlirStringAttrGet", [handle, string], handle),
                ("mlirSymbolRefAttrGetRootReference", [handle], string),
                ("mlirAttributeParseGet", [handle, string], handle),
                ("mlirUnitAttrGet", [handle], handle),
                ("mlirArrayAttrGetNumElements", [handle], ctypes.c_ssize_t),
                ("mlirArrayAttrGetElement", [handle, ctypes.c_ssize_t], handle),
                ("mlirArrayAttrGet", [handle, ctypes.c_ssize_t, ctypes.POINTER(handle)], handle)):
            function = getattr(capi, name)
            function.argtypes, function.restype = args, result
        _CAPI.append(capi)
    return _CAPI[0]


def ref(text: str) -> StringRef:
    data = text.encode()
    return StringRef(data, len(data))


# Where a part's JIT links the functions other parts define: the object
# file keeps them as undefined symbols (the JIT's own copy is never run).
ELSEWHERE = ctypes.c_char(0)


def compile_module(module: ir.Module, anchor: str, shared_libs: list[str], path: str, opt_level: int = 3) -> str:
    """LLVM codegen of a whole bindings `module` into the object file at
    `path`, through the C API as `compile_parts` compiles a part (the engine
    is released on the release thread, not waited for); "" on success, else
    why not (an external symbol LLVM could not resolve: the messages are
    printed above)."""
    capi = engine_capi()
    apply_llvm_options()
    libraries = (StringRef * len(shared_libs))(*[ref(lib) for lib in shared_libs])
    engine = capi.mlirExecutionEngineCreate(Handle(capi_pointer(module, "Module")), opt_level, len(shared_libs),
                                            libraries, True, True)
    if not engine.ptr:
        return "LLVM could not translate or optimize the module (see the messages printed above)"
    try:
        # Compile (and link in the JIT) through the entry: dumping would otherwise look up the
        # packed wrapper of every function, which internal functions no longer have.
        if anchor and not capi.mlirExecutionEngineLookupPacked(engine, ref(anchor)):
            return ("LLVM could not link the module (an external symbol could not be resolved; "
                    "see the messages printed above)")
        capi.mlirExecutionEngineDumpToObjectFile(engine, ref(path))
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


def release(capi: ctypes.CDLL, engine: "Handle | None", module: "Handle | None", ctx: "Handle | None") -> None:
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


def _destroy(capi: ctypes.CDLL, engine: "Handle | None", module: "Handle | None", ctx: "Handle | None") -> None:
    if engine is not None and engine.ptr:
        capi.mlirExecutionEngineDestroy(engine)
    if module is not None and module.ptr:
        capi.mlirModuleDestroy(module)
    if ctx is not None:
        capi.mlirContextDestroy(ctx)


def string(ref: StringRef) -> str:
    return ctypes.string_at(ref.data, ref.length).decode()
