"""The compilation driver: Jaxpr -> every stage -> a loaded library.

In: a typechecked top-level `Jaxpr`, the function name, optional pipeline
override and `keep_intermediate`.
Out: an `Executable` plus the text and time of each stage. Libraries are
cached on disk (`KILN_CACHE_DIR`), keyed by the hash of the `mlir` stage,
the pipeline and the toolchain versions; a hit skips the pipeline and codegen.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from typing import Any

from kiln.compiler import codegen
from kiln.compiler.lowering import lower_jaxpr_to_module
from kiln.compiler.mlir import PROVIDER, new_context
from kiln.compiler.pipeline import DEFAULT_PIPELINE, STAGES, Pipeline, StageRecord, run_pipeline
from kiln.core import Jaxpr
from kiln.runtime import toolchain
from kiln.runtime.executable import Executable, ValueSpec

KILN_ABI_VERSION = "1"


def _symbol_name(name: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9_]", "_", name) or "fn"
    return clean if not clean[0].isdigit() else f"fn_{clean}"


def cache_key(mlir_text: str, pipeline: Pipeline) -> str:
    h = hashlib.sha256()
    for part in (KILN_ABI_VERSION, PROVIDER, toolchain._support_key(), repr(pipeline), mlir_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _specs(values) -> list[ValueSpec]:
    return [ValueSpec(v.aval.dtype, v.aval.ndim) for v in values]


def compile_jaxpr(jaxpr: Jaxpr, name: str, pipelines: Pipeline | None = None,
                  keep_intermediate: bool = False) -> dict[str, Any]:
    symbol = _symbol_name(name)
    pipeline = pipelines if pipelines is not None else DEFAULT_PIPELINE
    record = StageRecord()
    ctx = new_context()
    start = time.perf_counter()
    module, checks = lower_jaxpr_to_module(jaxpr, symbol, ctx)
    record.seconds["mlir"] = time.perf_counter() - start
    record.texts["mlir"] = str(module)
    key = cache_key(record.texts["mlir"], pipeline)
    lib_dir = os.path.join(toolchain.cache_dir(), "lib")
    os.makedirs(lib_dir, exist_ok=True)
    library = os.path.join(lib_dir, f"{symbol}-{key}.so")
    meta_path = os.path.join(lib_dir, f"{symbol}-{key}.json")
    workspace = None
    if keep_intermediate:
        workspace = tempfile.mkdtemp(prefix=f"kiln-{symbol}-", dir=os.environ.get("KILN_WORKSPACE_DIR"))
    cached = _load_cached(library, meta_path)
    if cached is not None and not keep_intermediate:
        record.texts.update(cached["stages"])
        executable = Executable(library, symbol, _specs(jaxpr.invars), _specs(jaxpr.outvars),
                                [tuple(c) for c in cached["checks"]])
        return {"executable": executable, "stages": record.texts, "seconds": record.seconds,
                "cache_hit": True, "workspace": None}
    with ctx:
        run_pipeline(module, pipeline, record)
        start = time.perf_counter()
        build_dir = workspace or tempfile.mkdtemp(prefix="kiln-build-", dir=lib_dir)
        built = codegen.emit_shared_library(module, build_dir, symbol)
        record.seconds["llvmir"] = time.perf_counter() - start
    os.replace(built, library) if not keep_intermediate else _copy_file(built, library)
    record.texts["llvmir"] = codegen.disassemble(library)
    _store_meta(meta_path, checks, record.texts)
    if workspace:
        _write_workspace(workspace, symbol, record)
    else:
        _remove_tree(build_dir)
    executable = Executable(library, symbol, _specs(jaxpr.invars), _specs(jaxpr.outvars), checks)
    return {"executable": executable, "stages": record.texts, "seconds": record.seconds,
            "cache_hit": False, "workspace": workspace}


def _load_cached(library: str, meta_path: str) -> dict | None:
    """The cached entry's metadata, or None when absent or corrupt."""
    if not (os.path.exists(library) and os.path.exists(meta_path)):
        return None
    try:
        with open(meta_path) as f:
            meta = json.load(f)
        with open(library, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except (OSError, ValueError):
        return None
    if meta.get("library_sha256") != digest:
        return None
    meta["library_sha256"] = digest
    return meta


def _store_meta(meta_path: str, checks: list, stages: dict) -> None:
    library = meta_path[: -len(".json")] + ".so"
    with open(library, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    data = {"checks": checks, "stages": {k: v for k, v in stages.items() if k != "jaxpr"},
            "library_sha256": digest}
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(meta_path), suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.replace(tmp, meta_path)


def _copy_file(src: str, dst: str) -> None:
    import shutil

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dst), suffix=".so")
    os.close(fd)
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _write_workspace(workspace: str, symbol: str, record: StageRecord) -> None:
    for i, stage in enumerate(s for s in STAGES if s in record.texts):
        ext = "txt" if stage in ("jaxpr", "llvmir") else "mlir"
        with open(os.path.join(workspace, f"{i}_{symbol}.{stage}.{ext}"), "w") as f:
            f.write(record.texts[stage])



