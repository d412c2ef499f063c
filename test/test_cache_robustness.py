"""The compile cache never crashes a process: every cached file kiln loads is
verified first (damaged files are rebuilt), an unusable cache directory falls
back to a private one with one warning, the size cap evicts least recently
used entries, `kiln cache info | clear` work, and a missing or failing C
compiler is a ToolchainError. Damage is done between processes, and each
check runs in a subprocess, so a crash shows as a return code.

The tests that rebuild toolchain files build C code through conftest's
`cached_cc` (the size-cap tests, whose caches are seeded, do not): a rebuilt
support object, support library or fastcall extension is kiln's whole
rebuild (damage found, compiler run, file written and verified), with the
compiler's output for a source it compiled before in this session copied."""

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import kiln
from kiln import cli
from kiln.errors import ToolchainError
from kiln.runtime import cache

# argv: [fresh constant or "-"] [names of functions to call ...]. Calls `first`
# (one argument) and `second` (three), and with a constant a function no
# cache holds yet, whose compile needs the support object and library.
_SCRIPT = textwrap.dedent("""
    import glob, json, os, sys
    import numpy as np
    import kiln
    from kiln.compiler.driver import toolchain_fingerprint
    from kiln.runtime import cache, executable

    @kiln.qjit
    def first(x):
        return x * 3.0 - 1.0

    @kiln.qjit
    def second(a, x, y):
        return a * x + y

    x = np.arange(6.0)
    ok = [bool(np.array_equal(first(x), x * 3.0 - 1.0)),
          bool(np.array_equal(second(2.0, x, x), 3.0 * x))]
    if sys.argv[1] != "-":
        constant = float(sys.argv[1])

        @kiln.qjit
        def fresh(x):
            return x + constant

        ok.append(bool(np.array_equal(fresh(x), x + constant)))
    print(json.dumps({"ok": ok, "fastcall": executable.fastcall_module() is not None, "stats": cache.stats(),
                      "cache": cache.cache_dir(), "fingerprint": toolchain_fingerprint(),
                      "libraries": {f.__name__: f.last.executable.library for f in (first, second)}}))
""")


# conftest's `cached_cc` environment, for every child that may rebuild a toolchain file.
_CC_ENV: dict[str, str] = {}


@pytest.fixture(scope="module", autouse=True)
def _cached_compiler(cached_cc):
    _CC_ENV.update(cached_cc)


def run_script(cache_dir, *argv, env=None, prelude=""):
    environment = dict(os.environ, KILN_CACHE_DIR=str(cache_dir), **_CC_ENV, **(env or {}))
    proc = subprocess.run([sys.executable, "-c", prelude + _SCRIPT, *argv], env=environment,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"rc {proc.returncode}\n{proc.stderr[-3000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(result["ok"]), result
    return result, proc.stderr


@pytest.fixture(scope="module")
def seeded_cache(tmp_path_factory, seed_toolchain):
    """A cache holding `first`, `second` (written by one process), the
    support code and the fastcall extension (this session's, copied)."""
    root = seed_toolchain(tmp_path_factory.mktemp("seeded") / "cache")
    result, _ = run_script(root, "0.5")
    assert result["fastcall"], "the C fast path could not be built here"
    return root, result


def _index_record(root, symbol):
    for path in glob.glob(str(root / "index" / "*.json")):
        with open(path) as f:
            if json.load(f)["symbol"] == symbol:
                return path
    raise AssertionError(f"no index record for {symbol}")


def _artifact(root, seed, kind, function="first"):
    """The path of one cached file of `kind`."""
    library = seed["libraries"][function].replace(str(seed["cache"]), str(root))
    return {
        "fastcall": lambda: glob.glob(str(root / "kiln_fastcall-*" / "*.so"))[0],
        "support-library": lambda: glob.glob(str(root / "libkiln_support_*.so"))[0],
        "support-object": lambda: glob.glob(str(root / "kiln_support_*.o"))[0],
        "library": lambda: library,
        "metadata": lambda: library[: -len(".so")] + ".json",
        "index": lambda: _index_record(root, function),
    }[kind]()


# For files of which the cache holds one, "another function's file" is the
# nearest wrong file: another shared library, or the object's library.
_OTHER_FILE = {"fastcall": "support-library", "support-library": "library", "support-object": "support-library"}


def _damage(path, how, other):
    size = os.path.getsize(path)
    if how == "truncate":
        with open(path, "r+b") as f:
            f.truncate(size // 3)
    elif how == "zero":
        with open(path, "wb") as f:
            f.write(bytes(size))
    elif how == "garbage":
        with open(path, "wb") as f:
            f.write(np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8).tobytes())
    else:
        shutil.copyfile(other, path)


def _whole(root, seed, kind):
    """Whether the cached file of `kind` is whole again: its bytes match
    the sha256 recorded for it (and an index record names its own key)."""
    path = _artifact(root, seed, kind)
    if kind in _OTHER_FILE:
        with open(path + ".sha256") as f:
            return hashlib.sha256(open(path, "rb").read()).hexdigest() == f.read().strip()
    if kind == "index":
        return json.load(open(path))["jaxpr_key"] == os.path.basename(path)[: -len(".json")]
    meta = json.load(open(_artifact(root, seed, "metadata")))
    library = _artifact(root, seed, "library")
    return hashlib.sha256(open(library, "rb").read()).hexdigest() == meta["library_sha256"]


@pytest.mark.parametrize("how", ["truncate", "zero", "garbage", "other"])
@pytest.mark.parametrize("kind", ["fastcall", "support-library", "support-object", "library", "metadata",
                                  "index"])
def test_damaged_cache_file_is_rebuilt_not_loaded(tmp_path, seeded_cache, kind, how):
    seed_root, seed = seeded_cache
    root = tmp_path / "cache"
    shutil.copytree(seed_root, root)
    if kind in _OTHER_FILE:
        other = _artifact(root, seed, _OTHER_FILE[kind])
    else:
        other = _artifact(root, seed, kind, function="second")
    _damage(_artifact(root, seed, kind), how, other)
    # The support code is only read by a compile: give the process one to do.
    fresh = "1.25" if kind.startswith("support") else "-"
    result, _ = run_script(root, fresh)
    if result["fingerprint"] != seed["fingerprint"]:
        pytest.skip("the compiler's sources changed while the test ran (a new cache key is right)")
    assert result["fastcall"]
    assert result["stats"]["rejected"] >= 1
    assert _whole(root, seed, kind)
    again, _ = run_script(root, "-")
    assert again["stats"]["rejected"] == 0 and again["stats"]["misses"] == 0


def test_index_record_of_another_function_is_not_followed(tmp_path, seeded_cache):
    """`first`'s index record replaced by `second`'s (three parameters): kiln
    must not call `second`'s library with `first`'s argument."""
    seed_root, seed = seeded_cache
    root = tmp_path / "cache"
    shutil.copytree(seed_root, root)
    shutil.copyfile(_artifact(root, seed, "index", "second"), _artifact(root, seed, "index", "first"))
    result, _ = run_script(root, "-")
    assert result["libraries"]["first"] != result["libraries"]["second"]


def test_processes_repairing_one_damaged_cache_together(tmp_path, seeded_cache):
    """Three processes start at once on a cache whose fastcall extension,
    support object and library are all truncated: each rebuilds them (the
    last `os.replace` wins), and every process is right."""
    seed_root, seed = seeded_cache
    root = tmp_path / "cache"
    shutil.copytree(seed_root, root)
    for kind in ("fastcall", "support-object", "support-library", "library"):
        _damage(_artifact(root, seed, kind), "truncate", None)
    env = dict(os.environ, KILN_CACHE_DIR=str(root), **_CC_ENV)
    procs = [subprocess.Popen([sys.executable, "-c", _SCRIPT, str(3.5 + k)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for k in range(3)]
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        result = json.loads(out.strip().splitlines()[-1])
        assert all(result["ok"]) and result["fastcall"]
    for kind in ("fastcall", "support-object", "support-library", "library"):
        assert _whole(root, seed, kind), kind
    assert not glob.glob(str(root / "**" / "*.tmp"), recursive=True)
    assert not glob.glob(str(root / "**" / ".*.tmp"), recursive=True)


# --------------------------------------------------------------------------
# A cache directory that cannot be used.

_FALLBACK = "cannot use the compile cache directory"


@pytest.mark.parametrize("where", ["a file", "under a file", "cannot be created", "not writable"])
def test_unusable_cache_dir_falls_back_with_one_warning(tmp_path, where):
    regular_file = tmp_path / "file"
    regular_file.write_text("not a directory")
    # The test runs as root: chmod does not stop it, so these really fail.
    requested = {"a file": regular_file, "under a file": regular_file / "sub",
                 "cannot be created": "/proc/kiln-cache", "not writable": "/sys/kiln-cache"}[where]
    result, stderr = run_script(requested, "-")
    assert stderr.count(_FALLBACK) == 1, stderr
    assert str(requested) in stderr and "Set KILN_CACHE_DIR to a writable directory" in stderr
    assert "Traceback" not in stderr
    assert result["cache"] != str(requested) and "kiln-private-cache-" in result["cache"]
    assert not os.path.exists(result["cache"]), "the private cache outlived its process"


def test_disk_full_on_write_falls_back_with_one_warning(tmp_path):
    """Every write into the requested cache fails with ENOSPC (as on a full
    disk): the process moves to its private cache and gives right answers."""
    root = tmp_path / "cache"
    full_disk = textwrap.dedent(f"""
        import errno, os
        _replace = os.replace
        def replace(src, dst, **kw):
            if str(dst).startswith({str(root)!r}):
                raise OSError(errno.ENOSPC, "No space left on device", str(dst))
            return _replace(src, dst, **kw)
        os.replace = replace
    """)
    result, stderr = run_script(root, "2.5", prelude=full_disk)
    assert stderr.count(_FALLBACK) == 1 and "No space left on device" in stderr, stderr
    assert "kiln-private-cache-" in result["cache"]
    assert result["stats"]["stores"] == 3


# --------------------------------------------------------------------------
# The size cap.

_LRU_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import kiln
    from kiln.runtime import cache

    def scaled(k):
        def fn(x):
            return x * float(k) + 1.0
        fn.__name__ = f"scaled{k}"
        return kiln.qjit(fn)

    x = np.arange(4.0)
    for k in sys.argv[1:]:
        assert np.array_equal(scaled(k)(x), x * float(k) + 1.0)
    print(json.dumps(cache.stats()))
""")


def _lru_run(root, *names, cap=None):
    env = dict(os.environ, KILN_CACHE_DIR=str(root))
    if cap is not None:
        env["KILN_CACHE_MAX_BYTES"] = str(cap)
    proc = subprocess.run([sys.executable, "-c", _LRU_SCRIPT, *names], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _entry_sizes(root):
    sizes = {}
    for path in glob.glob(str(root / "lib" / "scaled*")):
        name = os.path.basename(path).split("-")[0]
        sizes[name] = sizes.get(name, 0) + os.path.getsize(path)
    return sizes


def _last_used(root, name, when):
    for path in glob.glob(str(root / "lib" / f"{name}-*")):
        os.utime(path, (when, when))


def test_size_cap_evicts_least_recently_used_entries(tmp_path, seed_toolchain):
    root = seed_toolchain(tmp_path / "cache")
    _lru_run(root, "1", "2", "3")
    sizes = _entry_sizes(root)
    assert set(sizes) == {"scaled1", "scaled2", "scaled3"}
    for age, name in enumerate(["scaled1", "scaled2", "scaled3"]):  # 1 oldest, 3 newest
        _last_used(root, name, 1_000_000 + age)
    hit = _lru_run(root, "1")  # a hit makes scaled1 the most recently used
    assert hit["hits"] == 1 and hit["misses"] == 0
    # Room for two entries: compiling scaled4 evicts scaled2, then scaled3.
    stats = _lru_run(root, "4", cap=int(2.5 * max(sizes.values())))
    assert stats["evicted"] == 2
    assert set(_entry_sizes(root)) == {"scaled1", "scaled4"}
    for path in glob.glob(str(root / "index" / "*.json")):  # no record names an evicted entry
        assert json.load(open(path))["symbol"] in ("scaled1", "scaled4")


def test_size_cap_keeps_entries_used_in_the_last_seconds(tmp_path, seed_toolchain):
    root = seed_toolchain(tmp_path / "cache")
    stats = _lru_run(root, "5", "6", "7", cap=1)
    assert stats["evicted"] == 0 and stats["stores"] == 3
    # Another process: entries used seconds ago may be loading elsewhere, so stay...
    stats = _lru_run(root, "8", cap=1)
    assert stats["evicted"] == 0 and len(_entry_sizes(root)) == 4
    # ...and go once they are older.
    for name in ("scaled5", "scaled6", "scaled7", "scaled8"):
        _last_used(root, name, time.time() - 2 * cache.RECENT_SECONDS)
    stats = _lru_run(root, "9", cap=1)
    assert stats["evicted"] == 4 and set(_entry_sizes(root)) == {"scaled9"}


def test_size_cap_never_evicts_an_entry_this_process_uses(tmp_path, monkeypatch, seed_toolchain):
    monkeypatch.setenv("KILN_CACHE_DIR", str(seed_toolchain(tmp_path)))

    @kiln.qjit
    def kept_alive(x):
        return x / 4.0

    np.testing.assert_array_equal(kept_alive(np.ones(2)), np.full(2, 0.25))
    _lru_run(tmp_path, "10", "11")  # another process's entries
    for name in os.listdir(tmp_path / "lib"):
        os.utime(tmp_path / "lib" / name, (1_000_000, 1_000_000))
    assert cache.evict(cap=0) == 2
    assert [n.split("-")[0] for n in os.listdir(tmp_path / "lib")] == ["kept_alive"] * 2
    np.testing.assert_array_equal(kept_alive(np.ones(3)), np.full(3, 0.25))


def test_size_cap_setting_that_is_not_a_number_warns(monkeypatch):
    monkeypatch.setenv("KILN_CACHE_MAX_BYTES", "2GB")
    with pytest.warns(RuntimeWarning, match=r"KILN_CACHE_MAX_BYTES='2GB' is not a number of bytes"):
        assert cache.max_bytes() == cache.DEFAULT_MAX_BYTES
    monkeypatch.setenv("KILN_CACHE_MAX_BYTES", "12345")
    assert cache.max_bytes() == 12345


# --------------------------------------------------------------------------
# `kiln cache info | clear`.


def test_kiln_cache_info_and_clear(tmp_path, monkeypatch, capsys, seed_toolchain, cached_cc):
    for name, value in cached_cc.items():  # the compile after `clear` builds the support code again
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("KILN_CACHE_DIR", str(seed_toolchain(tmp_path)))
    monkeypatch.setenv("KILN_CACHE_MAX_BYTES", str(3 << 30))

    def shifted(x):
        return x - 11.0

    np.testing.assert_array_equal(kiln.qjit(shifted)(np.ones(2)), np.full(2, -10.0))
    assert cli.main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert f"path:    {tmp_path}" in out and "entries: 1 compiled functions" in out
    assert f"cap:     {3 << 30} bytes" in out
    info = cache.info()
    assert info["entries"] == 1 and info["bytes"] >= info["entry_bytes"] > 0
    assert cli.main(["cache", "clear"]) == 0
    assert f"from {tmp_path}" in capsys.readouterr().out
    assert cache.info()["entries"] == 0 and cache.info()["bytes"] == 0
    again = kiln.qjit(shifted)
    np.testing.assert_array_equal(again(np.ones(2)), np.full(2, -10.0))
    assert not again.last.cache_hit


def test_cache_clear_removes_the_random_runtime_too(tmp_path, monkeypatch):
    """The random-number runtime's object and library (toolchain files like
    the support code's) go with `kiln cache clear`; `info` then counts 0 bytes."""
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path))
    names = ["kiln_random_0123abcd.o", "libkiln_random_0123abcd.so", "kiln_random_0123abcd.o.sha256"]
    for name in names:
        (tmp_path / name).write_bytes(b"x" * 100)
    assert cache.clear() == len(names)
    assert not any((tmp_path / name).exists() for name in names)
    assert cache.info()["bytes"] == 0


def test_kiln_cache_command_line(tmp_path):
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "file"))
    (tmp_path / "file").write_text("")
    proc = subprocess.run([sys.executable, "-m", "kiln.cli", "cache", "info"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "a private temporary cache" in proc.stdout and "it is a file, not a directory" in proc.stdout
    assert proc.stderr.count(_FALLBACK) == 1


# --------------------------------------------------------------------------
# The C compiler.


def test_missing_compiler_is_a_toolchain_error(tmp_path):
    """A fresh cache and CC naming no file: the fast path falls back to
    Python, and the compile raises ToolchainError naming the compiler, the
    command and the fix."""
    script = textwrap.dedent("""
        import numpy as np
        import kiln
        from kiln.errors import ToolchainError
        try:
            kiln.qjit(lambda x: x + 1.0)(np.ones(3))
        except ToolchainError as e:
            print(e)
    """)
    env = dict(os.environ, KILN_CACHE_DIR=str(tmp_path), CC="/nonexistent/cc")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "the C compiler '/nonexistent/cc' could not be run (No such file or directory)" in proc.stdout
    assert "command: /nonexistent/cc " in proc.stdout and "set CC to a working C compiler" in proc.stdout


def test_failing_compiler_is_a_toolchain_error(tmp_path, monkeypatch, cached_cc):
    for name, value in cached_cc.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path))  # nothing cached: the compiler must run
    monkeypatch.setenv("CC", shutil.which("false") or "/bin/false")

    @kiln.qjit
    def never_linked(x):
        return x * 7.5 - 0.25

    with pytest.raises(ToolchainError, match=r"failed with exit status 1; command: \S*false "
                                             r"(.|\n)*install gcc \(or cc\), or set CC"):
        never_linked(np.ones(3))
    monkeypatch.setenv("CC", cached_cc["CC"])  # a working compiler again
    np.testing.assert_array_equal(never_linked(np.ones(3)), np.full(3, 7.25))
