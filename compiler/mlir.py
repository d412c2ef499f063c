"""The MLIR provider: the only module of kiln that imports the MLIR Python
bindings (torch-mlir's build of upstream MLIR plus StableHLO).

Everything else imports `ir`, `passmanager`, `ExecutionEngine` and the dialect
modules from here, so the provider can be swapped; `kiln.dialects.new_context`
builds a context with StableHLO and kiln's own dialects.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading


@contextlib.contextmanager
def _signal_handlers_deferred():
    """Python signal handlers (Ctrl-C's KeyboardInterrupt, an alarm's) run
    after the block, not inside it. A handler that raised while the
    bindings' native modules were importing left them half-registered
    (the next import failed: "Dialect namespace 'linalg' is already
    registered") or crashed the process. Main thread only (handlers run
    there, and only there can they be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list = []
    saved = {}
    for signum in signal.valid_signals():
        handler = signal.getsignal(signum)
        if callable(handler):
            saved[signum] = handler
            signal.signal(signum, lambda number, frame: caught.append((number, frame)))
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        for number, frame in caught:
            saved[number](number, frame)


with _signal_handlers_deferred():
    from torch_mlir import ir, passmanager  # noqa: F401
    from torch_mlir._mlir_libs import _stablehlo
    from torch_mlir._mlir_libs._mlir import globals as _mlir_globals

    # linalg's module is kiln's (see kiln.compiler.dialect_modules): first in
    # the search path, so that the bindings never import the provider's.
    if "kiln.compiler.dialect_modules" not in _mlir_globals.dialect_search_modules:
        _mlir_globals.dialect_search_modules = ["kiln.compiler.dialect_modules",
                                                *_mlir_globals.dialect_search_modules]
    from kiln.compiler.dialect_modules import linalg  # noqa: F401
    from torch_mlir.dialects import (  # noqa: F401
        arith,
        irdl,
        bufferization,
        func,
        llvm,
        math,
        memref,
        scf,
        tensor,
    )
    from torch_mlir.execution_engine import ExecutionEngine  # noqa: F401

    _stablehlo.register_stablehlo_passes()

def register_dialect_modules(package: str) -> None:
    """Make `package` a place where the bindings look for a dialect's Python
    module (`package.<namespace>`), after the provider's own.

    The bindings look the module up each time they wrap an op of a dialect
    whose module they have not found yet, and they remember only successes:
    for StableHLO (no module in this build) and kiln's IRDL dialects every
    `value.owner`, `op.parent` or `block.operations` item cost a failing
    import (0.6 ms, a search of the whole import path). Once a module is
    found the namespace is settled and an op is wrapped in ~15 us.
    """
    if package not in _mlir_globals.dialect_search_modules:
        _mlir_globals.append_dialect_search_prefix(package)


# StableHLO attribute classes the lowering and passes build or read.
DotDimensionNumbers = _stablehlo.DotDimensionNumbers
GatherDimensionNumbers = _stablehlo.GatherDimensionNumbers
ScatterDimensionNumbers = _stablehlo.ScatterDimensionNumbers


def register_stablehlo_dialect(ctx: ir.Context) -> None:
    """Make StableHLO known to `ctx` (kiln.dialects.new_context calls this)."""
    _stablehlo.register_dialect(ctx)


def dynamic_size() -> int:
    return ir.ShapedType.get_dynamic_size()


def _capi_library() -> ctypes.CDLL:
    """The provider's MLIR C API library (the Python bindings link it)."""
    import torch_mlir

    global _CAPI
    if _CAPI is None:
        path = os.path.join(list(torch_mlir.__path__)[0], "_mlir_libs", "libTorchMLIRAggregateCAPI.so")
        _CAPI = ctypes.CDLL(path)
        _CAPI.mlirTranslateModuleToLLVMIRToString.argtypes = [ctypes.c_void_p]
        _CAPI.mlirTranslateModuleToLLVMIRToString.restype = ctypes.c_void_p
        _CAPI.LLVMDisposeMessage.argtypes = [ctypes.c_void_p]
        _CAPI.LLVMDisposeMessage.restype = None
    return _CAPI


_CAPI: ctypes.CDLL | None = None


# The bindings' capsules name their kind: "torch_mlir.ir.<Kind>._CAPIPtr".
CAPSULE_PREFIX = "torch_mlir.ir."
_GET_POINTER: list = []


def capi_pointer(obj, kind: str) -> int:
    """The C API handle (MlirContext, MlirModule, MlirOperation, ...) of a
    bindings object `obj` of `kind` ("Context", "Module", "Operation",
    "Location"), as an address: the pointer in its `_CAPIPtr` capsule."""
    if not _GET_POINTER:
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        get_pointer.restype = ctypes.c_void_p
        _GET_POINTER.append(get_pointer)
    return _GET_POINTER[0](obj._CAPIPtr, f"{CAPSULE_PREFIX}{kind}._CAPIPtr".encode())


def translate_to_llvmir(module: ir.Module) -> str:
    """LLVM IR text of a module in the LLVM dialect. Call it only on a
    module that translates (ExecutionEngine accepted it): the C API has no
    way to report a failed translation."""
    operation = capi_pointer(module.operation, "Operation")
    capi = _capi_library()
    text = capi.mlirTranslateModuleToLLVMIRToString(operation)
    if not text:
        return ""
    try:
        return ctypes.string_at(text).decode()
    finally:
        capi.LLVMDisposeMessage(text)


class MlirHandle(ctypes.Structure):
    """Any C API handle by value (MlirContext, MlirModule, MlirOperation, ...)."""

    _fields_ = [("ptr", ctypes.c_void_p)]


class MlirStringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


def string_ref(text: str) -> MlirStringRef:
    data = text.encode()
    return MlirStringRef(data, len(data))


def string_value(ref: MlirStringRef) -> str:
    return ctypes.string_at(ref.data, ref.length).decode()


_TYPED: list[ctypes.CDLL] = []


def typed_capi() -> ctypes.CDLL:
    """The MLIR C API library with the signatures kiln calls it by through
    ctypes (handles and strings by value: `MlirHandle`, `MlirStringRef`): a
    library object of its own, since argtypes belong to the object and
    `_capi_library()` declares the LLVM IR translation with its own."""
    if not _TYPED:
        capi = ctypes.CDLL(_capi_library()._name)
        handle, string = MlirHandle, MlirStringRef
        for name, args, result in (
                ("mlirExecutionEngineCreate", [handle, ctypes.c_int, ctypes.c_int, ctypes.POINTER(string),
                                               ctypes.c_bool, ctypes.c_bool], handle),
                ("mlirExecutionEngineRegisterSymbol", [handle, string, ctypes.c_void_p], None),
                ("mlirExecutionEngineLookupPacked", [handle, string], ctypes.c_void_p),
                ("mlirExecutionEngineLookup", [handle, string], ctypes.c_void_p),
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
                ("mlirArrayAttrGet", [handle, ctypes.c_ssize_t, ctypes.POINTER(handle)], handle),
                ("mlirContextGetOrLoadDialect", [handle, string], handle),
                ("mlirLocationIsAName", [handle], ctypes.c_bool),
                ("mlirLocationNameGetChildLoc", [handle], handle),
                ("mlirLocationIsAFileLineColRange", [handle], ctypes.c_bool),
                ("mlirLocationFileLineColRangeGetFilename", [handle], handle),
                ("mlirLocationFileLineColRangeGetStartLine", [handle], ctypes.c_int),
                ("mlirLocationFileLineColRangeGetStartColumn", [handle], ctypes.c_int)):
            function = getattr(capi, name)
            function.argtypes, function.restype = args, result
        _TYPED.append(capi)
    return _TYPED[0]


def load_dialects(ctx: ir.Context, names: list[str]) -> None:
    """Load the registered dialects `names` into `ctx` through the C API:
    `ctx.dialects[name]` would also import each dialect's Python module
    (~1 ms apiece the first time in a process)."""
    capi = typed_capi()
    handle = MlirHandle(capi_pointer(ctx, "Context"))
    for name in names:
        if not capi.mlirContextGetOrLoadDialect(handle, string_ref(name)).ptr:
            raise KeyError(f"dialect {name!r} is not registered with the MLIR provider")


def source_position(location: ir.Location) -> tuple[str, int, int] | None:
    """(file, line, column) of a file location, also inside a name location
    (`loc("f.py":3:5)`, `loc("add"("f.py":3:5))`); None for any other kind.
    The bindings have no accessors for these, so this uses the C API."""
    capi = typed_capi()
    handle = MlirHandle(capi_pointer(location, "Location"))
    while capi.mlirLocationIsAName(handle):
        handle = capi.mlirLocationNameGetChildLoc(handle)
    if not capi.mlirLocationIsAFileLineColRange(handle):
        return None
    filename = string_value(capi.mlirIdentifierStr(capi.mlirLocationFileLineColRangeGetFilename(handle)))
    return (filename, capi.mlirLocationFileLineColRangeGetStartLine(handle),
            capi.mlirLocationFileLineColRangeGetStartColumn(handle))
