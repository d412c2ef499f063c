"""Run-time checks that do not depend on the iteration run once, before the
loop (kiln-hoist-loop-checks): NumPy's results and NumPy's errors, including
no error when the loop does not run and the first error of the first
iteration when several statements would fail."""

import numpy as np
import pytest

import kiln

rng = np.random.default_rng(63)


def jacobi_2d(steps, A, B):
    for _ in range(1, steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def _main(text: str, name: str) -> str:
    main = text[text.index(f"func.func @{name}("):]
    return main[:main.index("\n  }\n")]


def test_size_check_runs_once_before_the_time_loop():
    f = kiln.qjit(jacobi_2d)
    for n in [0, 1, 2, 3, 8, 151]:
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        a, b = A.copy(), B.copy()
        jacobi_2d(6, A, B)
        f(6, a, b)
        np.testing.assert_allclose(a, A, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(b, B, rtol=1e-13, atol=1e-13)
    main = _main(kiln.get_compilation_stage(f, "bufferized"), "jacobi_2d")
    loop = main[main.index("scf.while"):]
    # The first statement's size checks (messages 0 and 1) left the loop.
    assert "@kiln_check_message_0" not in loop and "@kiln_check_message_1" not in loop


@pytest.mark.parametrize("steps", [0, 1, 2, 4])
def test_mismatched_sizes_raise_only_when_the_loop_runs(steps):
    f = kiln.qjit(jacobi_2d)
    A, B = rng.standard_normal((6, 6)), rng.standard_normal((7, 6))
    a, b = A.copy(), B.copy()
    if steps < 2:
        jacobi_2d(steps, A, B)
        f(steps, a, b)
        np.testing.assert_array_equal(a, A)
        np.testing.assert_array_equal(b, B)
        return
    with pytest.raises(ValueError):
        jacobi_2d(steps, A.copy(), B.copy())
    with pytest.raises(ValueError, match=r"could not broadcast.*axis 0: size 4 vs 5"):
        f(steps, a, b)
    np.testing.assert_array_equal(a, A)   # arguments intact after the failure
    np.testing.assert_array_equal(b, B)


def index_then_slices(n, x, y, z):
    for i in range(n):
        x[i] = 1.0            # depends on i: an IndexError when i >= len(x)
        y[1:] = z[1:]         # invariant: a ValueError when the sizes differ
    return x, y


def slices_then_index(n, x, y, z):
    for i in range(n):
        y[1:] = z[1:]
        x[i] = 1.0
    return x, y


@pytest.mark.parametrize("kernel", [index_then_slices, slices_then_index])
def test_first_error_of_the_first_iteration(kernel):
    f = kiln.qjit(kernel)
    x0, y, z_bad, z = np.zeros(0), np.zeros(5), np.zeros(4), rng.standard_normal(5)
    for args in [(3, np.zeros(4), y, z), (0, x0, y, z_bad), (2, np.zeros(3), y.copy(), z)]:
        want = kernel(args[0], *(a.copy() for a in args[1:]))
        got = f(args[0], *(a.copy() for a in args[1:]))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    first = IndexError if kernel is index_then_slices else ValueError
    with pytest.raises(first):
        kernel(2, x0.copy(), y.copy(), z_bad)
    with pytest.raises(first):
        f(2, x0.copy(), y.copy(), z_bad)
