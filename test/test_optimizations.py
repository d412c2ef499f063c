"""The optimizing passes keep NumPy's results: BLAS matmuls (views, empty
dims, f32/f64), the expanded exp (ulp error, specials), reassociated
reductions, in-place loop-carried updates; and the benchmark's quick mode
runs every workload with results that agree with NumPy."""

import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import kiln
from kiln.compiler.passes.kiln_linalg_to_blas import blas_library
from ir_text import op_text

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rng = np.random.default_rng(7)


def ulps(result: np.ndarray, expected: np.ndarray) -> np.ndarray:
    return np.abs(result.astype(np.float64) - expected) / np.spacing(expected).astype(np.float64)


@pytest.mark.skipif(blas_library() is None, reason="NumPy ships no ILP64 OpenBLAS here")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", [(7, 5, 3), (64, 33, 17), (0, 4, 3), (3, 0, 5), (1, 1, 1)])
def test_matmul_through_blas(dtype, m, k, n):
    @kiln.qjit
    def f(a, b):
        return a @ b

    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
    # A product of one element is a scalar loop (kiln-scalarize-dots), not a BLAS call.
    assert ("scipy_cblas_" in kiln.get_compilation_stage(f, "bufferized")) == (m * n != 1)


def test_matmul_of_views_and_chains():
    @kiln.qjit
    def f(a, b, c):
        return np.maximum(a[1:, 2:] @ b[:-2], 0.0) @ c.T

    a, b, c = rng.standard_normal((9, 8)), rng.standard_normal((8, 5)), rng.standard_normal((4, 5))
    np.testing.assert_allclose(f(a, b, c), np.maximum(a[1:, 2:] @ b[:-2], 0.0) @ c.T, rtol=1e-12)


@pytest.mark.skipif(blas_library() is None, reason="NumPy ships no ILP64 OpenBLAS here")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k", [(6, 5), (0, 4), (3, 0), (1, 1), (300, 257)])
def test_matrix_vector_products_through_gemv(dtype, m, k):
    def f(a, x, y, strided):
        return a @ x, y @ a, a[:, ::2] @ strided[::2], a @ x[:, None], y[None, :] @ a

    a = rng.standard_normal((m, k)).astype(dtype)
    x, y = rng.standard_normal(k).astype(dtype), rng.standard_normal(m).astype(dtype)
    strided = rng.standard_normal(2 * ((k + 1) // 2)).astype(dtype)
    compiled = kiln.qjit(f)
    tolerance = 1e-4 if dtype == np.float32 else 1e-12
    for got, expected in zip(compiled(a, x, y, strided), f(a, x, y, strided)):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
    if (m, k) != (1, 1):  # else every product has one element: a scalar loop (kiln-scalarize-dots)
        # `a @ x` and `y @ a` read one matrix: one pass over it (kiln-pair-matvecs).
        assert "kiln_matvec_pair_" in kiln.get_compilation_stage(compiled, "bufferized")
        # A product alone is one gemv call.
        alone = kiln.qjit(lambda a, x: a @ x)
        np.testing.assert_allclose(alone(a, x), a @ x, rtol=tolerance, atol=tolerance)
        assert "gemv64_" in kiln.get_compilation_stage(alone, "bufferized")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex128])
@pytest.mark.parametrize("m,k", [(6, 5), (0, 4), (3, 0), (1, 1), (1, 7), (301, 257)])
def test_scaled_matrix_times_vector(dtype, m, k):
    # gesummv's `alpha * A @ x + beta * B @ x`: kiln-scale-vector-operand
    # scales x instead of A (no matrix-sized temporary); a second size, and
    # the scalar on either side and on the matrix of `y @ (A * s)`.
    def f(alpha, beta, a, b, x, y):
        return alpha * a @ x + beta * b @ x, y @ (a * beta), (alpha * a) @ x[:, None]

    compiled = kiln.qjit(f)
    for rows, inner in ((m, k), (m + 7, k + 5)):
        a, b = (rng.standard_normal((2, rows, inner)) * 4).astype(dtype)
        x, y = (rng.standard_normal(inner) * 4).astype(dtype), (rng.standard_normal(rows) * 4).astype(dtype)
        alpha, beta = (3, -2) if dtype == np.int64 else (1.5, -0.25)
        tolerance = 1e-4 if dtype == np.float32 else 1e-12
        for got, expected in zip(compiled(alpha, beta, a, b, x, y), f(alpha, beta, a, b, x, y)):
            assert got.shape == expected.shape and got.dtype == expected.dtype
            np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
    assert compiled.num_compiles == (2 if 1 in (m, k) else 1)  # a unit dim is a signature of its own
    products = [line for line in kiln.get_compilation_stage(compiled, "stablehlo").splitlines()
                if "stablehlo.multiply" in line]
    assert products and not any("?x?x" in line for line in products), products


def test_scaled_matrix_times_vector_keeps_numpy_special_values():
    # s * (A @ x) would give inf where NumPy's (inf * A) @ x meets a zero of A
    # (inf * 0 = nan); A @ (s * x) multiplies the same three factors.
    def f(s, a, x):
        return s * a @ x

    a = np.array([[1.0, 0.0], [2.0, 3.0], [0.0, 0.0]])
    x = np.array([1.0, 2.0])
    compiled = kiln.qjit(f)
    with np.errstate(invalid="ignore"):
        for s in (np.inf, -np.inf, np.nan, 0.0):
            np.testing.assert_array_equal(compiled(s, a, x), f(s, a, x))
        np.testing.assert_array_equal(compiled(2.0, a, np.array([np.inf, 1.0])), f(2.0, a, np.array([np.inf, 1.0])))


@pytest.mark.skipif(blas_library() is None, reason="NumPy ships no ILP64 OpenBLAS here")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("shape", [(3, 4, 5), (0, 2, 3), (2, 0, 3), (1, 1, 1), (2, 3, 1, 6), (5, 7, 0)])
def test_batched_left_matmul_is_one_matmul(dtype, shape):
    def f(x, w, strided):
        return x @ w, strided[:, ::2] @ w

    x = (rng.standard_normal(shape) * 3).astype(dtype)
    w = (rng.standard_normal((shape[-1], 4)) * 3).astype(dtype)
    strided = (rng.standard_normal(shape[:-2] + (2 * shape[-2], shape[-1])) * 3).astype(dtype)
    compiled = kiln.qjit(f)
    for got, expected in zip(compiled(x, w, strided), f(x, w, strided)):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-4)
    linalg = kiln.get_compilation_stage(compiled, "linalg")
    assert "linalg.matmul" in linalg and "reduction" not in linalg


@pytest.mark.parametrize("dtype,max_ulps", [(np.float32, 4), (np.float64, 2)])
def test_expanded_exp(dtype, max_ulps):
    @kiln.qjit
    def f(x):
        return np.exp(x)

    lo, hi = (-110.0, 95.0) if dtype == np.float32 else (-750.0, 715.0)
    x = np.concatenate([np.linspace(lo, hi, 200_001), rng.standard_normal(1000) * 10,
                        [np.inf, -np.inf, np.nan, 0.0, -0.0]]).astype(dtype)
    with np.errstate(over="ignore"):
        expected = np.exp(x)
    result = f(x)
    normal = np.isfinite(expected) & (expected >= np.finfo(dtype).tiny)
    assert ulps(result[normal], expected[normal]).max() <= max_ulps
    np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
    np.testing.assert_array_equal(np.isposinf(result), np.isposinf(expected))
    np.testing.assert_allclose(result[~normal & np.isfinite(expected)], expected[~normal & np.isfinite(expected)],
                               atol=4 * np.finfo(dtype).smallest_subnormal)


def test_reassociated_reductions():
    @kiln.qjit
    def f(x):
        return np.sum(x, axis=1), np.sum(x * x, axis=0), np.prod(x[:, :8] * 0.5 + 1.0, axis=1), np.max(x, axis=1)

    x = rng.standard_normal((300, 1001)).astype(np.float32)
    for r, e in zip(f(x), (np.sum(x, axis=1), np.sum(x * x, axis=0), np.prod(x[:, :8] * 0.5 + 1.0, axis=1),
                           np.max(x, axis=1))):
        np.testing.assert_allclose(r, e, rtol=2e-5, atol=2e-4)


def test_in_place_loop_carried_update():
    @kiln.qjit
    def newton(a):
        x = np.ones_like(a)

        @kiln.while_loop(lambda x, err: err > 1e-12)
        def step(x, err):
            x = 0.5 * (x + a / x)
            return x, np.max(np.abs(x * x - a))

        return step(x, np.max(np.abs(x * x - a)))[0]

    @kiln.qjit
    def accumulate(a, n: int):
        @kiln.for_loop(0, n, 1)
        def body(i, y):
            return y * 0.5 + a

        return body(np.zeros_like(a))

    a = rng.uniform(1.0, 5.0, 1000)
    np.testing.assert_allclose(newton(a), np.sqrt(a), rtol=1e-12)
    expected = np.zeros_like(a)
    for _ in range(7):
        expected = expected * 0.5 + a
    np.testing.assert_allclose(accumulate(a, 7), expected, rtol=1e-12)
    np.testing.assert_array_equal(a, a.copy())


def test_bench_quick_runs_every_workload(capsys, tmp_path):
    spec = importlib.util.spec_from_file_location("kiln_bench", os.path.join(REPO, "cmake-free-scripts", "bench.py"))
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # dataclasses look their module up while the file runs
    spec.loader.exec_module(bench)
    assert bench.main(["--quick", "--tools", "kiln,numpy", "--output", str(tmp_path / "bench.md")]) == 0
    out = capsys.readouterr().out
    names = {w.name for w in bench.WORKLOADS}
    kiln_rows = [line for line in out.splitlines() if line.split()[:1] and line.split()[0] in names
                 and " kiln " in line]
    assert len(kiln_rows) == 2 * len(bench.WORKLOADS)
    assert all("OK (" in line for line in kiln_rows), "\n".join(kiln_rows)
    assert "bench:begin" in (tmp_path / "bench.md").read_text()


def _triangular_update(c, a, alpha):
    for i in range(c.shape[0]):
        c[i, :i + 1] *= 0.5
        for k in range(a.shape[1]):
            c[i, :i + 1] += alpha * c[k % c.shape[0], :i + 1] * a[i, k]
    return c


def test_loop_invariant_temporaries_are_allocated_once():
    # syrk's `C[i, :i + 1] += ...` in `for k`: the row temporaries have the
    # same size at every k, so the bufferized stage allocates them before the
    # k loop (canonicalize, loop-invariant-code-motion, buffer-loop-hoisting).
    compiled = kiln.qjit(_triangular_update)
    for n, m in ((0, 3), (1, 1), (5, 4), (9, 7), (40, 33)):
        c, a = rng.standard_normal((n, n)), rng.standard_normal((n, m))
        want_c = c.copy()
        want = _triangular_update(want_c, a, 0.25)
        got_c = c.copy()
        np.testing.assert_allclose(compiled(got_c, a, 0.25), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got_c, want_c, rtol=1e-12, atol=1e-12)  # the argument is written as in NumPy
    assert compiled.num_compiles <= 3  # sizes 0 and 1 may specialize
    text = kiln.get_compilation_stage(compiled, "bufferized")
    main = text[text.index("func.func @_triangular_update("):]
    outer = op_text(main, main.index("scf.while"))
    inner_at = outer.index("scf.while", 1)
    inner = op_text(outer, inner_at)
    assert "memref.alloc" in outer[:inner_at]  # the temporaries, before the k loop
    assert "memref.alloc" not in inner and "memref.dealloc" not in inner


def _zero_trip_temporary(x, m, trips):
    for _ in range(trips):
        t = np.empty(m - 1)
        t[:] = x[0]
        x[0] = x[0] + t.sum()
    return x


def test_hoisted_temporary_of_a_loop_that_does_not_run():
    # The temporary's alloc moves before the loop (its size does not change):
    # a loop that runs zero times must not raise for a size that is negative
    # then, and one that runs must still raise NumPy's error.
    compiled = kiln.qjit(_zero_trip_temporary, autograph=True)
    for m, trips in ((4, 3), (-2, -2), (0, 0), (1, 2)):
        want = _zero_trip_temporary(np.ones(3), m, trips)
        np.testing.assert_array_equal(compiled(np.ones(3), m, trips), want)
    with pytest.raises(ValueError, match="negative dimensions"):
        _zero_trip_temporary(np.ones(3), 0, 2)
    with pytest.raises(ValueError, match="negative dimensions"):
        compiled(np.ones(3), 0, 2)
    text = kiln.get_compilation_stage(compiled, "bufferized")
    main = text[text.index("func.func @_zero_trip_temporary("):]
    loop_at = main.index("scf.while")
    loop = op_text(main, loop_at)
    assert "memref.alloc(" in main[:loop_at]  # the temporary, before the loop
    assert "scf.yield" in loop and "memref.alloc(" not in loop and "memref.dealloc" not in loop


def test_unique_along_an_axis_in_a_loop_repeatedly():
    """Regression: np.unique(a, axis=0) sorts column by column in a loop; with
    the loop's temporaries hoisted its argsort output buffer was freed by
    every iteration (kiln-runtime-call-results ran after the deallocation
    pipeline) and glibc aborted the process now and then. Many calls at
    small sizes, every result checked against NumPy; the test below runs it
    under glibc's malloc checks, where the double free always aborts."""
    compiled = kiln.qjit(lambda a: np.unique(a, axis=0, return_index=True, return_inverse=True,
                                             return_counts=True))
    generator = np.random.default_rng(10)
    for _ in range(20):
        for rows in (0, 1, 2, 3, 7, 20):
            for dtype in (np.int64, np.bool_, np.int8):
                a = generator.integers(0, 2, (rows, 3)).astype(dtype)
                for got, want in zip(compiled(a), np.unique(a, axis=0, return_index=True, return_inverse=True,
                                                            return_counts=True)):
                    np.testing.assert_array_equal(got, want)


_SORTS_IN_LOOPS = """
import numpy as np
import kiln

unique_rows = kiln.qjit(lambda a: np.unique(a, axis=0))


@kiln.qjit(autograph=True)
def sorted_columns(a):
    out = np.empty_like(a)
    for j in range(a.shape[1]):
        out[:, j] = np.sort(a[:, j])
    return out


for seed in range(12):
    for rows in (0, 1, 2, 3, 7, 20):
        a = np.random.default_rng(seed).integers(0, 2, (rows, 3)).astype(np.int64)
        np.testing.assert_array_equal(unique_rows(a), np.unique(a, axis=0))
        np.testing.assert_array_equal(sorted_columns(a), np.sort(a, axis=0))
print("ok")
"""


def test_sorts_in_a_loop_free_each_buffer_once(tmp_path):
    """A sort's output buffer hoisted out of a loop is freed once, after it.
    Run in a child process under glibc's malloc checks (libc_malloc_debug
    when the system has it, MALLOC_CHECK_=3, freed memory overwritten by
    MALLOC_PERTURB_): a double free aborts the child instead of the test
    process, and it aborts every time, not now and then."""
    env = {**os.environ, "MALLOC_CHECK_": "3", "MALLOC_PERTURB_": "165"}
    for folder in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"):
        debug = os.path.join(folder, "libc_malloc_debug.so.0")
        if os.path.exists(debug):
            env["LD_PRELOAD"] = " ".join(filter(None, (env.get("LD_PRELOAD"), debug)))
            break
    script = tmp_path / "sorts_in_loops.py"  # a file: autograph reads the loop's source
    script.write_text(_SORTS_IN_LOOPS)
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), (
        f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")


def _normalized(x, y):
    lo, hi = x.min(), x.max()
    # `lo` and `hi` are 0-d tensors read by two elementwise statements: each
    # reads them as scalars, and `where(.., lo, ..)` broadcasts one.
    scaled = (x - lo) / (hi - lo)
    y[:] = np.where(x > lo, scaled, lo)
    return scaled * y


def test_rank0_operands_are_read_as_scalars():
    # kiln-inline-splats: a 0-d tensor read by elementwise generics becomes a
    # scalar read before the loop; no buffer of the broadcast scalar is left.
    compiled = kiln.qjit(_normalized)
    for n in (0, 1, 7, 1001):
        x = rng.standard_normal(n) if n != 1 else np.array([2.5])
        y, want_y = np.zeros(n), np.zeros(n)
        if n == 0:
            with pytest.raises(ValueError, match="zero-size array"):
                _normalized(x, want_y)
            with pytest.raises(ValueError, match="zero-size array"):
                compiled(x, y)
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            want = _normalized(x, want_y)
        got = compiled(x, y)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(y, want_y)
        # an aliasing view as the written argument
        base = np.zeros(2 * n)
        with np.errstate(invalid="ignore", divide="ignore"):
            want_view = _normalized(x, np.zeros(2 * n)[::2])
        np.testing.assert_array_equal(compiled(x, base[::2]), want_view)
        np.testing.assert_array_equal(base[::2], want_y)
    assert compiled.num_compiles <= 2  # size 1 may specialize
    text = kiln.get_compilation_stage(compiled, "bufferized")
    main = text[text.index("func.func @_normalized("):]
    # n-element buffers: `scaled` and the result only (the broadcast of `lo`
    # was a third one, filled and read back)
    assert len(re.findall(r"memref\.alloc\(%", main)) == 2


def _crc16(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)
    return crc & 0xFFFF


def _parity_pick(x, a, b):
    out = np.empty_like(a)
    for i in range(x.shape[0]):
        if (x[i] & 1) == 0:
            out[i] = a[i] - b[i]
        else:
            out[i] = a[i] ^ b[i]
    return out


def test_bit_tests_without_branches():
    # kiln-branchless-bit-selects: an `if` on a data bit yielding integers is
    # computed with a mask, both sides evaluated; results as NumPy's.
    crc = kiln.qjit(_crc16)
    pick = kiln.qjit(_parity_pick)
    for n in (0, 1, 7, 16001):
        data = rng.integers(0, 256, n, dtype=np.uint8)
        assert crc(data) == _crc16(data)
        assert crc(data, 0xA001) == _crc16(data, 0xA001)
        x = rng.integers(-50, 50, n).astype(np.int32)
        a, b = rng.integers(-9, 9, n).astype(np.int32), rng.integers(-9, 9, n).astype(np.int32)
        np.testing.assert_array_equal(pick(x, a, b), _parity_pick(x, a, b))
        # a strided view as an argument
        wide = rng.integers(-50, 50, 2 * n).astype(np.int32)
        np.testing.assert_array_equal(pick(wide[::2], a, b), _parity_pick(wide[::2], a, b))
    assert crc.num_compiles <= 4 and pick.num_compiles <= 2  # size 1 may specialize
    text = kiln.get_compilation_stage(crc, "bufferized")
    main = text[text.index("func.func @_crc16("):]
    # the bit loop's if-else is gone; only the run-time checks' ifs (no results) are left
    assert not re.search(r"= scf\.if", main)
