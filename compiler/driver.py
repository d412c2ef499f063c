"""The compilation driver: Jaxpr -> every stage -> a loaded library.

In: a typechecked top-level `Jaxpr`, the function name, optional pipeline
override and `keep_intermediate`.
Out: an `Executable` plus the text and time of each stage. Libraries are
cached on disk (`KILN_CACHE_DIR`, see `runtime/cache.py`), keyed by the hash
of the `mlir` stage text, the pipeline and the toolchain fingerprint; a hit
skips the pipeline and codegen and still reports every stage's text.
`keep_intermediate` and `KILN_LOG` compile without reading the cache, so
that every stage runs and can be written or printed.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import time
from typing import Any, Callable, Sequence

import numpy as np

from kiln.compiler.llvm_options import llvm_options
from kiln.core import Jaxpr
from kiln.runtime import cache, deferred, toolchain
from kiln.runtime.executable import Executable, ValueSpec

KILN_ABI_VERSION = "3"


def _symbol_name(name: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9_]", "_", name) or "fn"
    return clean if not clean[0].isdigit() else f"fn_{clean}"


def _provider_version() -> str:
    """The installed MLIR provider's dist-info name, found without
    importing it (importing the bindings costs most of a cache hit)."""
    spec = importlib.util.find_spec("torch_mlir")
    if spec is None or not spec.submodule_search_locations:
        return "no-provider"
    site = os.path.dirname(list(spec.submodule_search_locations)[0])
    infos = sorted(n for n in os.listdir(site) if n.startswith("torch_mlir-") and n.endswith(".dist-info"))
    return ",".join(infos) or site


@functools.lru_cache(maxsize=None)
def toolchain_fingerprint() -> str:
    """What besides the `mlir` text decides the library: kiln's ABI version,
    the MLIR provider, the source of every compiler pass, lowering and
    dialect (kiln passes are Python: editing one must not reuse stale
    libraries), the support and random-number code (NumPy's library included), the C compiler, the platform and the LLVM options kiln sets."""
    h = hashlib.sha256()
    for part in (KILN_ABI_VERSION, _provider_version(), sys.platform, sys.implementation.cache_tag,
                 os.path.realpath(toolchain.c_compiler()), " ".join(llvm_options())):
        h.update(part.encode() + b"\0")
    # The dialects' folder, found without importing it (it imports the MLIR
    # bindings, ~0.3 s that a cache hit does not need).
    dialects = importlib.util.find_spec("kiln.dialects")
    roots = [os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.abspath(dialects.origin))]
    sources = [*toolchain.SUPPORT_SOURCES, toolchain.SORT_SOURCE, toolchain.LAPACK_SOURCE, toolchain.RANDOM_SOURCE]
    if os.path.isfile(toolchain.NUMPY_RANDOM_LIBRARY):
        sources.append(toolchain.NUMPY_RANDOM_LIBRARY)
    for root in roots:
        for folder, _, files in os.walk(root):
            sources += [os.path.join(folder, f) for f in files if f.endswith(".py")]
    for path in sorted(sources):
        with open(path, "rb") as f:
            h.update(os.path.basename(path).encode() + b"\0" + hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def cache_key(mlir_text: str, pipeline: Any) -> str:
    """The cache key of a library: the `mlir` stage text (with locations),
    the pipeline and the toolchain fingerprint."""
    h = hashlib.sha256()
    for part in (toolchain_fingerprint(), repr(pipeline), mlir_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def jaxpr_key(jaxpr: Jaxpr, symbol: str, pipelines: Any, jaxpr_text: str | None = None) -> str:
    """A key for the cache's jaxpr index: everything the `mlir` stage is
    made from (the jaxpr's text, every parameter and constant in full, the
    symbol) plus what `cache_key` adds (`None` pipelines stand for the
    default pipeline, whose source is part of the fingerprint).
    `jaxpr_text` is `jaxpr.pretty()` when the caller already has it."""
    if jaxpr_text is None:
        jaxpr_text = jaxpr.pretty()
    h = hashlib.sha256()
    h.update(f"{toolchain_fingerprint()}\0{symbol}\0{pipelines!r}\0{jaxpr_text}\0".encode())
    h.update(repr((jaxpr.in_explicit, jaxpr.out_explicit, getattr(jaxpr, "writeback", ()))).encode())
    for const in jaxpr.consts:
        arr = np.asarray(const)
        h.update(f"{arr.dtype.str}{arr.shape}".encode() + np.ascontiguousarray(arr).tobytes())
    _hash_params(jaxpr, h)
    return h.hexdigest()[:32]


def _hash_params(jaxpr: Jaxpr, h) -> None:
    """Feed every equation's parameters and source line (recursively) into
    `h`: the printer may abbreviate them, the key must not (a run-time
    check's message names its line)."""
    for eqn in jaxpr.eqns:
        h.update(f"{eqn.primitive.name}@{eqn.source_info!r}".encode())
        for name in sorted(eqn.params):
            value = eqn.params[name]
            h.update(name.encode())
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                if isinstance(v, Jaxpr):
                    _hash_params(v, h)
                elif isinstance(v, np.ndarray):
                    h.update(f"{v.dtype.str}{v.shape}".encode() + np.ascontiguousarray(v).tobytes())
                else:
                    h.update(repr(v).encode())
        for x in eqn.invars:
            if hasattr(x, "val"):
                h.update(repr((np.asarray(x.val).dtype.str, np.asarray(x.val).tobytes())).encode())


def _specs(values) -> list[ValueSpec]:
    return [ValueSpec(v.aval.dtype, v.aval.ndim) for v in values]


def library_signature(jaxpr: Jaxpr) -> tuple[list[ValueSpec], list[ValueSpec], list[int]]:
    """The compiled library's arguments, results and written arguments
    (indices into the arguments). A written argument's final value stays in
    its buffer (kiln-store-written-arguments), so the jaxpr's write-back
    outputs are not results of the library."""
    writeback = tuple(getattr(jaxpr, "writeback", ()))
    num_implicit = sum(1 for explicit in jaxpr.in_explicit if not explicit)
    outvars = jaxpr.outvars[:len(jaxpr.outvars) - len(writeback)]
    return _specs(jaxpr.invars), _specs(outvars), [num_implicit + p for p in writeback]


def compile_jaxpr(jaxpr: Jaxpr, name: str, pipelines: Any = None,
                  keep_intermediate: bool = False) -> dict[str, Any]:
    """Lower, compile and load `jaxpr`, or load it from the cache.

    Returns {"executable", "stages" (stage -> text, "jaxpr" included),
    "seconds" (stage -> time; "cache" on a hit), "cache_hit",
    "workspace"}. A hit through the jaxpr index imports no MLIR at all.
    """
    symbol = _symbol_name(name)
    # Printed once: the index key, the stage texts and KILN_LOG all use it
    # (printing a long jaxpr is a large share of a cache hit).
    jaxpr_text = jaxpr.pretty()
    args, results, written = library_signature(jaxpr)
    record_texts: dict[str, str] = {}
    seconds: dict[str, float] = {}
    index_key = None
    if not _cache_bypassed(keep_intermediate):
        start = time.perf_counter()
        index_key = jaxpr_key(jaxpr, symbol, pipelines, jaxpr_text)
        indexed = cache.lookup_index(index_key)
        executable = _load_from_cache(*indexed, args, results, record_texts, written) if indexed else None
        if executable is not None:
            seconds["cache"] = time.perf_counter() - start
            return {"executable": executable, "stages": {"jaxpr": jaxpr_text, **record_texts},
                    "seconds": seconds, "cache_hit": True, "workspace": None}
    entry = _compile_with_mlir(jaxpr, jaxpr_text, symbol, pipelines, keep_intermediate, index_key)
    entry["stages"] = {"jaxpr": jaxpr_text, **entry["stages"]}
    return entry


def stage_texts(jaxpr: Jaxpr, name: str, pipelines: Any = None) -> dict[str, str]:
    """Every stage's text of `jaxpr` compiled as `name` (`mlir` to
    `llvmir`), without building a library: what a compile that did not keep
    its texts (`compile_jaxpr` keeps them only with `keep_intermediate` or
    KILN_LOG) gives `get_compilation_stage` when it is asked for one. The
    pipeline is deterministic, so these are the texts of the library the
    compile built."""
    from kiln.compiler import codegen
    from kiln.compiler.lowering import lower_jaxpr_to_module
    from kiln.compiler.pipeline import DEFAULT_PIPELINE, StageRecord, run_pipeline
    from kiln.dialects import new_context

    record = StageRecord()
    ctx = new_context()
    module = lower_jaxpr_to_module(jaxpr, _symbol_name(name), ctx)
    record.texts["mlir"] = str(module)
    with ctx:
        run_pipeline(module, pipelines if pipelines is not None else DEFAULT_PIPELINE, record)
        codegen.internalize_functions(module)
        record.texts["llvmir"] = codegen.llvm_ir(module)
    return record.texts


def stage_names(pipelines: Any = None) -> list[str]:
    """The stages a compile with `pipelines` has, in order."""
    from kiln.compiler.pipeline import DEFAULT_PIPELINE

    return ["jaxpr", "mlir", *(stage for stage, _ in (pipelines if pipelines is not None else DEFAULT_PIPELINE)),
            "llvmir"]


def _cache_bypassed(keep_intermediate: bool) -> bool:
    """Writing or logging the stages needs them all to run: no cache reads."""
    return keep_intermediate or bool(os.environ.get("KILN_LOG"))


def format_stage_times(seconds: dict[str, float]) -> str:
    """A table of per-stage compile times (ms and share of the total).

    >>> print(format_stage_times({"jaxpr": 0.001, "mlir": 0.003}))  # doctest: +NORMALIZE_WHITESPACE
    stage      ms       %
    jaxpr    1.00    25.0
    mlir     3.00    75.0
    total    4.00   100.0
    """
    total = sum(seconds.values())
    width = max([len(s) for s in seconds] + [len("stage")])
    lines = [f"{'stage':<{width}} {'ms':>8} {'%':>7}"]
    for stage, sec in list(seconds.items()) + [("total", total)]:
        share = 100 * sec / total if total else 0.0
        lines.append(f"{stage:<{width}} {sec * 1e3:8.2f} {share:7.1f}")
    return "\n".join(lines)


def _compile_with_mlir(jaxpr: Jaxpr, jaxpr_text: str, symbol: str, pipelines: Any, keep_intermediate: bool,
                       index_key: str | None) -> dict[str, Any]:
    from kiln.compiler.lowering import lower_jaxpr_to_module
    from kiln.dialects import new_context
    from kiln.compiler.pipeline import StageRecord, log_stage, validate_pipeline

    record = StageRecord()
    ctx = new_context()
    if pipelines is not None:
        validate_pipeline(pipelines, ctx)
    log_stage("jaxpr", jaxpr_text)
    start = time.perf_counter()
    module = lower_jaxpr_to_module(jaxpr, symbol, ctx)
    record.seconds["mlir"] = time.perf_counter() - start
    args, results, written = library_signature(jaxpr)
    # The stage texts are printed only when asked for: printing them was
    # ~5 % of a small kernel's compile, and `stage_texts` makes them again
    # from the jaxpr when `get_compilation_stage` wants one.
    return compile_module(module, symbol, args, results, pipelines,
                          keep_intermediate, record, index_key, jaxpr_text, written,
                          keep_texts=keep_intermediate or bool(os.environ.get("KILN_LOG")))


def compile_module(module: Any, symbol: str, args: list[ValueSpec], results: list[ValueSpec],
                   pipelines: Any = None, keep_intermediate: bool = False, record: Any = None,
                   index_key: str | None = None, jaxpr_text: str | None = None,
                   written: Sequence[int] = (), keep_texts: bool = True) -> dict[str, Any]:
    """Run the pipeline on a module at the `mlir` stage (its entry `symbol`
    with `llvm.emit_c_interface`), link and load it, or load it from the
    cache. Returns what `compile_jaxpr` returns; "stages" holds every
    stage's text with `keep_texts` (and then the cache entry too), else
    none but those a cache hit found."""
    from kiln.compiler import codegen
    from kiln.compiler.pipeline import DEFAULT_PIPELINE, StageRecord, log_stage, run_pipeline

    pipeline = pipelines if pipelines is not None else DEFAULT_PIPELINE
    record = record or StageRecord()
    if keep_texts:
        record.texts["mlir"] = str(module)
        log_stage("mlir", record.texts["mlir"])
    # Keyed with locations: a check's message names its source line.
    key = cache_key(module.operation.get_asm(enable_debug_info=True), pipeline)
    if not _cache_bypassed(keep_intermediate):
        start = time.perf_counter()
        executable = _load_from_cache(symbol, key, args, results, record.texts, written)
        if executable is not None:
            record.seconds["cache"] = time.perf_counter() - start
            if index_key is not None:
                cache.store_index(index_key, symbol, key)
            return {"executable": executable, "stages": record.texts, "seconds": record.seconds,
                    "cache_hit": True, "workspace": None}
    workspace = None
    if keep_intermediate:
        parent = os.environ.get("KILN_WORKSPACE_DIR")
        if parent:
            os.makedirs(parent, exist_ok=True)
        workspace = tempfile.mkdtemp(prefix=f"kiln-{symbol}-", dir=parent)
    # Built outside the cache: a full cache disk must not fail the compile (store falls back).
    build_dir = workspace or tempfile.mkdtemp(prefix="kiln-build-")
    linking_later = False
    try:
        with module.context:
            run_pipeline(module, pipeline, record, keep_text=keep_texts)
            start = time.perf_counter()
            # The last stage's text is the module codegen gets (printed once, reused to split it).
            last = list(record.texts)[-1] if record.texts else None
            text = record.texts[last] if last == "llvm" else None
            image = None
            if workspace is None and first_call_in_jit():
                image, link = codegen.emit_for_first_call(module, build_dir, symbol, text=text)
                built = link() if image is None else None
            else:
                built, _ = codegen.emit_shared_library(module, build_dir, symbol, text=text)
            if keep_texts:
                record.texts["llvmir"] = codegen.llvm_ir(module)
            record.seconds["llvmir"] = time.perf_counter() - start
            if keep_texts:
                log_stage("llvmir", record.texts["llvmir"])
        stored_stages = {k: v for k, v in record.texts.items() if k != "jaxpr"}
        if image is not None:
            executable = Executable(None, symbol, args, results, written, image=image)
            _link_later(executable, link, build_dir, symbol, key, stored_stages, index_key)
            linking_later = True
            return {"executable": executable, "stages": record.texts, "seconds": record.seconds,
                    "cache_hit": False, "workspace": None}
        library = cache.store(symbol, key, built, stored_stages)
        if index_key is not None:
            cache.store_index(index_key, symbol, key)
        if workspace:
            _write_workspace(workspace, symbol, {**({"jaxpr": jaxpr_text} if jaxpr_text else {}), **record.texts})
    finally:
        if not workspace and not linking_later:
            shutil.rmtree(build_dir, ignore_errors=True)
    executable = Executable(library, symbol, args, results, written)
    return {"executable": executable, "stages": record.texts, "seconds": record.seconds,
            "cache_hit": False, "workspace": workspace}


FIRST_CALL_JIT_ENV = "KILN_FIRST_CALL_JIT"


def first_call_in_jit() -> bool:
    """Whether a compile's first call runs its code from the engines that
    compiled it while the library is linked behind it (runtime/deferred.py);
    `KILN_FIRST_CALL_JIT=0` waits for the library instead."""
    return os.environ.get(FIRST_CALL_JIT_ENV, "1") != "0"


def _link_later(executable: Executable, link: Callable[[], str], build_dir: str, symbol: str, key: str,
                stages: dict, index_key: str | None) -> None:
    """Link, store and adopt the library of a first call that runs from the
    JIT, on the deferred worker (runtime/deferred.py)."""

    requested = cache.requested_dir()

    def task() -> None:
        try:
            with cache.pinned(requested):
                library = cache.store(symbol, key, link(), stages)
                if index_key is not None:
                    cache.store_index(index_key, symbol, key)
            executable.adopt(library)
        finally:
            shutil.rmtree(build_dir, ignore_errors=True)

    deferred.submit([key] + ([index_key] if index_key is not None else []), task, executable.link_failed)


def _load_from_cache(symbol: str, key: str, args: list, results: list, texts: dict,
                     written: Sequence[int] = ()) -> Executable | None:
    """The cached executable, with the cached stage texts added to `texts`;
    None on a miss or when the cached library cannot be loaded."""
    entry = cache.lookup(symbol, key)
    if entry is None:
        return None
    try:
        executable = Executable(entry.library, symbol, args, results, written)
    except (OSError, AttributeError):  # unloadable library or missing entry point
        cache.discard(symbol, key)
        return None
    for stage, text in entry.stages.items():
        texts.setdefault(stage, text)
    return executable


def build_library(jaxpr: Jaxpr, symbol: str, output: str, wrapper: Callable[[], str],
                  include_dirs: Sequence[str] = ()) -> list[str]:
    """Compile `jaxpr` as the kernel `symbol` into the shared library
    `output` (no cache), linked with the C source that `wrapper()` writes
    and returns the path of; the libraries it calls (BLAS) are copied
    beside `output` and found relative to it. Returns their file names."""
    from kiln.compiler import codegen
    from kiln.compiler.lowering import lower_jaxpr_to_module
    from kiln.dialects import new_context
    from kiln.compiler.pipeline import DEFAULT_PIPELINE, StageRecord, run_pipeline

    ctx = new_context()
    module = lower_jaxpr_to_module(jaxpr, symbol, ctx)
    source = wrapper()
    build_dir = tempfile.mkdtemp(prefix="kiln-export-")
    try:
        wrapper_object = toolchain.compile_object(source, os.path.join(build_dir, "wrapper.o"), list(include_dirs))
        with ctx:
            run_pipeline(module, DEFAULT_PIPELINE, StageRecord(), keep_text=False)
            built, bundled = codegen.emit_shared_library(module, build_dir, symbol, [wrapper_object],
                                                         bundle_into=os.path.dirname(os.path.abspath(output)),
                                                         soname=os.path.basename(output))
        cache.write_atomically(output, lambda tmp: shutil.copyfile(built, tmp))
    finally:
        shutil.rmtree(build_dir, ignore_errors=True)
    return bundled


def _write_workspace(workspace: str, symbol: str, texts: dict[str, str]) -> None:
    """One file per stage, numbered in pipeline order: `0_f.jaxpr.txt`,
    `1_f.mlir.mlir`, ..., `N_f.llvmir.ll`."""
    for i, (stage, text) in enumerate(texts.items()):
        ext = {"jaxpr": "txt", "llvmir": "ll"}.get(stage, "mlir")
        with open(os.path.join(workspace, f"{i}_{symbol}.{stage}.{ext}"), "w") as f:
            f.write(text)



