"""Runtime: the memref ABI, argument conversion, result ownership, memory,
and the persistent compilation cache, checked against NumPy."""

import gc
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln
from kiln.runtime import memref


DTYPES = ["float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
RANKS = [0, 1, 2, 3, 4]
LAYOUTS = ["contiguous", "strided", "transposed", "reversed"]


@pytest.fixture(params=["c", "python"])
def call_path(request, monkeypatch):
    """Run the test through the C hot path and through the Python one."""
    from kiln.runtime.executable import Executable, fastcall_module

    if request.param == "c" and fastcall_module() is None:
        pytest.skip("the C hot path could not be built here")
    if request.param == "python":
        monkeypatch.setattr(Executable, "__call__", Executable.call_python)
    return request.param


@kiln.qjit
def double(x):
    return x + x


@kiln.qjit
def bool_and(x):
    return x & x


@kiln.qjit
def logical_not(x):
    return np.logical_not(x)


@kiln.qjit
def identity(x):
    return x


def _make(dtype: str, rank: int, layout: str, rng: np.random.Generator) -> np.ndarray:
    """An array of `rank` in the given memory layout (values small enough
    that `x + x` does not overflow int8)."""
    shape = (2, 3, 4, 5)[:rank]
    if layout == "strided":
        shape = tuple(2 * s for s in shape)
    if dtype == "bool":
        base = rng.integers(0, 2, size=shape).astype(bool)
    elif dtype.startswith("float"):
        base = rng.standard_normal(size=shape).astype(dtype)
    else:
        base = rng.integers(0, 50, size=shape).astype(dtype)
    if rank == 0 or layout == "contiguous":
        return base
    if layout == "strided":
        return base[(slice(None, None, 2),) * rank]
    if layout == "transposed":
        return base.T
    return base[(slice(None, None, -1),) * rank]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("rank", RANKS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_abi_dtype_rank_layout(dtype, rank, layout, call_path):
    if rank == 0 and layout != "contiguous":
        pytest.skip("a 0-d array has one layout")
    x = _make(dtype, rank, layout, np.random.default_rng(rank))
    if layout == "strided" and rank:
        assert not x.flags.c_contiguous
    if dtype == "bool":
        cases = [(bool_and, x & x), (logical_not, np.logical_not(x))]
    else:
        cases = [(double, x + x)]
    for fn, expected in cases:
        got = fn(x)
        if rank == 0:
            assert isinstance(got, np.generic), type(got)
        else:
            assert isinstance(got, np.ndarray)
        assert got.dtype == expected.dtype
        assert np.shape(got) == expected.shape
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_identity_copies_every_layout(dtype, call_path):
    for layout in LAYOUTS:
        x = _make(dtype, 2, layout, np.random.default_rng(0))
        y = identity(x)
        np.testing.assert_array_equal(y, x)
        assert y.dtype == x.dtype
        assert not np.shares_memory(x, y)


def test_python_scalars_in_numpy_scalars_out(call_path):
    @kiln.qjit
    def affine(a, b, flag):
        return a * b + flag

    r = affine(3, 2.5, True)
    assert isinstance(r, np.float64) and r == 8.5
    r = affine(3, 4, False)
    assert isinstance(r, np.int64) and r == 12
    r = affine(np.float32(2), 3, True)
    assert isinstance(r, np.float32) and r == 7

    @kiln.qjit
    def negate(flag):
        return np.logical_not(flag)

    r = negate(True)
    assert isinstance(r, np.bool_) and not r


def test_python_scalar_with_array():
    @kiln.qjit
    def scale(x, s):
        return x * s

    x = np.arange(5, dtype=np.float32)
    r = scale(x, 2.0)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, x * 2)
    r = scale(np.arange(4, dtype=np.int32), 3)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, np.arange(4) * 3)


def test_several_results(call_path):
    @kiln.qjit
    def stats(x, y):
        return x + y, x * y, np.sum(x), x > y

    x = np.arange(6.0).reshape(2, 3)
    y = np.full((2, 3), 2.0)
    s, p, total, gt = stats(x, y)
    np.testing.assert_array_equal(s, x + y)
    np.testing.assert_array_equal(p, x * y)
    assert isinstance(total, np.float64) and total == 15.0
    np.testing.assert_array_equal(gt, x > y)


def test_pytrees_in_and_out(call_path):
    @kiln.qjit
    def tree_fn(pair, items, named):
        a, b = pair
        return {"sum": a + b, "scaled": [items[0] * 2, items[1] * 3]}, (named["u"] - named["v"],)

    a, b = np.arange(3.0), np.ones(3)
    items = [np.arange(4), np.arange(2.0)]
    named = {"v": np.full(2, 5), "u": np.arange(2)}
    out, (diff,) = tree_fn((a, b), items, named)
    assert set(out) == {"sum", "scaled"}
    np.testing.assert_array_equal(out["sum"], a + b)
    assert isinstance(out["scaled"], list)
    np.testing.assert_array_equal(out["scaled"][0], items[0] * 2)
    np.testing.assert_array_equal(out["scaled"][1], items[1] * 3)
    np.testing.assert_array_equal(diff, named["u"] - named["v"])


def test_identity_does_not_alias_input():
    x = np.arange(10.0)
    y = identity(x)
    np.testing.assert_array_equal(y, x)
    assert not np.shares_memory(x, y)
    y[0] = 100.0
    assert x[0] == 0.0


def test_identity_of_0d_and_scalar(call_path):
    r = identity(np.float32(1.5))
    assert isinstance(r, np.float32) and r == 1.5
    r = identity(7)
    assert isinstance(r, np.int64) and r == 7


def test_return_same_array_twice(call_path):
    @kiln.qjit
    def twice(x):
        return x, x

    x = np.arange(4.0)
    a, b = twice(x)
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, x)
    assert not np.shares_memory(a, x) and not np.shares_memory(b, x)

    @kiln.qjit
    def fresh_twice(x):
        y = x * 2
        return y, y

    a, b = fresh_twice(x)
    np.testing.assert_array_equal(a, x * 2)
    np.testing.assert_array_equal(b, x * 2)
    del a
    gc.collect()
    np.testing.assert_array_equal(b, x * 2)


def _buffer_owner(array: np.ndarray):
    """The OwnedBuffer at the end of the array's base chain (the Python
    path puts a BufferView in between)."""
    while isinstance(array, np.ndarray) and array.base is not None:
        array = array.base
    return array.owner if isinstance(array, memref.BufferView) else array


def test_results_own_their_buffer(call_path):
    x = np.arange(8.0)
    y = double(x)
    owner = _buffer_owner(y)
    assert isinstance(owner, memref.OwnedBuffer) and owner.allocated
    assert y.flags.writeable
    y[:] = 1.0
    np.testing.assert_array_equal(y, 1.0)
    np.testing.assert_array_equal(x, np.arange(8.0))


def test_deleting_result_frees_buffer(call_path):
    x = np.arange(16.0)
    before = memref.live_buffers()
    y = double(x)
    assert memref.live_buffers() == before + 1
    del y
    gc.collect()
    assert memref.live_buffers() == before
    views = double(x)[2:5]
    assert memref.live_buffers() == before + 1
    np.testing.assert_array_equal(views, x[2:5] * 2)
    del views
    assert memref.live_buffers() == before


# --------------------------------------------------------------------------
# Memory: resident memory stays flat over many calls.


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_memory_flat_fixed_size(call_path):
    x = np.random.rand(1000)
    for _ in range(200):  # warm up allocator and caches
        double(x)
    gc.collect()
    before = _rss_bytes()
    for _ in range(10_000):
        y = double(x)
    del y
    gc.collect()
    growth = _rss_bytes() - before
    assert growth < 20 * 2**20, f"resident memory grew by {growth / 2**20:.1f} MB"


def test_memory_flat_dynamic_sizes(call_path):
    @kiln.qjit
    def grow(x):
        return x * 3.0 + 1.0

    inputs = [np.random.rand(n) for n in (2, 17, 100, 1000, 4097)]
    for x in inputs:
        grow(x)
    gc.collect()
    before = _rss_bytes()
    for i in range(100_000):
        y = grow(inputs[i % len(inputs)])
    np.testing.assert_allclose(y, inputs[(100_000 - 1) % len(inputs)] * 3.0 + 1.0)
    del y
    gc.collect()
    growth = _rss_bytes() - before
    assert growth < 20 * 2**20, f"resident memory grew by {growth / 2**20:.1f} MB"


def test_empty_unit_and_readonly_inputs(call_path):
    for shape in [(0,), (3, 0), (1,), (1, 4), (4, 1), (1, 1, 1)]:
        x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
        np.testing.assert_array_equal(double(x), x + x)
    x = np.arange(6.0)
    x.flags.writeable = False
    np.testing.assert_array_equal(double(x), x + x)
    b = np.broadcast_to(np.arange(3.0), (4, 3))
    np.testing.assert_array_equal(double(b), b + b)
    np.testing.assert_array_equal(double(np.arange(12.0).reshape(3, 4)[:, None, 1]), np.arange(12.0).reshape(3, 4)[:, None, 1] * 2)


def test_constant_and_view_results(call_path):
    @kiln.qjit
    def constants(x):
        return np.zeros(3), x * 0 + 1.0

    a, b = constants(np.arange(2.0))
    np.testing.assert_array_equal(a, np.zeros(3))
    np.testing.assert_array_equal(b, np.ones(2))
    a[0] = 5.0
    a2, _ = constants(np.arange(2.0))
    assert a2[0] == 0.0

    @kiln.qjit
    def with_view(x):
        y = x * 2
        return y, y[1:], y[::2]

    x = np.arange(6.0)
    y, tail, even = with_view(x)
    np.testing.assert_array_equal(y, x * 2)
    np.testing.assert_array_equal(tail, (x * 2)[1:])
    np.testing.assert_array_equal(even, (x * 2)[::2])
    del y, even
    gc.collect()
    np.testing.assert_array_equal(tail, (x * 2)[1:])


def test_run_time_check_raises(call_path):
    @kiln.qjit
    def add(x, y):
        return x + y

    with pytest.raises(ValueError):
        add(np.ones(3), np.ones(4))
    np.testing.assert_array_equal(add(np.ones(3), np.ones(3)), np.full(3, 2.0))


# --------------------------------------------------------------------------
# Persistent cache: a second process loads the library from KILN_CACHE_DIR.

_CACHE_SCRIPT = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import kiln
    from kiln.compiler.driver import toolchain_fingerprint
    from kiln.runtime import cache

    @kiln.qjit
    def saxpy(a, x, y):
        return a * x + y

    x, y = np.arange(5.0), np.ones(5)
    start = time.perf_counter()
    r = saxpy(2.0, x, y)
    first_call = time.perf_counter() - start
    mlir_imported = "torch_mlir" in sys.modules
    assert np.array_equal(r, 2.0 * x + y), r
    print(json.dumps({
        "cache_hit": saxpy.last.cache_hit,
        "mlir_imported": mlir_imported,
        "stats": cache.stats(),
        "first_call": first_call,
        "stages": {s: kiln.get_compilation_stage(saxpy, s) for s in
                   ("jaxpr", "mlir", "stablehlo", "linalg", "bufferized", "llvm", "llvmir")},
        "library": saxpy.last.executable.library,
        "fingerprint": toolchain_fingerprint(),
    }))
""")


def _run_cache_script(cache_dir, previous: dict | None = None) -> dict:
    env = dict(os.environ, KILN_CACHE_DIR=str(cache_dir))
    proc = subprocess.run([sys.executable, "-c", _CACHE_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if previous is not None and previous["fingerprint"] != result["fingerprint"]:
        pytest.skip("the compiler's sources changed between the two processes (a new cache key is right)")
    return result


def test_persistent_cache_hit_in_second_process(tmp_path, seed_toolchain):
    first = _run_cache_script(seed_toolchain(tmp_path))
    assert not first["cache_hit"]
    assert first["stats"]["stores"] == 1 and first["stats"]["hits"] == 0
    second = _run_cache_script(tmp_path, first)
    assert second["cache_hit"]
    assert second["stats"]["hits"] == 1 and second["stats"]["stores"] == 0
    assert second["library"] == first["library"]
    # A hit through the jaxpr index loads the library without the MLIR
    # bindings (their import is most of a hit's time).
    assert first["mlir_imported"] and not second["mlir_imported"]
    # A hit reports the same stage texts as the compile that stored it.
    assert second["stages"] == first["stages"]
    assert "func.func" in second["stages"]["mlir"] and "llvm.func" in second["stages"]["llvm"]
    print(f"first call: compile {first['first_call'] * 1e3:.1f} ms, cache hit {second['first_call'] * 1e3:.1f} ms")


@pytest.mark.parametrize("damage", ["truncate-library", "garble-library", "truncate-json", "edit-json-sha",
                                    "delete-json"])
def test_corrupt_cache_entry_is_recompiled(tmp_path, damage, seed_toolchain):
    first = _run_cache_script(seed_toolchain(tmp_path))
    library = first["library"]
    meta = library[: -len(".so")] + ".json"
    if damage == "truncate-library":
        with open(library, "r+b") as f:
            f.truncate(os.path.getsize(library) // 2)
    elif damage == "garble-library":
        with open(library, "r+b") as f:
            f.seek(64)
            f.write(b"\xff" * 64)
    elif damage == "truncate-json":
        with open(meta, "r+") as f:
            f.truncate(10)
    elif damage == "edit-json-sha":
        data = json.load(open(meta))
        data["library_sha256"] = "0" * 64
        json.dump(data, open(meta, "w"))
    else:
        os.unlink(meta)
    second = _run_cache_script(tmp_path, first)
    assert not second["cache_hit"]
    assert second["stats"]["stores"] == 1
    if damage != "delete-json":
        assert second["stats"]["rejected"] == 1
    third = _run_cache_script(tmp_path, second)
    assert third["cache_hit"]


def test_cache_hit_in_process_reports_stages():
    from kiln.runtime import cache

    def body(x):
        return x * 3 - 1

    f1 = kiln.qjit(body)
    f1(np.arange(3.0))
    hits = cache.stats()["hits"]
    f2 = kiln.qjit(body)
    np.testing.assert_array_equal(f2(np.arange(3.0)), np.arange(3.0) * 3 - 1)
    assert f2.last.cache_hit and not f1.last.cache_hit
    assert cache.stats()["hits"] == hits + 1
    for stage in ("jaxpr", "mlir", "linalg", "bufferized", "llvm"):
        assert kiln.get_compilation_stage(f2, stage) == kiln.get_compilation_stage(f1, stage)


def test_keyword_and_positional_calls_agree():
    @kiln.qjit
    def sub(x, y):
        return x - y

    x, y = np.arange(4.0), np.ones(4)
    np.testing.assert_array_equal(sub(x, y), x - y)
    np.testing.assert_array_equal(sub(x, y=y), x - y)
    np.testing.assert_array_equal(sub(y=y, x=x), x - y)
    assert sub.num_compiles == 1
    with pytest.raises(TypeError):
        sub(x, y, y)
    with pytest.raises(TypeError):
        sub(x, z=y)


# --------------------------------------------------------------------------
# Ahead-of-time export: a shared library, a C header and JSON metadata.

VEC = kiln.ShapeDtype(("n",), "float64")


def saxpy_sum(a: float, x: VEC, y: VEC):
    return a * x + y, np.sum(x)


def test_export_and_load_from_python(tmp_path):
    paths = kiln.export(saxpy_sum, str(tmp_path))
    for key in ("library", "header", "metadata"):
        assert os.path.exists(paths[key])
    f = kiln.load(str(tmp_path))
    x, y = np.arange(5.0), np.ones(5)
    r, total = f(3.0, x, y)
    np.testing.assert_array_equal(r, 3.0 * x + y)
    assert isinstance(total, np.float64) and total == 10.0
    with pytest.raises(ValueError, match="dim 'n'"):
        f(3.0, x, np.ones(4))
    with pytest.raises(TypeError, match="dtype"):
        f(3.0, x.astype(np.float32), y)


_C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "saxpy_sum.h"

int main(void) {
  double x[4] = {0, 1, 2, 3}, y[4] = {1, 1, 1, 1}, y_short[3] = {0, 0, 0};
  kiln_memref_1d xd = {x, x, 0, {4}, {1}}, yd = {y, y, 0, {4}, {1}}, sd = {y_short, y_short, 0, {3}, {1}};
  saxpy_sum_results r;
  kiln_failure failure;
  for (int repeat = 0; repeat < 1000; ++repeat) {
    int64_t code = saxpy_sum(&r, 2.0, &xd, &yd, &failure);
    if (code != 0) { printf("error %lld\n", (long long)code); return 1; }
    if (repeat < 999) saxpy_sum_free_results(&r);
  }
  for (int i = 0; i < r.r0.sizes[0]; ++i) printf("%g ", ((double *)r.r0.aligned)[r.r0.offset + i]);
  printf("| %g\n", *((double *)r.r1.aligned + r.r1.offset));
  saxpy_sum_free_results(&r);
  printf("mismatch %lld\n", (long long)saxpy_sum(&r, 2.0, &xd, &sd, &failure));
  if (SAXPY_SUM_SHAPE_MISMATCH != -2 || SAXPY_SUM_OUT_OF_MEMORY != -1) return 2;
  return 0;
}
"""


def test_export_called_from_c(tmp_path):
    import shutil

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    paths = kiln.export(saxpy_sum, str(tmp_path / "lib"))
    source = tmp_path / "main.c"
    source.write_text(_C_PROGRAM)
    exe = tmp_path / "main"
    libdir = os.path.dirname(paths["library"])
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{libdir}", str(source), "-o", str(exe),
                    f"-L{libdir}", "-lsaxpy_sum", f"-Wl,-rpath,{libdir}"], check=True, capture_output=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "1 3 5 7 | 6"
    assert lines[1] == "mismatch -2"


def test_concurrent_calls_from_threads(call_path):
    import threading

    @kiln.qjit
    def affine(x, y):
        return x * 2.0 + y

    affine(np.ones(3), np.ones(3))
    errors = []

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(300):
            n = int(rng.integers(1, 200))
            x, y = rng.random(n), rng.random(n)
            r = affine(x, y)
            if not np.array_equal(r, x * 2.0 + y):
                errors.append((seed, n))

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_export_parameter_names_that_are_c_words(tmp_path):
    def clash(int: kiln.ShapeDtype(("n", 2), "int32"), results: np.int32, code: kiln.ShapeDtype((3,), "float32")):
        return int * results, code * 2

    kiln.export(clash, str(tmp_path))
    f = kiln.load(str(tmp_path))
    a, b = f(np.ones((4, 2), np.int32), np.int32(3), np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(a, np.full((4, 2), 3, np.int32))
    np.testing.assert_array_equal(b, np.arange(3, dtype=np.float32) * 2)
    with pytest.raises(ValueError, match="annotated as 3"):
        f(np.ones((4, 2), np.int32), np.int32(3), np.arange(4, dtype=np.float32))
    header = open(os.path.join(tmp_path, "clash.h")).read()
    assert "const kiln_memref_2d *int_" in header and "int32_t results_" in header


def test_static_arguments_on_the_fast_path():
    @kiln.qjit(static_argnums=(1,))
    def power(x, k):
        r = x
        for _ in range(k - 1):
            r = r * x
        return r

    x = np.arange(4.0)
    for k in (1, 2, 3, 2, 3):
        np.testing.assert_array_equal(power(x, k), x ** k)
    assert power.num_compiles == 3
    np.testing.assert_array_equal(power(x, k=2), x ** 2)
    assert power.num_compiles == 3


def test_omitted_trailing_defaults_on_the_fast_path():
    # crc16(data, poly=0x8408) called as crc16(data): the call took the general
    # path (signature binding, ~60 us) every time until the defaults joined the fast key.
    @kiln.qjit
    def shifted(x, k=3, scale=2.0):
        return x * scale + k

    x = np.arange(5.0)
    for _ in range(3):
        np.testing.assert_array_equal(shifted(x), x * 2.0 + 3)
    assert len(shifted._fast_cache) == 1
    np.testing.assert_array_equal(shifted(x, 3, 2.0), x * 2.0 + 3)
    np.testing.assert_array_equal(shifted(x, 5), x * 2.0 + 5)
    np.testing.assert_array_equal(shifted(x, scale=0.5), x * 0.5 + 3)
    np.testing.assert_array_equal(shifted(np.ones(0)), np.ones(0))
    assert shifted.num_compiles == 1
    with pytest.raises(TypeError):
        shifted()


def test_export_writes_to_arguments(tmp_path):
    def bump(x: VEC, k: float):
        x[0] = k
        return x * 2

    kiln.export(bump, str(tmp_path))
    f = kiln.load(str(tmp_path))
    x = np.arange(4.0)
    np.testing.assert_array_equal(f(x, 7.0), [14.0, 2.0, 4.0, 6.0])
    np.testing.assert_array_equal(x, [7.0, 1.0, 2.0, 3.0])
    assert "Writes to x" in open(os.path.join(tmp_path, "bump.h")).read()


def test_unaligned_and_subclass_inputs(tmp_path, call_path):
    raw = np.zeros(8 * 6 + 1, np.uint8)[1:]
    x = raw.view(np.float64)
    x[:] = np.arange(6.0)
    assert not x.flags.aligned
    np.testing.assert_array_equal(double(x), np.arange(6.0) * 2)
    path = tmp_path / "data.bin"
    np.arange(10.0).tofile(path)
    mapped = np.memmap(path, dtype=np.float64, mode="r")
    np.testing.assert_array_equal(double(mapped), np.arange(10.0) * 2)


def test_cache_clear(tmp_path, monkeypatch, seed_toolchain):
    from kiln.runtime import cache

    monkeypatch.setenv("KILN_CACHE_DIR", str(seed_toolchain(tmp_path)))

    def body(x):
        return x - 7

    f = kiln.qjit(body)
    f(np.ones(2))
    assert cache.clear() >= 3  # library, metadata, index
    g = kiln.qjit(body)
    np.testing.assert_array_equal(g(np.ones(2)), np.full(2, -6.0))
    assert not g.last.cache_hit


def test_pytree_calls_on_the_fast_path():
    @kiln.qjit
    def combine(pair, named, scale):
        return {"out": (pair[0] + pair[1]) * named["w"] + scale}

    a, b, w = np.arange(3.0), np.ones(3), np.full(3, 2.0)
    for _ in range(3):
        r = combine((a, b), {"w": w}, 1.0)
        np.testing.assert_array_equal(r["out"], (a + b) * w + 1.0)
    r = combine([a, b], {"w": w}, 1.0)  # a list is another tree: compiles again
    np.testing.assert_array_equal(r["out"], (a + b) * w + 1.0)
    assert combine.num_compiles == 2
    np.testing.assert_array_equal(combine((a, b), {"w": w}, 2)["out"], (a + b) * w + 2)  # int scale
    assert combine.num_compiles == 3


def test_annotated_function_checks_survive_the_fast_path():
    @kiln.qjit
    def add_vec(x: VEC, y: VEC):
        return x + y

    x3, y3 = np.arange(3.0), np.ones(3)
    for _ in range(3):
        np.testing.assert_array_equal(add_vec(x3, y3), x3 + 1)
    with pytest.raises(ValueError):
        add_vec(x3, np.ones(4))
    with pytest.raises(TypeError):
        add_vec(x3.astype(np.float32), y3.astype(np.float32))
    np.testing.assert_array_equal(add_vec(np.arange(5.0), np.ones(5)), np.arange(5.0) + 1)
    assert add_vec.num_compiles == 1


def test_processes_compiling_one_function_concurrently(tmp_path, seed_toolchain):
    # The support code is there (processes building it together: test_cache_robustness, test_resources).
    env = dict(os.environ, KILN_CACHE_DIR=str(seed_toolchain(tmp_path)))
    procs = [subprocess.Popen([sys.executable, "-c", _CACHE_SCRIPT], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outputs):
        assert p.returncode == 0, err
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    if len({r["fingerprint"] for r in results}) > 1:
        pytest.skip("the compiler's sources changed while the processes ran")
    assert len({r["library"] for r in results}) == 1
    later = _run_cache_script(tmp_path, results[0])
    assert later["cache_hit"]
    assert not [f for f in os.listdir(tmp_path / "lib") if f.endswith(".tmp") or f.startswith("kiln-build-")]


def test_views_of_arguments_are_returned_as_copies(call_path):
    @kiln.qjit
    def views(x):
        return x[1:], x.T, x[::2], x[0]

    x = np.arange(12.0).reshape(4, 3)
    tail, transposed, even, row = views(x)
    for got, expected in [(tail, x[1:]), (transposed, x.T), (even, x[::2]), (row, x[0])]:
        np.testing.assert_array_equal(got, expected)
        assert not np.shares_memory(got, x)


def test_export_without_rank0_parameters(tmp_path):
    """Implicit dims travel as 0-d descriptors even when no parameter is 0-d."""
    @kiln.qjit
    def add(x: kiln.ShapeDtype(("n",), "float64"), y: kiln.ShapeDtype(("n",), "float64")):
        return x + y

    kiln.export(add, str(tmp_path))
    loaded = kiln.load(str(tmp_path))
    np.testing.assert_array_equal(loaded(np.ones(4), np.arange(4.0)), np.arange(4.0) + 1)


# --------------------------------------------------------------------------
# Linking: gold where installed, the compiler's default linker otherwise.

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="gold is tried on Linux only")
def test_link_falls_back_to_the_default_linker(tmp_path, monkeypatch):
    """A compiler that refuses `-fuse-ld=gold` still links: kiln retries with
    its default linker and asks for gold no more in this process."""
    import shutil

    from kiln.runtime import toolchain

    real_cc = toolchain.c_compiler()
    wrapper = tmp_path / "cc-without-gold"
    log = tmp_path / "calls.txt"
    wrapper.write_text("#!/bin/sh\n"
                       f'echo "$*" >> {log}\n'
                       'case " $* " in *" -fuse-ld=gold "*) echo "no gold here" >&2; exit 1;; esac\n'
                       f'exec {real_cc} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(toolchain, "c_compiler", lambda: str(wrapper))
    monkeypatch.setattr(toolchain, "_GOLD_WORKS", [])
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: "/usr/bin/ld.gold" if name == "ld.gold" else None)
    source = tmp_path / "f.c"
    source.write_text("long kiln_test_answer(void) { return 42; }\n")
    obj = toolchain.compile_object(str(source), str(tmp_path / "f.o"))
    library = toolchain.link_shared_library([obj], str(tmp_path / "libf.so"))
    import ctypes

    assert ctypes.CDLL(library).kiln_test_answer() == 42
    assert toolchain._GOLD_WORKS == [False]
    calls = log.read_text().splitlines()
    assert "-fuse-ld=gold" in calls[-2] and "-fuse-ld=gold" not in calls[-1]
    toolchain.link_shared_library([obj], str(tmp_path / "libg.so"))
    assert "-fuse-ld=gold" not in log.read_text().splitlines()[-1]


@pytest.mark.skipif(not (sys.platform.startswith("linux") and __import__("shutil").which("ld.gold")),
                    reason="needs GNU gold")
def test_link_uses_gold_where_installed(tmp_path, monkeypatch):
    from kiln.runtime import toolchain

    monkeypatch.setattr(toolchain, "_GOLD_WORKS", [])
    monkeypatch.delenv("KILN_LINKER", raising=False)
    assert toolchain._linker_flags() == ["-fuse-ld=gold"]
    monkeypatch.setenv("KILN_LINKER", "default")
    assert toolchain._linker_flags() == []


@pytest.mark.skipif(not (sys.platform.startswith("linux") and __import__("shutil").which("ld.gold")),
                    reason="needs GNU gold")
def test_the_linker_run_directly_links_what_cc_links(tmp_path, monkeypatch):
    """kiln runs gold itself, with the command gcc's collect2 would run
    (from `cc -###`): two processes fewer per link. The library is the same
    bytes as `cc`'s; a failing link falls back to `cc`, which reports it,
    and `cc` links from then on."""
    import ctypes

    from kiln.errors import ToolchainError
    from kiln.runtime import toolchain

    monkeypatch.setattr(toolchain, "_GOLD_WORKS", [])
    monkeypatch.setattr(toolchain, "_DIRECT_LINK", {})
    monkeypatch.delenv("KILN_LINKER", raising=False)
    source = tmp_path / "f.c"
    source.write_text("long kiln_test_answer(void) { return 42; }\n")
    obj = toolchain.compile_object(str(source), str(tmp_path / "f.o"))
    inputs = [obj, "-Wl,--no-as-needed", f"-Wl,-rpath,{tmp_path}"]
    direct = toolchain.link_shared_library(inputs, str(tmp_path / "libdirect.so"), soname="libf.so")
    template = toolchain._direct_link_template(["-fuse-ld=gold"])
    assert template and template[0].endswith("ld.gold") and "-plugin" not in template
    assert ctypes.CDLL(direct).kiln_test_answer() == 42
    calls = []
    link_directly = toolchain._link_directly
    monkeypatch.setattr(toolchain, "_link_directly", lambda *a: calls.append(a) and False)
    via_cc = toolchain.link_shared_library(inputs, str(tmp_path / "libcc.so"), soname="libf.so")
    assert calls and open(direct, "rb").read() == open(via_cc, "rb").read()
    monkeypatch.setattr(toolchain, "_link_directly", link_directly)
    with pytest.raises(ToolchainError, match="the C compiler"):
        toolchain.link_shared_library([str(tmp_path / "missing.o")], str(tmp_path / "libbad.so"))
    assert toolchain._direct_link_template(["-fuse-ld=gold"]) is None


@pytest.mark.parametrize("linker", ["gold", "default"])
def test_linking_the_same_objects_twice_gives_the_same_bytes(tmp_path, monkeypatch, linker):
    """Processes rebuilding one cache entry at once each write the library
    and its checksum (the last `os.replace` of each wins): the link must not
    depend on the temporary file it writes (the linker names the library
    after its output in the version definitions unless given a soname)."""
    import hashlib

    from kiln.runtime import toolchain

    monkeypatch.setattr(toolchain, "_GOLD_WORKS", [])
    if linker == "default":
        monkeypatch.setenv("KILN_LINKER", "default")
    source = tmp_path / "f.c"
    source.write_text("long kiln_test_answer(void) { return 42; }\n")
    obj = toolchain.compile_object(str(source), str(tmp_path / "f.o"))
    digests = []
    for _ in range(2):
        library = toolchain.link_shared_library([obj], str(tmp_path / "libf.so"))
        digests.append(hashlib.sha256(open(library, "rb").read()).hexdigest())
    assert digests[0] == digests[1]
