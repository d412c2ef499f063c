"""Stage "llvmir" on several cores: a large LLVM-dialect module cut into
parts that LLVM optimizes and compiles at the same time, one thread each.

In: the `llvm` stage's text, the entry points and the cores to use.
Out: one object file per part (linked together by codegen.py), and the
names a linker version script must keep out of the library's exports.

LLVM compiles one module on one thread, and a large kernel's outlined
parallel bodies (channel_flow: 57 bodies, ~60 % of its LLVM time) are
independent functions: each is reached only through its address
(`llvm.mlir.addressof`, passed to `kiln_parallel_for` or called directly,
`noinline`), so no optimization crosses from the caller into a body. The
bodies are dealt into parts by size (their text's lines), the entry and
everything else stay in part 0; a function one part defines and another
uses keeps external linkage there and is declared in the other. Each part
is parsed from text into a context of its own (two threads never share an
MLIR context) and compiled through the MLIR C API by ctypes, which releases
the GIL, so the parts really run in parallel.
"""

from __future__ import annotations

import ctypes
import os
import re
import threading
from dataclasses import dataclass, field

from kiln.compiler.mlir import _capi_library, ir

# Below this many lines of function text one module is compiled whole: a
# part costs a parse and an engine (~10-20 ms), a line ~0.15 ms of LLVM.
MIN_SPLIT_LINES = 2000
# A part is worth its engine above ~2,000 weighted lines (a body's line weighs BODY_LINE_COST).
MIN_PART_WEIGHT = 2000
BODY_LINE_COST = 3
THREADS_ENV = "KILN_COMPILE_THREADS"

_SYMBOL = r"[\w$.\-]+"
_DEFINITION = re.compile(rf"^  llvm\.func (?:\w+ )*@({_SYMBOL})\(")
_REFERENCE = re.compile(rf"@({_SYMBOL})")
_ADDRESS_TAKEN = re.compile(rf"llvm\.mlir\.addressof @({_SYMBOL})")


def compile_threads() -> int:
    """How many parts a large module may be cut into: `KILN_COMPILE_THREADS`
    when set (1 turns splitting off), else the cores this process may use."""
    setting = os.environ.get(THREADS_ENV, "").strip()
    if setting:
        try:
            return max(1, int(setting))
        except ValueError:
            from kiln.errors import KilnValueError

            raise KilnValueError(f"{THREADS_ENV}={setting!r}: expected a whole number of threads "
                                 f"(1 compiles each module on one thread)") from None
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass
class _Function:
    name: str
    start: int  # line span in the module text
    end: int
    references: set = field(default_factory=set)


@dataclass
class Part:
    """One module to compile: its text, the functions it defines, those of
    them another part uses (they keep external linkage) and the functions
    it uses that another part defines (declared here)."""

    text: str
    defines: list[str]
    exports: list[str]
    imports: list[str]


def _layout(lines: list[str]) -> tuple[list[tuple[int, int]], dict[str, _Function]]:
    """The module's top-level ops as line spans (without the `module {` line
    and the closing brace), and its function definitions by name."""
    spans, functions = [], {}
    i, last = 1, len(lines) - 1
    while lines[last] != "}":
        last -= 1
    while i < last:
        line = lines[i]
        end = i + 1
        if line.endswith("{"):  # an op with a region: up to its closing brace at the same indent
            end = lines.index("  }", i) + 1
            match = _DEFINITION.match(line)
            if match:
                functions[match.group(1)] = _Function(match.group(1), i, end)
        spans.append((i, end))
        i = end
    return spans, functions


_DECLARED_GLOBAL = re.compile(rf"^  llvm\.mlir\.global external (?:\w+ )*@{_SYMBOL}\(\) ")


def _copyable(line: str) -> bool:
    """Whether a top-level op other than a function definition may be copied
    into every part: a function declaration, a private or internal global,
    or an external global without a value (defined by the runtime). Any
    other op (a global the module defines for others, constructors) would
    then be defined or run once per part, so such a module is not cut."""
    if line.startswith("  llvm.func ") and not line.endswith("{"):
        return True
    if line.startswith(("  llvm.mlir.global private ", "  llvm.mlir.global internal ")):
        return True
    return bool(_DECLARED_GLOBAL.match(line)) and not line.endswith("{")


def _declaration(name: str, function_type: str) -> str:
    return (f'  "llvm.func"() <{{CConv = #llvm.cconv<ccc>, function_type = {function_type}, '
            f'linkage = #llvm.linkage<external>, sym_name = "{name}", unnamed_addr = 0 : i64, '
            f'visibility_ = 0 : i64}}> ({{}}) : () -> ()')


def split_module(text: str, entries: list[str], function_types: dict[str, str], parts: int) -> list[Part] | None:
    """Cut the module whose text is `text` into at most `parts` parts, or
    None when it is too small to gain or has no outlined bodies to move.
    `function_types`: the printed `function_type` of each defined function."""
    lines = text.split("\n")
    spans, functions = _layout(lines)
    if parts < 2 or not entries or sum(f.end - f.start for f in functions.values()) < MIN_SPLIT_LINES:
        return None
    movable = set(_ADDRESS_TAKEN.findall(text)) & set(functions) - set(entries)
    if not movable:
        return None
    names = set(functions)
    for f in functions.values():
        f.references = set(_REFERENCE.findall("\n".join(lines[f.start:f.end]))) & names - {f.name}
    # Largest body first into the least loaded part; part 0 starts with everything that stays.
    # A line of a body (vectorized loops) costs LLVM ~3x a line of the entry (channel_flow:
    # 0.33 against 0.12 ms of CPU).
    stays = sum(f.end - f.start for n, f in functions.items() if n not in movable)
    weight = stays + BODY_LINE_COST * sum(functions[n].end - functions[n].start for n in movable)
    parts = min(parts, max(2, weight // MIN_PART_WEIGHT))  # many cores: no part too small to pay for itself
    load = [stays] + [0] * (parts - 1)
    owner = {n: 0 for n in functions if n not in movable}
    for name in sorted(movable, key=lambda n: (functions[n].start - functions[n].end, n)):
        k = min(range(parts), key=lambda p: (load[p], p))
        owner[name] = k
        load[k] += BODY_LINE_COST * (functions[name].end - functions[name].start)
    used = sorted(set(owner.values()))
    if len(used) < 2:
        return None
    in_functions = {f.start for f in functions.values()}
    shared = [line for a, b in spans if a not in in_functions for line in lines[a:b]]  # globals, declarations
    if not all(_copyable(lines[a]) for a, _ in spans if a not in in_functions):
        return None
    result = []
    for k in used:
        defines = [n for n in functions if owner[n] == k]
        imports = sorted({r for n in defines for r in functions[n].references if owner[r] != k})
        exports = sorted({n for n in defines if any(n in functions[m].references
                                                    for m in functions if owner[m] != k)})
        if k and not exports:  # the engine needs one external function to compile the part through
            exports = defines[:1]
        chunks = [lines[0], *shared, *(_declaration(n, function_types[n]) for n in imports)]
        for n in defines:
            chunks.extend(lines[functions[n].start:functions[n].end])
        chunks.append("}")
        result.append(Part("\n".join(chunks), defines, exports, imports))
    return result


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


class _Handle(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


def _engine_capi() -> ctypes.CDLL:
    capi = _capi_library()
    if not hasattr(capi, "_kiln_engine_types"):
        capi.mlirExecutionEngineCreate.argtypes = [_Handle, ctypes.c_int, ctypes.c_int,
                                                   ctypes.POINTER(_StringRef), ctypes.c_bool, ctypes.c_bool]
        capi.mlirExecutionEngineCreate.restype = _Handle
        capi.mlirExecutionEngineRegisterSymbol.argtypes = [_Handle, _StringRef, ctypes.c_void_p]
        capi.mlirExecutionEngineRegisterSymbol.restype = None
        capi.mlirExecutionEngineLookupPacked.argtypes = [_Handle, _StringRef]
        capi.mlirExecutionEngineLookupPacked.restype = ctypes.c_void_p
        capi.mlirExecutionEngineDumpToObjectFile.argtypes = [_Handle, _StringRef]
        capi.mlirExecutionEngineDumpToObjectFile.restype = None
        capi.mlirExecutionEngineDestroy.argtypes = [_Handle]
        capi.mlirExecutionEngineDestroy.restype = None
        capi._kiln_engine_types = True
    return capi


def _ref(text: str) -> _StringRef:
    data = text.encode()
    return _StringRef(data, len(data))


def _module_handle(module: ir.Module) -> _Handle:
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    get_pointer.restype = ctypes.c_void_p
    return _Handle(get_pointer(module._CAPIPtr, b"torch_mlir.ir.Module._CAPIPtr"))


# Where a part's JIT links the functions other parts define: the object
# file keeps them as undefined symbols (the JIT's own copy is never run).
_ELSEWHERE = ctypes.c_char(0)


def compile_parts(parts: list[Part], entries: list[str], shared_libs: list[str], folder: str,
                  opt_level: int = 3) -> list[str]:
    """Object files of `parts`, compiled at the same time (part 0 on this
    thread, each other part on its own); raises PipelineError as
    codegen.emit_object does when LLVM rejects a part."""
    from kiln.compiler.pipeline import PipelineError

    capi = _engine_capi()
    modules = []
    for k, part in enumerate(parts):
        ctx = ir.Context()
        ctx.enable_multithreading(False)
        module = ir.Module.parse(part.text, ctx)
        keep = set(entries) | set(part.exports)
        with ctx:
            internal = ir.Attribute.parse("#llvm.linkage<internal>")
            for op in module.body.operations:
                op = op.operation
                if op.name == "llvm.func" and op.regions[0].blocks:
                    name = ir.StringAttr(op.attributes["sym_name"]).value
                    if name not in keep:
                        op.attributes["linkage"] = internal
                    elif name not in entries:
                        # The engine writes a packed wrapper for each external function; inlined
                        # into it, the body would be optimized and emitted twice.
                        op.attributes["no_inline"] = ir.UnitAttr.get()
        modules.append((ctx, module))
    libraries = (_StringRef * len(shared_libs))(*[_ref(lib) for lib in shared_libs])
    paths = [os.path.join(folder, f"part{k}.o") for k in range(len(parts))]
    failures: list[str] = [""] * len(parts)

    def build(k: int) -> None:
        part, (_, module) = parts[k], modules[k]
        engine = capi.mlirExecutionEngineCreate(_module_handle(module), opt_level, len(shared_libs),
                                                libraries, True, True)
        if not engine.ptr:
            failures[k] = "LLVM could not translate or optimize the module (see the messages printed above)"
            return
        try:
            for name in part.imports:
                capi.mlirExecutionEngineRegisterSymbol(engine, _ref(name), ctypes.addressof(_ELSEWHERE))
            anchor = entries[0] if k == 0 else part.exports[0] if part.exports else part.defines[0]
            if not capi.mlirExecutionEngineLookupPacked(engine, _ref(anchor)):
                failures[k] = ("LLVM could not link the module (an external symbol could not be resolved; "
                               "see the messages printed above)")
                return
            capi.mlirExecutionEngineDumpToObjectFile(engine, _ref(paths[k]))
        finally:
            capi.mlirExecutionEngineDestroy(engine)

    threads = [threading.Thread(target=build, args=(k,), name=f"kiln-codegen-{k}", daemon=True)
               for k in range(1, len(parts))]
    for thread in threads:
        thread.start()
    build(0)
    for thread in threads:
        thread.join()
    for k, failure in enumerate(failures):
        if failure:
            raise PipelineError(f"stage 'llvmir': {failure}")
        if not os.path.exists(paths[k]):
            raise PipelineError("stage 'llvmir': LLVM wrote no object file (an external symbol could not be "
                                "resolved; see the messages printed above)")
    return paths


def hidden_names(parts: list[Part]) -> list[str]:
    """Functions that link one part to another, and the packed wrappers the
    engine wrote for them: kept out of the library's exports."""
    names = sorted({n for part in parts for n in part.exports})
    return names + [f"_mlir_{n}" for n in names]
