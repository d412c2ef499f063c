"""Runtime: the persistent compilation cache under `KILN_CACHE_DIR`.

In: cache keys and freshly built files: function libraries (which hold
their run-time check messages themselves) with their stage texts
(`compiler/driver.py`), the support code and the fastcall extension
(`runtime/toolchain.py`).
Out: paths that are safe to load. Every file is written under a temporary
name and published with `os.replace`; its sha256 is recorded (a function
entry's JSON; a `.sha256` sidecar for toolchain files) and checked before
the file is loaded: a damaged file is never loaded, it is built again. A
directory that cannot be used falls back to a private temporary cache with
one warning; function entries beyond `KILN_CACHE_MAX_BYTES` are evicted,
least recently used first. Layout and rules: docs/runtime.md.

>>> from kiln.runtime import cache
>>> cache.stats()["hits"] >= 0
True
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Callable, Iterator, TypeVar

from kiln.errors import ToolchainError
from kiln.runtime import deferred

T = TypeVar("T")
FORMAT_VERSION = 2
# An entry used this recently may be about to be loaded by another process:
# eviction leaves it.
RECENT_SECONDS = 10
DEFAULT_MAX_BYTES = 2 << 30
# Toolchain files at the top of the cache directory (see runtime/toolchain.py).
_TOOLCHAIN_PREFIXES = ("kiln_support_", "libkiln_support_", "kiln_lapack_", "kiln_random_", "libkiln_random_",
                       "kiln_sort_", "libkiln_sort_", "kiln_argsort_", "libkiln_argsort_", "kiln_fastcall-")


@dataclass
class CacheEntry:
    """A validated cache entry: the library to load and its metadata."""

    library: str
    stages: dict


# Process-wide counters; `stats()` returns a copy, `reset_stats()` zeroes them.
_STATS = {"hits": 0, "misses": 0, "stores": 0, "rejected": 0, "evicted": 0}


# Seconds this process spent building toolchain files (support code, the
# sorting routines of a dtype, the fastcall extension): a compile that
# built one is slow once, not because of the program (frontend/compile_log.py).
_BUILD_SECONDS = [0.0]
_BUILD_LOCK = threading.Lock()
_BUILDING = threading.local()  # depth of nested builds on this thread (a library's build builds its objects)


def toolchain_build_seconds() -> float:
    """Seconds spent so far in this process building toolchain files."""
    return _BUILD_SECONDS[0]


def stats() -> dict:
    """Counters of this process: `hits` (libraries loaded from disk),
    `misses` (lookups that found nothing usable), `stores`, `rejected`
    (damaged or stale files discarded and rebuilt) and `evicted` (entries
    removed to keep the cache under its size cap; a first call's store
    counts once its library is linked: this waits for it)."""
    deferred.wait()
    return dict(_STATS)


def reset_stats() -> None:
    deferred.wait()
    for name in _STATS:
        _STATS[name] = 0


# --------------------------------------------------------------------------
# The directory, and the private fallback when it cannot be used.

_lock = threading.RLock()
_active: dict[str, str] = {}  # requested directory -> the directory in use
_fallback_reasons: dict[str, str] = {}  # requested directory -> why it is not used
_private: list[str] = []  # this process's temporary cache, made on first need


_PINNED = threading.local()  # .requested: the directory a deferred store writes to (`pinned`)


@contextlib.contextmanager
def pinned(requested: str) -> Iterator[None]:
    """On this thread, use `requested` as the requested directory: a first
    call's library, linked behind it, goes where the cache was when it was
    compiled, whatever `KILN_CACHE_DIR` says by then."""
    _PINNED.requested = requested
    try:
        yield
    finally:
        _PINNED.requested = None


def requested_dir() -> str:
    """`KILN_CACHE_DIR`, else `$XDG_CACHE_HOME/kiln`, else `~/.cache/kiln`
    (or on a thread in `pinned`, its directory)."""
    pinned_dir = getattr(_PINNED, "requested", None)
    if pinned_dir:
        return pinned_dir
    return os.environ.get("KILN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "kiln")


def cache_dir() -> str:
    """The directory in use: the requested one if kiln can write there, else
    this process's private temporary cache (with one warning)."""
    requested = requested_dir()
    active = _active.get(requested)
    if active is not None and os.path.isdir(active):
        return active
    with _lock:
        reason = _unusable_because(requested)
        if reason is None:
            _active[requested] = requested
            return requested
        return fall_back(reason)


def _unusable_because(path: str) -> str | None:
    """Why kiln cannot keep its cache in `path` (None if it can): it must be
    a directory, or creatable as one, where kiln can create files."""
    if os.path.exists(path) and not os.path.isdir(path):
        return "it is a file, not a directory"
    try:
        for sub in ("lib", "index"):
            os.makedirs(os.path.join(path, sub), exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".kiln-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return str(e)
    return None


def fall_back(reason: str) -> str:
    """Use a private temporary cache for the rest of this process, instead of
    the requested directory (unusable for `reason`); warn once per directory."""
    requested = requested_dir()
    with _lock:
        if not _private or not os.path.isdir(_private[0]):
            private = tempfile.mkdtemp(prefix="kiln-private-cache-")
            atexit.register(shutil.rmtree, private, ignore_errors=True)
            _private[:] = [private]
        for sub in ("lib", "index"):
            os.makedirs(os.path.join(_private[0], sub), exist_ok=True)
        if requested not in _fallback_reasons:
            _fallback_reasons[requested] = reason
            warnings.warn(
                f"kiln: cannot use the compile cache directory {requested!r} ({reason}); this process "
                f"uses a private temporary cache {_private[0]!r}, deleted at exit, so compiled functions "
                "are not reused by other processes. Set KILN_CACHE_DIR to a writable directory.",
                RuntimeWarning, stacklevel=3)
        _active[requested] = _private[0]
        return _private[0]


def _with_fallback(write: Callable[[], T]) -> T:
    """Run `write` (which finds its paths through `cache_dir()`); if the
    directory refuses the write (read-only, disk full, removed), switch to
    the private cache and write there."""
    started_in = cache_dir()
    try:
        return write()
    except OSError as e:
        if not (_private and started_in == _private[0]):
            if cache_dir() == started_in:
                fall_back(str(e))
            try:
                return write()
            except OSError as again:
                e = again
        raise ToolchainError(f"kiln cannot write its compile cache, neither in {requested_dir()!r} nor in a "
                             f"private temporary directory ({e}); free disk space, or set KILN_CACHE_DIR "
                             "to a writable directory") from None


def library_dir() -> str:
    return os.path.join(cache_dir(), "lib")


# --------------------------------------------------------------------------
# Checksums and atomic writes.

_verified: dict[str, tuple] = {}  # path -> (inode, size, mtime) when its sha256 last matched


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _stamp(path: str) -> tuple:
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


def _matches(path: str, digest: str | None) -> bool:
    """Whether the file at `path` has sha256 `digest` (remembered per
    inode, size and mtime, so a file replaced since is hashed again)."""
    if not digest:
        return False
    try:
        stamp = _stamp(path)
        if _verified.get(path) == (stamp, digest):
            return True
        if _sha256(path) != digest:
            return False
    except OSError:
        return False
    _verified[path] = (stamp, digest)
    return True


def write_atomically(path: str, fill: Callable[[str], None]) -> str:
    """Write `path` through a temporary file in its directory (`fill(tmp)`
    writes it) and move it into place with `os.replace`, so a reader sees
    the old file or the whole new one, never a part; returns `path`."""
    directory, name = os.path.split(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    os.close(fd)
    try:
        fill(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _publish_text(path: str, text: str) -> None:
    def fill(tmp: str) -> None:
        with open(tmp, "w") as f:
            f.write(text)

    write_atomically(path, fill)


def toolchain_file(name: str, build: Callable[[str], None]) -> str:
    """The verified cached file `name` (a path relative to the cache
    directory), built by `build(output)` when it is absent or its bytes do
    not match its recorded sha256. Safe to load."""

    def locate() -> str:
        target = os.path.join(cache_dir(), name)
        try:
            with open(target + ".sha256") as f:
                recorded = f.read().strip()
        except (OSError, ValueError):
            recorded = None
        if _matches(target, recorded):
            return target
        if os.path.exists(target):
            _STATS["rejected"] += 1
        # Built outside the cache: a full cache disk must not look like a compiler error.
        build_dir = tempfile.mkdtemp(prefix="kiln-toolchain-")
        started = time.perf_counter()
        try:
            built = os.path.join(build_dir, os.path.basename(target))
            depth = getattr(_BUILDING, "depth", 0)
            _BUILDING.depth = depth + 1
            try:
                build(built)
            finally:
                _BUILDING.depth = depth
                if depth == 0:
                    with _BUILD_LOCK:
                        _BUILD_SECONDS[0] += time.perf_counter() - started
            digest = _sha256(built)
            write_atomically(target, lambda tmp: shutil.copyfile(built, tmp))
            _publish_text(target + ".sha256", digest)
        finally:
            shutil.rmtree(build_dir, ignore_errors=True)
        _verified[target] = (_stamp(target), digest)
        return target

    return _with_fallback(locate)


# --------------------------------------------------------------------------
# Function entries: lib/<symbol>-<key>.so and lib/<symbol>-<key>.json.

_in_use: set[tuple[str, str]] = set()  # entries this process loaded: never evicted by it


def entry_paths(symbol: str, key: str) -> tuple[str, str]:
    """(library, metadata) paths of the entry `symbol` / `key`."""
    stem = os.path.join(library_dir(), f"{symbol}-{key}")
    return stem + ".so", stem + ".json"


def lookup(symbol: str, key: str) -> CacheEntry | None:
    """The valid entry for `symbol` / `key`, or None (absent, or damaged and
    removed). A hit marks the entry as recently used."""
    deferred.wait(key)  # (a first call's library being linked behind it)
    library, meta_path = entry_paths(symbol, key)
    if not (os.path.exists(library) and os.path.exists(meta_path)):
        _STATS["misses"] += 1
        return None
    try:
        with open(meta_path) as f:
            meta = json.load(f)
        valid = (isinstance(meta, dict) and meta.get("format") == FORMAT_VERSION and meta.get("key") == key
                 and meta.get("symbol") == symbol and _matches(library, meta.get("library_sha256"))
                 and isinstance(meta.get("stages"), dict))
    except (OSError, ValueError):
        valid = False
    if not valid:
        discard(symbol, key)
        _STATS["rejected"] += 1
        _STATS["misses"] += 1
        return None
    _STATS["hits"] += 1
    _in_use.add((symbol, key))
    try:
        os.utime(meta_path)  # the LRU stamp
    except OSError:
        pass
    return CacheEntry(library, meta["stages"])


def discard(symbol: str, key: str) -> None:
    """Remove an entry (metadata first, so no reader pairs it with a new library)."""
    for path in reversed(entry_paths(symbol, key)):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def store(symbol: str, key: str, built_library: str, stages: dict) -> str:
    """Copy a linked library into the cache with its metadata (then evict
    least recently used entries beyond the size cap); returns the cached
    library's path."""

    def write() -> str:
        library, meta_path = entry_paths(symbol, key)
        digest = _sha256(built_library)
        write_atomically(library, lambda tmp: shutil.copyfile(built_library, tmp))
        meta = {"format": FORMAT_VERSION, "key": key, "symbol": symbol, "library_sha256": digest,
                "stages": stages}
        _publish_text(meta_path, json.dumps(meta))
        return library

    library = _with_fallback(write)
    _STATS["stores"] += 1
    _in_use.add((symbol, key))
    _evict(max_bytes())
    return library


# --------------------------------------------------------------------------
# The jaxpr index: `index/<jaxpr key>.json` names the entry (symbol, key) that
# a jaxpr compiled to, so a process can find its library without importing
# MLIR or lowering the jaxpr again.


def _index_path(jaxpr_key: str) -> str:
    return os.path.join(cache_dir(), "index", f"{jaxpr_key}.json")


def lookup_index(jaxpr_key: str) -> tuple[str, str] | None:
    """The (symbol, key) recorded for `jaxpr_key`, or None (a damaged
    record, or another jaxpr's, is removed)."""
    deferred.wait(jaxpr_key)  # (a first call's record is written once its library is linked)
    path = _index_path(jaxpr_key)
    try:
        with open(path) as f:
            data = json.load(f)
        if data["jaxpr_key"] == jaxpr_key:
            return str(data["symbol"]), str(data["key"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        pass
    _STATS["rejected"] += 1
    try:
        os.unlink(path)
    except OSError:
        pass
    return None


def store_index(jaxpr_key: str, symbol: str, key: str) -> None:
    record = json.dumps({"jaxpr_key": jaxpr_key, "symbol": symbol, "key": key})
    _with_fallback(lambda: _publish_text(_index_path(jaxpr_key), record))


# --------------------------------------------------------------------------
# Size cap, information, clearing.


def max_bytes() -> int:
    """`KILN_CACHE_MAX_BYTES` (default 2 GiB): the size function entries may
    take before the least recently used are evicted."""
    text = os.environ.get("KILN_CACHE_MAX_BYTES", "")
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        value = int(text)
        if value >= 0:
            return value
    except ValueError:
        pass
    warnings.warn(f"kiln: KILN_CACHE_MAX_BYTES={text!r} is not a number of bytes (a non-negative integer); "
                  f"using the default {DEFAULT_MAX_BYTES}", RuntimeWarning, stacklevel=2)
    return DEFAULT_MAX_BYTES


def _entries() -> list[tuple[float, int, str, str]]:
    """Every function entry as (last use, bytes, symbol, key)."""
    folder = library_dir()
    groups: dict[str, list[str]] = {}
    for name in (os.listdir(folder) if os.path.isdir(folder) else ()):
        stem, ext = os.path.splitext(name)
        if ext in (".so", ".json") and not name.startswith("."):
            groups.setdefault(stem, []).append(os.path.join(folder, name))
    found = []
    for stem, paths in groups.items():
        symbol, _, key = stem.rpartition("-")
        try:
            stats_ = [os.stat(p) for p in paths]
        except FileNotFoundError:
            continue
        found.append((max(s.st_mtime for s in stats_), sum(s.st_size for s in stats_), symbol, key))
    return found


def evict(cap: int | None = None) -> int:
    """Remove least recently used function entries until they take at most
    `cap` bytes (default `max_bytes()`), keeping every entry this process
    has loaded and every entry used in the last RECENT_SECONDS (another
    process may be loading it); index records of removed entries go too.
    Returns how many entries were removed."""
    deferred.wait()  # (the libraries being linked behind first calls count)
    return _evict(max_bytes() if cap is None else cap)


def _evict(cap: int) -> int:
    """`evict` without waiting (after a store: the deferred worker's own, or a library linked first)."""
    entries = sorted(_entries())
    total = sum(size for _, size, _, _ in entries)
    recent = time.time() - RECENT_SECONDS
    removed = 0
    for last_use, size, symbol, key in entries:
        if total <= cap or last_use > recent:
            break
        if (symbol, key) in _in_use:
            continue
        discard(symbol, key)
        total -= size
        removed += 1
    if removed:
        _STATS["evicted"] += removed
        _drop_dangling_index_records()
    return removed


def _drop_dangling_index_records() -> None:
    folder = os.path.join(cache_dir(), "index")
    for name in (os.listdir(folder) if os.path.isdir(folder) else ()):
        path = os.path.join(folder, name)
        try:
            with open(path) as f:
                data = json.load(f)
            target = entry_paths(str(data["symbol"]), str(data["key"]))[1]
        except FileNotFoundError:
            continue
        except (OSError, ValueError, KeyError, TypeError):
            target = ""
        if not os.path.exists(target):
            try:
                os.unlink(path)
            except OSError:
                pass


def info() -> dict:
    """The cache in use: `path`, `requested` (the configured directory),
    `fallback_reason` (why `requested` is not used, or None), `entries`
    (function entries), `entry_bytes`, `bytes` (every file) and `cap`."""
    deferred.wait()
    path = cache_dir()
    entries = _entries()
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    requested = requested_dir()
    return {"path": path, "requested": requested, "fallback_reason": _fallback_reasons.get(requested),
            "entries": len(entries), "entry_bytes": sum(size for _, size, _, _ in entries), "bytes": total,
            "cap": max_bytes()}


def clear() -> int:
    """Delete every cached file (function libraries, their metadata, the
    jaxpr index, libraries received with pickled functions, the support
    code and the fastcall extension); returns how
    many files were removed. Files already loaded by a process stay usable
    there; run it when no process is compiling."""
    deferred.wait()
    root = cache_dir()
    removed = 0
    targets = [os.path.join(root, sub, name) for sub in ("lib", "index", "received")
               if os.path.isdir(os.path.join(root, sub)) for name in os.listdir(os.path.join(root, sub))]
    targets += [os.path.join(root, name) for name in os.listdir(root)
                if name.startswith(_TOOLCHAIN_PREFIXES) or (name.startswith(".") and name.endswith(".tmp"))]
    for path in targets:
        if os.path.isdir(path):
            removed += sum(len(files) for _, _, files in os.walk(path))
            shutil.rmtree(path, ignore_errors=True)
            continue
        try:
            os.unlink(path)
            removed += 1
        except FileNotFoundError:
            pass
    _verified.clear()
    return removed
