"""Stages "llvmir" and after: LLVM-dialect module -> object file -> shared library.

In: a module in the LLVM dialect (end of the `llvm` stage).
Out: the path of a shared library exporting `_mlir__mlir_ciface_<name>`
(the packed entry point that `kiln_invoke` calls).
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Sequence

from kiln.compiler import engine, split_codegen
from kiln.compiler.mlir import ir, translate_to_llvmir
from kiln.compiler.passes.kiln_linalg_to_blas import blas_library, uses_blas
from kiln.compiler.passes.kiln_lower_random import METHOD_PREFIX as RANDOM_PREFIX
from kiln.compiler.passes.kiln_lower_lapack import uses_lapack
from kiln.compiler.pipeline import PipelineError
from kiln.runtime import toolchain


def _external_symbols(module: ir.Module) -> str:
    """`@name` of every function `module` declares without defining, one a
    line: the runtime functions it calls. (A walk of the top-level ops; the
    scans below used to print the whole module, once each.)"""
    names = []
    for op in module.body.operations:
        op = op.operation
        if op.name == "llvm.func" and not op.regions[0].blocks:
            names.append("@" + ir.StringAttr(op.attributes["sym_name"]).value)
    return "\n".join(names)


def external_libraries(module: ir.Module) -> list[str]:
    """Shared libraries besides kiln's support code that `module` calls into
    (the BLAS of `kiln-linalg-to-blas`, whose LAPACK `kiln-lower-lapack`'s
    kernels in runtime/lapack.c call)."""
    symbols = _external_symbols(module)
    return [blas_library()] if uses_blas(symbols) or uses_lapack(symbols) else []


def sort_routines(module: ir.Module) -> list[str]:
    """The sorting routines `module` calls (runtime/sort.c: "sort_f64" for
    `kiln_sort_f64`, "argsort_i32" for `kiln_argsort_i32`): their objects
    are linked into the library, each built on first use."""
    found = set()
    for name in _external_symbols(module).split("\n"):
        for entry in toolchain.SORT_ENTRIES:
            prefix = f"@kiln_{entry}_"
            if name.startswith(prefix) and name[len(prefix):] in toolchain.SORT_DTYPES:
                found.add(name[len("@kiln_"):])
    return sorted(found)


def uses_random(module: ir.Module) -> bool:
    """Whether `module` calls the random-number runtime (`kiln-lower-random`)."""
    return f"@{RANDOM_PREFIX}" in _external_symbols(module)


ENTRY_PREFIX = "_mlir_ciface_"


def defined_functions(module: ir.Module) -> dict[str, ir.Operation]:
    """The `llvm.func`s `module` defines (with a body), by name."""
    functions = {}
    for op in module.body.operations:
        op = op.operation
        if op.name == "llvm.func" and op.regions[0].blocks:
            functions[ir.StringAttr(op.attributes["sym_name"]).value] = op
    return functions


def entry_names(module: ir.Module) -> list[str]:
    """The C-interface entry points (`_mlir_ciface_<name>`) `module` defines."""
    return [name for name in defined_functions(module) if name.startswith(ENTRY_PREFIX)]


def internalize_functions(module: ir.Module) -> list[str]:
    """Give every function the module defines internal linkage, except the
    C-interface entry points (`_mlir_ciface_<name>`); returns those entries.

    The library is called only through the entry's packed wrapper
    (`_mlir__mlir_ciface_<name>`), which `ExecutionEngine` writes for each
    function with external linkage: left external, every parallel body
    and helper got a wrapper too, and LLVM inlined the body into it, so it
    optimized and emitted each body twice (half of the `llvmir` time of
    kernels with many loop nests). Internal functions also let LLVM drop
    what nothing calls.

    The functions an entry calls (its implementation, `<name>`) are marked
    `no_inline`: inlined into the entry, the whole implementation went
    through LLVM's function simplification a second time after the
    inliner (~10 % of the optimizer and codegen time of most NPBench
    kernels: lu 46 -> 36 ms, heat_3d 138 -> 119 ms; docs/benchmarks.md,
    session 13), and the one call it saves runs once per call of the
    library."""
    internal = ir.Attribute.parse("#llvm.linkage<internal>")
    functions = defined_functions(module)
    names = [name for name in functions if name.startswith(ENTRY_PREFIX)]
    if names:
        for name, op in functions.items():
            if not name.startswith(ENTRY_PREFIX):
                op.attributes["linkage"] = internal
        split_codegen.keep_entry_callees_apart(module, names)
    return names


def emit_objects(module: ir.Module, folder: str, name: str, libraries: list[str] = (),
                 text: str | None = None, keep: list | None = None) -> tuple[list[str], list[str]]:
    """LLVM codegen of `module` into object files in `folder`: one, or for a
    large module with outlined parallel bodies one per part compiled at the
    same time (split_codegen.py; `text`: the module's printed text when the
    caller has it). Returns the objects and the names the library must not
    export (those that link the parts). With `keep` (a list), the objects
    are written later, by the `engine.JitImage` `keep` gets (when this
    machine can run the code from its engines; else they are written now)."""
    threads = split_codegen.compile_threads() if sys.platform.startswith("linux") else 1
    # One thread still cuts the glue (the entry's checks and calls) from the bodies: it is compiled
    # without the optimizer (split_codegen.cold_functions).
    if sys.platform.startswith("linux"):
        if not split_codegen.has_bodies(module, entry_names(module)):
            return [emit_object(module, os.path.join(folder, f"{name}.o"), libraries=libraries, keep=keep)], []
        # (Printed before internalize_functions: split_module reads each function's linkage as the
        # pipeline left it, and the parts set their own.)
        text = text if text is not None else str(module)
        entries = internalize_functions(module)
        types = {name: str(op.attributes["function_type"]) for name, op in defined_functions(module).items()}
        parts = split_codegen.split_module(text, entries, types, threads)
        if parts is not None:
            objects = split_codegen.compile_parts(parts, entries, _runtime_libraries(module) + list(libraries),
                                                  folder, threads=threads, keep=keep)
            return objects, split_codegen.hidden_names(parts)
    return [emit_object(module, os.path.join(folder, f"{name}.o"), libraries=libraries, keep=keep)], []


def _runtime_libraries(module: ir.Module) -> list[str]:
    return ([toolchain.support_library()] + ([toolchain.random_library()] if uses_random(module) else [])
            + toolchain.sort_libraries(sort_routines(module)))


def emit_object(module: ir.Module, path: str, opt_level: int = 3, libraries: list[str] = (),
                keep: list | None = None) -> str:
    """LLVM codegen of `module` into an object file at `path`; the JIT
    resolves external symbols in kiln's support library (and random-number
    runtime, when the module draws) and `libraries`. Only the C-interface
    entry points stay exported (`internalize_functions`). With `keep`, as
    `emit_objects`."""
    if os.path.exists(path):
        os.unlink(path)
    runtime = _runtime_libraries(module)
    entries = internalize_functions(module)
    keep = keep if keep is not None and entries and engine.jit_supported() else None
    failure = engine.compile_module(module, entries[0] if entries else "", [*runtime, *libraries], path, opt_level,
                                    keep=keep)
    if failure:
        raise PipelineError(f"stage 'llvmir': {failure}")
    if keep:
        return path
    if not os.path.exists(path):
        raise PipelineError(
            "stage 'llvmir': LLVM wrote no object file (an external symbol could not be resolved; "
            "see the messages printed above)")
    return path


def emit_shared_library(module: ir.Module, workdir: str, name: str, extra_objects: Sequence[str] = (),
                        output: str | None = None, bundle_into: str | None = None,
                        soname: str | None = None, text: str | None = None) -> tuple[str, list[str]]:
    """Object code of `module` linked with `extra_objects` (and kiln's
    support code) into `output` (default: `lib<name>.so` in `workdir`).
    With `bundle_into`, the external libraries and their dependencies are
    copied into that folder and found relative to the library. `soname`:
    the name the library gives itself (default: its file name). `text`:
    the module's printed text, when the caller has it. Returns the
    library's path and the file names bundled."""
    libraries = external_libraries(module)
    objects, hidden = emit_objects(module, workdir, name, libraries, text)
    return _linker(module, workdir, name, libraries, extra_objects, output, bundle_into, soname)(objects, hidden)


def emit_for_first_call(module: ir.Module, workdir: str, name: str,
                        text: str | None = None) -> "tuple[engine.JitImage | None, Callable[[], str]]":
    """LLVM codegen of `module` for a first call that runs the code from its
    engines: the `engine.JitImage` (None where this machine cannot run it
    so), and a function that writes the objects (when the image holds them)
    and links them into `lib<name>.so` in `workdir`, as
    `emit_shared_library` does, returning its path. It needs the module no
    more: it can run on another thread while the image serves calls."""
    libraries = external_libraries(module)
    # (LAPACK: runtime/lapack.c reaches it through weak symbols, which the support
    # library the JIT calls bound, empty, when it was loaded: the library links them.)
    keep: list | None = None if uses_lapack(_external_symbols(module)) else []
    objects, hidden = emit_objects(module, workdir, name, libraries, text, keep=keep)
    link = _linker(module, workdir, name, libraries)
    image = keep[0] if keep else None

    def dump_and_link() -> str:
        if image is not None:
            image.dump()
        return link(objects, hidden)[0]

    return image, dump_and_link


def _linker(module: ir.Module, workdir: str, name: str, libraries: list[str], extra_objects: Sequence[str] = (),
            output: str | None = None, bundle_into: str | None = None,
            soname: str | None = None) -> "Callable[[list[str], list[str]], tuple[str, list[str]]]":
    """How `module`'s objects link into its library (`emit_shared_library`):
    a function of the objects and the names to hide, which needs the module
    no more (it can run on another thread)."""
    random = uses_random(module)
    routines = sort_routines(module)

    def link(objects: list[str], hidden: list[str]) -> tuple[str, list[str]]:
        link_inputs = [*objects, *extra_objects]
        if hidden:
            # The functions that link the parts stay inside the library, as internal ones would.
            script = os.path.join(workdir, f"{name}.map")
            with open(script, "w") as f:
                f.write("{ local:\n" + "".join(f"  {n};\n" for n in hidden) + "};\n")
            link_inputs.append(f"-Wl,--version-script={script}")
        if random:
            # Static: the library carries its random numbers (and NumPy's distributions) itself.
            link_inputs += toolchain.random_objects()
        # Static too: the sorting routines it calls.
        link_inputs += [toolchain.sort_object(routine) for routine in routines]
        if libraries and sys.platform.startswith("linux"):
            # runtime/lapack.c reaches LAPACK through weak symbols, which
            # --as-needed (the default of many distributions) does not count.
            link_inputs.append("-Wl,--no-as-needed")
        bundled: list[str] = []
        if bundle_into is None:
            # Each library is linked by path, with an rpath to its folder.
            for lib in libraries:
                link_inputs += [lib, f"-Wl,-rpath,{os.path.dirname(os.path.abspath(lib))}"]
        elif libraries:
            for lib in libraries:
                bundled += [f for f in toolchain.copy_with_dependencies(lib, bundle_into) if f not in bundled]
                link_inputs.append(os.path.join(bundle_into, os.path.basename(lib)))
            link_inputs.append(f"-Wl,-rpath,{toolchain.LOADER_FOLDER}")
        library = toolchain.link_shared_library(link_inputs, output or os.path.join(workdir, f"lib{name}.so"), soname)
        return library, bundled

    return link


def llvm_ir(module: ir.Module) -> str:
    """The `llvmir` stage: LLVM IR text of a module in the LLVM dialect
    (call after `emit_object` has accepted the module)."""
    return translate_to_llvmir(module)
