"""Loops that rebind an array they read after writing part of it
(kiln-forward-loop-buffers passes such a loop's buffer from its condition
to its body without a copy; the IR is in
test/lit/passes/kiln-forward-loop-buffers.mlir): results and mutated
arguments as NumPy's, written the way a Poisson solver, a double-buffered
stencil or a shift register is written, for zero, one and many iterations
and at sizes from 3 to 61."""

from __future__ import annotations

import numpy as np
import pytest

import kiln


def pressure_poisson(nit, p, dx, dy, b):
    for _ in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy ** 2 + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx ** 2)
                         / (2 * (dx ** 2 + dy ** 2)) - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
        p[1:-1, -1] = (pn[1:-1, 0] + pn[1:-1, -2]) / 2
        p[1:-1, 0] = (pn[1:-1, 1] + pn[1:-1, -1]) / 2
        p[-1, :] = p[-2, :]
        p[0, :] = p[1, :]


def ping_pong(a0, steps):
    a = a0.copy()
    b = np.empty_like(a)
    for _ in range(steps):
        b[1:-1] = (a[:-2] + a[2:]) * 0.5
        b[0], b[-1] = a[0], a[-1]
        a, b = b, a
    return a


def shift_register(x, n):
    y = x.copy()
    for _ in range(n):
        z = y.copy()
        y[1:] = z[:-1] + 1.0
        y[0] = z[-1]
    y[0] = -1.0
    return y


def converge(u, tol):
    diff = 1.0
    steps = 0
    while diff > tol:
        un = u.copy()
        u[1:-1] = 0.5 * (un[:-2] + un[2:])
        u[-1] = un[0]
        diff = np.abs(u - un).max()
        steps += 1
    return steps


@pytest.mark.parametrize("nit", [0, 1, 5])
@pytest.mark.parametrize("shape", [(3, 3), (4, 5), (61, 61)])
def test_pressure_iterations_match_numpy(nit, shape):
    rng = np.random.default_rng(shape[0] * 10 + nit)
    p, b = rng.standard_normal(shape), rng.standard_normal(shape)
    expected, got = p.copy(), p.copy()
    pressure_poisson(nit, expected, 0.05, 0.04, b)
    assert kiln.qjit(pressure_poisson)(nit, got, 0.05, 0.04, b) is None
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("steps", [0, 1, 2, 7])
@pytest.mark.parametrize("n", [3, 4, 1001])
def test_double_buffered_stencil(steps, n):
    a = np.random.default_rng(n).standard_normal(n)
    before = a.copy()
    np.testing.assert_allclose(kiln.qjit(ping_pong)(a, steps), ping_pong(a.copy(), steps), rtol=1e-14)
    np.testing.assert_array_equal(a, before)  # the argument is only read


@pytest.mark.parametrize("n", [0, 1, 3, 10])
def test_shift_register_leaves_its_input_alone(n):
    x = np.arange(5.0)
    got = kiln.qjit(shift_register)(x, n)
    np.testing.assert_array_equal(got, shift_register(np.arange(5.0), n))
    np.testing.assert_array_equal(x, np.arange(5.0))


def test_a_while_loop_that_converges():
    u = np.linspace(0.0, 1.0, 33)
    expected, got = u.copy(), u.copy()
    assert kiln.qjit(converge)(got, 1e-6) == converge(expected, 1e-6)
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def keep_previous(u0, steps):
    u = u0.copy()
    prev = u
    for _ in range(steps):
        prev = u
        u = np.concatenate([u[1:], u[:1]]) * 0.5 + prev * 0.25
        u[0] = prev[-1]
    return prev, u


def rows_then_columns(a, steps):
    a = a.copy()
    for _ in range(steps):
        old = a.copy()
        a[1:, :] = old[:-1, :] + 1.0
        a[:, 0] = old[:, -1]
    return a


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_the_previous_iterate_survives_the_loop(steps):
    u0 = np.random.default_rng(steps).standard_normal(17)
    for got, want in zip(kiln.qjit(keep_previous)(u0, steps), keep_previous(u0, steps)):
        np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (9, 4)])
@pytest.mark.parametrize("steps", [0, 1, 3])
def test_rows_then_columns_from_the_old_array(shape, steps):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    np.testing.assert_array_equal(kiln.qjit(rows_then_columns)(a, steps), rows_then_columns(a, steps))
