"""Stages "llvmir" and after: LLVM-dialect module -> object file -> shared library.

In: a module in the LLVM dialect (end of the `llvm` stage).
Out: the path of a shared library exporting `_mlir__mlir_ciface_<name>`
(the packed entry point that `kiln_invoke` calls).
"""

from __future__ import annotations

import os
import subprocess

from kiln.compiler.mlir import ExecutionEngine, ir
from kiln.compiler.pipeline import PipelineError
from kiln.runtime import toolchain


def emit_object(module: ir.Module, path: str, opt_level: int = 3) -> str:
    """LLVM codegen of `module` into an object file at `path`."""
    if os.path.exists(path):
        os.unlink(path)
    engine = ExecutionEngine(module, opt_level=opt_level, shared_libs=[toolchain.support_library()],
                             enable_pic=True)
    engine.dump_to_object_file(path)
    if not os.path.exists(path):
        raise PipelineError(
            "stage 'llvmir': LLVM wrote no object file (an external symbol could not be resolved; "
            "see the messages printed above)")
    return path


def emit_shared_library(module: ir.Module, workdir: str, name: str) -> str:
    obj = emit_object(module, os.path.join(workdir, f"{name}.o"))
    return toolchain.link_shared_library([obj], os.path.join(workdir, f"lib{name}.so"))


def disassemble(library: str) -> str:
    """objdump's disassembly of a library, when objdump is installed."""
    try:
        proc = subprocess.run(["objdump", "-d", "--no-show-raw-insn", library], capture_output=True, text=True)
    except FileNotFoundError:
        return "objdump is not installed"
    return proc.stdout
