"""Slice stencils over arrays whose sizes are independent (hdiff's three
arguments, channel_flow's u, v, p and b) keep NumPy's results, broadcasting
of run-time size-1 dims and errors included, while each statement compiles
to one loop nest: the run-time broadcasts sit on the slices only
(kiln-broadcast-operands), no view of a live tensor is overwritten
(kiln-elementwise-in-place), a whole written argument is computed in place
(kiln-compute-into-destination), and loops carry no value that nothing
needs (kiln-prune-carried-values). Sizes 0, 1, odd and large; views and
aliasing arguments; one compile across sizes."""

import re

import numpy as np
import pytest

import kiln

rng = np.random.default_rng(8)


def hdiff(in_field, out_field, coeff):
    I, J, K = out_field.shape[0], out_field.shape[1], out_field.shape[2]
    lap = 4.0 * in_field[1:I + 3, 1:J + 3, :] - (
        in_field[2:I + 4, 1:J + 3, :] + in_field[0:I + 2, 1:J + 3, :] +
        in_field[1:I + 3, 2:J + 4, :] + in_field[1:I + 3, 0:J + 2, :])
    res = lap[1:, 1:J + 1, :] - lap[:-1, 1:J + 1, :]
    flx = np.where((res * (in_field[2:I + 3, 2:J + 2, :] - in_field[1:I + 2, 2:J + 2, :])) > 0, 0, res)
    res = lap[1:I + 1, 1:, :] - lap[1:I + 1, :-1, :]
    fly = np.where((res * (in_field[2:I + 2, 2:J + 3, :] - in_field[2:I + 2, 1:J + 2, :])) > 0, 0, res)
    out_field[:, :, :] = in_field[2:I + 2, 2:J + 2, :] - coeff[:, :, :] * (
        flx[1:, :, :] - flx[:-1, :, :] + fly[:, 1:, :] - fly[:, :-1, :])


HDIFF_SIZES = [(0, 0, 0), (0, 3, 2), (3, 5, 7), (16, 9, 33), (2, 2, 2)]


def _hdiff_inputs(I, J, K, extra=(4, 4)):
    return (rng.standard_normal((I + extra[0], J + extra[1], K)), rng.standard_normal((I, J, K)),
            rng.standard_normal((I, J, K)))


def test_hdiff_matches_numpy_with_one_compile():
    f = kiln.qjit(hdiff)
    for I, J, K in HDIFF_SIZES:
        a, out, c = _hdiff_inputs(I, J, K)
        want, got = out.copy(), out.copy()
        hdiff(a, want, c)
        f(a, got, c)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    assert f.num_compiles == 1
    for I, J, K in [(1, 1, 1), (1, 2, 3), (4, 1, 5)]:  # size-1 dims: their own signatures
        a, out, c = _hdiff_inputs(I, J, K)
        want, got = out.copy(), out.copy()
        hdiff(a, want, c)
        f(a, got, c)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_hdiff_is_one_loop_per_statement():
    """lap, flx, fly and the write: four generics, none of them a copy, and
    the last one writes the argument (no copy at the return)."""
    f = kiln.qjit(hdiff)
    a, out, c = _hdiff_inputs(3, 4, 5)
    f(a, out, c)
    linalg = kiln.get_compilation_stage(f, "linalg")
    assert linalg.count("linalg.generic") == 4, linalg
    bufferized = kiln.get_compilation_stage(f, "bufferized")
    # The copies left are the size-1 paths' calls: no loop nest copies a buffer.
    copies = re.findall(r"scf\.parallel[^\n]*\{\n\s*%\S+ = memref\.load [^\n]*\n\s*memref\.store [^\n]*\n\s*scf\.reduce",
                        bufferized)
    assert not copies, copies[:2]


@pytest.mark.parametrize("rows", [1, 2, 3])
def test_hdiff_broadcasts_size_one_slices_like_numpy(rows):
    """With I = 0 and a short in_field, the slices of in_field have 1 or 2
    rows: NumPy broadcasts the 1 (or raises); so does kiln (the size-1 path)."""
    f = kiln.qjit(hdiff)
    a = rng.standard_normal((rows, 6, 3))
    out, c = rng.standard_normal((0, 2, 3)), rng.standard_normal((0, 2, 3))
    try:
        want = out.copy()
        hdiff(a, want, c)
    except ValueError:
        with pytest.raises(ValueError, match="broadcast"):
            f(a, out.copy(), c)
        return
    got = out.copy()
    f(a, got, c)
    np.testing.assert_allclose(got, want)


def mixed_rows(x, y, w):
    """Slices of x and y (independent sizes) in one expression, written into w."""
    w[1:-1] = 0.5 * (x[1:-1] + x[:-2]) - y[2:] * (x[2:] - y[:-2])
    return w


@pytest.mark.parametrize("n, m, k", [(3, 3, 3), (0, 0, 0), (1, 1, 1), (4, 3, 4), (3, 4, 3), (3, 3, 4),
                                     (101, 101, 101), (7, 3, 7)])
def test_independent_sizes_broadcast_or_raise_like_numpy(n, m, k):
    """x[1:-1] has n - 2 elements, y[2:] m - 2, w[1:-1] k - 2: equal, one
    of them 1 (broadcast) or a mismatch (NumPy's error)."""
    f = kiln.qjit(mixed_rows)
    x, y, w = rng.standard_normal(n), rng.standard_normal(m), rng.standard_normal(k)
    try:
        want = mixed_rows(x, y, w.copy())
    except ValueError:
        with pytest.raises(ValueError, match="broadcast"):
            f(x, y, w.copy())
        return
    got = w.copy()
    np.testing.assert_allclose(f(x, y, got), want)
    np.testing.assert_allclose(got, want)


def test_independent_sizes_fuse_into_one_loop():
    f = kiln.qjit(mixed_rows)
    f(np.ones(5), np.ones(5), np.ones(5))
    assert kiln.get_compilation_stage(f, "linalg").count("linalg.generic") == 1


def whole_write(x, out):
    out[:] = 2.0 * x + 1.0
    return out


def self_reverse(out):
    out[:] = out[::-1] * 2.0
    return out


def test_whole_argument_write_through_views():
    f = kiln.qjit(whole_write)
    for n in [0, 1, 7, 1000]:
        x = rng.standard_normal(n)
        base = rng.standard_normal(2 * n + 1)
        want_base = base.copy()
        whole_write(x, want_base[1::2])
        f(x, base[1::2])
        np.testing.assert_allclose(base, want_base)
    assert f.num_compiles <= 2
    g = kiln.qjit(self_reverse)
    for n in [0, 1, 2, 9]:
        x = rng.standard_normal(n)
        want = self_reverse(x.copy())
        got = x.copy()
        g(got)
        np.testing.assert_allclose(got, want)


def pressure(nit, p, b, dx, dy):
    """channel_flow's pressure iteration: p and b have independent sizes."""
    for _ in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy ** 2 + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx ** 2)
                         / (2 * (dx ** 2 + dy ** 2)) - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
        p[1:-1, -1] = (((pn[1:-1, 0] + pn[1:-1, -2]) * dy ** 2 + (pn[2:, -1] + pn[0:-2, -1]) * dx ** 2)
                       / (2 * (dx ** 2 + dy ** 2)) - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, -1])
        p[1:-1, 0] = (((pn[1:-1, 1] + pn[1:-1, -1]) * dy ** 2 + (pn[2:, 0] + pn[0:-2, 0]) * dx ** 2)
                      / (2 * (dx ** 2 + dy ** 2)) - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 0])
        p[-1, :] = p[-2, :]
        p[0, :] = p[1, :]
    return p.sum()


def test_pressure_loop_matches_numpy():
    f = kiln.qjit(pressure)
    for n in [2, 3, 4, 9, 61]:
        p, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        want_p = p.copy()
        want = pressure(5, want_p, b, 0.1, 0.2)
        got_p = p.copy()
        np.testing.assert_allclose(f(5, got_p, b, 0.1, 0.2), want, rtol=1e-12)
        np.testing.assert_allclose(got_p, want_p, rtol=1e-12, atol=1e-12)
    # A view of a larger array as p: the writes land in the base.
    base = rng.standard_normal((12, 14))
    want_base = base.copy()
    b = rng.standard_normal((5, 6))
    pressure(3, want_base[2:7, 1:7], b, 0.1, 0.2)
    f(3, base[2:7, 1:7], b, 0.1, 0.2)
    np.testing.assert_allclose(base, want_base, rtol=1e-12, atol=1e-12)
    assert f.num_compiles <= 2


def time_loop(nit, u, p, b):
    """channel_flow's shape: a while loop on a value it computes (its first
    test is known when tracing: autograph peels the first iteration), the
    pressure loop inside it."""
    udiff = 1
    count = 0
    while udiff > .05:
        un = u.copy()
        pressure(nit, p, b, 0.1, 0.2)
        u[1:-1, 1:-1] = un[1:-1, 1:-1] + 0.1 * (p[1:-1, 2:] - p[1:-1, 0:-2]) + 1.0
        u[0, :] = 0
        udiff = (np.sum(u) - np.sum(un)) / np.sum(u)
        count += 1
    return count


def test_time_loop_matches_numpy_and_carries_only_what_it_needs():
    """Functionalization makes the loops carry every view of p written in
    them (slices, rows, columns and their reshapes); kiln-prune-carried-values
    leaves udiff, the step count, u and p in the time loop, the counter and
    p in the pressure loop."""
    f = kiln.qjit(time_loop)
    for n in [3, 4, 7, 30]:
        u, p, b = np.ones((n, n)), rng.standard_normal((n, n)), rng.standard_normal((n, n))
        want_u, want_p = u.copy(), p.copy()
        want = time_loop(2, want_u, want_p, b)
        got_u, got_p = u.copy(), p.copy()
        assert f(2, got_u, got_p, b) == want
        np.testing.assert_allclose(got_u, want_u, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got_p, want_p, rtol=1e-12, atol=1e-12)
    carried = lambda stage: [int(n) for n in re.findall(r"%\S+:(\d+) = stablehlo\.while",
                                                       kiln.get_compilation_stage(f, stage))]
    assert max(carried("functionalized")) > 4
    assert max(carried("stablehlo")) <= 4, carried("stablehlo")
