"""Loops that write arrays and swap them (`u, un = un, u`), the double-buffering of stencil
codes (issue 14): the function's own arrays swap as in NumPy, at sizes 0, 1, odd and large,
with break/return and writes through the results after the loop; what kiln cannot follow
(arguments swapped, an old name used after or inside the loop) is refused naming it."""

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 7, 1000)


def jacobi_double_buffer(u0, steps):
    u = u0.copy()
    un = np.empty_like(u)
    for t in range(steps):
        un[1:-1] = 0.5 * (u[:-2] + u[2:])
        un[0], un[-1] = u[0], u[-1]
        u, un = un, u
    return u


def rotate_three(x, steps):
    a = x.copy()
    b = x * 2.0
    c = x * 3.0
    for t in range(steps):
        c[:] = a + b
        a, b, c = b, c, a
    return a, b, c


def swap_until(x, tol):
    cur = x.copy()
    nxt = np.zeros_like(cur)
    for it in range(200):
        nxt[:] = 0.5 * cur
        if np.abs(nxt).max(initial=0.0) < tol:
            return nxt, it
        cur, nxt = nxt, cur
    return cur, -1


def test_double_buffered_stencil_matches_numpy(execution):
    f = kiln.qjit(jacobi_double_buffer)
    rng = np.random.default_rng(0)
    for n in (2, 7, 1000):
        for steps in (0, 1, 2, 5):
            u0 = rng.normal(size=n)
            np.testing.assert_allclose(f(u0, steps), jacobi_double_buffer(u0, steps), rtol=1e-12)


def test_three_arrays_rotate_as_in_numpy(execution):
    f = kiln.qjit(rotate_three)
    for n in SIZES:
        for steps in (0, 1, 2, 3, 4):
            x = np.arange(float(n))
            for got, want in zip(f(x, steps), rotate_three(x, steps)):
                np.testing.assert_allclose(got, want)


def test_swapping_loop_with_a_return(execution):
    f = kiln.qjit(swap_until)
    for n in SIZES:
        x = np.linspace(1.0, 2.0, n)
        for tol in (1e-3, 0.0):
            got, want = f(x, tol), swap_until(x, tol)
            np.testing.assert_allclose(got[0], want[0])
            assert got[1] == want[1]


def test_swapping_the_arguments_is_refused_naming_the_remedy(execution):
    def pingpong(a, b, n):
        for t in range(n):
            b[1:-1] = 0.5 * (a[:-2] + a[2:])
            a, b = b, a
        return a

    with pytest.raises(ValueError, match=r"carried value 1 is written in place.*swaps the arrays it writes.*"
                                         r"not on its arguments"):
        kiln.qjit(pingpong)(np.arange(5.0), np.zeros(5), 3)


def test_old_names_after_or_inside_the_loop_are_refused(execution):
    def old_name_after(x, n):
        u = x.copy()
        v = np.zeros_like(u)
        u0 = u
        for t in range(n):
            v[:] = u + 1
            u, v = v, u
        return u0.sum()

    with pytest.raises(ValueError, match=r"swapped and written by the loop at .*returned|read"):
        kiln.qjit(old_name_after)(np.ones(3), 2)

    def old_name_inside(x, n):
        u = x.copy()
        v = np.zeros_like(u)
        first = u
        for t in range(n):
            v[:] = u + first
            u, v = v, u
        return u

    with pytest.raises(ValueError, match=r"swaps arrays it carries .* reads one of them by a name from before"):
        kiln.qjit(old_name_inside)(np.ones(3), 2)

    def write_old_name_after(x, n):
        u = x.copy()
        v = np.zeros_like(u)
        u0 = u
        for t in range(n):
            v[:] = u + 1
            u, v = v, u
        u0[0] = 5.0
        return u

    with pytest.raises(ValueError, match=r"swapped and written by the loop at "):
        kiln.qjit(write_old_name_after)(np.ones(3), 2)


def write_result_after(x, n):
    u = x.copy()
    v = np.zeros_like(u)
    for t in range(n):
        v[:] = u + 1
        u, v = v, u
    u[0] = 5.0
    v[-1:] *= 2.0
    return u, v


def test_writes_through_the_results_after_the_loop(execution):
    f = kiln.qjit(write_result_after)
    for n in (1, 7, 1000):
        for steps in (0, 1, 2, 3):
            x = np.arange(float(n))
            for got, want in zip(f(x, steps), write_result_after(x, steps)):
                np.testing.assert_array_equal(got, want)
