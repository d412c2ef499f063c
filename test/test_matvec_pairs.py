"""`A @ x` and `u @ A` of one matrix computed in one pass over it
(kiln-pair-matvecs, runtime/matvec.c), against NumPy: mvt's and BiCG's
statements, both dtypes, sizes 0, 1, odd and large, transposed and strided
operands, a pair in a loop, pairs that must not be fused, and shape errors;
and the chain `(A @ x) @ A` (NPBench's atax) in one pass over A."""

from __future__ import annotations

import numpy as np
import pytest

import kiln


def mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A


def bicg(A, p, r):
    return r @ A, A @ p


def _inputs(rng, m, n, dtype):
    return [rng.random(m).astype(dtype), rng.random(n).astype(dtype), rng.random(n).astype(dtype),
            rng.random(m).astype(dtype), rng.random((m, n)).astype(dtype)]


def _tolerance(dtype):
    return {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-10}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mvt_at_many_sizes_one_compile(dtype):
    f = kiln.qjit(mvt)
    rng = np.random.default_rng(0)
    for m, n in [(7, 7), (9, 5), (0, 0), (0, 3), (3, 0), (2, 9), (4, 4), (5, 3), (33, 65), (130, 257), (700, 301)]:
        args = _inputs(rng, m, n, dtype)
        expected = [a.copy() for a in args]
        mvt(*expected)
        f(*args)
        for got, want in zip(args, expected):
            np.testing.assert_allclose(got, want, **_tolerance(dtype))
    assert "kiln_matvec_pair" in f.stage("bufferized")
    assert f.num_compiles == 1


def test_size_one():
    f = kiln.qjit(mvt)
    rng = np.random.default_rng(1)
    for m, n in [(1, 1), (1, 6), (6, 1)]:
        args = _inputs(rng, m, n, np.float64)
        expected = [a.copy() for a in args]
        mvt(*expected)
        f(*args)
        for got, want in zip(args, expected):
            np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("layout", ["transposed", "strided_rows", "strided_both", "strided_vectors"])
def test_views(layout):
    f = kiln.qjit(bicg)
    rng = np.random.default_rng(2)
    for m, n in [(5, 3), (64, 33), (301, 200)]:
        if layout == "transposed":
            A, p, r = rng.random((n, m)).T, rng.random(n), rng.random(m)
        elif layout == "strided_rows":
            A, p, r = rng.random((2 * m, n))[::2], rng.random(n), rng.random(m)
        elif layout == "strided_both":
            A, p, r = rng.random((2 * m, 3 * n))[::2, ::3], rng.random(n), rng.random(m)
        else:
            A, p, r = rng.random((m, n)), rng.random(2 * n)[::2], rng.random(3 * m)[::3]
        s, q = f(A, p, r)
        np.testing.assert_allclose(s, r @ A, rtol=1e-12)
        np.testing.assert_allclose(q, A @ p, rtol=1e-12)
    assert "kiln_matvec_pair" in f.stage("bufferized")


def test_pair_in_a_loop_with_argument_writes():
    def power_pair(A, x, u, steps):
        for _ in range(steps):
            y = A @ x
            v = u @ A
            x = v / np.max(np.abs(v))
            u = y / np.max(np.abs(y))
        return x, u

    f = kiln.qjit(power_pair)
    rng = np.random.default_rng(3)
    for m, n in [(6, 6), (40, 25), (201, 99)]:
        A, x, u = rng.random((m, n)) + 0.1, rng.random(n), rng.random(m)
        got = f(A, x, u, 5)
        want = power_pair(A, x, u, 5)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10)
    assert "kiln_matvec_pair" in f.stage("bufferized")


def test_second_product_reads_the_first():
    def chained(A, x):
        y = A @ x
        return y @ A, y

    f = kiln.qjit(chained)
    rng = np.random.default_rng(4)
    A, x = rng.random((30, 30)), rng.random(30)
    got = f(A, x)
    np.testing.assert_allclose(got[0], (A @ x) @ A, rtol=1e-12)
    np.testing.assert_allclose(got[1], A @ x, rtol=1e-12)
    # Not the independent pair: the chain, which computes y first (and returns it too).
    assert "kiln_matvec_pair" not in f.stage("bufferized")
    assert "kiln_matvec_chain" in f.stage("bufferized")


def atax(A, x):
    return (A @ x) @ A


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chain_at_many_sizes_one_compile(dtype):
    f = kiln.qjit(atax)
    rng = np.random.default_rng(7)
    # Sizes of 1 come last: a dim of 1 compiles a version of its own (broadcasting).
    for m, n in [(7, 5), (0, 0), (0, 3), (3, 0), (2, 9), (4, 4), (5, 3), (33, 65), (130, 257), (701, 303),
                 (1, 1), (1, 6), (6, 1)]:
        if (m, n) == (1, 1):
            assert f.num_compiles == 1
            assert "kiln_matvec_chain" in f.stage("bufferized")
        A, x = rng.random((m, n)).astype(dtype), rng.random(n).astype(dtype)
        A_before, x_before = A.copy(), x.copy()
        got = f(A, x)
        assert got.dtype == dtype and got.shape == (n,)
        np.testing.assert_allclose(got, atax(A, x), **_tolerance(dtype))
        np.testing.assert_array_equal(A, A_before)
        np.testing.assert_array_equal(x, x_before)


@pytest.mark.parametrize("layout", ["transposed", "strided_rows", "strided_both", "strided_vector"])
@pytest.mark.parametrize("threads", [1, 3])
def test_chain_views_and_threads(layout, threads, monkeypatch):
    monkeypatch.setenv("KILN_NUM_THREADS", str(threads))
    f = kiln.qjit(atax)
    rng = np.random.default_rng(8)
    for m, n in [(5, 3), (3, 5), (64, 33), (301, 200), (1000, 130)]:
        if layout == "transposed":  # column-major: two passes
            A, x = rng.random((n, m)).T, rng.random(n)
        elif layout == "strided_rows":
            A, x = rng.random((2 * m, n))[::2], rng.random(n)
        elif layout == "strided_both":
            A, x = rng.random((2 * m, 3 * n))[::2, ::3], rng.random(n)
        else:
            A, x = rng.random((m, n)), rng.random(3 * n)[::3]
        np.testing.assert_allclose(f(A, x), atax(A, x), rtol=1e-12)


def test_chain_inside_a_loop_and_written_result():
    def iterate(A, x, out, steps):
        for _ in range(steps):
            x = (A @ x) @ A
            x = x / np.linalg.norm(x)
        out[:] = x
        return x

    f = kiln.qjit(iterate)
    rng = np.random.default_rng(9)
    for n in (1, 4, 57):
        A, x = rng.random((n + 3, n)), rng.random(n)
        out, want_out = np.zeros(n), np.zeros(n)
        got = f(A, x, out, 4)
        want = iterate(A, x, want_out, 4)
        np.testing.assert_allclose(got, want, rtol=1e-10)
        np.testing.assert_allclose(out, want_out, rtol=1e-10)
    assert "kiln_matvec_chain" in f.stage("bufferized")


def atax_transposed(A, x):
    return A.T @ (A @ x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided_both"])
def test_chain_written_with_the_transpose(dtype, layout):
    """`A.T @ (A @ x)`, the textbook spelling of atax: the second product is
    a column product of A's transposing copy, fused as the chain too."""
    f = kiln.qjit(atax_transposed)
    rng = np.random.default_rng(10)
    for m, n in [(7, 5), (0, 3), (3, 0), (2, 9), (130, 257), (701, 303), (1, 1), (1, 6), (6, 1)]:
        if layout == "contiguous":
            A = rng.random((m, n)).astype(dtype)
        elif layout == "transposed":
            A = rng.random((n, m)).astype(dtype).T
        else:
            A = rng.random((2 * m, 3 * n)).astype(dtype)[::2, ::3]
        x = rng.random(n).astype(dtype)
        got = f(A, x)
        assert got.dtype == dtype and got.shape == (n,)
        np.testing.assert_allclose(got, atax_transposed(A, x), **_tolerance(dtype))
        if (m, n) == (701, 303):
            assert "kiln_matvec_chain" in f.stage("bufferized")


def test_chain_of_static_shapes_written_with_the_transpose():
    def fixed(x):
        A = np.arange(12.0).reshape(3, 4)
        return A.T @ (A @ x), (A @ x) @ A

    f = kiln.qjit(fixed)
    x = np.linspace(0.0, 1.0, 4)
    for got, want in zip(f(x), fixed(x)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_chain_shape_mismatch_raises_numpys_error():
    f = kiln.qjit(atax)
    with pytest.raises(ValueError, match="matmul"):
        f(np.ones((3, 4)), np.ones(5))


def test_in_place_update_of_the_vector_the_other_product_reads():
    # x2's update reads x1 after x1 was updated: the second product's vector
    # depends on the first product, so the two stay separate.
    def coupled(x1, x2, A):
        x1 += A @ x2
        x2 += x1 @ A

    f = kiln.qjit(coupled)
    rng = np.random.default_rng(5)
    for n in (0, 1, 7, 100):
        x1, x2, A = rng.random(n), rng.random(n), rng.random((n, n))
        e1, e2 = x1.copy(), x2.copy()
        coupled(e1, e2, A)
        f(x1, x2, A)
        np.testing.assert_allclose(x1, e1, rtol=1e-12)
        np.testing.assert_allclose(x2, e2, rtol=1e-12)


def test_shape_mismatch_raises_numpys_error_and_leaves_arguments_alone():
    f = kiln.qjit(mvt)
    rng = np.random.default_rng(6)
    x1, x2, y_1, A = rng.random(3), rng.random(4), rng.random(4), rng.random((3, 4))
    y_2 = rng.random(5)  # should be 3
    before = [x1.copy(), x2.copy()]
    with pytest.raises(ValueError, match="matmul"):
        f(x1, x2, y_1, y_2, A)
    np.testing.assert_array_equal(x1, before[0])
    np.testing.assert_array_equal(x2, before[1])
