"""Runtime: the system C compiler, the support library, and linking.

In: object files produced by LLVM (`compiler/codegen.py`).
Out: shared libraries (`cc -shared`), linked with kiln's support code
(`support.c`: entry wrapper, run-time check reporting, prints, threads) and libm; when they
sort, the objects of `sort.c` for the dtypes they sort (one per dtype, built on first use); when
they draw random numbers, `random.c` with NumPy's `libnpyrandom.a`. The
support code and the fastcall extension are cached and verified by
`runtime/cache.py`; a missing or failing compiler is a ToolchainError.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys

import numpy as np

from kiln.errors import ToolchainError
from kiln.runtime import cache

SUPPORT_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "support.c")
# Random numbers: kiln's bit generators (random.c) over the distributions of
# NumPy's own C library, which NumPy ships for extensions (docs/numpy.md, "Random numbers").
RANDOM_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random.c")
NUMPY_RANDOM_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(np.random.__file__)), "lib", "libnpyrandom.a")
# The LAPACK kernels (its LAPACK symbols are weak: bound only in libraries
# linked with the OpenBLAS, those that call a kernel).
LAPACK_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lapack.c")
# Every file of the support object: support.c includes broadcast.c (the
# size-1 broadcast copy) and matvec.c (matrix-vector pairs).
SUPPORT_SOURCES = (SUPPORT_SOURCE, os.path.join(os.path.dirname(SUPPORT_SOURCE), "broadcast.c"),
                   os.path.join(os.path.dirname(SUPPORT_SOURCE), "matvec.c"))
# The sorting routines, an object per dtype, built when a library first
# sorts that dtype: the twelve in one object were ~26 CPU s of `cc -O2`
# (97 % of the support code's build), which every fresh cache paid on its
# first compile, sorting or not; float64 alone is ~6 s, bool ~1.4 s.
SORT_SOURCE = os.path.join(os.path.dirname(SUPPORT_SOURCE), "sort.c")
SORT_DTYPES = ("bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f16", "f32", "f64")


def c_compiler() -> str:
    """`CC`, else the first of `cc`, `gcc`, `clang` on PATH."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise ToolchainError("no C compiler found: kiln links compiled code with `cc`, and none of cc, gcc, "
                             "clang is on PATH; install gcc, or set CC to a C compiler")
    return cc


def _run(cmd: list[str]) -> None:
    """Run the C compiler; its absence or failure is a ToolchainError that
    names the compiler, the command and the fix."""
    command = shlex.join(cmd)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise ToolchainError(f"the C compiler {cmd[0]!r} could not be run ({e.strerror or e}); command: "
                             f"{command}. Install gcc (or cc), or set CC to a working C compiler") from None
    if proc.returncode != 0:
        raise ToolchainError(f"the C compiler {cmd[0]!r} failed with exit status {proc.returncode}; command: "
                             f"{command}\n{proc.stderr.strip() or '(it printed nothing)'}\nIf the compiler "
                             "itself is broken, install gcc (or cc), or set CC to a working C compiler")


def _support_key() -> str:
    h = hashlib.sha256()
    for path in (*SUPPORT_SOURCES, LAPACK_SOURCE):
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def support_object() -> str:
    """support.c compiled to a PIC object (cached by its hash, verified)."""
    return cache.toolchain_file(f"kiln_support_{_support_key()}.o", lambda out: _run(
        [c_compiler(), "-O2", "-fPIC", "-pthread", "-c", SUPPORT_SOURCE, "-o", out]))


def _sort_key() -> str:
    with open(SORT_SOURCE, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


SORT_ENTRIES = ("sort", "argsort")


def _sort_routine(routine: str) -> tuple[str, str]:
    """`routine` ("sort_f64", "argsort_i32": the symbol without `kiln_`) as
    (entry, dtype), checked."""
    entry, _, dtype = routine.partition("_")
    if entry not in SORT_ENTRIES or dtype not in SORT_DTYPES:
        raise ToolchainError(f"no sorting routine {routine!r} (runtime/sort.c has sort_<dtype> and "
                             f"argsort_<dtype> for {', '.join(SORT_DTYPES)})")
    return entry, dtype


def sort_object(routine: str) -> str:
    """One of sort.c's routines (`routine`: "sort_f64" for
    `kiln_sort_f64`, "argsort_f64" for `kiln_argsort_f64`) compiled alone
    to a PIC object (cached, verified): float64's sort is ~4.4 CPU s of
    `cc -O2`, its argsort ~1.5 s."""
    entry, dtype = _sort_routine(routine)
    return cache.toolchain_file(f"kiln_{routine}_{_sort_key()}.o", lambda out: _run(
        [c_compiler(), "-O2", "-fPIC", "-pthread", "-DKILN_SORT_ONE", f"-DKILN_SORT_ONLY_{dtype}",
         f"-DKILN_SORT_ENTRY_{entry.upper()}", "-c", SORT_SOURCE, "-o", out]))


def sort_library(routine: str) -> str:
    """One sorting routine as a shared library, so the JIT can resolve its
    symbol (with the support code it calls, so that it loads on its own)."""
    _sort_routine(routine)
    return cache.toolchain_file(f"libkiln_{routine}_{_sort_key()}_{_support_key()}.so", lambda out: _run(
        [c_compiler(), "-shared", "-pthread", "-o", out, sort_object(routine), support_object(), lapack_object(),
         "-lm"]))


def sort_libraries(routines: list[str]) -> list[str]:
    """`sort_library` of each routine; those not built yet are built at the
    same time (each is one `cc` process)."""
    if len(routines) < 2:
        return [sort_library(r) for r in routines]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(routines), os.cpu_count() or 1)) as pool:
        return list(pool.map(sort_library, routines))


def numpy_random_library() -> str:
    """NumPy's static library of distributions (`numpy/random/lib/libnpyrandom.a`)."""
    path = NUMPY_RANDOM_LIBRARY
    if not os.path.isfile(path):
        raise ToolchainError(f"NumPy's random-number library {path} is missing; kiln links it for random numbers "
                             "in compiled code. Install NumPy from its wheel (pip install --force-reinstall numpy)")
    return path


def _random_key() -> str:
    with open(RANDOM_SOURCE, "rb") as f:
        source = f.read()
    with open(numpy_random_library(), "rb") as f:
        return hashlib.sha256(source + f.read()).hexdigest()[:16]


def random_objects() -> list[str]:
    """random.c compiled to a PIC object (cached, verified), and NumPy's distributions library."""
    obj = cache.toolchain_file(f"kiln_random_{_random_key()}.o", lambda out: _run(
        [c_compiler(), "-O2", "-fPIC", "-c", RANDOM_SOURCE, "-o", out]))
    return [obj, numpy_random_library()]


def random_library() -> str:
    """random.c and NumPy's distributions as a shared library, so the JIT can resolve their symbols."""
    return cache.toolchain_file(f"libkiln_random_{_random_key()}.so", lambda out: _run(
        [c_compiler(), "-shared", "-o", out, *random_objects(), "-lm"]))
def lapack_object() -> str:
    """lapack.c compiled to a PIC object (cached by its hash, verified)."""
    return cache.toolchain_file(f"kiln_lapack_{_support_key()}.o", lambda out: _run(
        [c_compiler(), "-O2", "-fPIC", "-std=c11", "-c", LAPACK_SOURCE, "-o", out]))


def support_library() -> str:
    """support.c and lapack.c as a shared library, so the JIT can resolve their symbols."""
    return cache.toolchain_file(f"libkiln_support_{_support_key()}.so", lambda out: _run(
        [c_compiler(), "-shared", "-pthread", "-o", out, support_object(), lapack_object(), "-lm"]))


def compile_object(source: str, output: str, include_dirs: list[str] = ()) -> str:
    """`cc -c` a C source into a position-independent object."""
    _run([c_compiler(), "-O2", "-fPIC", "-std=c11", *[f"-I{d}" for d in include_dirs], "-c", source, "-o", output])
    return output


# Whether `cc -fuse-ld=gold` linked a library in this process (None: not tried yet).
_GOLD_WORKS: list[bool] = []


def _linker_flags() -> list[str]:
    """`-fuse-ld=gold` where GNU gold is installed (Linux): it links a kernel
    with the support code in ~60 % of the time of the default BFD linker
    (docs/benchmarks.md, "Compile time"); no flag elsewhere or once gold failed."""
    if _GOLD_WORKS == [False] or not sys.platform.startswith("linux") or os.environ.get("KILN_LINKER") == "default":
        return []
    return ["-fuse-ld=gold"] if shutil.which("ld.gold") else []


# The marks a probe link puts where the output and the inputs go.
_OUTPUT_MARK, _INPUT_MARK = "/kiln-link-output-mark.so", "/kiln-link-input-mark.o"
# The linker's command from `cc -###` per compiler and flags (None: no direct link).
_DIRECT_LINK: dict[tuple, list[str] | None] = {}


def _direct_link_template(flags: list[str]) -> list[str] | None:
    """The command gcc's `collect2` runs to link a shared library with
    `flags` (`-fuse-ld=gold`), with the marks where the output and the
    inputs go: the linker itself (`ld.gold`), gcc's start and end files, its
    library paths and libraries, without the LTO plugin. None when the
    compiler is not gcc or its `-###` output is not understood."""
    key = (c_compiler(), tuple(flags))
    if key not in _DIRECT_LINK:
        template = None
        try:
            probe = subprocess.run([c_compiler(), *flags, "-###", "-shared", "-o", _OUTPUT_MARK, _INPUT_MARK,
                                    "-lm", "-pthread"], capture_output=True, text=True)
            lines = [shlex.split(line) for line in probe.stderr.splitlines() if line.startswith(" ")]
            driver = [words for words in lines if words and os.path.basename(words[0]) == "collect2"]
            linker = shutil.which(subprocess.run([c_compiler(), *flags, "-print-prog-name=ld.gold"],
                                                 capture_output=True, text=True).stdout.strip() or "ld.gold")
            if probe.returncode == 0 and len(driver) == 1 and linker:
                words, template, skip = driver[0][1:], [linker], False
                for word in words:
                    if skip:
                        skip = False
                    elif word == "-plugin":
                        skip = True
                    elif not word.startswith(("-plugin-opt=", "-fuse-ld=")):
                        template.append(word)
                if template.count(_OUTPUT_MARK) != 1 or template.count(_INPUT_MARK) != 1:
                    template = None
        except (OSError, ValueError):
            template = None
        _DIRECT_LINK[key] = template
    return _DIRECT_LINK[key]


def _link_directly(flags: list[str], options: list[str], inputs: list[str], output: str) -> bool:
    """Link `inputs` (objects, libraries, `-Wl,` options) into the shared
    library `output` by running the linker as `cc` would, without `cc` and
    `collect2` in between (two processes fewer: a small kernel's link
    ~15 -> ~10.5 ms). False, and `cc` links from then on in this process, when
    the command is not known or the linker fails: `cc` then reports."""
    template = _direct_link_template(flags)
    if template is None:
        return False
    middle = list(options)
    for word in inputs:
        if word.startswith("-Wl,"):
            middle += word[len("-Wl,"):].split(",")
        elif word.startswith("-"):
            return False  # (a compiler option: only cc knows it)
        else:
            middle.append(word)
    command = []
    for word in template:
        command += middle if word == _INPUT_MARK else [output] if word == _OUTPUT_MARK else [word]
    try:
        done = subprocess.run(command, capture_output=True, text=True).returncode == 0
    except OSError:
        done = False
    if not done:
        _DIRECT_LINK[(c_compiler(), tuple(flags))] = None
    return done


def link_shared_library(objects: list[str], output: str, soname: str | None = None) -> str:
    """`cc -shared` the objects with the support code and libm into `output`
    (atomically), named `soname` (default: the output's file name)."""
    # -Bsymbolic: the library's calls to its own support code must not bind
    # to another copy already loaded in the process (its thread-locals differ).
    # -soname: the library names itself by a fixed name, not by the temporary
    # it is linked into (the linker writes the output name into the library's
    # version definitions): the same objects then always link to the same
    # bytes, whichever process of several rebuilding one cache entry writes
    # the library and which writes its checksum. A program linked against
    # the library (an export) records this name.
    soname = soname or os.path.basename(output)

    def link(out: str) -> None:
        inputs = [*objects, support_object(), lapack_object()]
        command = ["-shared", "-Wl,-Bsymbolic", f"-Wl,-soname,{soname}", "-o", out, *inputs, "-lm", "-pthread"]
        flags = _linker_flags()
        if flags and _link_directly(flags, ["-Bsymbolic", "-soname", soname], inputs, out):
            return
        if flags:
            try:
                _run([c_compiler(), *flags, *command])
                _GOLD_WORKS[:] = [True]
                return
            except ToolchainError:
                if _GOLD_WORKS == [True]:
                    raise  # gold links here: the error is the objects', not the linker's
                _GOLD_WORKS[:] = [False]  # a compiler that does not take the flag: the default linker
        _run([c_compiler(), *command])

    return cache.write_atomically(output, link)


# The C runtime every system has: never bundled, even when it sits beside the library.
_SYSTEM_RUNTIME = ("libc.", "libm.", "libpthread.", "libdl.", "librt.", "ld-linux", "libgcc_s.", "libz.")
# How a shared library names its own folder in an rpath.
LOADER_FOLDER = "@loader_path" if sys.platform == "darwin" else "$ORIGIN"


def copy_with_dependencies(library: str, folder: str) -> list[str]:
    """Copy `library` into `folder` with the libraries beside it that it
    needs, directly or through each other (a wheel's bundled BLAS and its
    Fortran runtime, which find each other through their own rpath);
    returns the file names copied."""
    source = os.path.dirname(os.path.abspath(library))
    wanted, pending = [], [os.path.basename(library)]
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        wanted.append(name)
        with open(os.path.join(source, name), "rb") as f:
            binary = f.read()
        # A needed library's file name is its soname, stored verbatim in the dynamic string table.
        named = {m.decode() for m in re.findall(rb"(lib[\w.+-]*?\.(?:so|dylib)[\w.]*)\0", binary)}
        pending += [n for n in sorted(named) if n not in wanted and not n.startswith(_SYSTEM_RUNTIME)
                    and os.path.isfile(os.path.join(source, n))]
    os.makedirs(folder, exist_ok=True)
    for name in wanted:
        shutil.copyfile(os.path.join(source, name), os.path.join(folder, name))
    return wanted


def python_extension(source: str, module_name: str):
    """Build (once per source, Python and NumPy version; cached and verified
    before loading) and import the CPython extension `module_name` from the
    C file `source`."""
    import importlib.machinery
    import importlib.util
    import sysconfig

    import numpy

    with open(source, "rb") as f:
        digest = hashlib.sha256(f.read() + sys.version.encode() + numpy.__version__.encode()).hexdigest()[:16]
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    target = cache.toolchain_file(
        os.path.join(f"{module_name}-{digest}", module_name + suffix),
        lambda out: _run([c_compiler(), "-O2", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}",
                          f"-I{numpy.get_include()}", source, "-o", out]))
    spec = importlib.util.spec_from_file_location(module_name, target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
