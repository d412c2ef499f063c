"""Scalar loops compile to plain loads and stores (kiln-element-access,
kiln-chain-overwrites, kiln-scalarize-rank0 on scf.if) and keep NumPy's
results: element reads and writes in nested loops, a write read back and
written again, scalar branches carried by loops, writes through views that
alias the array read, at sizes 0, 1, odd and larger."""

import numpy as np
import pytest

import kiln
from kiln.compiler.mlir import ir
from kiln.compiler.passes._util import ancestors, collect_ops
from kiln.dialects import new_context

LOOPS = {"scf.while", "scf.for", "scf.parallel"}

rng = np.random.default_rng(16)


def seidel(tsteps, a):
    n = a.shape[0]
    for _ in range(tsteps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                a[i, j] += a[i, j - 1]
                a[i, j] /= 9.0


def crc(data):
    value = 0xFFFF
    for b in data:
        byte = 0xFF & b
        for _ in range(0, 8):
            if (value & 0x0001) ^ (byte & 0x0001):
                value = (value >> 1) ^ 0x8408
            else:
                value >>= 1
            byte >>= 1
    return value & 0xFFFF


def forward_substitution(lower, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - lower[i, :i] @ x[:i]) / lower[i, i]
    return x


def scan_through_view(a):
    tail = a[1:]
    for i in range(tail.shape[0]):
        tail[i] += a[i]
    return a


def ops_in_loops(stage_text: str, name: str) -> int:
    """How many `name` ops of the module run inside a loop (once per iteration)."""
    with new_context():
        module = ir.Module.parse(stage_text)
        return sum(1 for op in collect_ops(module, {name})
                   if any(parent.name in LOOPS for parent in ancestors(op)))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 21])
def test_element_loop_matches_numpy(n):
    a = rng.standard_normal((n, n))
    expected, got = a.copy(), a.copy()
    seidel(2, expected)
    kiln.qjit(seidel)(2, got)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_element_loop_body_allocates_nothing():
    f = kiln.qjit(seidel)
    f(2, np.ones((5, 5)))
    assert "tensor.insert " in kiln.get_compilation_stage(f, "linalg")
    bufferized = kiln.get_compilation_stage(f, "bufferized")
    assert ops_in_loops(bufferized, "memref.alloc") == 0
    assert ops_in_loops(bufferized, "memref.copy") == 0


@pytest.mark.parametrize("size", [0, 1, 7, 1600])
def test_scalar_branch_loop_matches_python(size):
    data = rng.integers(0, 256, size, dtype=np.uint8)
    f = kiln.qjit(crc)
    assert int(f(data)) == crc(data)
    assert ops_in_loops(kiln.get_compilation_stage(f, "bufferized"), "memref.alloc") == 0


def parity_and_gray(values):
    parity = 0
    gray = np.zeros_like(values)
    for i in range(values.shape[0]):
        v = int(values[i])
        bits = 0
        for _ in range(16):
            if v & 1:
                bits ^= 1
            v >>= 1
        parity += bits
        g = values[i]
        if (g >> 1) & 1:
            gray[i] = g ^ 0x5555
        else:
            gray[i] = g ^ (g >> 1)
    return parity, gray


def _bit_select_pipeline(mask: bool):
    from kiln.compiler import pipeline as P
    spec = "kiln-branchless-bit-selects{mask=true}" if mask else "kiln-branchless-bit-selects"
    return [(stage, [spec if s == "kiln-branchless-bit-selects" else s for s in specs])
            for stage, specs in P.DEFAULT_PIPELINE]


@pytest.mark.parametrize("size", [0, 1, 7, 1601])
def test_bit_branches_without_branches_match_python(size):
    """Both forms of kiln-branchless-bit-selects (selects, which stay cmovs
    under kiln's LLVM options, and masks) give Python's answers, and the
    loops keep no `if` on a data bit."""
    data = rng.integers(0, 256, size, dtype=np.uint8)
    values = rng.integers(0, 2**15, size).astype(np.int64)
    expected_parity, expected_gray = parity_and_gray(values)
    selects = {}
    for mask in (False, True):
        pipelines = _bit_select_pipeline(mask)
        f = kiln.qjit(crc, pipelines=pipelines, keep_intermediate=True)
        assert int(f(data)) == crc(data)
        bufferized = kiln.get_compilation_stage(f, "bufferized")
        with new_context():  # no `if` that yields a value is left in a loop (the checks' and polls' stay)
            module = ir.Module.parse(bufferized)
            assert not [op for op in collect_ops(module, {"scf.if"}) if len(op.results)
                        and any(parent.name in LOOPS for parent in ancestors(op))]
        selects[mask] = ops_in_loops(bufferized, "arith.select")
        parity, gray = kiln.qjit(parity_and_gray, pipelines=pipelines)(values)
        assert int(parity) == expected_parity
        np.testing.assert_array_equal(gray, expected_gray)
    assert selects[False] > selects[True]  # the bit step's select, in the default form only


@pytest.mark.parametrize("n", [0, 1, 2, 9])
def test_triangular_solve_matches_numpy(n):
    lower = np.tril(rng.standard_normal((n, n))) + 4 * np.eye(n)
    b = rng.standard_normal(n)
    np.testing.assert_allclose(kiln.qjit(forward_substitution)(lower, b), forward_substitution(lower, b),
                               rtol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2, 11])
def test_element_writes_through_an_aliasing_view(n):
    a = rng.standard_normal(n)
    expected, got = a.copy(), a.copy()
    scan_through_view(expected)
    result = kiln.qjit(scan_through_view)(got)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_element_write_read_back_and_written_again_on_a_view():
    def f(a, v):
        rows = a[::2]
        for i in range(rows.shape[0]):
            rows[i, 0] += v
            a[2 * i, 0] *= 2.0
            rows[i, 0] -= a[2 * i, 0] / 4.0
        return a

    a = rng.standard_normal((7, 3))
    expected, got = a.copy(), a.copy()
    f(expected, 1.5)
    np.testing.assert_allclose(kiln.qjit(f)(got, 1.5), expected, rtol=1e-12)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_triangular_solve_loop_allocates_nothing_and_calls_no_blas():
    f = kiln.qjit(forward_substitution)
    f(np.eye(4), np.ones(4))
    bufferized = kiln.get_compilation_stage(f, "bufferized")
    assert ops_in_loops(bufferized, "memref.alloc") == 0
    assert "scipy_cblas" not in bufferized


@pytest.mark.parametrize("n", [0, 1, 5, 1000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int8, np.bool_])
def test_one_element_products_match_numpy(n, dtype):
    def f(a, b):
        return a @ b, a[None, :] @ b[:, None], a[1:] @ a[:-1]

    a = (rng.standard_normal(n) * 3).astype(dtype)
    b = (rng.standard_normal(n) * 3).astype(dtype)
    for got, expected in zip(kiln.qjit(f)(a, b), f(a, b)):
        assert np.asarray(got).shape == np.asarray(expected).shape
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(got, expected, rtol=1e-4 if dtype == np.float32 else 1e-12)
