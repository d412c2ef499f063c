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
MLIR context), marked (linkage, inlining) and compiled through the MLIR C
API by ctypes, which releases the GIL, so the parts really run in parallel,
parsing included.

The entry function is glue when each of its loops hands its work to a
body or a library (argument checks, allocations, calls of the bodies: code
that runs once per call or per time step). Glue gets a part of its own,
compiled without LLVM's optimizer and with `optnone` (so codegen selects
it fast and skips loop strength reduction): `cold_functions`.
"""

from __future__ import annotations

import ctypes
import os
import re
import threading
from dataclasses import dataclass, field

from kiln.compiler import engine
from kiln.compiler.llvm_options import apply_llvm_options
from kiln.compiler.mlir import MlirHandle, MlirStringRef, ir, string_ref, string_value, typed_capi

# The sizes below are for a compile on two or more threads, where a part's
# cost is mostly off the critical path: its context and parse (~0.5 ms and
# ~3 ms per 1,000 lines, in its worker) and its engine; the first call waits
# for the slowest part. Measured on the 34 small NPBench kernels (session 14,
# `emit_objects` wall, 2 cores): cutting from 300 lines and glue from 100
# lines is as fast or faster than 2,000 / 1,000 on every one (syrk 82 -> 46 ms,
# symm 132 -> 93, mandelbrot1 108 -> 70, azimint_hist 50 -> 37, conv2d_bias
# 190 -> 84), for up to ~50 % more CPU. Below MIN_SPLIT_LINES of function
# text, or without a body to move, a module is compiled whole.
MIN_SPLIT_LINES = 300
# A part is worth its engine above this many weighted lines (a body's line weighs BODY_LINE_COST).
MIN_PART_WEIGHT = 300
BODY_LINE_COST = 3
THREADS_ENV = "KILN_COMPILE_THREADS"
# Glue below this many lines stays with the rest: on two threads or more,
# COLD_MIN_LINES; on one, where the glue's part adds its whole cost to the
# compile, COLD_MIN_LINES_ONE_THREAD (there an engine costs more than the
# optimizer it saves below ~1,000 lines: ~0.08 ms of CPU a line at O3;
# jacobi_1d's 732 lines of glue on one thread: 51 ms whole, 64 ms cut).
COLD_MIN_LINES = 100
COLD_MIN_LINES_ONE_THREAD = 1000
# A line of glue without the optimizer costs ~1/3 of a line at O3
# (channel_flow's entry: 0.55 s instead of 1.5 s for 12.6k lines).
COLD_LINE_COST = 0.35
COLD_ENV = "KILN_COLD_GLUE"
COLD_OPT_LEVEL = 0
# Calls that do no work a loop could hand off: a loop whose only calls are
# these computes inline (a check or a warning in a loop, a buffer per iteration).
_INLINE_WORK_CALLS = frozenset({"kiln_check_failed", "kiln_warn", "kiln_poll", "_mlir_memref_to_llvm_alloc",
                                "_mlir_memref_to_llvm_free"})

# Functions MLIR's passes write that only keep books: `dealloc_helper`
# (bufferization-lower-deallocations) compares the base pointers of the
# buffers a block frees, a handful, to decide which it owns. Called only
# from glue, it joins the glue's part: at O3 beside the bodies it cost
# jacobi_2d's and jacobi_1d's first calls ~13 ms of the critical path.
_BOOKKEEPING = frozenset({"dealloc_helper"})

_SYMBOL = r"[\w$.\-]+"
_DEFINITION = re.compile(rf"^  llvm\.func (?:\w+ )*@({_SYMBOL})\(")
_REFERENCE = re.compile(rf"@({_SYMBOL})")
_ADDRESS_TAKEN = re.compile(rf"llvm\.mlir\.addressof @({_SYMBOL})")
# A serial body (kiln-outline-serial-loops) is only called, never inlined.
_CALLED_NOINLINE = re.compile(rf"llvm\.call @({_SYMBOL})\([^)]*\) \{{no_inline\}}")
_BLOCK_LABEL = re.compile(r"^  (\^bb\d+)")
_SUCCESSOR = re.compile(r"\^bb\d+")
_CALLEE = re.compile(rf"llvm\.call @({_SYMBOL})")


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
    it uses that another part defines (declared here). `cold`: glue,
    compiled without the optimizer."""

    text: str
    defines: list[str]
    exports: list[str]
    imports: list[str]
    cold: bool = False
    weight: float = 0.0  # the CPU it costs, in lines of entry code at O3


def _module_line(lines: list[str]) -> int:
    """The index of the `module {` line: the printer puts attribute aliases
    (`#alias_scope = ...`, kiln-alias-scopes) above it."""
    for i, line in enumerate(lines):
        if line.startswith("module"):
            return i
    raise ValueError("split_codegen: no module op in the text")


def _layout(lines: list[str]) -> tuple[list[tuple[int, int]], dict[str, _Function]]:
    """The module's top-level ops as line spans (without the `module {` line,
    the aliases above it and the closing brace), and its function definitions by name."""
    spans, functions = [], {}
    i, last = _module_line(lines) + 1, len(lines) - 1
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


def _loops_hand_off_work(lines: list[str]) -> bool:
    """Whether every loop of the function whose text is `lines` (from its
    `llvm.func` line to its closing brace) calls a function that does the
    loop's work: a body, `kiln_parallel_for`, a library routine; anything
    but `_INLINE_WORK_CALLS`. A loop is a back edge of a depth-first walk
    of the blocks (the CFG of structured loops is reducible) with the
    blocks that reach its latch without passing its header."""
    blocks: dict[str, list[str]] = {"^bb0": []}
    current = "^bb0"
    for line in lines[1:-1]:
        label = _BLOCK_LABEL.match(line)
        if label:  # the label line's comment names predecessors, not successors
            current = label.group(1)
            blocks[current] = []
        else:
            blocks[current].append(line)
    # Only terminators name blocks, so every ^bb in a block is a successor.
    successors = {b: list(dict.fromkeys(n for line in body for n in _SUCCESSOR.findall(line)))
                  for b, body in blocks.items()}
    predecessors: dict[str, list[str]] = {b: [] for b in blocks}
    for b, targets in successors.items():
        for t in targets:
            predecessors[t].append(b)
    on_path, done, back_edges = {"^bb0"}, set(), []
    stack = [("^bb0", iter(successors["^bb0"]))]
    while stack:
        block, targets = stack[-1]
        target = next(targets, None)
        if target is None:
            on_path.discard(block)
            done.add(block)
            stack.pop()
        elif target in on_path:
            back_edges.append((block, target))
        elif target not in done:
            on_path.add(target)
            stack.append((target, iter(successors[target])))
    for latch, header in back_edges:
        loop, work = {header}, [latch]
        while work:
            block = work.pop()
            if block not in loop:
                loop.add(block)
                work.extend(predecessors[block])
        if not any(callee not in _INLINE_WORK_CALLS
                   for block in loop for line in blocks[block] for callee in _CALLEE.findall(line)):
            return False
    return True


def cold_functions(lines: list[str], functions: dict[str, "_Function"], movable: set[str],
                   min_lines: int = COLD_MIN_LINES_ONE_THREAD) -> set[str]:
    """The functions of the module that are glue and go to a part compiled
    without the optimizer: those that stay in part 0 (not bodies) and whose
    loops all hand their work off; none when they are too small to pay for
    an engine of their own (under `min_lines` lines), or when
    `KILN_COLD_GLUE=0`. With glue, `_BOOKKEEPING` helpers that only glue
    calls are glue too."""
    if os.environ.get(COLD_ENV, "").strip() == "0":
        return set()
    cold = {n for n, f in functions.items()
            if n not in movable and _loops_hand_off_work(lines[f.start:f.end])}
    if sum(functions[n].end - functions[n].start for n in cold) < min_lines:
        return set()
    for name in _BOOKKEEPING & set(functions):
        call = f"@{name}("
        if name not in movable and all(m in cold for m, f in functions.items() if m != name and
                                       any(call in line for line in lines[f.start + 1:f.end])):
            cold.add(name)
    return cold


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


def has_bodies(module: ir.Module, entries: list[str]) -> bool:
    """Whether `module` defines a function `split_module` could move to a
    part of its own (one whose address is taken, or called `no_inline`, and
    not an entry), found on the ops: without one the module is compiled
    whole, and printing it for `split_module` (~4-12 ms for 1,000-2,000
    lines) would buy nothing."""
    from kiln.compiler.passes._util import collect_ops

    defined = set()
    for op in module.body.operations:
        op = op.operation
        if op.name == "llvm.func" and op.regions[0].blocks:
            defined.add(ir.StringAttr(op.attributes["sym_name"]).value)
    candidates = defined - set(entries)
    for op in collect_ops(module, ("llvm.mlir.addressof", "llvm.call")):
        if op.name == "llvm.mlir.addressof":
            if ir.FlatSymbolRefAttr(op.attributes["global_name"]).value in candidates:
                return True
        elif "no_inline" in op.attributes and "callee" in op.attributes and \
                ir.FlatSymbolRefAttr(op.attributes["callee"]).value in candidates:
            return True
    return False


def split_module(text: str, entries: list[str], function_types: dict[str, str], parts: int) -> list[Part] | None:
    """Cut the module whose text is `text` into at most `parts` parts, or
    None when it is too small to gain or has no outlined bodies to move.
    `function_types`: the printed `function_type` of each defined function."""
    lines = text.split("\n")
    spans, functions = _layout(lines)
    total = sum(f.end - f.start for f in functions.values())
    cold_min_lines = COLD_MIN_LINES if parts >= 2 else COLD_MIN_LINES_ONE_THREAD
    if not entries or total < min(MIN_SPLIT_LINES, cold_min_lines):
        return None
    movable = (set(_ADDRESS_TAKEN.findall(text)) | set(_CALLED_NOINLINE.findall(text))) & set(functions) - set(entries)
    if not movable:
        return None
    cold = cold_functions(lines, functions, movable, cold_min_lines)
    if not set(entries) <= cold:
        cold = set()
    if (parts < 2 or total < MIN_SPLIT_LINES) and not cold:
        return None
    names = set(functions)
    for f in functions.values():
        f.references = set(_REFERENCE.findall("\n".join(lines[f.start:f.end]))) & names - {f.name}
    size = {n: f.end - f.start for n, f in functions.items()}
    # A line of a body (vectorized loops) costs LLVM ~3x a line of the entry (channel_flow:
    # 0.33 against 0.12 ms of CPU), a line of glue without the optimizer ~1/3.
    if cold:
        # Part 0 is the glue alone; what else stayed (a function with a loop that computes
        # inline) is dealt with the bodies. The first bin starts with the glue's weight: the
        # two share a core (compile_parts schedules the parts by weight).
        movable = set(functions) - cold
        first = COLD_LINE_COST * sum(size[n] for n in cold)
        hot = BODY_LINE_COST * sum(size[n] for n in movable)
        # (Below MIN_SPLIT_LINES the bodies stay together: the module is cut for its glue only.)
        bins = max(1, min(parts, int(hot // MIN_PART_WEIGHT))) if total >= MIN_SPLIT_LINES else 1
        load = [0.0] + [first] + [0.0] * (bins - 1)
        parts = bins + 1
        candidates = range(1, parts)
        owner = {n: 0 for n in cold}
    else:
        stays = sum(size[n] for n in functions if n not in movable)
        weight = stays + BODY_LINE_COST * sum(size[n] for n in movable)
        parts = min(parts, max(2, weight // MIN_PART_WEIGHT))  # many cores: no part too small to pay for itself
        load = [stays] + [0] * (parts - 1)
        candidates = range(parts)
        owner = {n: 0 for n in functions if n not in movable}
    # Largest body first into the least loaded part.
    for name in sorted(movable, key=lambda n: (-size[n], n)):
        k = min(candidates, key=lambda p: (load[p], p))
        owner[name] = k
        load[k] += BODY_LINE_COST * size[name]
    used = sorted(set(owner.values()))
    if len(used) < 2:
        return None
    header = lines[:_module_line(lines) + 1]  # attribute aliases and `module {`: every part's
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
        chunks = [*header, *shared, *(_declaration(n, function_types[n]) for n in imports)]
        for n in defines:
            chunks.extend(lines[functions[n].start:functions[n].end])
        chunks.append("}")
        weight = sum(size[n] * (COLD_LINE_COST if n in cold else BODY_LINE_COST if n in movable else 1)
                     for n in defines)
        result.append(Part("\n".join(chunks), defines, exports, imports, cold=bool(cold) and k == 0,
                           weight=weight))
    return result


def _schedule(parts: list[Part], threads: int) -> list[list[int]]:
    """The parts each of `threads` workers compiles, one after the other:
    the heaviest part first, to the least loaded worker."""
    queues: list[list[int]] = [[] for _ in range(max(1, min(threads, len(parts))))]
    load = [0.0] * len(queues)
    for k in sorted(range(len(parts)), key=lambda k: (-parts[k].weight, k)):
        w = min(range(len(queues)), key=lambda w: (load[w], w))
        queues[w].append(k)
        load[w] += parts[k].weight
    return queues


def keep_entry_callees_apart(module: ir.Module, entries: list[str]) -> None:
    """Mark `no_inline` each function of `module` that an entry calls (the
    entry's implementation): LLVM then optimizes it once, not a second time
    inlined into the entry (codegen.internalize_functions)."""
    functions = {}
    for op in module.body.operations:
        op = op.operation
        if op.name == "llvm.func" and op.regions[0].blocks:
            functions[ir.StringAttr(op.attributes["sym_name"]).value] = op
    for name in entries:
        for block in functions[name].regions[0].blocks:
            for op in block.operations:
                if op.name == "llvm.call" and "callee" in op.attributes:
                    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                    if callee in functions and callee not in entries:
                        functions[callee].attributes["no_inline"] = ir.UnitAttr.get()


def compile_parts(parts: list[Part], entries: list[str], shared_libs: list[str], folder: str,
                  opt_level: int = 3, threads: int | None = None, keep: list | None = None) -> list[str]:
    """Object files of `parts`, compiled on `threads` threads (default: one
    per part), this one included; a cold part without the optimizer and
    with `optnone` functions. Each part is parsed, marked and compiled in
    its worker through the C API (ctypes releases the GIL, so parsing runs
    in parallel too, in a context that loads only the LLVM dialect: ~0.5 ms
    where a Python `ir.Context` with every dialect costs 4-7). Raises
    PipelineError as codegen.emit_object does when LLVM rejects a part.

    With `keep` (a list), the engines are kept and write no object files
    yet: `keep` gets an `engine.JitImage` of the linked parts (each part's
    calls into another go through `engine.Trampolines`), or nothing when
    this machine cannot run them so (then the objects are written)."""
    from kiln.compiler.pipeline import PipelineError

    capi = typed_capi()
    apply_llvm_options()
    libraries = (MlirStringRef * len(shared_libs))(*[string_ref(lib) for lib in shared_libs])
    paths = [os.path.join(folder, f"part{k}.o") for k in range(len(parts))]
    failures: list[str] = [""] * len(parts)
    jumps = None
    if keep is not None and engine.jit_supported():
        jumps = engine.trampolines(sorted({name for part in parts for name in part.imports}))
    kept: list = [None] * len(parts) if jumps is not None else []
    entry = [0]

    def build(k: int) -> None:
        part = parts[k]
        ctx = capi.mlirContextCreateWithThreading(False)
        module = jit = None
        try:
            capi.mlirDialectHandleLoadDialect(capi.mlirGetDialectHandle__llvm__(), ctx)
            module = capi.mlirModuleCreateParse(ctx, string_ref(part.text))
            if not module.ptr:
                failures[k] = "kiln could not parse a part of the module it cut (see the messages printed above)"
                return
            _mark_part(capi, ctx, module, part, entries)
            level = COLD_OPT_LEVEL if part.cold else opt_level
            jit = capi.mlirExecutionEngineCreate(module, level, len(shared_libs), libraries, True, True)
            if not jit.ptr:
                failures[k] = "LLVM could not translate or optimize the module (see the messages printed above)"
                return
            for name in part.imports:
                capi.mlirExecutionEngineRegisterSymbol(jit, string_ref(name), jumps.address(name) if jumps else
                                                       ctypes.addressof(engine.ELSEWHERE))
            anchor = entries[0] if k == 0 else part.exports[0] if part.exports else part.defines[0]
            address = capi.mlirExecutionEngineLookupPacked(jit, string_ref(anchor))
            if not address:
                failures[k] = ("LLVM could not link the module (an external symbol could not be resolved; "
                               "see the messages printed above)")
                return
            if jumps is not None:
                # (The engine holds the part's code; its MLIR module and context go now.)
                kept[k] = (capi, jit, None, None)
                if k == 0:
                    entry[0] = address
                jit = None
                return
            capi.mlirExecutionEngineDumpToObjectFile(jit, string_ref(paths[k]))
        finally:
            engine.release(capi, jit, module, ctx)

    def build_all(queue: list[int]) -> None:
        for k in queue:
            build(k)

    queues = _schedule(parts, threads or len(parts))
    workers = [threading.Thread(target=build_all, args=(queue,), name=f"kiln-codegen-{w}", daemon=True)
               for w, queue in enumerate(queues[1:], 1)]
    for worker in workers:
        worker.start()
    build_all(queues[0])
    for worker in workers:
        worker.join()
    if jumps is not None:
        image = engine.JitImage([handle for handle in kept if handle is not None], paths, entry[0], shared_libs,
                                jumps)
        targets = {} if any(failures) else {
            name: capi.mlirExecutionEngineLookup(kept[k][1], string_ref(name))
            for k, part in enumerate(parts) for name in part.exports if name in jumps.index}
        if not any(failures) and len(targets) == len(jumps.index) and all(targets.values()):
            for name, target in targets.items():
                jumps.aim(name, target)
            keep.append(image)
            return paths
        if not any(failures):
            image.dump()  # (a function another part calls that its engine does not find: the library links it)
        del image  # (its engines go back to the release thread)
    for k, failure in enumerate(failures):
        if failure:
            raise PipelineError(f"stage 'llvmir': {failure}")
        if not os.path.exists(paths[k]):
            raise PipelineError("stage 'llvmir': LLVM wrote no object file (an external symbol could not be "
                                "resolved; see the messages printed above)")
    return paths


def _mark_part(capi: ctypes.CDLL, ctx: "MlirHandle", module: "MlirHandle", part: Part,
               entries: list[str]) -> None:
    """Give the functions of a part's parsed module their linkage and
    inlining: internal unless an entry or used by another part; `no_inline`
    on an exported function that is not an entry (the engine writes a packed
    wrapper for each external function; inlined into it, the body would be
    optimized and emitted twice) and, outside a cold part, on what an entry
    calls (keep_entry_callees_apart); in a cold part `optnone` and
    `noinline` (codegen then selects instructions fast and skips its loop
    passes; LLVM wants noinline with optnone). Through the C API, which
    runs without the GIL."""
    keep = set(entries) | set(part.exports)
    internal = capi.mlirAttributeParseGet(ctx, string_ref("#llvm.linkage<internal>"))
    unit = capi.mlirUnitAttrGet(ctx)
    functions = {}
    op = capi.mlirBlockGetFirstOperation(capi.mlirModuleGetBody(module))
    while op.ptr:
        if string_value(capi.mlirIdentifierStr(capi.mlirOperationGetName(op))) == "llvm.func" and \
                capi.mlirRegionGetFirstBlock(capi.mlirOperationGetRegion(op, 0)).ptr:
            functions[string_value(capi.mlirStringAttrGetValue(
                capi.mlirOperationGetAttributeByName(op, string_ref("sym_name"))))] = op
        op = capi.mlirOperationGetNextInBlock(op)
    callees: set[str] = set()
    if not part.cold:
        for name in entries:
            if name in functions:
                callees |= _callees(capi, functions[name])
    for name, op in functions.items():
        if name not in keep:
            capi.mlirOperationSetAttributeByName(op, string_ref("linkage"), internal)
        if part.cold:
            old = capi.mlirOperationGetAttributeByName(op, string_ref("passthrough"))
            values = [capi.mlirArrayAttrGetElement(old, i) for i in range(capi.mlirArrayAttrGetNumElements(old))] \
                if old.ptr else []
            values += [capi.mlirStringAttrGet(ctx, string_ref(word)) for word in ("optnone", "noinline")]
            array = (MlirHandle * len(values))(*values)
            capi.mlirOperationSetAttributeByName(op, string_ref("passthrough"),
                                                 capi.mlirArrayAttrGet(ctx, len(values), array))
        elif name not in entries and (name in keep or name in callees):
            capi.mlirOperationSetAttributeByName(op, string_ref("no_inline"), unit)


def _callees(capi: ctypes.CDLL, function: "MlirHandle") -> set[str]:
    """The functions `function` calls directly (its top-level blocks' `llvm.call`s)."""
    names = set()
    block = capi.mlirRegionGetFirstBlock(capi.mlirOperationGetRegion(function, 0))
    while block.ptr:
        op = capi.mlirBlockGetFirstOperation(block)
        while op.ptr:
            if string_value(capi.mlirIdentifierStr(capi.mlirOperationGetName(op))) == "llvm.call":
                callee = capi.mlirOperationGetAttributeByName(op, string_ref("callee"))
                if callee.ptr:
                    names.add(string_value(capi.mlirSymbolRefAttrGetRootReference(callee)))
            op = capi.mlirOperationGetNextInBlock(op)
        block = capi.mlirBlockGetNextInRegion(block)
    return names


def hidden_names(parts: list[Part]) -> list[str]:
    """Functions that link one part to another, and the packed wrappers the
    engine wrote for them: kept out of the library's exports."""
    names = sorted({n for part in parts for n in part.exports})
    return names + [f"_mlir_{n}" for n in names]
