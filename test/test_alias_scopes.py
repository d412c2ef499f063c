"""kiln-alias-scopes against NumPy: programs whose loads and stores LLVM may
now reorder across buffers kiln declares apart (arguments, temporaries,
the fields of a body's context) must compute what NumPy computes, written
arguments included; buffers that do overlap (views of one array, a loop
that swaps two arrays) must not be declared apart."""

from __future__ import annotations

import numpy as np
import pytest

import kiln

SIZES = [0, 1, 2, 7, 1001]


def _jacobi(a, b, steps):
    """Two stencils that swap roles: one body, two call sites, the output of
    one the input of the other (kiln-dedup-parallel-bodies merges them)."""
    for _ in range(steps):
        b[1:-1] = 0.25 * (a[:-2] + 2.0 * a[1:-1] + a[2:])
        a[1:-1] = 0.25 * (b[:-2] + 2.0 * b[1:-1] + b[2:])
    return a.sum() + b.sum()


def _shift_in_place(x, c):
    """Reads and writes of one argument through overlapping views."""
    x[1:] += c * x[:-1]
    x[:-1] = x[1:] * 0.5 + x[:-1]
    return x


def _strided_writes(x):
    x[:-1:2] = x[1::2] * 2.0 + x[:-1:2]
    return x.copy()


def _swap_loop(a, b, steps):
    """Two buffers that trade places every iteration (a loop-carried pair)."""
    for _ in range(steps):
        c = a * 0.5 + b
        a = b
        b = c
    return a, b


def _temporaries(x, y):
    t = np.exp(x) * y
    u = t[::-1] + x
    y[:] = u * 2.0
    return t + u


def _check(fn, *args):
    f = kiln.qjit(fn)
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got = f(*got_args)
    if isinstance(want, tuple):
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for w, g in zip(want_args, got_args):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    return f


@pytest.mark.parametrize("n", SIZES)
def test_stencils_that_swap_roles_match_numpy(n):
    rng = np.random.default_rng(n)
    f = _check(_jacobi, rng.random(n), rng.random(n), 3)
    if n >= 3:
        # The shared body's load and store are declared apart.
        llvm = kiln.get_compilation_stage(f, "llvm")
        assert "noalias_scopes" in llvm


@pytest.mark.parametrize("n", SIZES)
def test_overlapping_views_of_one_argument_match_numpy(n):
    rng = np.random.default_rng(n + 1)
    _check(_shift_in_place, rng.random(n), 0.75)
    _check(_strided_writes, rng.random(n))


@pytest.mark.parametrize("n", SIZES)
def test_buffers_swapped_by_a_loop_match_numpy(n):
    rng = np.random.default_rng(n + 2)
    _check(_swap_loop, rng.random(n), rng.random(n), 5)


@pytest.mark.parametrize("n", SIZES)
def test_temporaries_and_a_written_argument_match_numpy(n):
    rng = np.random.default_rng(n + 3)
    _check(_temporaries, rng.random(n), rng.random(n))


def test_one_array_passed_twice_and_only_read():
    """Two arguments that are one array (read only) are declared apart;
    nothing is written through them, so the result is NumPy's."""
    def f(a, b):
        return a[1:] * b[:-1] + b[1:]

    x = np.arange(9.0)
    np.testing.assert_allclose(kiln.qjit(f)(x, x), f(x, x))


def test_written_argument_overlapping_another_is_refused():
    """The guarantee the argument scopes rest on: a written argument shares
    no memory with another argument."""
    def f(a, b):
        a[:] = b * 2.0
        return a

    x = np.arange(8.0)
    with pytest.raises(ValueError, match="overlaps argument"):
        kiln.qjit(f)(x[:4], x[2:6])
    assert np.array_equal(x, np.arange(8.0))


def test_matrix_stencil_into_another_argument_matches_numpy():
    """jacobi_2d's statement: five shifted views of A into B."""
    def step(A, B, steps):
        for _ in range(steps):
            B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
            A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])

    for n in (1, 2, 3, 31, 130):
        rng = np.random.default_rng(n)
        A, B = rng.random((n, n)), rng.random((n, n))
        A2, B2 = A.copy(), B.copy()
        kiln.qjit(step)(A, B, 4)
        step(A2, B2, 4)
        np.testing.assert_allclose(A, A2, rtol=1e-12)
        np.testing.assert_allclose(B, B2, rtol=1e-12)
