"""Runtime: the system C compiler, the support library, and linking.

In: object files produced by LLVM (`compiler/codegen.py`).
Out: shared libraries (`cc -shared`), linked with kiln's support code
(`support.c`: entry wrapper and run-time check reporting) and libm.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

from kiln.errors import ToolchainError

SUPPORT_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "support.c")


def cache_dir() -> str:
    """`KILN_CACHE_DIR`, else `$XDG_CACHE_HOME/kiln`, else `~/.cache/kiln`."""
    path = os.environ.get("KILN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "kiln")
    os.makedirs(path, exist_ok=True)
    return path


def c_compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise ToolchainError("no C compiler found (kiln links with `cc`); install gcc or set CC")
    return cc


def _run(cmd: list[str]) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise ToolchainError(f"C compiler {cmd[0]!r} not found (kiln links every compiled function with it); "
                             "install gcc or set CC, or send the compiled libraries with the function "
                             "(qjit(pickle_libraries=True), see docs/distributed.md)") from None
    if proc.returncode != 0:
        raise ToolchainError(f"{' '.join(cmd)} failed:\n{proc.stderr.strip()}")


def _atomic_build(target: str, build) -> str:
    if os.path.exists(target):
        return target
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=os.path.splitext(target)[1])
    os.close(fd)
    try:
        build(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _support_key() -> str:
    with open(SUPPORT_SOURCE, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def support_object() -> str:
    """support.c compiled to a PIC object (cached by its hash)."""
    target = os.path.join(cache_dir(), f"kiln_support_{_support_key()}.o")
    return _atomic_build(target, lambda out: _run([c_compiler(), "-O2", "-fPIC", "-pthread", "-c", SUPPORT_SOURCE, "-o", out]))


def support_library() -> str:
    """support.c as a shared library, so the JIT can resolve its symbols."""
    target = os.path.join(cache_dir(), f"libkiln_support_{_support_key()}.so")
    return _atomic_build(target, lambda out: _run([c_compiler(), "-shared", "-pthread", "-o", out, support_object()]))


def compile_object(source: str, output: str, include_dirs: list[str] = ()) -> str:
    """`cc -c` a C source into a position-independent object."""
    _run([c_compiler(), "-O2", "-fPIC", "-std=c11", *[f"-I{d}" for d in include_dirs], "-c", source, "-o", output])
    return output


def link_shared_library(objects: list[str], output: str) -> str:
    """`cc -shared` the objects with the support code and libm into `output` (atomically)."""
    if os.path.exists(output):
        os.unlink(output)
    # -Bsymbolic: the library's calls to its own support code must not bind
    # to another copy already loaded in the process (its thread-locals differ).
    return _atomic_build(output, lambda out: _run([c_compiler(), "-shared", "-Wl,-Bsymbolic", "-o", out,
                                                   *objects, support_object(), "-lm", "-pthread"]))


def python_extension(source: str, module_name: str):
    """Build (once per source, Python and NumPy version; cached) and import
    the CPython extension `module_name` from the C file `source`."""
    import importlib.machinery
    import importlib.util
    import sysconfig

    import numpy

    with open(source, "rb") as f:
        digest = hashlib.sha256(f.read() + sys.version.encode() + numpy.__version__.encode()).hexdigest()[:16]
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    folder = os.path.join(cache_dir(), f"{module_name}-{digest}")
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, module_name + suffix)
    _atomic_build(target, lambda out: _run([c_compiler(), "-O2", "-shared", "-fPIC",
                                            f"-I{sysconfig.get_paths()['include']}", f"-I{numpy.get_include()}",
                                            source, "-o", out]))
    spec = importlib.util.spec_from_file_location(module_name, target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
