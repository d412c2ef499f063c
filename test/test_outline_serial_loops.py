"""kiln-outline-serial-loops end to end against NumPy: loop nests a large
function ran inline (combine loops of parallel reductions, reductions into
scalars, nests of a function that calls BLAS, user loops with checks) run
as outlined serial bodies, with NumPy's results, writes to arguments and
views, errors, at sizes 0, 1, odd and large, and 1 or 3 threads.

The functions here are small, so they compile with `min-ops=1` (every
function outlines); kernels large enough for the default (nbody,
channel_flow) are checked by the NPBench tests."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import kiln
from kiln.compiler.pipeline import DEFAULT_PIPELINE

HERE = os.path.dirname(os.path.abspath(__file__))
ALWAYS = [(stage, ["kiln-outline-serial-loops{min-ops=1}" if p == "kiln-outline-serial-loops" else p
                   for p in passes]) for stage, passes in DEFAULT_PIPELINE]


def reductions(a, b, out):
    """A parallel sum (partial sums and their combine loop), a dot product
    (a loop carrying a scalar), a write through a view of an argument."""
    total = np.sum(a)
    d = np.dot(a, b)
    out[::2] += total
    out[1::2] = out[1::2] * 2.0 + d
    return total, d, np.max(a * b) if a.size else 0.0


def blas_and_loop(m, v, idx, w):
    """A function that calls BLAS (its elementwise nests stay serial) and a
    user loop with an indexing check, writing into argument `w`."""
    y = m @ v
    z = np.exp(y) - y * 0.5
    for i in range(idx.shape[0]):
        w[i] = z[idx[i]] + w[i]
    return z.sum(), np.abs(z)


def _qjit(fn):
    return kiln.qjit(fn, pipelines=ALWAYS)


@pytest.fixture(scope="module")
def compiled():
    return {"reductions": _qjit(reductions), "blas_and_loop": _qjit(blas_and_loop)}


def _reduction_args(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(2 * n + 1)


def _check(f, plain, args, rtol=1e-12):
    mine = [a.copy() for a in args]
    ref = [a.copy() for a in args]
    got = f(*mine)
    expected = plain(*ref)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=rtol, atol=1e-12)
    for m, r in zip(mine, ref):  # writes to arguments and through views
        np.testing.assert_allclose(m, r, rtol=rtol, atol=1e-12)


def test_bodies_are_outlined(compiled):
    f = compiled["reductions"]
    f(*_reduction_args(100_003))
    text = f.stage("bufferized")
    assert "llvm.func @reductions_serial" in text
    assert "llvm.call @reductions_serial" in text
    g = compiled["blas_and_loop"]
    g(np.ones((3, 3)), np.ones(3), np.zeros(2, dtype=np.int64), np.zeros(2))
    text = g.stage("bufferized")
    assert "llvm.func @blas_and_loop_serial" in text
    # The user loop's check fails inside its serial body (below).
    assert "kiln_check_failed" in text.split("llvm.func @blas_and_loop_serial", 1)[1]


@pytest.mark.parametrize("n", [0, 1, 7, 100_003])
def test_reductions_match_numpy(compiled, n):
    f = compiled["reductions"]
    before = f.num_compiles
    _check(f, reductions, _reduction_args(n, seed=n), rtol=1e-9)
    if n == 100_003:
        _check(f, reductions, _reduction_args(2 * n + 1, seed=1), rtol=1e-9)
        assert f.num_compiles == before  # a second size does not recompile


def test_reductions_through_views(compiled):
    f = compiled["reductions"]
    a, b, out = _reduction_args(40_001, seed=3)
    base = np.concatenate([a, b])
    a_view, b_view = base[:40_001], base[40_001:]
    out_base = np.zeros(2 * (2 * 40_001 + 1))
    out_view = out_base[::2]  # strided output argument: writes reach out_base
    ref_out = out_view.copy()
    got = f(a_view, b_view, out_view)
    expected = reductions(a.copy(), b.copy(), ref_out)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-9)
    np.testing.assert_allclose(out_base[::2], ref_out, rtol=1e-12)
    assert not out_base[1::2].any()


@pytest.mark.parametrize("n,k", [(0, 0), (1, 1), (9, 5), (300, 1001)])
def test_blas_and_loop_match_numpy(compiled, n, k):
    g = compiled["blas_and_loop"]
    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, n)) / max(n, 1)
    v = rng.standard_normal(n)
    idx = rng.integers(0, max(n, 1), size=k if n else 0)
    w = rng.standard_normal(idx.shape[0])
    _check(g, blas_and_loop, (m, v, idx, w), rtol=1e-10)


def test_check_in_a_serial_body_raises(compiled):
    g = compiled["blas_and_loop"]
    w = np.zeros(2)
    with pytest.raises(IndexError):
        g(np.eye(3), np.ones(3), np.array([0, 3]), w)


_SUBPROCESS = """
import sys
import numpy as np
sys.path.insert(0, {here!r})
import test_outline_serial_loops as t
f = t._qjit(t.reductions)
args = t._reduction_args(200_001, seed=5)
got = f(*args)
np.savez(sys.argv[1], *got, out=args[2])
"""


@pytest.mark.parametrize("threads", ["1", "3"])
def test_thread_counts_give_numpys_results(threads, tmp_path, seed_toolchain):
    cache = tmp_path / "cache"
    seed_toolchain(cache)
    env = dict(os.environ, KILN_NUM_THREADS=threads, KILN_CACHE_DIR=str(cache))
    path = tmp_path / "out.npz"
    proc = subprocess.run([sys.executable, "-c", _SUBPROCESS.format(here=HERE), str(path)], env=env,
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    a, b, out = _reduction_args(200_001, seed=5)
    expected = reductions(a, b, out)
    with np.load(path) as got:
        for i, e in enumerate(expected):
            np.testing.assert_allclose(got[f"arr_{i}"], e, rtol=1e-9)
        np.testing.assert_allclose(got["out"], out, rtol=1e-12)


_INTERRUPT = """
import os, signal, sys, threading, time
import numpy as np
sys.path.insert(0, {here!r})
import test_outline_serial_loops as t
f = t._qjit(t.spin)
x = np.arange(1000.0)
assert f(x, 2500) == t.spin(x, 2500)
body = f.stage("bufferized").split("llvm.func @spin_serial", 1)[1]
assert "scf.while" in body and "kiln_poll" in body, "the user loop was not outlined"
threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    f(x, 10**15)
    raise SystemExit("the loop was not interrupted")
except KeyboardInterrupt:
    pass
assert f(x, 7) == t.spin(x, 7)  # the library still works after the unwinding
print("interrupted")
"""


def spin(x, n):
    """A user loop that only computes: outlined whole, with its interrupt poll."""
    s = 0.0
    i = 0
    while i < n:
        s = s + x[i % x.shape[0]] * 0.5
        i += 1
    return s


def test_an_outlined_user_loop_can_be_interrupted(tmp_path, seed_toolchain):
    cache = tmp_path / "cache"
    seed_toolchain(cache)
    env = dict(os.environ, KILN_CACHE_DIR=str(cache))
    proc = subprocess.run([sys.executable, "-c", _INTERRUPT.format(here=HERE)], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.split()[-1] == "interrupted"


def test_the_entry_becomes_glue(compiled):
    """split_codegen reads the `llvm` stage: with the loops outlined, every
    loop of the entry hands its work to a call (glue, compiled without the
    optimizer when large enough); with them inline (the default pipeline:
    this function is below min-ops), its combine loop computes inline."""
    from kiln.compiler import split_codegen

    def entry_is_glue(text: str, name: str) -> bool:
        lines = text.split("\n")
        _, functions = split_codegen._layout(lines)
        f = functions[name]
        return split_codegen._loops_hand_off_work(lines[f.start:f.end])

    f = compiled["reductions"]
    f(*_reduction_args(100_003))
    outlined = f.stage("llvm")
    assert split_codegen._CALLED_NOINLINE.search(outlined)
    assert entry_is_glue(outlined, "reductions")
    inline = kiln.qjit(reductions)
    inline(*_reduction_args(100_003))
    assert "llvm.func @reductions_serial" not in inline.stage("llvm")
    assert not entry_is_glue(inline.stage("llvm"), "reductions")
