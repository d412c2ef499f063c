"""Resources: compiled functions under threads (correct results, the GIL
released during a call, first compilation racing in one process) and the
on-disk compile cache shared by processes compiling at the same moment.
(Memory over 100,000 calls is test_runtime.py's test_memory_flat_*.)"""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import kiln

THREADS = 8


def _run_threads(worker, n: int = THREADS) -> list:
    errors: list = []
    barrier = threading.Barrier(n)

    def run(seed):
        try:
            barrier.wait()
            worker(seed)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append((seed, repr(exc)))

    threads = [threading.Thread(target=run, args=(s,)) for s in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _affine(x, y):
    return x * 2.0 + y


def _normalize_rows(x):
    x -= np.mean(x, axis=1, keepdims=True)
    return np.sum(x * x, axis=1)


def _loop_sum(x):
    @kiln.for_loop(0, x.shape[0], 1)
    def loop(i, acc):
        return acc + x[i] * i

    return loop(0.0)


def _checked_get(x, i):
    return x[i] * 3.0


def test_eight_threads_call_compiled_functions():
    """Eight threads call four compiled functions (one writes its argument,
    one fails its bounds check half of the time) on random sizes; every
    result and every written argument matches NumPy, and each thread sees
    its own run-time check failures only."""
    fns = {f: kiln.qjit(f) for f in (_affine, _normalize_rows, _loop_sum, _checked_get)}
    warm = np.ones((3, 4))
    fns[_affine](warm[0], warm[0])
    fns[_normalize_rows](warm.copy())
    fns[_loop_sum](warm[0])
    fns[_checked_get](warm[0], 1)

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(60):
            n = int(rng.integers(2, 300))
            x, y = rng.random(n), rng.random(n)
            np.testing.assert_allclose(fns[_affine](x, y), _affine(x, y))
            m = rng.random((n, 3))
            got_m, want_m = m.copy(), m.copy()
            np.testing.assert_allclose(fns[_normalize_rows](got_m), _normalize_rows(want_m), rtol=1e-12)
            np.testing.assert_allclose(got_m, want_m, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(fns[_loop_sum](x), float(np.sum(x * np.arange(n))), rtol=1e-12)
            i = int(rng.integers(-2 * n, 2 * n))
            if -n <= i < n:
                assert fns[_checked_get](x, i) == x[i] * 3.0
            else:
                with pytest.raises(IndexError, match=f"index {i} is out of bounds for axis 0 with size {n}"):
                    fns[_checked_get](x, i)

    assert _run_threads(worker) == []


def test_eight_threads_race_to_compile_one_function():
    """The first calls of a fresh function come from eight threads at once,
    with signatures that specialize (sizes 0 and 1) and one that does not."""
    @kiln.qjit
    def f(x, s):
        v = x[::2]
        v *= s
        return np.cumsum(x) + s

    sizes = [0, 1, 5, 9, 0, 1, 17, 2]

    def worker(seed: int) -> None:
        n = sizes[seed]
        x = np.arange(n, dtype=np.float64)
        want_x = x.copy()
        want_x[::2] *= 1.5
        got = f(x, 1.5)
        np.testing.assert_allclose(got, np.cumsum(want_x) + 1.5)
        np.testing.assert_allclose(x, want_x)

    assert _run_threads(worker) == []
    assert f.num_compiles == len(f.cache) <= 3  # one compile per signature


def test_eight_threads_share_one_compile():
    """Eight threads call a fresh function with one signature at once: it
    compiles once; the other seven wait for that compile and use its entry."""
    @kiln.qjit
    def f(x, y):
        return np.tanh(x) * y + np.sum(x)

    def worker(seed: int) -> None:
        x, y = np.full(7, 0.25 * seed), np.arange(7.0)
        np.testing.assert_allclose(f(x, y), np.tanh(x) * y + np.sum(x), rtol=1e-12)

    assert _run_threads(worker) == []
    assert f.num_compiles == 1


def test_a_failed_compile_is_raised_in_every_waiting_thread():
    """A compile that fails is not shared as a success: each of the eight
    threads raises the error, nothing is cached, and a later call tries again."""
    attempts = []

    @kiln.qjit
    def f(x):
        attempts.append(1)
        time.sleep(0.2)  # keep the first compile in flight while the others arrive
        return x.no_such_method()

    errors = _run_threads(lambda seed: f(np.ones(3)))
    assert len(errors) == THREADS
    assert all("no_such_method" in message for _, message in errors)
    assert f.num_compiles == 0 and not f.cache
    assert len(attempts) < THREADS  # waiting threads shared the one compile's error
    with pytest.raises(AttributeError, match="no_such_method"):
        f(np.ones(3))


@kiln.qjit
def _busy(x, reps):
    @kiln.for_loop(0, reps, 1)
    def loop(i, acc):
        return np.sqrt(acc * acc + 1.0)

    return loop(x)


def test_calls_release_the_gil():
    """A Python thread keeps running while another thread is inside a long
    compiled call (ctypes releases the GIL). Also prints the throughput of
    two threads against one (a measurement, not an assertion)."""
    x = np.random.rand(20_000)
    _busy(x, 1)
    start = time.perf_counter()
    _busy(x, 200)
    per_call = time.perf_counter() - start
    reps = max(1, int(200 * 0.5 / max(per_call, 1e-6)))  # calls of about half a second

    ticks = [0]
    inside = threading.Event()
    done = threading.Event()

    def spin():
        inside.wait()
        while not done.is_set():
            ticks[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    inside.set()
    before = ticks[0]
    result = _busy(x, reps)
    during = ticks[0] - before
    done.set()
    spinner.join()
    np.testing.assert_allclose(result[:3], np.sqrt(x[:3] ** 2 + reps), rtol=1e-9)
    assert during > 0, "no Python thread ran during a compiled call: the GIL was held"

    calls = 4
    start = time.perf_counter()
    for _ in range(calls):
        _busy(x, reps)
    one_thread = time.perf_counter() - start
    start = time.perf_counter()
    _run_threads(lambda seed: [_busy(x, reps) for _ in range(calls // 2)], n=2)
    two_threads = time.perf_counter() - start
    print(f"\n{calls} calls of {one_thread / calls * 1e3:.0f} ms: one thread {one_thread:.2f} s, "
          f"two threads {two_threads:.2f} s, speedup {one_thread / two_threads:.2f}x "
          f"({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")


_PROCESS_SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    import kiln, kiln.numpy as knp
    from kiln.runtime import cache

    barrier = sys.argv[1]
    open(barrier + "." + sys.argv[2], "w").close()
    while len([f for f in os.listdir(os.path.dirname(barrier)) if f.startswith(os.path.basename(barrier) + ".")]) < 2:
        time.sleep(0.01)  # both processes start compiling together

    @kiln.qjit
    def scale(x, s):
        x *= s
        return np.sum(x, axis=0)

    @kiln.qjit
    def pick(x, i):
        return x[i]

    ok = []
    for n in (0, 1, 7, 100):
        x = np.arange(n * 3, dtype=np.float64).reshape(n, 3)
        want_x = x * 2.0
        got = scale(x, 2.0)
        ok.append(bool(np.allclose(got, want_x.sum(axis=0)) and np.allclose(x, want_x)))
    ok.append(bool(pick(np.arange(5.0), 3) == 3.0))
    try:
        pick(np.arange(5.0), 9)
        ok.append(False)
    except IndexError:
        ok.append(True)
    print(json.dumps({"ok": ok, "stats": cache.stats()}))
""")


def _spawn(cache_dir, barrier, tag, cc_env):
    env = dict(os.environ, KILN_CACHE_DIR=str(cache_dir), **cc_env)
    return subprocess.Popen([sys.executable, "-c", _PROCESS_SCRIPT, str(barrier), tag], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_processes_compile_into_one_fresh_cache(tmp_path, cached_cc):
    """Two processes start at the same moment on an empty cache, compile the
    same functions and call them; both are right, every cache entry is
    whole (its JSON parses and names its library, whose sha256 matches), no
    temporary file is left, and a third process hits the cache. Both build
    the support code (through conftest's `cached_cc`: kiln's build, the
    session's compiler output)."""
    cache_dir = tmp_path / "cache"
    procs = [_spawn(cache_dir, tmp_path / "barrier", tag, cached_cc) for tag in ("a", "b")]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
        assert all(json.loads(out.strip().splitlines()[-1])["ok"])

    lib = cache_dir / "lib"
    entries = sorted(f for f in os.listdir(lib) if f.endswith(".json"))
    assert entries
    for name in entries:
        meta = json.loads((lib / name).read_text())
        library = lib / name.replace(".json", ".so")
        assert library.exists(), name
        digest = hashlib.sha256(library.read_bytes()).hexdigest()
        assert digest in json.dumps(meta), f"{name}: the library's sha256 is not the recorded one"
    leftovers = [f for f in os.listdir(lib) if f.endswith(".tmp") or f.startswith("kiln-build-")]
    assert leftovers == []

    third = _spawn(cache_dir, tmp_path / "barrier2", "c", cached_cc)
    (tmp_path / "barrier2.z").touch()  # the third process runs alone
    out, err = third.communicate(timeout=600)
    assert third.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert all(result["ok"])
    if result["stats"].get("misses", 0):
        pytest.skip("the compiler's sources changed while the test ran (a new cache key is right)")
    assert result["stats"].get("hits", 0) >= 1


_FAULTS_SCRIPT = textwrap.dedent("""
    import resource, sys
    import numpy as np
    import kiln
    from kiln.runtime import memref

    @kiln.qjit
    def chain(x):
        y = x + 1.0
        z = y * y
        return z - y, y, z

    x = np.ones(400_000, np.float32)
    for _ in range(5):
        chain(x)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(100):
        a, b, c = chain(x)
        del a, b, c
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 100
    print(memref._malloc_tuned, faults)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc tuning is Linux-only")
def test_fresh_result_buffers_do_not_page_fault(tmp_path, seed_toolchain):
    """Three 1.6 MB results per call: with kiln's malloc settings freed
    blocks are reused (a handful of page faults per call); with
    KILN_MALLOC_TUNING=0 glibc's defaults apply and the setting is off."""
    script = tmp_path / "faults.py"
    script.write_text(_FAULTS_SCRIPT)
    env = dict(os.environ, KILN_CACHE_DIR=str(seed_toolchain(tmp_path / "cache")))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    tuned, faults = out.stdout.split()
    assert tuned == "True"
    # 4.8 MB of fresh pages would be ~1200 faults per call.
    assert float(faults) < 100, out.stdout
    out = subprocess.run([sys.executable, str(script)], env=dict(env, KILN_MALLOC_TUNING="0"),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "False"
