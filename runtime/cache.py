"""Runtime: the persistent compilation cache under `KILN_CACHE_DIR/lib`.

In: a cache key (from `compiler/driver.py`: hash of the `mlir` stage text,
the pipeline and the toolchain fingerprint), the entry's symbol, and on a
miss the freshly linked library with its stage texts (the library holds its
run-time check messages itself).
Out: `<symbol>-<key>.so` plus `<symbol>-<key>.json` (stage texts, the
library's sha256). Both are written to temporary files and moved into
place with `os.replace`, so readers never see a partial file; an entry whose
metadata is unreadable or whose library does not match its recorded sha256
is discarded and compiled again.

>>> from kiln.runtime import cache
>>> cache.stats()["hits"] >= 0
True
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass

from kiln.runtime import toolchain

FORMAT_VERSION = 2


@dataclass
class CacheEntry:
    """A validated cache entry: the library to load and its metadata."""

    library: str
    stages: dict


# Process-wide counters; `stats()` returns a copy, `reset_stats()` zeroes them.
_STATS = {"hits": 0, "misses": 0, "stores": 0, "rejected": 0}


def stats() -> dict:
    """Counters of this process: `hits` (libraries loaded from disk),
    `misses` (lookups that found nothing usable), `stores`, and `rejected`
    (entries found corrupt or stale and discarded)."""
    return dict(_STATS)


def reset_stats() -> None:
    for name in _STATS:
        _STATS[name] = 0


def library_dir() -> str:
    path = os.path.join(toolchain.cache_dir(), "lib")
    os.makedirs(path, exist_ok=True)
    return path


def entry_paths(symbol: str, key: str) -> tuple[str, str]:
    """(library, metadata) paths of the entry `symbol` / `key`."""
    stem = os.path.join(library_dir(), f"{symbol}-{key}")
    return stem + ".so", stem + ".json"


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def lookup(symbol: str, key: str) -> CacheEntry | None:
    """The valid entry for `symbol` / `key`, or None (absent, or corrupt and
    removed)."""
    library, meta_path = entry_paths(symbol, key)
    if not (os.path.exists(library) and os.path.exists(meta_path)):
        _STATS["misses"] += 1
        return None
    try:
        with open(meta_path) as f:
            meta = json.load(f)
        valid = (isinstance(meta, dict) and meta.get("format") == FORMAT_VERSION and meta.get("key") == key
                 and meta.get("symbol") == symbol and meta.get("library_sha256") == _sha256(library)
                 and isinstance(meta.get("stages"), dict))
    except (OSError, ValueError):
        valid = False
    if not valid:
        discard(symbol, key)
        _STATS["rejected"] += 1
        _STATS["misses"] += 1
        return None
    _STATS["hits"] += 1
    return CacheEntry(library, meta["stages"])


def discard(symbol: str, key: str) -> None:
    """Remove an entry (metadata first, so no reader pairs it with a new library)."""
    for path in reversed(entry_paths(symbol, key)):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def store(symbol: str, key: str, built_library: str, stages: dict) -> str:
    """Move (or copy, if `built_library` must be kept) a linked library
    into the cache with its metadata; returns the cached library's path."""
    library, meta_path = entry_paths(symbol, key)
    directory = os.path.dirname(library)
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".so.tmp")
    os.close(fd)
    try:
        shutil.copyfile(built_library, tmp)
        digest = _sha256(tmp)
        os.replace(tmp, library)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    meta = {"format": FORMAT_VERSION, "key": key, "symbol": symbol, "library_sha256": digest,
            "stages": stages}
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".json.tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(meta, f)
        os.replace(tmp, meta_path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _STATS["stores"] += 1
    return library


# The jaxpr index: `index/<jaxpr key>` names the entry (symbol, key) that a
# jaxpr compiled to, so a process can find its library without importing
# MLIR or lowering the jaxpr again.


def _index_path(jaxpr_key: str) -> str:
    path = os.path.join(toolchain.cache_dir(), "index")
    os.makedirs(path, exist_ok=True)
    return os.path.join(path, f"{jaxpr_key}.json")


def lookup_index(jaxpr_key: str) -> tuple[str, str] | None:
    """The (symbol, key) recorded for `jaxpr_key`, or None."""
    try:
        with open(_index_path(jaxpr_key)) as f:
            data = json.load(f)
        return str(data["symbol"]), str(data["key"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store_index(jaxpr_key: str, symbol: str, key: str) -> None:
    path = _index_path(jaxpr_key)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".json.tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"symbol": symbol, "key": key}, f)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def clear() -> int:
    """Delete every cached library, its metadata and the jaxpr index;
    returns how many files were removed. Libraries already loaded by a
    process stay usable there."""
    removed = 0
    for sub in ("lib", "index"):
        folder = os.path.join(toolchain.cache_dir(), sub)
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
                continue
            try:
                os.unlink(path)
                removed += 1
            except FileNotFoundError:
                pass
    return removed
