"""A first call runs from the JIT while its library is linked behind it
(compiler/engine.py's JitImage and Trampolines, runtime/deferred.py):
results and mutated arguments as NumPy's, before and after the library
takes over, with checks failing inside the JIT's code, with calls in
progress while the library takes over, at exit, across a fork, when the
link fails, and with the feature off."""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import weakref

import numpy as np
import pytest

import kiln
from kiln.compiler import engine
from kiln.runtime import cache, deferred, toolchain

needs_jit = pytest.mark.skipif(not engine.jit_supported() or engine.trampolines(["probe"]) is None,
                               reason="the JIT's first call needs Linux on x86-64 and memory it may map "
                                      "writable and executable")


def jacobi(A, B, steps):
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def scaled_rows(x, k):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * k + np.max(x[i])
    return out


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch, seed_toolchain):
    """A cache of the test's own: each test's first call compiles."""
    monkeypatch.setenv("KILN_CACHE_DIR", str(seed_toolchain(tmp_path / "cache")))


def _executable(f):
    (entry,) = f.cache.values()
    return entry.executable


def _blocked_worker():
    """Hold the deferred worker until the returned event is set."""
    release = threading.Event()
    deferred.submit(f"test-block-{id(release)}", release.wait, lambda reason: None)
    return release


@needs_jit
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 64, 301])
def test_first_call_from_the_jit_matches_numpy(n):
    """A stencil whose loops become parallel bodies (a cut module: its parts
    call each other through trampolines) and a row loop: results and written
    arguments as NumPy's, from the JIT and then from the library."""
    rng = np.random.default_rng(n)
    A, B = rng.random((n, n)), rng.random((n, n))
    f = kiln.qjit(jacobi)
    release = _blocked_worker()
    try:
        got_a, got_b = A.copy(), B.copy()
        f(got_a, got_b, 3)
        assert _executable(f)._image is not None  # this call ran from the JIT
    finally:
        release.set()
    jacobi(A, B, 3)
    np.testing.assert_allclose(got_a, A)
    np.testing.assert_allclose(got_b, B)
    assert os.path.exists(_executable(f).library)
    assert _executable(f)._image is None  # the library took over
    f(got_a, got_b, 2)
    jacobi(A, B, 2)
    np.testing.assert_allclose(got_a, A)
    np.testing.assert_allclose(got_b, B)
    x = rng.standard_normal((n, 5))
    g = kiln.qjit(scaled_rows)
    np.testing.assert_allclose(g(x, 2.5), scaled_rows(x, 2.5))


@needs_jit
def test_a_failing_check_in_the_jit_names_the_line():
    """A check that fails inside the JIT's code reads its message from the
    JIT's memory: the same error as from the library."""

    def pick(x, i):
        return x[i] * 2.0

    f = kiln.qjit(pick)
    release = _blocked_worker()
    try:
        assert f(np.arange(4.0), 3) == 6.0
        with pytest.raises(IndexError, match="out of bounds"):
            f(np.arange(4.0), 9)
        assert _executable(f)._image is not None
    finally:
        release.set()
    _executable(f).library
    with pytest.raises(IndexError, match="out of bounds"):
        f(np.arange(4.0), 9)


@needs_jit
def test_the_image_is_released_once_the_library_takes_over():
    f = kiln.qjit(jacobi)
    release = _blocked_worker()
    try:
        f(np.ones((9, 9)), np.ones((9, 9)), 1)
        image = weakref.ref(_executable(f)._image)
    finally:
        release.set()
    _executable(f).library
    deferred.wait()  # (the task that adopted the library has let go of it too)
    gc.collect()
    assert image() is None


@needs_jit
def test_calls_in_progress_while_the_library_takes_over():
    """Threads calling while the library is adopted: every result right (a
    call holds the image it started with)."""
    f = kiln.qjit(scaled_rows)
    x = np.random.default_rng(1).standard_normal((200, 50))
    expected = scaled_rows(x, 3.0)
    release = _blocked_worker()
    f(x, 3.0)
    errors = []

    def hammer():
        for _ in range(300):
            if not np.allclose(f(x, 3.0), expected):
                errors.append("wrong result")

    threads = [threading.Thread(target=hammer) for _ in range(2)]
    for t in threads:
        t.start()
    release.set()
    for t in threads:
        t.join()
    assert not errors
    _executable(f).library
    assert _executable(f)._image is None
    np.testing.assert_allclose(f(x, 3.0), expected)


@needs_jit
def test_library_lands_in_the_cache_of_the_compile(tmp_path, monkeypatch, seed_toolchain):
    """The library linked behind a first call goes to the cache directory
    of its compile, even when KILN_CACHE_DIR changes before it is linked."""
    first, second = seed_toolchain(tmp_path / "first"), tmp_path / "second"
    monkeypatch.setenv("KILN_CACHE_DIR", str(first))
    f = kiln.qjit(scaled_rows)
    release = _blocked_worker()
    try:
        f(np.ones((3, 3)), 1.0)
        monkeypatch.setenv("KILN_CACHE_DIR", str(second))
    finally:
        release.set()
    library = _executable(f).library
    assert library.startswith(os.path.join(str(first), "lib"))
    assert not (second / "lib").exists() or not os.listdir(second / "lib")


@needs_jit
def test_a_failed_link_warns_and_the_function_keeps_running(monkeypatch):
    def refuse(*args, **kwargs):
        raise kiln.errors.ToolchainError("the linker is broken on purpose")

    monkeypatch.setattr(toolchain, "link_shared_library", refuse)
    f = kiln.qjit(jacobi)
    A, B = np.ones((6, 6)), np.zeros((6, 6))
    with pytest.warns(RuntimeWarning, match="broken on purpose"):
        f(A, B, 1)
        deferred.wait()
    with pytest.raises(kiln.errors.KilnInternalError, match="broken on purpose"):
        _executable(f).library
    A2, B2 = np.ones((6, 6)), np.zeros((6, 6))
    jacobi(A2, B2, 1)
    np.testing.assert_allclose(A, A2)
    f(A, B, 1)  # still from the JIT
    jacobi(A2, B2, 1)
    np.testing.assert_allclose(B, B2)


def test_without_the_jit_the_library_comes_first(monkeypatch):
    monkeypatch.setenv("KILN_FIRST_CALL_JIT", "0")
    f = kiln.qjit(scaled_rows)
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(f(x, 2.0), scaled_rows(x, 2.0))
    exe = _executable(f)
    assert exe._image is None and os.path.exists(exe.library)


@needs_jit
def test_trampoline_jumps_to_its_target():
    """A trampoline called as a C function lands in its target (libc's labs)."""
    jumps = engine.trampolines(["labs"])
    assert jumps is not None
    libc = ctypes.CDLL(None)
    jumps.aim("labs", ctypes.cast(libc.labs, ctypes.c_void_p).value)
    through = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_long)(jumps.address("labs"))
    assert through(-42) == 42


_EXIT_SCRIPT = textwrap.dedent("""
    import json, numpy as np, kiln
    from kiln.runtime import cache

    @kiln.qjit
    def f(x):
        y = np.zeros_like(x)
        y[1:] = x[1:] * 3.0
        y += 1.0
        return y

    out = f(np.arange(5.0))
    image = list(f.cache.values())[0].executable._image is not None
    print(json.dumps({"out": out.tolist(), "jit": image, "hit": f.last.cache_hit}))
    # (exits at once: the interpreter's exit waits for the library)
""")


@needs_jit
def test_exit_right_after_a_first_call_leaves_the_library_cached():
    env = dict(os.environ)  # (the test's own cache)
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT], env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert runs[0]["out"] == runs[1]["out"] == [1.0, 4.0, 7.0, 10.0, 13.0]  # (x[0] * 3 is 0)
    assert runs[0]["jit"] and not runs[0]["hit"]
    if not runs[1]["hit"]:
        pytest.skip("the compiler's sources changed between the two processes (a new cache key is right)")
    assert not runs[1]["jit"]


@needs_jit
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_fork_while_the_library_is_being_linked():
    """A child forked while its parent's first-call library is pending keeps
    running the code from the JIT; the parent adopts the library."""
    f = kiln.qjit(scaled_rows)
    x = np.random.default_rng(2).standard_normal((20, 4))
    release = _blocked_worker()
    f(x, 2.0)
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            ok = np.allclose(f(x, 2.0), scaled_rows(x, 2.0))
            try:
                _executable(f).library
            except kiln.errors.KilnInternalError:
                code = 0 if ok else 1
        finally:
            os._exit(code)
    release.set()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"the forked child failed: status {status:#x}"
    assert os.path.exists(_executable(f).library)
    np.testing.assert_allclose(f(x, 2.0), scaled_rows(x, 2.0))


def test_cache_inspection_waits_for_pending_libraries():
    """`cache.info` and `stats` count a first call's library as stored."""
    cache.reset_stats()
    f = kiln.qjit(scaled_rows)
    f(np.ones((2, 2)), 1.0)
    assert cache.stats()["stores"] == 1
    assert cache.info()["entries"] == 1
