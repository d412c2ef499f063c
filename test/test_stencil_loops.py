"""Stencil-style slice code keeps NumPy's results while it compiles to loops
without temporaries: slices with int bounds share their size dims (no
run-time broadcasting between `A[1:-1]`, `A[:-2]`, `A[2:]`), slice writes
are computed into their destination (kiln-compute-into-destination), and
broadcast scalars are read as scalars (kiln-inline-splats). Sizes 0, 1,
small, odd and large; written arguments, overlapping reads and views; one
compile across sizes."""

import re

import numpy as np
import pytest

import kiln
from ir_text import op_text

rng = np.random.default_rng(16)
SIZES = [0, 1, 2, 3, 4, 7, 150]


def _slices(x):
    return (x[1:-1], x[:-2], x[2:], x[-3:], x[-3:-1], x[1:4], x[0:2], x[-1:], x[3:1], x[-2:-4], x[2:-5],
            x[:3], x[5:], x[-6:], x[:-1])


def test_int_bound_slices_match_numpy():
    f = kiln.qjit(_slices)
    for n in SIZES:
        x = rng.standard_normal(n)
        for got, want in zip(f(x), _slices(x)):
            assert got.shape == want.shape, n
            np.testing.assert_array_equal(got, want)
    assert f.num_compiles <= 2  # one signature, plus the specialized size-1 one


def _three_point(x):
    return x[1:-1] + x[:-2] + x[2:] - 2.0 * x[1:-1]


def test_shifted_slices_share_their_dims():
    """The jaxpr of `x[1:-1] + x[:-2] + x[2:]` has no broadcast check: the three
    sizes are one dim (`max(n - 2, 0)`)."""
    f = kiln.qjit(_three_point)
    for n in SIZES:
        x = rng.standard_normal(n)
        np.testing.assert_allclose(f(x), _three_point(x))
    assert f.num_compiles <= 2  # one signature, plus the specialized size-1 one
    text = str(f.jaxpr)
    assert "check" not in text and "broadcast_in_dim" not in text.replace("broadcast_in_dim[broadcast_dimensions=()", "")
    dims = set(re.findall(r"slice\[[^\]]*\] \w+ (?:\w+ )?(\w+)\n", text + "\n"))
    assert len(dims) <= 1, text


def jacobi_1d(steps, A, B):
    for _ in range(1, steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_2d(steps, A, B):
    for _ in range(1, steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


@pytest.mark.parametrize("kernel,ndim", [(jacobi_1d, 1), (jacobi_2d, 2)])
def test_jacobi_writes_arguments_like_numpy(kernel, ndim):
    f = kiln.qjit(kernel)
    for n in SIZES:
        shape = (n,) * ndim
        A, B = rng.standard_normal(shape), rng.standard_normal(shape)
        a, b = A.copy(), B.copy()
        kernel(5, A, B)
        f(5, a, b)
        np.testing.assert_allclose(a, A, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(b, B, rtol=1e-13, atol=1e-13)
    assert f.num_compiles <= 2  # one signature, plus the specialized size-1 one


def test_write_broadcasts_a_size_one_value():
    """The target and the value have unrelated dims: a size-1 value broadcasts
    into the slice (the version beside the one computed in place)."""
    def f(A, B, k):
        B[1:-1] = 2.0 * A[k:k + 1] + 1.0
        return B

    g = kiln.qjit(f)
    for n in [1, 3, 8]:
        A, B = rng.standard_normal(4), rng.standard_normal(n)
        b = B.copy()
        np.testing.assert_allclose(g(A, b, 2), f(A, B, 2))
        np.testing.assert_allclose(b, B)
    def mismatch(A, B):
        B[1:-1] = 2.0 * A[1:-1]

    with pytest.raises(ValueError, match="broadcast"):
        kiln.qjit(mismatch)(np.zeros(6), np.zeros(5))


def overlapping(A):
    A[1:-1] = 0.5 * (A[:-2] + A[2:])          # reads the destination elsewhere: a temporary
    A[1:-1] = 3.0 * A[1:-1] + 1.0              # reads only what it writes: in place
    A[2:] = A[:-2] * 0.5                       # a shifted copy onto itself
    return A


def test_writes_that_read_their_destination():
    f = kiln.qjit(overlapping)
    for n in SIZES:
        x = rng.standard_normal(n)
        want = overlapping(x.copy())
        got_arg = x.copy()
        np.testing.assert_allclose(f(got_arg), want)
        np.testing.assert_allclose(got_arg, want)
    assert f.num_compiles <= 2  # one signature, plus the specialized size-1 one


def through_views(A):
    C = A.copy()
    R = C[::-1]
    R[1:-1] = 0.5 * (C[:-2] + C[2:])           # writes C reversed while reading C
    T = A.T
    T[1:-1] = 2.0 * T[1:-1]                    # a transposed view of an argument
    return C


def test_writes_through_views():
    f = kiln.qjit(through_views)
    for n in [1, 2, 5]:
        x = rng.standard_normal((n, n))
        want_arg = x.copy()
        want = through_views(want_arg)
        got_arg = x.copy()
        np.testing.assert_allclose(f(got_arg), want)
        np.testing.assert_allclose(got_arg, want_arg)


def shared_scalar(x, y):
    return 0.5 * x + 1.0, 0.5 * y + 1.0, (0.5 * x) * (0.5 * y)


def test_shared_scalar_operands():
    f = kiln.qjit(shared_scalar)
    for n in [0, 1, 9]:
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        for got, want in zip(f(x, y), shared_scalar(x, y)):
            np.testing.assert_allclose(got, want)
    assert f.num_compiles <= 2  # one signature, plus the specialized size-1 one


def test_stencil_loop_body_allocates_nothing():
    """The bufferized loop of a stencil whose arrays share their dims: no
    `memref.alloc` inside the loop and no copy of a slice."""
    def stencil(A, steps):
        B = A.copy()
        for _ in range(steps):
            B[1:-1] = 0.5 * (A[:-2] + A[2:])
            A[1:-1] = 0.5 * (B[:-2] + B[2:])
        return B

    f = kiln.qjit(stencil)
    x = rng.standard_normal(11)
    want_arg = x.copy()
    want = stencil(want_arg, 3)
    got_arg = x.copy()
    np.testing.assert_allclose(f(got_arg, 3), want)
    np.testing.assert_allclose(got_arg, want_arg)
    text = kiln.get_compilation_stage(f, "bufferized")
    main = text[text.index("func.func @stencil("):]
    loop = op_text(main, main.index("scf.while"))
    assert "scf.yield" in loop and "kiln_parallel_for" in loop  # the whole loop, body included
    assert "memref.alloc" not in loop



def augmented(x, y, k):
    x[1:-1] += y[1:-1]
    x[::2] *= 3.0
    x[1:] += x[:-1]                            # overlapping: NumPy reads the old x[:-1]
    idx = (slice(0, 2),)
    t = x[idx]
    x[idx] = 5.0
    x[idx] = t                                 # t is a view of the same elements: no change
    x[k:] -= 1.0
    return x


def test_augmented_slice_assignment_is_one_write():
    f = kiln.qjit(augmented)
    for n in [2, 3, 8, 101]:
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        want_arg = x.copy()
        want = augmented(want_arg, y, 1)
        got_arg = x.copy()
        np.testing.assert_allclose(f(got_arg, y, 1), want)
        np.testing.assert_allclose(got_arg, want_arg)

    def add_rows(x, y):
        x[1:-1] += y[1:-1]
        return x

    g = kiln.qjit(add_rows)
    g(np.zeros(4), np.ones(4))
    assert str(g.jaxpr).count("= assign ") == 1, g.jaxpr
    read_only = np.zeros(4)
    read_only.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        g(read_only, np.ones(4))


def seidel_rows(steps, A):
    n = A.shape[0]
    for _ in range(steps):
        for i in range(1, n - 1):
            A[i, 1:-1] += A[i - 1, :-2] + A[i + 1, 2:] + A[i, 2:]
            for j in range(1, n - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 4.0


def test_row_updates_in_loops():
    f = kiln.qjit(seidel_rows)
    for n in [0, 1, 2, 3, 9]:
        A = rng.standard_normal((n, n))
        a = A.copy()
        seidel_rows(2, A)
        f(2, a)
        np.testing.assert_allclose(a, A, rtol=1e-12, atol=1e-12)
