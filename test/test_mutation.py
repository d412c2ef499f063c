"""NumPy view and in-place write semantics, compiled by kiln and compared with NumPy.

Each test runs the same Python function twice: plainly on NumPy arrays (the
reference) and compiled with `@kiln.qjit` on copies of the same arrays, then
compares results and the final contents of every argument (writes to
arguments reach the caller). Sizes cover 0, 1, odd and even; sizes >= 2 share
one compiled binary.
"""

from __future__ import annotations

import numpy as np
import pytest

import kiln
import kiln.numpy as knp

_rng = np.random.default_rng(20261122)


def rand(shape, dtype=np.float64):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return _rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return _rng.integers(-5, 6, size=shape).astype(dtype)
    return _rng.uniform(-2.0, 2.0, size=shape).astype(dtype)


def assert_same(result, expected) -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(result, (tuple, list)) and len(result) == len(expected)
        for r, e in zip(result, expected):
            assert_same(r, e)
        return
    expected = np.asarray(expected)
    result = np.asarray(result)
    assert result.shape == expected.shape, f"shape {result.shape} != NumPy's {expected.shape}"
    assert result.dtype == expected.dtype, f"dtype {result.dtype} != NumPy's {expected.dtype}"
    if expected.dtype.kind == "f":
        tol = 2e-6 if expected.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(result, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(result, expected)


def check(fn, compiled, *args) -> None:
    """Run `fn` on NumPy copies and `compiled` on other copies; results and
    the final contents of every array argument must agree. Where NumPy
    raises an IndexError/ValueError, kiln must raise it too and leave the
    arguments untouched."""
    ref_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        expected = fn(*ref_args)
    except (IndexError, ValueError) as e:
        # NumPy raised (possibly after some writes): kiln raises the same
        # kind of error and leaves every argument as it was.
        with pytest.raises(type(e)):
            compiled(*run_args)
        for got, original in zip(run_args, args):
            if isinstance(original, np.ndarray):
                assert_same(got, original)
        return
    result = compiled(*run_args)
    if expected is not None:
        assert_same(result, expected)
    for got, want in zip(run_args, ref_args):
        if isinstance(want, np.ndarray):
            assert_same(got, want)


def check_sizes(fn, make_args, sizes=(0, 1, 2, 5, 8)) -> kiln.qjit:
    """`check` at each size; one compile serves every size >= 2."""
    compiled = kiln.qjit(fn)
    compiles_at_2 = None
    for n in sizes:
        check(fn, compiled, *make_args(n))
        if n == 2:
            compiles_at_2 = compiled.num_compiles
    if compiles_at_2 is not None:
        assert compiled.num_compiles == compiles_at_2, "sizes >= 2 must share one compiled binary"
    return compiled


# --------------------------------------------------------------------------
# Views of one base


def test_a_row_written_from_a_tuple_of_traced_scalars():
    """physics.rk4_pendulum in test/corpus: `traj[k] = theta, omega` makes an
    array of the tuple first, as NumPy does (ints into a float row included)."""

    def trajectory(x, steps):
        traj = np.zeros((steps + 1, 3))
        a, b = x[0], x[-1]
        traj[0] = a, b, 1
        for k in range(steps):
            a, b = a + 0.5 * b, b - 0.5 * a
            traj[k + 1] = (a, b, k)
        x[:2] = [b, a]
        return traj

    check_sizes(trajectory, lambda n: (rand(max(n, 2)), n))


def test_sibling_views_of_one_base():
    def f(x):
        a = x[0:3]
        b = x[2:5]
        a[2] = 100.0
        return b * 1.0, a * 1.0

    check_sizes(f, lambda n: (rand(n + 5),), sizes=(0, 1, 2, 7))


def test_sibling_views_see_each_other_row_and_column():
    def f(x):
        row = x[1]
        col = x[:, 1]
        row[:] = 7.0
        col += 1.0
        return row + 0.0, col + 0.0

    check_sizes(f, lambda n: (rand((n + 2, n + 2)),))


def test_view_of_a_view():
    def f(x):
        v = x[1:]
        w = v[1:]
        w[0] = -3.0
        w[-1] += 10.0
        return v * 1.0

    check_sizes(f, lambda n: (rand(n + 3),))


def test_view_of_a_view_2d():
    def f(x):
        v = x[1:, :]
        w = v[:, 1:]
        w[0, 0] = 42.0
        w *= 2.0
        return x + 0.0

    check_sizes(f, lambda n: (rand((n + 2, n + 3)),))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_write_through_transpose(dtype):
    def f(x):
        t = x.T
        t[0] = 3
        t[:, 1] += 2
        return t * 1

    check_sizes(f, lambda n: (rand((n + 2, n + 3), dtype),))


def test_write_through_swapaxes():
    def f(x):
        s = np.swapaxes(x, 0, 2)
        s[0, 1] = -1.0
        s[1] *= 3.0
        return s + 0.0

    check_sizes(f, lambda n: (rand((n + 2, 3, n + 2)),))


# --------------------------------------------------------------------------
# Strided and reversed views


@pytest.mark.parametrize("start", [0, 1])
def test_strided_write(start):
    def f(x):
        x[start::2] = x[start::2] * 10.0
        return x + 0.0

    check_sizes(f, lambda n: (rand(n),), sizes=(0, 1, 2, 5, 8))


def test_strided_view_write_2d():
    def f(x):
        v = x[1::2, ::2]
        v += 1.0
        v[0] = 0.0
        return v * 1.0

    check_sizes(f, lambda n: (rand((n + 2, n + 1)),))


def test_reversed_write():
    def f(x):
        r = x[::-1]
        r[0] = 100.0
        r[1:] += 1.0
        return r * 1.0

    check_sizes(f, lambda n: (rand(n + 1),))


def test_reverse_assign_from_base():
    def f(x):
        y = x.copy()
        y[:] = y[::-1]
        return y

    check_sizes(f, lambda n: (rand(n),))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_clip_out_on_strided_views(dtype):
    def f(x):
        v = x[1::2]
        np.clip(v, -1, 1, out=v)
        r = x[::-1][::3]
        np.clip(r, 0, 2, out=r)
        return x * 1

    check_sizes(f, lambda n: (rand(n, dtype),), sizes=(0, 1, 2, 7, 10))


# --------------------------------------------------------------------------
# Reshape, expand_dims and squeeze views


def test_reshape_view_of_contiguous_array_is_written():
    def f(x):
        r = x.reshape(2, -1)
        r[1] = 5.0
        r[0, 0] += 1.0
        return x + 0.0

    check_sizes(f, lambda n: (rand(2 * n),), sizes=(1, 2, 5, 8))


def test_reshape_of_noncontiguous_array_copies():
    def f(x):
        t = x.T
        r = t.reshape(-1)
        r[0] = 99.0
        return x + 0.0, r + 0.0

    check_sizes(f, lambda n: (rand((n + 2, 3)),))


def test_ravel_of_transpose_copies_and_flatten_always_copies():
    def f(x):
        r = x.T.ravel()
        r[0] = 5.0
        c = x.flatten()
        c[1] = 6.0
        v = x.ravel()
        v[2] = 7.0
        return x * 1.0, r * 1.0, c * 1.0

    check_sizes(f, lambda n: (rand((n + 2, 3)),))


def test_reshape_of_row_block_is_a_view():
    def f(x):
        r = x[1:3].reshape(-1)
        r[:] = 0.0
        return x * 1.0

    check_sizes(f, lambda n: (rand((n + 3, 4)),))


def test_write_after_reshape_of_strided_view_is_refused():
    # NumPy returns a view or a copy here depending on the strides and the
    # run-time sizes: kiln refuses what would tell them apart.
    @kiln.qjit
    def f(x):
        r = x[::2].reshape(-1)
        r[:] = 0.0
        return x

    with pytest.raises(ValueError, match="the write is to the reshaped array"):
        f(np.zeros((6, 2)))

    @kiln.qjit
    def g(x):
        c = x[:, 1:].reshape(-1)
        x[0] = 1.0
        return c

    with pytest.raises(ValueError, match="v.copy\\(\\).reshape"):
        g(np.zeros((4, 3)))

    @kiln.qjit
    def h(x):
        c = x[:, 1:].reshape(-1)

        @kiln.for_loop(0, 2, 1)
        def loop(i, total):
            s = c.sum()  # read before the write, but again after it in the next iteration
            x[i] = total
            return total + s

        return loop(0.0)

    with pytest.raises(ValueError, match="read in the loop or branch that writes"):
        h(np.zeros((4, 3)))


def test_reshape_of_strided_view_read_before_writes_is_fine():
    def f(x):
        r = x[:, 1:].reshape(-1)
        total = r.sum()
        flat = np.concatenate([x[::2]], axis=None)
        c = x[:, 1:].copy().reshape(-1)
        x[0] = 1.0
        c[0] = 2.0
        return total, flat, c, x * 1.0

    check_sizes(f, lambda n: (rand((n + 2, 3)),))


def test_new_axis_view_written():
    def f(x):
        e = x[..., None]
        e[0, 0] = 11.0
        e[1:, 0] *= 2.0
        return x + 0.0

    check_sizes(f, lambda n: (rand(n + 2),))


def test_expand_dims_and_squeeze_views_written():
    def f(x):
        e = np.expand_dims(x, 0)
        e[0, 1] = -7.0
        s = np.squeeze(x[:, 1:2], axis=1)
        s += 1.0
        return x + 0.0

    check_sizes(f, lambda n: (rand((n + 2, 3)),))


# --------------------------------------------------------------------------
# Writes inside control flow


def test_write_in_cond_branch_seen_through_older_view():
    def f(x, flag):
        v = x[1:]

        def branch():
            x[1] = 50.0

        if isinstance(x, np.ndarray):
            if flag > 0:
                branch()
        else:
            kiln.cond(flag > 0)(branch)()
        return v * 1.0

    compiled = kiln.qjit(f)
    for n in (2, 3, 6):
        for flag in (0, 1):
            check(f, compiled, rand(n), flag)
    assert compiled.num_compiles == 1


def test_write_in_both_cond_branches_through_views():
    def f(x, flag):
        row = x[0]
        col = x[:, -1]

        def left():
            row[:] = 1.0

        def right():
            col[...] *= -1.0

        if isinstance(x, np.ndarray):
            (left if flag > 0 else right)()
        else:
            kiln.cond(flag > 0)(left).otherwise(right)()
        return row + col[0], x * 1.0

    compiled = kiln.qjit(f)
    for n in (2, 4):
        for flag in (0, 1):
            check(f, compiled, rand((n, n + 1)), flag)


def test_for_loop_row_update():
    def f(b):
        def body(i):
            b[i] = b[i] + 1

        if isinstance(b, np.ndarray):
            for i in range(b.shape[0]):
                body(i)
        else:
            kiln.for_loop(0, b.shape[0], 1)(body)()
        return b * 2

    for dtype in (np.float64, np.int32):
        check_sizes(f, lambda n: (rand((n, 3), dtype),))


def test_for_loop_row_update_through_outer_view():
    def f(x):
        b = x[:, 1:]

        def body(i):
            b[i] += i

        if isinstance(x, np.ndarray):
            for i in range(b.shape[0]):
                body(i)
        else:
            kiln.for_loop(0, b.shape[0], 1)(body)()
        return b + 0.0

    check_sizes(f, lambda n: (rand((n, 3)),))


def test_loop_writes_through_a_view_made_before_it_reach_the_base():
    # The view is made once, before the loop, and only its base is read
    # afterwards: every iteration's write must survive, not only the last.
    def f(x):
        b = x.copy()
        v = b[::-1]

        def body(i):
            v[i] = 10.0 * i

        if isinstance(x, np.ndarray):
            for i in range(3):
                body(i)
        else:
            kiln.for_loop(0, 3, 1)(body)()
        return b

    check_sizes(f, lambda n: (rand(n + 3),))


def test_data_dependent_while_loop_writes_from_previous_element():
    def f(x, limit):
        out = np.zeros_like(x) if isinstance(x, np.ndarray) else knp.zeros_like(x)
        out[0] = x[0]

        def cond_fn(i):
            return (i < x.shape[0]) & (out[i - 1] < limit)

        def body(i):
            out[i] = out[i - 1] + x[i]
            return i + 1

        if isinstance(x, np.ndarray):
            i = 1
            while i < x.shape[0] and out[i - 1] < limit:
                i = body(i)
        else:
            i = kiln.while_loop(cond_fn)(body)(1)
        return out, i

    compiled = kiln.qjit(f)
    for n in (1, 2, 7, 20):
        x = np.abs(rand(n)) + 0.1
        for limit in (0.5, 3.0, 100.0):
            check(f, compiled, x, limit)


def test_nested_loops_write():
    def f(a):
        def outer(i):
            def inner(j):
                a[i, j] = a[i, j] + i * 10 + j

            if isinstance(a, np.ndarray):
                for j in range(a.shape[1]):
                    inner(j)
            else:
                kiln.for_loop(0, a.shape[1], 1)(inner)()

        if isinstance(a, np.ndarray):
            for i in range(a.shape[0]):
                outer(i)
        else:
            kiln.for_loop(0, a.shape[0], 1)(outer)()
        return a * 1.0

    check_sizes(f, lambda n: (rand((n, n + 1)),))


def test_write_to_loop_carried_array_that_the_body_returns_reaches_the_initial_array():
    # The body returns the carried array itself: in NumPy every iteration
    # writes the array passed in, and the loop returns that same array.
    def f(x):
        def body(i, v):
            v[i] = 0.0
            return v

        if isinstance(x, np.ndarray):
            v = x
            for i in range(3):
                v = body(i, v)
            return v.sum()
        return kiln.for_loop(0, 3, 1)(body)(x).sum()

    check_sizes(f, lambda n: (rand(n + 3),))


def test_write_to_loop_carried_array_replaced_by_the_body_is_refused():
    @kiln.qjit
    def f(x):
        @kiln.for_loop(0, 3, 1)
        def body(i, v):
            v[i] = 0.0
            return v * 2.0

        return body(x)

    x = np.ones(5)
    with pytest.raises(ValueError, match=r"for_loop: carried value 0 is written in place .* returns another array"):
        f(x)
    assert_same(x, np.ones(5))


def test_loop_carried_value_and_outer_write():
    def f(x):
        def body(i, acc):
            x[i] = acc
            return acc + x[i] * 0.5

        if isinstance(x, np.ndarray):
            acc = 1.0
            for i in range(x.shape[0]):
                acc = body(i, acc)
        else:
            acc = kiln.for_loop(0, x.shape[0], 1)(body)(1.0)
        return acc

    check_sizes(f, lambda n: (rand(n),))


# --------------------------------------------------------------------------
# Rebinding vs mutation; overlapping source and destination


def test_rebinding_does_not_write():
    def f(x):
        y = x
        x = x * 2
        return x, y * 1

    check_sizes(f, lambda n: (rand(n),))


def test_inplace_operator_writes_through_alias():
    def f(x):
        y = x
        x *= 2
        x -= 1
        x /= 4
        return x + 0.0, y + 0.0

    check_sizes(f, lambda n: (rand(n),))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_inplace_operators(dtype):
    def f(x, y):
        x += y
        x *= 3
        x //= 2
        x %= 7
        x |= 1
        x ^= y
        x <<= 1
        x >>= 1
        x &= 0xFF
        return x * 1

    check_sizes(f, lambda n: (rand(n, dtype), rand(n, dtype)))


def test_bool_inplace_operators():
    def f(x, y):
        x &= y
        v = x[1:]
        v |= y[:-1]
        x ^= True
        return x.copy()

    check_sizes(f, lambda n: (rand(n, np.bool_), rand(n, np.bool_)), sizes=(1, 2, 5, 8))


def test_overlapping_shift_assign():
    def f(x):
        x[1:] = x[:-1]
        return x * 1.0

    check_sizes(f, lambda n: (rand(n),))


def test_overlapping_inplace_add():
    def f(y):
        y[1:] += y[:-1]
        return y * 1.0

    check_sizes(f, lambda n: (rand(n),))


def test_overlapping_reversed_copy():
    def f(x):
        x[:] = x[::-1]
        x[0::2] = x[1::2]
        return x * 1.0

    check_sizes(f, lambda n: (rand(2 * n),))


def test_transpose_assign_to_itself():
    def f(x):
        x[:] = x.T
        return x * 1.0

    check_sizes(f, lambda n: (rand((n, n)),))


# --------------------------------------------------------------------------
# Writes to arguments reach the caller


def test_write_to_argument_seen_by_caller():
    @kiln.qjit
    def f(x):
        x[0] = -1

    for n in (1, 2, 5):
        x = np.arange(n, dtype=np.int64)
        assert f(x) is None
        expected = np.arange(n)
        expected[0] = -1
        assert_same(x, expected)
    assert f.num_compiles == 2


def test_write_to_argument_through_view_and_in_loop():
    def f(x, y):
        v = x[:, ::-1]
        v[0] = 0.0

        def body(i):
            y[i] = y[i] * 2 + x[i, 0]

        if isinstance(x, np.ndarray):
            for i in range(y.shape[0]):
                body(i)
        else:
            kiln.for_loop(0, y.shape[0], 1)(body)()

    check_sizes(f, lambda n: (rand((n + 1, 3)), rand(n)), sizes=(0, 1, 2, 5))


def test_write_to_noncontiguous_argument_reaches_caller():
    @kiln.qjit
    def f(x):
        x += 1.0

    base = rand((6, 4))
    x = base[::2, ::-1]
    expected = base.copy()
    expected[::2, ::-1] += 1.0
    f(x)
    assert_same(base, expected)


def test_read_only_argument_written_raises_and_is_untouched():
    @kiln.qjit
    def f(x):
        x[0] = 1.0
        return x.sum()

    x = np.zeros(4)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(x)
    assert_same(x, np.zeros(4))


def test_overlapping_arguments_one_written_raises():
    @kiln.qjit
    def f(x, y):
        x[:] = y + 1.0

    base = np.zeros(6)
    with pytest.raises(ValueError, match="overlaps argument 1"):
        f(base[:4], base[2:])
    assert_same(base, np.zeros(6))
    with pytest.raises(ValueError, match="overlaps"):
        f(base, base)
    # Disjoint views of one buffer are fine.
    f(base[:3], base[3:])
    assert_same(base, np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]))


def test_failing_runtime_check_leaves_arguments_untouched():
    @kiln.qjit
    def f(x, y, i):
        x[:] = 5.0
        y[0] = 7.0
        y[i] = 1.0

    x, y = np.zeros(3), np.zeros(4)
    with pytest.raises(IndexError):
        f(x, y, 10)
    assert_same(x, np.zeros(3))
    assert_same(y, np.zeros(4))
    f(x, y, -1)
    assert_same(x, np.full(3, 5.0))
    assert_same(y, np.array([7.0, 0.0, 0.0, 1.0]))


def test_failing_check_inside_loop_leaves_arguments_untouched():
    @kiln.qjit
    def f(x, k):
        @kiln.for_loop(0, k, 1)
        def body(i):
            x[i] = i

        body()

    x = np.zeros(3)
    with pytest.raises(IndexError):
        f(x, 5)
    assert_same(x, np.zeros(3))


# --------------------------------------------------------------------------
# Assignment: broadcasting, casting, copies


def test_int_array_assigned_float_values_truncates():
    def f(a, v):
        a[:] = v
        a[0] = -2.7
        return a * 1

    for dtype in (np.int32, np.int64):
        check_sizes(f, lambda n: (np.zeros(n, dtype), rand(n) * 3))


def test_assign_scalar_to_column_and_broadcast_row():
    def f(x, row):
        x[:, 0] = 3.5
        x[1:] = row
        x[0, 1:] = row[1:]
        return x + 0.0

    check_sizes(f, lambda n: (rand((n + 1, n + 2)), rand(n + 2)))


def test_assign_float32_into_float64_and_back():
    def f(x, y):
        x[:] = y
        y[:] = x * 3.0
        return x * 1, y * 1

    check_sizes(f, lambda n: (rand(n, np.float64), rand(n, np.float32)))


def test_inplace_same_kind_casting_refused():
    @kiln.qjit
    def f(a, b):
        a += b

    with pytest.raises(TypeError, match="cannot cast"):
        f(np.zeros(3, np.int64), np.ones(3))


def test_copy_does_not_alias():
    def f(x):
        y = x[0:2].copy()
        z = np.array(x) if isinstance(x, np.ndarray) else knp.array(x)
        w = np.copy(x)
        x[0] = 9.0
        x[1] += 1.0
        return y, z, w

    check_sizes(f, lambda n: (rand(n + 2),))


def test_astype_copies():
    def f(x):
        y = x.astype(x.dtype)
        x[0] = 4.0
        return y

    check_sizes(f, lambda n: (rand(n + 1),))


def test_duplicate_indices_add_counts_once():
    def f(x, idx):
        x[idx] += 1
        return x * 1

    for dtype in (np.float64, np.int32):
        check_sizes(f, lambda n: (rand(n + 3, dtype), np.array([0, 2, 0, -1, 2, 0])))


def test_integer_array_assign_last_write_wins():
    def f(x, idx, v):
        x[idx] = v
        return x * 1.0

    check_sizes(f, lambda n: (rand(n + 3), np.array([1, 0, 1, 2]), np.array([10.0, 20.0, 30.0, 40.0])))


def test_integer_array_assign_rows():
    def f(x, idx):
        x[idx, 1:] = 0.0
        x[:, idx[:1]] = -1.0
        return x * 1.0

    check_sizes(f, lambda n: (rand((n + 3, 4)), np.array([2, 0])))


def test_integer_array_2d_index_assign():
    def f(x, idx):
        x[idx] = 7.0
        x[idx + 1] += np.ones((2, 2))
        return x * 1.0

    check_sizes(f, lambda n: (rand(n + 6), np.array([[0, 1], [3, 1]])))


def test_boolean_mask_assign():
    def f(x):
        x[x > 0] = 0.0
        return x * 1.0

    check_sizes(f, lambda n: (rand(n),))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_fill(dtype):
    def f(x):
        x[1:].fill(1)
        return x * 1

    check_sizes(f, lambda n: (rand(n + 1, dtype),))


def test_copyto():
    def f(dst, src):
        np.copyto(dst, src)
        np.copyto(dst[::2], 0.5)
        return dst * 1.0

    check_sizes(f, lambda n: (rand((n, 3)), rand(3)))


def test_copyto_where():
    def f(dst, src):
        np.copyto(dst, src, where=src > 0)
        return dst * 1.0

    check_sizes(f, lambda n: (rand(n), rand(n)))


def test_ufunc_out_argument():
    def f(x, y):
        np.add(x, y, out=x)
        np.multiply(x[1:], 2.0, out=y[:-1])
        return x + y

    check_sizes(f, lambda n: (rand(n), rand(n)))


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_zero_d_inplace_rebinds(dtype):
    def f(x):
        s = x.sum()
        t = s
        s += 1
        s *= 2
        return s, t

    check_sizes(f, lambda n: (rand(n, dtype),))


def test_zero_d_element_write():
    def f(x):
        e = x[1]
        e += 5.0
        x[0] = e
        return x * 1.0, e

    check_sizes(f, lambda n: (rand(n + 2),))


# --------------------------------------------------------------------------
# Many writes to one array (the functionalization passes are linear in them:
# each write must still see the versions of every write before it)


def many_writes(x, y):
    """About 90 writes to `x`: columns, strided rows, a stencil, through two
    views made before them and read after, in loops and in branches.
    Traced with autograph off, so the Python loops unroll."""
    top = x[:2]
    col = x[:, 1]
    for k in range(12):
        x[:, k % 5] = x[:, (k + 1) % 5] * 0.5 + y
        x[k % 2::2] += 1.0
        col[...] = col * 0.9 - top.sum()

        def body(i):
            x[i] = x[i] * 0.5 + col[i]
            x[i, k % 5] += 1.0

        kiln.for_loop(0, x.shape[0], 1 + k % 2)(body)()

        def branch():
            x[::-1, 0] += 1.0
            top[...] *= 2.0

        kiln.cond(x.sum() > k)(branch)()
        x[1:-1, 1:-1] = x[1:-1, 1:-1] + 0.1 * (x[:-2, 1:-1] - x[2:, 1:-1])
    return top + 0.0, col * 1.0, x.sum()


def test_many_writes_to_one_array_through_views_loops_and_branches():
    compiled = kiln.qjit(many_writes, autograph=False)
    for n in (0, 1, 2, 5, 9, 101):
        check(many_writes, compiled, rand((n, 5)), rand(n))
    assert compiled.num_compiles <= 3, "sizes >= 2 must share one compiled binary"


# --------------------------------------------------------------------------
# Stages


@pytest.mark.compiled_only
def test_stablehlo_stage_has_no_tensorssa_or_immut():
    @kiln.qjit
    def f(x, flag):
        v = x[::2]

        @kiln.cond(flag > 0)
        def branch():
            v[0] = 1.0

        branch()

        @kiln.for_loop(0, x.shape[0], 1)
        def loop(i):
            x[i] = x[i] + 1

        loop()
        x.T[0] *= 2.0
        return v * 1.0

    f(np.zeros((4, 3)), 1)
    assert "tensorssa." in kiln.get_compilation_stage(f, "mlir")
    assert "immut." in kiln.get_compilation_stage(f, "functionalized")
    assert "tensorssa." not in kiln.get_compilation_stage(f, "functionalized")
    text = kiln.get_compilation_stage(f, "stablehlo")
    assert "tensorssa." not in text and "immut." not in text


# --------------------------------------------------------------------------
# Integer-array indices mixed with integers, slices and None (NumPy puts the
# index dims first when a slice or None separates the advanced indices)


@pytest.mark.parametrize("index", [
    lambda i: (0, slice(None), i),
    lambda i: (slice(None), 0, i),
    lambda i: (i, slice(None), 0),
    lambda i: (0, None, i),
    lambda i: (i, None),
    lambda i: (Ellipsis, i),
    lambda i: (None, 1, i),
])
def test_setitem_and_getitem_with_separated_advanced_indices(index):
    def f(x, i, v):
        got = x[index(i)] * 1.0
        x[index(i)] = v
        return got, x * 1.0

    def make(n):
        x = rand((3, n + 3, 4))
        i = np.array([[0, 2], [1, -1]]) if n % 2 else np.array([2, 0, 1])
        shape = np.zeros((3, n + 3, 4))[index(i)].shape
        return x, i, rand(shape)

    check_sizes(f, make, sizes=(1, 2, 4))


def test_setitem_separated_advanced_indices_broadcast_value():
    def f(x, i, v):
        x[0, :, i] = v
        x[1, :, i] += 1.0
        return x * 1.0

    check_sizes(f, lambda n: (rand((2, n + 2, 4)), np.array([3, 0]), rand((2, 1))))


def test_setitem_with_several_integer_arrays():
    def f(x, i, j, v):
        x[i, j] = v
        x[i, j] += 1.0
        y = x[1:, ::-1]
        y[:, i[:1], 0] = -5.0
        return x * 1.0, x[i, j]

    check_sizes(f, lambda n: (rand((n + 3, 4)), np.array([[0], [2], [-1]]), np.array([1, 3]), rand((3, 2))),
                sizes=(1, 2, 5))


def test_setitem_with_separated_integer_arrays_is_refused():
    @kiln.qjit
    def f(x, i, j):
        x[i, :, j] = 0.0

    with pytest.raises(IndexError, match="several integer arrays: kiln supports them on adjacent axes"):
        f(np.zeros((3, 3, 3)), np.array([0]), np.array([1]))


def test_slice_write_of_traced_length_into_size_one_array():
    # The size-1 argument is specialized (static), the written slice is not.
    def f(x, i):
        x[0:i] = 5.0
        x[i:] += 1.0
        x[::-1][i:] = 2.0
        return x * 1.0

    compiled = kiln.qjit(f)
    for i in (0, 1):
        check(f, compiled, rand(1), i)
        check(f, compiled, rand((1,), np.float32), i)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_views_loops_and_fancy_writes_for_each_dtype(dtype):
    one = np.ones((), dtype)[()]

    def f(x, idx):
        t = x.T
        t[0] = one
        v = x[1::2, ::-1]
        v[:, 0] = x[0, 0]
        x[idx, 1] = x[0, 0]

        def body(i):
            x[i, -1] = x[i, 0]

        if isinstance(x, np.ndarray):
            for i in range(x.shape[0]):
                body(i)
        else:
            kiln.for_loop(0, x.shape[0], 1)(body)()
        return x.copy(), v.copy()

    check_sizes(f, lambda n: (rand((n + 2, n + 3), dtype), np.array([1, -1, 1])))


def test_unit_argument_dims_not_specialized_make_ravel_of_transpose_ambiguous():
    # Without size-1 specialization x.T may be contiguous at run time (one
    # row), where NumPy's ravel returns a view: writes to it are refused.
    @kiln.qjit(specialize_unit_dims=False)
    def f(x):
        r = x.T.ravel()
        r[0] = 1.0
        return r

    with pytest.raises(ValueError, match="the write is to the reshaped array"):
        f(np.zeros((1, 3)))

    @kiln.qjit
    def g(x):
        r = x.T.ravel()
        r[0] = 1.0
        return r, x

    for shape in ((1, 3), (2, 3)):
        x = np.arange(6.0)[: shape[0] * 3].reshape(shape)
        expected_r = x.T.ravel()
        expected_r[0] = 1.0
        r, x_out = g(x)
        assert_same(r, expected_r)
        assert_same(x_out, x)


def test_value_dim_of_one_at_run_time_broadcasts():
    # x[0, :k] has a computed size; when it is 1 at run time NumPy broadcasts it.
    def f(x, k, idx):
        x[1:, 0] = x[0, :k]
        x[idx, 1:] = x[:k, 0]
        v1 = x[:, -2::2]
        v1[...] = x[:k, 1:2] * 0.5
        return x * 1.0

    compiled = kiln.qjit(f)
    for n, k in ((3, 1), (3, 2), (4, 1), (5, 4), (6, 3)):
        check(f, compiled, rand((n, 5)), k, np.array([0, 2]))
    assert compiled.num_compiles == 1


# --------------------------------------------------------------------------
# Random programs: chains of views (slices with steps, transposes, reversals,
# rows, new axes) and writes (fill, +=, copies between views, loops, conds,
# integer-array +=), run by NumPy (kiln.for_loop / kiln.cond run eagerly
# outside a trace) and compiled.


def _random_program(rng: np.random.Generator, nops: int = 7) -> str:
    lines = ["def f(x):"]
    views = [("x", 2)]
    count = 0
    for _ in range(nops):
        op = rng.choice(["view", "view", "fill", "iadd", "copy", "loop", "cond", "fancy"])
        name, ndim = views[rng.integers(len(views))]
        count += 1
        if op == "view":
            kind = rng.choice(["slice", "T", "rev", "row", "none"])
            new = f"v{count}"
            if kind == "slice":
                parts = []
                for _axis in range(ndim):
                    start = rng.choice(["", "0", "1", "-2"])
                    stop = rng.choice(["", "-1", "3"])
                    step = rng.choice(["", "1", "2", "-1", "-2"])
                    parts.append(f"{start}:{stop}:{step}")
                lines.append(f"    {new} = {name}[{', '.join(parts)}]")
            elif kind == "row" and ndim == 2:
                lines.append(f"    {new} = {name}[{rng.choice(['0', '-1'])}]")
                ndim = 1
            elif kind == "none":
                lines.append(f"    {new} = {name}[None]")
                ndim += 1
            else:
                lines.append(f"    {new} = {name}{'.T' if kind == 'T' else '[::-1]'}")
            views.append((new, ndim))
        elif op == "fill":
            lines.append(f"    {name}[...] = {rng.choice(['1.5', '-2.0'])}")
        elif op == "iadd":
            lines.append(f"    {name} += {rng.choice(['1.0', '3.0'])}")
        elif op == "copy":
            other, other_ndim = views[rng.integers(len(views))]
            if other_ndim <= ndim:
                lines.append(f"    {name}[...] = {other} * 0.5")
        elif op == "loop":
            lines += [f"    def body{count}(i):",
                      f"        {name}[i] = {name}[i] * 2.0 + i",
                      f"    kiln.for_loop(0, {name}.shape[0], 2)(body{count})()"]
        elif op == "cond":
            lines += [f"    def branch{count}():",
                      f"        {name}[...] = {name} - 1.0",
                      f"    kiln.cond({name}.sum() > 0)(branch{count})()"]
        else:
            lines.append(f"    {name}[np.array([0, -1, 0])] += 3.0")
    lines.append("    return (" + ", ".join(f"{v} + 0.0" for v, _ in views) + ",)")
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(6))
def test_random_view_and_write_programs(seed):
    rng = np.random.default_rng(seed)
    for _ in range(3):
        source = _random_program(rng)
        namespace = {"np": np, "kiln": kiln}
        exec(source, namespace)
        fn = namespace["f"]
        compiled = kiln.qjit(fn)
        for shape in ((5, 6), (4, 4), (3, 7)):
            try:
                check(fn, compiled, rand(shape))
            except AssertionError as e:
                raise AssertionError(f"{e}\nprogram:\n{source}") from None


def test_writes_reach_pytree_arguments_next_to_static_ones():
    @kiln.qjit(static_argnums=(0,))
    def f(k, d, y):
        d["a"][k] = 1.0
        d["b"][1:] = 2.0
        y[k] = d["a"].sum()
        return y, y

    d = {"a": np.zeros(3), "b": np.zeros(4)}
    y = np.zeros(3)
    r1, r2 = f(2, d, y)
    assert_same(d["a"], np.array([0.0, 0.0, 1.0]))
    assert_same(d["b"], np.array([0.0, 2.0, 2.0, 2.0]))
    assert_same(y, np.array([0.0, 0.0, 1.0]))
    assert_same(r1, y)
    assert_same(r2, y)
    f(0, d, y)
    assert_same(y, np.array([2.0, 0.0, 1.0]))


def test_writes_in_a_three_way_cond_through_views():
    def f(x, k):
        v = x[1:]

        def a():
            v[0] = 1.0

        def b():
            x[0] = 2.0

        def c():
            v[-1] += 3.0

        if isinstance(x, np.ndarray):
            (a if k == 0 else b if k == 1 else c)()
        else:
            kiln.cond(k == 0)(a).else_if(k == 1)(b).otherwise(c)()
        return v * 1.0

    compiled = kiln.qjit(f)
    for n in (2, 5):
        for k in (0, 1, 2):
            check(f, compiled, rand(n), k)
    assert compiled.num_compiles == 1


def _twenty_four_slice_writes(a, x):
    """Slice writes to one array, each reading what earlier ones wrote."""
    a[0, :] = a[1, :] * 0.5 + x
    a[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] - a[2:, 1:-1])
    a[:, 2] += a[:, 3] - 1.0
    a[3, :] = a[0, :] * 0.5 + x
    a[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] - a[2:, 1:-1])
    a[:, 1] += a[:, 2] - 1.0
    a[2, :] = a[3, :] * 0.5 + x
    a[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] - a[2:, 1:-1])
    a[:, 0] += a[:, 1] - 1.0
    a[1, :] = a[2, :] * 0.5 + x
    a[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] - a[2:, 1:-1])
    a[:, 3] += a[:, 0] - 1.0
    a[0, :] = a[1, :] * 0.5 + x
    a[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] - a[2:, 1:-1])
    a[:, 2] += a[:, 3] - 1.0
    a[3, :] = a[0, :] * 0.5 + x
    a[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] - a[2:, 1:-1])
    a[:, 1] += a[:, 2] - 1.0
    a[2, :] = a[3, :] * 0.5 + x
    a[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] - a[2:, 1:-1])
    a[:, 0] += a[:, 1] - 1.0
    a[1, :] = a[2, :] * 0.5 + x
    a[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] - a[2:, 1:-1])
    a[:, 3] += a[:, 0] - 1.0
    return a.sum()


def test_a_long_chain_of_slice_writes():
    """24 slice writes to one argument: results and the argument's final
    contents are NumPy's (too few columns: the same IndexError), with the
    chain of updates cut before bufferization (kiln-split-write-chains)."""
    check_sizes(_twenty_four_slice_writes, lambda n: (rand((7, n)), rand(n)), sizes=(0, 1, 5, 8, 1001))


@pytest.mark.compiled_only
def test_a_long_chain_of_slice_writes_is_cut():
    """kiln-split-write-chains cuts that chain of 24 updates (every 8) in the
    `linalg` stage kiln makes for it."""
    from kiln.compiler.mlir import ir
    from kiln.compiler.pipeline import run_passes
    from kiln.dialects import new_context

    compiled = kiln.qjit(_twenty_four_slice_writes)
    compiled(rand((7, 5)), rand(5))
    linalg = compiled.stage("linalg")
    with new_context() as ctx:
        module = ir.Module.parse(linalg, ctx)
        run_passes(module, ["kiln-split-write-chains"])
        cuts = str(module).count("restrict writable") - linalg.count("restrict writable")
    assert cuts >= 2
