"""Parallel loops and the passes around them, end to end against NumPy.

- `kiln-parallelize` + `kiln_parallel_for` (runtime/support.c): outermost
  parallel loops of large workloads run on a per-library thread pool; small
  ones run inline. Results must not depend on the thread count, on
  KILN_PARALLEL_MIN_WORK, on concurrent callers, or on a fork() after the
  pool started.
- `kiln-fuse-insert-slices`: writes into slices of a copy followed by
  elementwise math (the image-normalize pattern) fuse into one pass.
- `kiln-version-small-dims`: versions for an innermost extent of 2, 3, 4
  (channel counts 1..6 cover the versions and the fallback).
- `kiln-simplify-shapes` / `kiln-dims-from-shapes`: slices and reshapes of
  dynamic shapes keep NumPy's results and one compile serves every size
  (kiln specializes size-1 dims, so compile counts are only checked across
  shapes with no dim equal to 1).

The pool reads KILN_NUM_THREADS / KILN_PARALLEL_MIN_WORK once per compiled
library, so other settings run in subprocesses with their own cache dir.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))

BIG = (2000, 700)
SMALL = [(0, 0), (0, 5), (5, 0), (7, 3), (13, 5), (2, 2), (1, 1), (1, 6), (6, 1)]
IMAGE_HW = [(480, 640), (7, 3), (13, 5), (2, 2), (0, 0), (0, 4), (4, 0), (1, 1), (1, 7), (7, 1)]


# --------------------------------------------------------------------------
# Workloads (plain Python; each compiled once, at module level)


def elementwise(x, y):
    return np.where(x > 0, x * y + 1.5, np.abs(y) - x) * 0.5


def int_elementwise(a, b):
    return (a * 3 + b) // 2 - np.maximum(a, b)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def row_stats(x):
    return x.sum(axis=1), x.min(axis=1), (x * x).mean(axis=1)


def broadcast_rows(x, v):
    return (x - v) / (v * v + 2.0)


def strided_views(x):
    # Non-contiguous (stepped, reversed) views in the parallel loop.
    return x[::2, 1:] * 2.0 - x[::-2, :-1]


def update_in_place(x):
    x *= 3.0
    x[1:-1, 1] = -1.0
    return x + 1.0


def swap_normalize(img, mean, scale):
    dup = img.copy()
    tmp = dup[..., 0].copy()
    dup[..., 0] = dup[..., 2]
    dup[..., 2] = tmp
    return (dup - mean) * scale


def zero_rows_normalize(img, mean, scale):
    dup = img.copy()
    dup[1:-1, :, 1] = 0
    return (dup - mean) * scale


def stride_normalize(img, mean, scale):
    dup = img.copy()
    dup[:, ::2] = dup[:, ::2] * 2
    return (dup - mean) * scale


def fill_channel_normalize(img, mean, scale):
    dup = img.copy()
    dup[..., 1] = 0.5
    dup[::2, :, 0] = 1.0
    return (dup - mean) * 0.25


def shifted_normalize(img, mean, scale):
    dup = img.copy()
    dup[..., -1] = dup[..., 0] * 2
    dup[:, 1:, 0] = dup[:, :-1, 0]
    return (dup - mean) * scale


def uint8_normalize(img, mean, scale):
    dup = img.astype(np.float32)
    tmp = dup[..., 0].copy()
    dup[..., 0] = dup[..., 2]
    dup[..., 2] = tmp
    return (dup - mean) * scale


WORKLOADS = [elementwise, int_elementwise, softmax, row_stats, broadcast_rows, strided_views,
             update_in_place, swap_normalize, zero_rows_normalize, stride_normalize,
             fill_channel_normalize, shifted_normalize, uint8_normalize]
PLAIN = {fn.__name__: fn for fn in WORKLOADS}
COMPILED = {fn.__name__: kiln.qjit(fn) for fn in WORKLOADS}


# --------------------------------------------------------------------------
# Helpers


def make_args(name: str, shape: tuple, dtype=np.float32, seed=0) -> tuple:
    """Arguments for workload `name` at `shape` ((H, W, C) for images)."""
    rng = np.random.default_rng([seed, len(name), *shape, np.dtype(dtype).itemsize])
    if name == "int_elementwise":
        return (rng.integers(-1000, 1000, shape).astype(dtype), rng.integers(-1000, 1000, shape).astype(dtype))
    if name == "elementwise":
        return rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    if name == "broadcast_rows":
        return rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape[1:]).astype(dtype)
    if name in ("softmax", "row_stats", "strided_views", "update_in_place"):
        return (rng.standard_normal(shape).astype(dtype) * 4,)
    # images: (H, W, C), a per-channel mean and a 0-d scale
    c = shape[-1]
    if name == "uint8_normalize":
        img = rng.integers(0, 256, shape).astype(np.uint8)
    else:
        img = rng.uniform(0, 255, shape).astype(dtype)
    return img, rng.uniform(0, 255, (c,)).astype(dtype), np.asarray(1 / 57.0, dtype=dtype)


def assert_same(result, expected, exact: bool) -> None:
    if isinstance(expected, tuple):
        assert isinstance(result, tuple) and len(result) == len(expected)
        for r, e in zip(result, expected):
            assert_same(r, e, exact)
        return
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.shape == expected.shape, f"shape {result.shape} != NumPy's {expected.shape}"
    assert result.dtype == expected.dtype, f"dtype {result.dtype} != NumPy's {expected.dtype}"
    if exact or expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(result, expected)
    else:
        # reductions: absolute error relative to the largest magnitude
        # (float32 row sums of +-4 over 700 columns cancel)
        tol = 2e-5 if expected.dtype == np.float32 else 1e-12
        scale = max(1.0, float(np.nanmax(np.abs(expected), initial=0.0, where=np.isfinite(expected))))
        np.testing.assert_allclose(result, expected, rtol=tol, atol=tol * scale)


def check(name: str, args: tuple, exact: bool) -> None:
    """The compiled workload agrees with NumPy (results and the final
    contents of the arguments), or raises the same kind of error."""
    ref_args = [a.copy() for a in args]
    run_args = [a.copy() for a in args]
    try:
        with np.errstate(all="ignore"):
            expected = PLAIN[name](*ref_args)
    except (IndexError, ValueError) as e:
        with pytest.raises(type(e)):
            COMPILED[name](*run_args)
        return
    result = COMPILED[name](*run_args)
    assert_same(result, expected, exact)
    for got, want in zip(run_args, ref_args):
        assert_same(got, want, exact=True)


def check_shapes(name: str, shapes, exact: bool, dtype=np.float32) -> None:
    """`check` at each shape; shapes with no dim of size 1 share one compile."""
    f = COMPILED[name]
    general = [s for s in shapes if 1 not in s]
    unit = [s for s in shapes if 1 in s]
    compiles = None
    for s in general:
        try:
            check(name, make_args(name, s, dtype), exact)
        except AssertionError as e:
            raise AssertionError(f"{name} {np.dtype(dtype).name} {s}: {e}") from None
        if compiles is None:
            compiles = f.num_compiles
    assert f.num_compiles == compiles, f"{name}: shapes {general} did not share one compile"
    for s in unit:
        try:
            check(name, make_args(name, s, dtype), exact)
        except AssertionError as e:
            raise AssertionError(f"{name} {np.dtype(dtype).name} {s}: {e}") from None


def pool_threads(name: str) -> int:
    """Threads the pool of `name`'s last compiled library uses (starts it)."""
    lib = ctypes.CDLL(COMPILED[name].last.executable.library)
    lib.kiln_num_threads.restype = ctypes.c_int64
    return lib.kiln_num_threads()


_SETTINGS_RESULTS: dict = {}


# The cases compared across pool settings (run in this process and in
# subprocesses): name -> (workload, args).
def settings_cases() -> dict:
    cases = {}
    for shape in [BIG, (7, 3), (13, 5), (3, 2), (0, 4)]:
        tag = "x".join(map(str, shape))
        for dtype in (np.float32, np.float64):
            cases[f"elementwise_{tag}_{np.dtype(dtype).name}"] = ("elementwise", make_args("elementwise", shape, dtype, 1))
        cases[f"int_elementwise_{tag}"] = ("int_elementwise", make_args("int_elementwise", shape, np.int32, 1))
        cases[f"row_stats_{tag}"] = ("row_stats", make_args("row_stats", shape, np.float64, 1))
        cases[f"update_in_place_{tag}"] = ("update_in_place", make_args("update_in_place", shape, np.float32, 1))
    for shape in [BIG, (7, 3), (13, 5), (3, 2)]:
        tag = "x".join(map(str, shape))
        cases[f"softmax_{tag}"] = ("softmax", make_args("softmax", shape, np.float32, 1))
    for shape in [(480, 640, 3), (101, 33, 4), (13, 5, 2), (7, 3, 6), (5, 9, 3), (3, 2, 5)]:
        tag = "x".join(map(str, shape))
        cases[f"fill_channel_normalize_{tag}"] = ("fill_channel_normalize",
                                                  make_args("fill_channel_normalize", shape, np.float32, 1))
        if shape[-1] >= 3:
            cases[f"swap_normalize_{tag}"] = ("swap_normalize", make_args("swap_normalize", shape, np.float32, 1))
            cases[f"shifted_normalize_{tag}"] = ("shifted_normalize",
                                                 make_args("shifted_normalize", shape, np.float32, 1))
    return cases


def run_settings_cases() -> dict:
    """Every case's results (and mutated arguments) as arrays by key."""
    if _SETTINGS_RESULTS:
        return _SETTINGS_RESULTS
    out = _SETTINGS_RESULTS
    for key, (name, args) in settings_cases().items():
        args = [a.copy() for a in args]
        result = COMPILED[name](*args)
        results = result if isinstance(result, tuple) else (result,)
        for i, r in enumerate(results):
            out[f"{key}.result{i}"] = np.array(r)  # a copy: kept at module level
        for i, a in enumerate(args):
            out[f"{key}.arg{i}"] = a
    return out


# --------------------------------------------------------------------------
# Large and small workloads against NumPy


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise(dtype):
    check_shapes("elementwise", [BIG, *SMALL], exact=True, dtype=dtype)
    assert "kiln_parallel_for" in COMPILED["elementwise"].llvmir


def test_int_elementwise():
    check_shapes("int_elementwise", [BIG, *SMALL], exact=True, dtype=np.int32)
    check_shapes("int_elementwise", [BIG, (7, 3), (1, 5)], exact=True, dtype=np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax(dtype):
    check_shapes("softmax", [BIG, *SMALL], exact=False, dtype=dtype)
    assert "kiln_parallel_for" in COMPILED["softmax"].llvmir
    # rows sum to one, also on the parallel path
    x, = make_args("softmax", BIG, dtype, seed=5)
    np.testing.assert_allclose(COMPILED["softmax"](x).sum(axis=1), 1.0, rtol=1e-4 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_reductions(dtype):
    check_shapes("row_stats", [BIG, (700, 2000), *SMALL], exact=False, dtype=dtype)


def test_broadcast_and_views():
    check_shapes("broadcast_rows", [BIG, *SMALL], exact=True, dtype=np.float64)
    check_shapes("strided_views", [(4001, 701), (8, 4), (15, 6), (3, 3), (0, 3), (2, 2), (1, 3), (3, 1)],
                 exact=True, dtype=np.float32)
    # a column-major big argument
    x, v = make_args("broadcast_rows", BIG, np.float64, seed=3)
    x = np.asfortranarray(x)
    assert not x.flags.c_contiguous
    check("broadcast_rows", (x, v), exact=True)


def test_update_in_place():
    check_shapes("update_in_place", [BIG, *SMALL], exact=True, dtype=np.float32)


# --------------------------------------------------------------------------
# The image-normalize pattern: writes into slices of a copy, then elementwise


@pytest.mark.parametrize("name", ["swap_normalize", "uint8_normalize"])
def test_swap_channels_normalize(name):
    """Channel counts 1..6 (< 3 raise IndexError like NumPy), heights and
    widths of 0, 1, odd and even; one compile for every shape with no unit dim."""
    shapes = [(h, w, c) for c in range(1, 7) for h, w in IMAGE_HW]
    # the first general shape must succeed (so the compile count is taken there)
    shapes.sort(key=lambda s: s[-1] < 3)
    check_shapes(name, shapes, exact=True)
    f = COMPILED[name]
    img, mean, scale = make_args(name, (480, 640, 3))
    f(img, mean, scale)
    assert "kiln_parallel_for" in f.llvmir


@pytest.mark.parametrize("name", ["zero_rows_normalize", "stride_normalize", "fill_channel_normalize",
                                  "shifted_normalize"])
def test_slice_writes_then_normalize(name):
    shapes = [(h, w, c) for c in range(1, 7) for h, w in IMAGE_HW if (h, w) != (1, 1)]
    shapes.sort(key=lambda s: s[-1] < 3)
    check_shapes(name, shapes, exact=True)


def test_normalize_float64_and_views():
    """float64 images and non-contiguous images (a crop with a step)."""
    check_shapes("swap_normalize", [(301, 203, 3), (9, 5, 4), (4, 6, 2), (5, 3, 1)], exact=True, dtype=np.float64)
    img, mean, scale = make_args("swap_normalize", (602, 410, 5), np.float32, seed=9)
    check("swap_normalize", (img[1::2, 3:-2], mean, scale), exact=True)
    check("fill_channel_normalize", (img[::-1, ::3, 1:], mean[1:], scale), exact=True)


# --------------------------------------------------------------------------
# Pool settings: KILN_NUM_THREADS / KILN_PARALLEL_MIN_WORK in subprocesses

_SUBPROCESS = """
import sys
import numpy as np
sys.path.insert(0, {here!r})
import test_parallel as t
out = t.run_settings_cases()
np.savez(sys.argv[1], **out)
print(t.pool_threads("elementwise"), t.pool_threads("swap_normalize"))
"""


@pytest.mark.parametrize("settings,threads", [
    ({"KILN_NUM_THREADS": "1"}, 1),
    ({"KILN_PARALLEL_MIN_WORK": "0"}, None),
    ({"KILN_NUM_THREADS": "4", "KILN_PARALLEL_MIN_WORK": "0"}, 4),
    ({"KILN_NUM_THREADS": "3", "KILN_PARALLEL_MIN_WORK": "1"}, 3),
], ids=["serial", "min_work_0", "4_threads_min_work_0", "3_threads_min_work_1"])
def test_pool_settings_give_the_same_results(settings, threads, tmp_path, tmp_path_factory, seed_toolchain):
    # One cache dir for the subprocesses (fresh: not this process's; the support code is this session's).
    cache = tmp_path_factory.getbasetemp() / "kiln-parallel-subprocess-cache"
    if not cache.exists():
        seed_toolchain(cache)
    env = {k: v for k, v in os.environ.items() if k not in ("KILN_NUM_THREADS", "KILN_PARALLEL_MIN_WORK")}
    env.update(settings, KILN_CACHE_DIR=str(cache))
    path = tmp_path / "out.npz"
    proc = subprocess.run([sys.executable, "-c", _SUBPROCESS.format(here=HERE), str(path)],
                          env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    counts = [int(n) for n in proc.stdout.split()[-2:]]
    if threads is not None:
        assert counts == [threads, threads]
    else:
        assert counts[0] == counts[1] >= 1

    here = run_settings_cases()
    with np.load(path) as other:
        assert sorted(other.files) == sorted(here)
        for key in here:
            assert other[key].dtype == here[key].dtype, key
            np.testing.assert_array_equal(other[key], here[key], err_msg=f"{key} with {settings}")
    # and this process's results agree with NumPy
    for key, (name, args) in settings_cases().items():
        ref = [a.copy() for a in args]
        with np.errstate(all="ignore"):
            expected = PLAIN[name](*ref)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for i, e in enumerate(expected):
            assert_same(here[f"{key}.result{i}"], e, exact=name not in ("softmax", "row_stats"))
        for i, a in enumerate(ref):
            assert_same(here[f"{key}.arg{i}"], a, exact=True)


# --------------------------------------------------------------------------
# Concurrent callers and fork


def _run_threads(jobs, timeout=120.0):
    """Run each job (a callable) on its own thread, started together; return
    the exceptions raised."""
    barrier = threading.Barrier(len(jobs))
    errors = []

    def run(job):
        try:
            barrier.wait()
            job()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(job,), daemon=True) for job in jobs]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "concurrent callers hung"
    return errors


def test_concurrent_callers_of_one_function():
    """Four Python threads call one compiled function at once, on big
    (parallel) and small inputs; every result is right."""
    f = COMPILED["softmax"]
    shapes = [BIG, (1500, 333), BIG, (7, 3)]
    inputs = [make_args("softmax", s, np.float32, seed=20 + i)[0] for i, s in enumerate(shapes)]
    for x in inputs:
        f(x)  # compiled before the threads start
    with np.errstate(all="ignore"):
        expected = [softmax(x) for x in inputs]

    def job(i):
        def run():
            for _ in range(20):
                r = f(inputs[i])
                np.testing.assert_allclose(r, expected[i], rtol=2e-5, atol=2e-6)
        return run

    errors = _run_threads([job(i) for i in range(4)])
    assert not errors, errors


def test_concurrent_callers_of_image_normalize():
    """Four threads, one fused image-normalize function, different channel
    counts (the small-dim versions and the fallback) at once."""
    f = COMPILED["swap_normalize"]
    shapes = [(480, 640, 3), (300, 200, 4), (480, 640, 3), (257, 129, 5)]
    inputs = [make_args("swap_normalize", s, np.float32, seed=30 + i) for i, s in enumerate(shapes)]
    for args in inputs:
        f(*args)
    expected = [swap_normalize(*args) for args in inputs]

    def job(i):
        def run():
            for _ in range(20):
                np.testing.assert_array_equal(f(*inputs[i]), expected[i])
        return run

    errors = _run_threads([job(i) for i in range(4)])
    assert not errors, errors


def _wait_child(pid: int, timeout: float = 120.0) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung")
        time.sleep(0.01)


def _child_checks(f, x, expected, threads: int, nested: bool) -> int:
    """In a forked child: status 0 when `f(x)` is right (twice) and the
    child's fresh pool has the parent's thread count; in the child and, if
    `nested`, in a grandchild forked after the child's pool started."""
    try:
        for _ in range(2):
            if not np.allclose(f(x), expected, rtol=2e-5, atol=2e-6):
                return 1
        if pool_threads("softmax") != threads:
            return 5
        if nested:
            pid = os.fork()
            if pid == 0:
                os._exit(_child_checks(f, x, expected, threads, nested=False))
            status = _wait_child(pid)
            if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
                return 3
        return 0
    except BaseException as e:  # noqa: BLE001 - reported as the exit status
        try:
            sys.stderr.write(f"child failed: {e!r}\n")
        except BaseException:  # noqa: BLE001
            pass
        return 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_fork_after_pool_started():
    f = COMPILED["softmax"]
    x = make_args("softmax", BIG, np.float32, seed=40)[0]
    with np.errstate(all="ignore"):
        expected = softmax(x)
    np.testing.assert_allclose(f(x), expected, rtol=2e-5, atol=2e-6)  # the pool is running now
    threads = pool_threads("softmax")
    assert threads >= 1
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        status = 4
        try:
            status = _child_checks(f, x, expected, threads, nested=True)
        finally:
            os._exit(status)
    status = _wait_child(pid)
    assert os.WIFEXITED(status), f"the forked child died: status {status:#x}"
    assert os.WEXITSTATUS(status) == 0, f"the forked child failed with exit status {os.WEXITSTATUS(status)}"
    # and the parent's pool still works
    np.testing.assert_allclose(f(x), expected, rtol=2e-5, atol=2e-6)


# --------------------------------------------------------------------------
# kiln_parallel_for itself (runtime/support.c, the object kiln links into
# every library), driven from C: back-to-back jobs on one pool, the way a
# compiled function runs consecutive parallel loops.

_POOL_HARNESS = r"""
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void kiln_parallel_for(void (*fn)(void *, int64_t, int64_t), void *ctx, int64_t lo, int64_t hi, int64_t work);

typedef struct { _Atomic int *count; } ctx_t;

static void body(void *p, int64_t lo, int64_t hi) {
  ctx_t *c = p;
  for (int64_t i = lo; i < hi; i++)
    atomic_fetch_add(&c->count[i], 1);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* argv: seconds, then the ranges of consecutive jobs (each above min work).
   Exit 1 at the first job whose iterations did not each run exactly once
   by the time kiln_parallel_for returned. */
int main(int argc, char **argv) {
  double end = now() + atof(argv[1]);
  int njobs = argc - 2;
  long rounds = 0;
  while (now() < end) {
    for (long r = 0; r < 1000; r++, rounds++) {
      for (int j = 0; j < njobs; j++) {
        int64_t n = atoll(argv[2 + j]);
        _Atomic int count[256];
        for (int64_t i = 0; i < n; i++)
          atomic_init(&count[i], 0);
        ctx_t c = {count};
        kiln_parallel_for(body, &c, 0, n, 1 << 30);
        for (int64_t i = 0; i < n; i++) {
          int k = atomic_load(&count[i]);
          if (k != 1) {
            printf("round %ld, job %d (range %lld): iteration %lld ran %d times before kiln_parallel_for returned\n",
                   rounds, j, (long long)n, (long long)i, k);
            fflush(stdout);
            _exit(1);
          }
        }
      }
    }
  }
  printf("ok %ld rounds\n", rounds);
  return 0;
}
"""


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@pytest.mark.skipif(not sys.platform.startswith("linux") or _available_cpus() < 2,
                    reason="needs Linux and two CPUs to run the pool's threads at once")
def test_pool_runs_each_iteration_once_before_returning(tmp_path):
    """Consecutive jobs of 3 then 64 iterations (a small loop followed by
    a bigger one): every iteration runs exactly once, before return.
    Regression: a claim once compared the finished job's claim word with the
    next job's chunk count, so a chunk ran twice and the caller could return
    before all chunks had run (wrong results, a worker running after return)."""
    from kiln.runtime import toolchain

    source = tmp_path / "harness.c"
    source.write_text(_POOL_HARNESS)
    exe = tmp_path / "harness"
    subprocess.run([toolchain.c_compiler(), "-O2", "-std=c11", "-D_GNU_SOURCE", "-pthread", str(source),
                    toolchain.support_object(), "-o", str(exe), "-lm"], check=True, capture_output=True)
    deadline = time.monotonic() + 5.0
    runs = 0
    while time.monotonic() < deadline:
        # Backing off under load (serial periods after a lost dispatch) would
        # make most of these tiny jobs serial: off, so that the claims race;
        # on, so that switching between serial and parallel runs is covered.
        for threads, backoff in (("2", "0"), ("4", "0"), ("3", "0"), ("2", "1")):
            env = dict(os.environ, KILN_NUM_THREADS=threads, KILN_PARALLEL_MIN_WORK="0",
                       KILN_PARALLEL_BACKOFF=backoff)
            proc = subprocess.run([str(exe), "1.0", "3", "64"], env=env, capture_output=True, text=True,
                                  timeout=60)
            runs += 1
            assert proc.returncode == 0, (f"KILN_NUM_THREADS={threads} KILN_PARALLEL_BACKOFF={backoff}, "
                                          f"run {runs}: {proc.stdout}{proc.stderr}")


_BACKOFF_HARNESS = r"""
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

void kiln_parallel_for(void (*fn)(void *, int64_t, int64_t), void *ctx, int64_t lo, int64_t hi, int64_t work);

static pthread_t caller;
static _Atomic int worker_chunks;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* A worker's chunk takes 20 ms (as a worker the OS descheduled); the
   caller's take 50 us of work (time for a spinning worker to claim one). */
static void body(void *p, int64_t lo, int64_t hi) {
  (void)p; (void)lo; (void)hi;
  if (!pthread_equal(pthread_self(), caller)) {
    atomic_fetch_add(&worker_chunks, 1);
    usleep(20000);
    return;
  }
  for (double end = now() + 50e-6; now() < end;)
    ;
}

/* Dispatch until a worker ran a chunk (a lost dispatch), then once more
   right away: prints how many chunks workers ran in that next call. */
int main(void) {
  caller = pthread_self();
  for (int tries = 0; tries < 200 && atomic_load(&worker_chunks) == 0; tries++)
    kiln_parallel_for(body, NULL, 0, 64, 1 << 30);
  if (atomic_load(&worker_chunks) == 0) {
    printf("no worker ever ran a chunk\n");
    return 2;
  }
  atomic_store(&worker_chunks, 0);
  kiln_parallel_for(body, NULL, 0, 64, 1 << 30);
  printf("%d\n", atomic_load(&worker_chunks));
  return 0;
}
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or _available_cpus() < 2,
                    reason="needs Linux and two CPUs to run the pool's threads at once")
def test_pool_backs_off_after_a_lost_dispatch(tmp_path):
    """A dispatch that waited for a worker longer than the caller would have
    taken to run the worker's chunks itself makes the next loops serial for
    a while (runtime/support.c, KILN_PARALLEL_BACKOFF): the loop right after
    it runs in the calling thread only."""
    from kiln.runtime import toolchain

    source = tmp_path / "backoff.c"
    source.write_text(_BACKOFF_HARNESS)
    exe = tmp_path / "backoff"
    subprocess.run([toolchain.c_compiler(), "-O2", "-std=c11", "-D_GNU_SOURCE", "-pthread", str(source),
                    toolchain.support_object(), "-o", str(exe), "-lm"], check=True, capture_output=True)
    env = dict(os.environ, KILN_NUM_THREADS="2", KILN_PARALLEL_MIN_WORK="0", KILN_PARALLEL_BACKOFF="1")
    proc = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=120)
    if proc.returncode == 2:
        pytest.skip("the worker thread never got a core (machine too busy)")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == ["0"], f"the loop after a lost dispatch used the workers: {proc.stdout}"


@kiln.qjit
def _columns(x, y):
    return x[:, 0] * 2.0 + x[:, -1] - y[:, 1] * x[:, 1 % x.shape[1]]


@kiln.qjit
def _stack_columns(x):
    return np.stack([x[:, 0] + 1.0, x[:, -1] * 2.0], axis=1)


@pytest.mark.parametrize("rows", [0, 5, 1000, 100_001])
def test_column_reads_match_numpy_for_every_width(rows):
    """Bodies reading columns of (n, c) arrays are versioned for c = 3, 4
    (static row stride); every width, including the fallback ones and a
    strided input, gives NumPy's result, from one compile."""
    rng = np.random.default_rng(rows)
    for c in (2, 3, 4, 5, 7):
        x = rng.standard_normal((rows, c))
        y = rng.standard_normal((rows, c))
        np.testing.assert_array_equal(_columns(x, y), x[:, 0] * 2.0 + x[:, -1] - y[:, 1] * x[:, 1 % c])
        np.testing.assert_array_equal(_stack_columns(x), np.stack([x[:, 0] + 1.0, x[:, -1] * 2.0], axis=1))
        strided = rng.standard_normal((rows, 2 * c))[:, ::2]
        np.testing.assert_array_equal(_stack_columns(strided),
                                      np.stack([strided[:, 0] + 1.0, strided[:, -1] * 2.0], axis=1))
    assert _columns.num_compiles == 1 and _stack_columns.num_compiles == 1


# --------------------------------------------------------------------------
# Nests in a time loop: large work goes through kiln_parallel_for, small work
# calls the same outlined body directly (no inline copy of the nest).


def _time_loop_stencil(steps, A, B):
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def test_time_loop_nests_small_and_large_work_match_numpy():
    f = kiln.qjit(_time_loop_stencil)
    rng = np.random.default_rng(27)
    # (401, 333): 399 * 331 = 132k iterations per statement, above the
    # in-loop threshold (2 * 32768): the parallel branch; the rest: the
    # direct call. steps=0: the loop does not run and nothing is written.
    text = None
    for shape in [(401, 333), (0, 0), (2, 5), (3, 3), (7, 9), (31, 17), (1, 1)]:
        for steps in (0, 1, 3):
            A = rng.standard_normal(shape)
            B = rng.standard_normal(shape)
            want_a, want_b = A.copy(), B.copy()
            _time_loop_stencil(steps, want_a, want_b)
            f(steps, A, B)
            np.testing.assert_allclose(A, want_a, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(B, want_b, rtol=1e-12, atol=1e-12)
            text = text or f.llvmir  # the general signature's, before the size-1 one
    assert f.num_compiles <= 2  # one signature, plus the specialized size-1 one
    assert "@kiln_parallel_for(" in text
    # the small-work branch calls each body (noinline), one body per statement
    direct = re.findall(r"call void @(_time_loop_stencil_parallel\d+)\(ptr", text)
    assert direct, text
    bodies = re.findall(r"define internal void @(_time_loop_stencil_parallel\d+)\(", text)
    assert set(direct) <= set(bodies)
