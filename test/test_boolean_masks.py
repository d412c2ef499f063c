"""Boolean masks (issue 14 item 7) against NumPy: `x[mask]` reads whose size
is the number of true elements (a dim known only at run time), writes
`x[mask] = v` and `x[mask] op= v` (to arguments and views: the caller sees
them), and the functions of the true positions (`np.nonzero`,
`np.where(cond)`, `np.flatnonzero`, `np.argwhere`, `np.count_nonzero`,
`np.extract`, `np.compress`).

Every test runs the function on NumPy arrays (the reference) and through
`kiln.qjit` on copies, and compares the results and the final contents of
every argument, at sizes 0, 1, odd and large, with random, all-false and
all-true masks. The module runs both compiled and through the reference
interpreter (`execution` in conftest.py).
"""

from __future__ import annotations

import copy
import re
import warnings

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 7, 1000)
_rng = np.random.default_rng(20261125)


def rand(shape, dtype=np.float64):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return _rng.integers(-5, 6, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (_rng.uniform(-2, 2, size=shape) + 1j * _rng.uniform(-2, 2, size=shape)).astype(dtype)
    return _rng.uniform(-2.0, 2.0, size=shape).astype(dtype)


def masks(shape):
    """A random mask, an all-false and an all-true one."""
    return [_rng.random(shape) < 0.5, np.zeros(shape, dtype=bool), np.ones(shape, dtype=bool)]


def assert_same(result, expected) -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(result, (tuple, list)) and len(result) == len(expected)
        for r, e in zip(result, expected):
            assert_same(r, e)
        return
    expected, result = np.asarray(expected), np.asarray(result)
    assert result.shape == expected.shape, f"shape {result.shape} != NumPy's {expected.shape}"
    assert result.dtype == expected.dtype, f"dtype {result.dtype} != NumPy's {expected.dtype}"
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12, equal_nan=True)
    else:
        np.testing.assert_array_equal(result, expected)


def same_as_numpy(compiled, fn, *args) -> None:
    """Results and every argument's final contents agree with NumPy's."""
    numpy_args, kiln_args = copy.deepcopy(args), copy.deepcopy(args)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = fn(*numpy_args)
    result = compiled(*kiln_args)
    if expected is not None:
        assert_same(result, expected)
    for mine, theirs in zip(kiln_args, numpy_args):
        if isinstance(theirs, np.ndarray):
            assert_same(mine, theirs)


# --------------------------------------------------------------------------
# Reading through a mask


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex128])
def test_select_where_positive(dtype):
    def f(x):
        return x[np.real(x) > 0] if np.dtype(dtype).kind == "c" else x[x > 0]

    compiled = kiln.qjit(f)
    for n in SIZES:
        same_as_numpy(compiled, f, rand(n, dtype))


def test_sum_of_selection():
    def f(x):
        return x[x > 0].sum(), x[x < -10.0].sum()

    compiled = kiln.qjit(f)
    for n in SIZES:
        same_as_numpy(compiled, f, rand(n))


def test_mask_argument_all_false_and_all_true():
    def f(x, m):
        return x[m], x[m].shape[0]

    compiled = kiln.qjit(f)
    for n in SIZES:
        for m in masks(n):
            same_as_numpy(compiled, f, rand(n), m)


def test_two_dimensional_mask_of_the_whole_array():
    def f(x, m):
        return x[m] * 2.0

    compiled = kiln.qjit(f)
    for shape in [(0, 3), (1, 1), (3, 5), (40, 25)]:
        for m in masks(shape):
            same_as_numpy(compiled, f, rand(shape), m)


def test_one_dimensional_mask_selects_rows():
    def f(x, m):
        return x[m], x[m, 1], x[m, ::2], x[m, ...]

    compiled = kiln.qjit(f)
    for rows in SIZES:
        for m in masks(rows):
            same_as_numpy(compiled, f, rand((rows, 3)), m)


def test_mask_on_a_later_axis():
    def f(x, m):
        return x[:, m], x[..., m], x[1:, m]

    compiled = kiln.qjit(f)
    for cols in SIZES:
        for m in masks(cols):
            same_as_numpy(compiled, f, rand((4, cols)), m)


def test_mask_over_the_first_two_axes_of_a_3d_array():
    def f(x, m):
        return x[m], x[m, 0]

    compiled = kiln.qjit(f)
    for shape in [(0, 2), (1, 1), (3, 5)]:
        for m in masks(shape):
            same_as_numpy(compiled, f, rand(shape + (2,)), m)


def test_mask_of_a_non_contiguous_view():
    def f(x):
        v = x[:, ::2]
        return v[v > 0], x.T[x.T < 0]

    compiled = kiln.qjit(f)
    for shape in [(0, 4), (1, 1), (5, 7), (30, 41)]:
        same_as_numpy(compiled, f, rand(shape))


def test_concrete_masks_have_static_counts():
    def f(x, v):
        picked = x[np.array([True, False, True, True])], x[[False, True, False, False]], x[np.zeros(4, bool)]
        x[[True, False, True, False]] = 5.0
        x[np.array([False, True, False, True])] = v[:2]
        x[np.zeros(4, bool)] = v[:0]
        x[np.zeros(4, bool)] += 1.0
        return picked

    compiled = kiln.qjit(f)
    same_as_numpy(compiled, f, rand(4), rand(3))


def test_selection_in_arithmetic_with_the_same_mask():
    """mandelbrot1's `Z[I] ** 2 + C[I]`: selections by one mask combine."""
    def f(z, c):
        inside = np.abs(z) < 1.0
        return z[inside] ** 2 + c[inside]

    compiled = kiln.qjit(f)
    for n in SIZES:
        same_as_numpy(compiled, f, rand(n, np.complex128), rand(n, np.complex128))


def test_selections_by_different_masks_must_agree_in_size():
    def f(x):
        return x[x > 0] + x[x < 0]

    compiled = kiln.qjit(f)
    same_as_numpy(compiled, f, np.array([1.0, -2.0, 3.0, -4.0]))
    # One selected element broadcasts, as in NumPy (a size that is 1 at run time).
    same_as_numpy(compiled, f, np.array([1.0, -2.0, 3.0]))
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(\?,\) \(\?,\) "
                                         r"\(axis -1: sizes (2 and 3|3 and 2)\)"):
        compiled(np.array([1.0, -2.0, 3.0, -4.0, 5.0]))


def test_mask_shape_mismatch_is_numpys_index_error_at_run_time():
    compiled = kiln.qjit(lambda x, m: x[m])
    message = ("boolean index did not match indexed array along axis 0; size of axis is 3 but size of "
               "corresponding boolean axis is 4")
    with pytest.raises(IndexError, match=re.escape(message)):
        compiled(np.zeros(3), np.ones(4, dtype=bool))
    with pytest.raises(IndexError, match=re.escape(message)):
        np.zeros(3)[np.ones(4, dtype=bool)]


def test_mask_shape_mismatch_is_numpys_index_error_at_trace_time():
    compiled = kiln.qjit(lambda x: x[:, np.ones(2, dtype=bool)])
    with pytest.raises(IndexError, match="along axis 1; size of axis is 3 but size of corresponding boolean axis is 2"):
        compiled(np.zeros((2, 3)))


def test_two_masks_in_one_index_are_refused():
    compiled = kiln.qjit(lambda x, m: x[m, m])
    with pytest.raises(IndexError, match="one boolean array per index"):
        compiled(np.zeros((3, 3)), np.ones(3, dtype=bool))


# --------------------------------------------------------------------------
# Writing through a mask


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_write_a_scalar_to_an_argument(dtype):
    def f(x):
        x[x > 0] = 7
        x[x < -3] = -1

    compiled = kiln.qjit(f)
    for n in SIZES:
        same_as_numpy(compiled, f, rand(n, dtype))


def test_write_an_array_of_the_selected_size():
    def f(x, m, v):
        x[m] = v[: m.sum()]

    compiled = kiln.qjit(f)
    for n in SIZES:
        for m in masks(n):
            same_as_numpy(compiled, f, rand(n), m, rand(n))


def test_write_a_selection_back():
    """nbody: `inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)`, two masks
    computed apart, whose counts agree at run time."""
    def f(r):
        r[r > 0] = r[r > 0] ** (-1.5)
        return r.sum()

    compiled = kiln.qjit(f)
    for shape in [(0, 0), (1, 1), (5, 5), (40, 40)]:
        same_as_numpy(compiled, f, np.abs(rand(shape)) * (rand(shape) > 0))


def test_write_one_value_array_broadcasts():
    def f(x, v):
        x[x > 0] = v

    compiled = kiln.qjit(f)
    for n in SIZES:
        same_as_numpy(compiled, f, rand(n), np.array([9.0]))


def test_write_count_mismatch_is_numpys_value_error():
    def f(x, v):
        x[x > 0] = v

    compiled = kiln.qjit(f)
    message = ("NumPy boolean array indexing assignment cannot assign 3 input values to the 2 output values where "
               "the mask is true")
    with pytest.raises(ValueError, match=re.escape(message)):
        compiled(np.array([1.0, -1.0, 2.0]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match=re.escape(message)):
        f(np.array([1.0, -1.0, 2.0]), np.array([1.0, 2.0, 3.0]))


def test_write_rows_with_a_one_dimensional_mask():
    def f(x, m, row, rows):
        x[m] = row
        x[~m] = rows[: (~m).sum()]
        x[m, 0] = -1.0

    compiled = kiln.qjit(f)
    for n in SIZES:
        for m in masks(n):
            same_as_numpy(compiled, f, rand((n, 3)), m, rand(3), rand((n, 3)))


def test_write_through_a_two_dimensional_mask_of_a_matrix():
    def f(x, m, v):
        x[m] = v[: m.sum()]
        x[~m] += 1.0

    compiled = kiln.qjit(f)
    for shape in [(0, 3), (1, 1), (4, 5), (30, 33)]:
        for m in masks(shape):
            same_as_numpy(compiled, f, rand(shape), m, rand(shape[0] * shape[1]))


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
def test_augmented_assignment_through_a_mask(op):
    namespace: dict = {}
    exec(f"def f(x, y):\n    m = x > 0\n    x[m] {op} y[m]\n    x[x < 0] {op} 2.0\n", namespace)
    f = namespace["f"]
    compiled = kiln.qjit(f)
    for n in SIZES:
        same_as_numpy(compiled, f, rand(n), rand(n))


def test_writes_through_views_reach_the_base():
    def f(x):
        row = x[1:]
        row[row > 0] = 0.0
        cols = x[:, ::2]
        cols[cols < -1] *= 3.0
        x.T[x.T < -5] = -5.0
        return x.sum()

    compiled = kiln.qjit(f)
    for shape in [(1, 0), (1, 1), (5, 7), (33, 40)]:
        same_as_numpy(compiled, f, rand(shape) * 3)


def test_mask_written_after_use_is_found_again():
    """The positions of a mask are reused only while nothing writes to it."""
    def f(x, m):
        first = x[m]
        m[0] = not m[0]
        return first, x[m]

    compiled = kiln.qjit(f)
    for n in (1, 7):
        same_as_numpy(compiled, f, rand(n), _rng.random(n) < 0.5)


def test_write_to_an_empty_array():
    def f(x, v):
        x[x > 0] = v
        x[x > 0] = 1.0

    compiled = kiln.qjit(f)
    same_as_numpy(compiled, f, np.zeros(0), np.zeros(0))


# --------------------------------------------------------------------------
# Masks in loops and branches (autograph)


def mandelbrot(c, maxiter):
    n = np.zeros(c.shape, dtype=np.int64)
    z = np.zeros(c.shape, dtype=np.complex128)
    for k in range(maxiter):
        inside = np.less(abs(z), 2.0)
        n[inside] = k
        z[inside] = z[inside] ** 2 + c[inside]
    n[n == maxiter - 1] = 0
    return z, n


def test_masks_in_a_loop():
    compiled = kiln.qjit(mandelbrot)
    for shape in [(0, 3), (1, 1), (7, 9), (40, 50)]:
        c = rand(shape[1])[None, :] + 1j * rand(shape[0])[:, None]
        same_as_numpy(compiled, mandelbrot, c, 12)
    same_as_numpy(compiled, mandelbrot, rand((3, 3), np.complex128), 0)


def radial_means(data, radius, bins):
    """A naive azimuthal integration (NPBench's azimint_naive): the mean of
    the values in each ring, selected by a mask per ring."""
    rmax = radius.max()
    res = np.zeros(bins, dtype=np.float64)
    for i in range(bins):
        r1 = rmax * i / bins
        r2 = rmax * (i + 1) / bins
        in_ring = np.logical_and(r1 <= radius, radius < r2)
        res[i] = data[in_ring].mean()
    return res


def test_mask_per_loop_iteration_with_empty_selections():
    compiled = kiln.qjit(radial_means)
    for n in (1, 7, 1000):
        same_as_numpy(compiled, radial_means, rand(n), np.abs(rand(n)), 5)
    same_as_numpy(compiled, radial_means, rand(3), np.array([0.0, 0.0, 4.0]), 4)


def test_masks_in_branches():
    def f(x, t):
        if x.sum() > t:
            x[x > t] = t
            picked = x[x < 0].sum()
        else:
            picked = x[x >= 0].sum()
        return picked

    compiled = kiln.qjit(f)
    for n in SIZES:
        for t in (-100.0, 0.5, 100.0):
            same_as_numpy(compiled, f, rand(n), t)


def test_selection_chosen_by_a_branch():
    def f(x, t):
        if t > 0:
            y = x[x > 0]
        else:
            y = x[x < 0]
        return y * 2

    compiled = kiln.qjit(f)
    for n in SIZES:
        for t in (-1.0, 1.0):
            same_as_numpy(compiled, f, rand(n), t)


def test_selection_shrinks_in_a_loop():
    def f(x, n):
        for _ in range(n):
            x = x[x > 0.1] * 0.9
        return x

    compiled = kiln.qjit(f)
    for size in SIZES:
        same_as_numpy(compiled, f, np.abs(rand(size)), 4)


def test_mask_made_before_a_loop_writes_in_every_iteration():
    def f(x, y, n):
        m = x > 0
        for _ in range(n):
            y[m] += 1.0
            y[~m] = y[~m] * 2.0
        return y

    compiled = kiln.qjit(f)
    for size in SIZES:
        same_as_numpy(compiled, f, rand(size), rand(size), 3)


def test_selection_grows_in_a_while_loop():
    def f(x, limit):
        k = 0
        total = 0.0
        while k < limit:
            total += x[x > k * 0.1].sum()
            k += 1
        return total

    compiled = kiln.qjit(f)
    for n in SIZES:
        same_as_numpy(compiled, f, rand(n), 6)


# --------------------------------------------------------------------------
# Positions of nonzero elements


def test_nonzero_and_where_with_one_argument():
    def f(x):
        return np.nonzero(x), np.where(x > 0), (x < 0).nonzero()

    compiled = kiln.qjit(f)
    for shape in [(0,), (1,), (7,), (1000,), (0, 3), (1, 1), (3, 4), (2, 3, 5)]:
        x = rand(shape, np.int64)
        same_as_numpy(compiled, f, x)
        same_as_numpy(compiled, f, np.zeros(shape, np.int64))
        same_as_numpy(compiled, f, np.ones(shape, np.int64))


def test_nonzero_of_a_0d_array_is_refused_as_numpy_refuses():
    compiled = kiln.qjit(lambda x: np.nonzero(x))
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        compiled(np.array(1.0))


def test_where_with_two_arguments_is_numpys_error():
    compiled = kiln.qjit(lambda x: np.where(x > 0, x))
    with pytest.raises(ValueError, match="either both or neither of x and y should be given"):
        compiled(np.ones(3))


def test_flatnonzero_argwhere_count_nonzero():
    def f(x):
        return (np.flatnonzero(x), np.argwhere(x), np.count_nonzero(x), np.count_nonzero(x, axis=0),
                np.count_nonzero(x > 0, axis=-1, keepdims=True))

    compiled = kiln.qjit(f)
    for shape in [(0, 3), (1, 1), (3, 4), (30, 17)]:
        same_as_numpy(compiled, f, rand(shape, np.int32))
        same_as_numpy(compiled, f, np.zeros(shape, np.int32))


def test_argwhere_of_one_and_zero_dimensional_arrays():
    def f(v, s):
        return np.argwhere(v), np.argwhere(s)

    compiled = kiln.qjit(f)
    for n in SIZES:
        same_as_numpy(compiled, f, rand(n, np.int64), np.array(3.0))
    same_as_numpy(compiled, f, rand(5, np.int64), np.array(0.0))


def test_extract():
    def f(c, a):
        return np.extract(c, a), np.extract(c > 0, a * 2)

    compiled = kiln.qjit(f)
    for shape in [(0,), (1,), (7,), (3, 5)]:
        same_as_numpy(compiled, f, rand(shape, np.int64), rand(shape))


def test_compress():
    def f(c, a):
        return np.compress(c, a, axis=0), np.compress(c[:2], a, axis=1), a.compress(c[:3]), np.compress(c, a)

    compiled = kiln.qjit(f)
    for rows in (3, 4, 7):
        for c in masks(rows):
            same_as_numpy(compiled, f, c, rand((rows, 3)))


def test_compress_with_a_true_past_the_end_is_an_index_error():
    compiled = kiln.qjit(lambda c, a: np.compress(c, a))
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(np.array([True, False, False, True]), np.arange(3.0))
    same_as_numpy(compiled, lambda c, a: np.compress(c, a), np.array([True, False, False, False]), np.arange(3.0))


@pytest.mark.compiled_only
def test_run_time_sizes_survive_export_and_pickling(tmp_path):
    """A result whose length is data comes back through an exported library
    (kiln.load) and through a pickled function."""
    import pickle

    @kiln.qjit
    def positives(x: kiln.ShapeDtype(("n",), "float64")):
        return x[x > 0], np.nonzero(x > 1)[0]

    kiln.export(positives, str(tmp_path))
    loaded = kiln.load(str(tmp_path))
    unpickled = pickle.loads(pickle.dumps(positives))
    for n in SIZES:
        x = rand(n)
        expected = (x[x > 0], np.nonzero(x > 1)[0])
        assert_same(loaded(x), expected)
        assert_same(unpickled(x), expected)


def test_place_takes_values_in_order_repeated():
    def f(a, m, v):
        np.place(a, m, v)
        np.place(a, a > 3, [7, 8])

    compiled = kiln.qjit(f)
    for n in SIZES:
        for m in masks(n):
            same_as_numpy(compiled, f, rand(n, np.int64), m, rand(3, np.int64))
    same_as_numpy(compiled, f, rand((3, 4), np.int64), _rng.random(12) < 0.5, rand(5, np.int64))


def test_place_from_an_empty_array_is_numpys_value_error():
    compiled = kiln.qjit(lambda a, m, v: np.place(a, m, v))
    with pytest.raises(ValueError, match="Cannot insert from an empty array!"):
        compiled(np.zeros(3), np.array([False, True, False]), np.zeros(0))
    same_as_numpy(compiled, lambda a, m, v: np.place(a, m, v), np.zeros(3), np.zeros(3, bool), np.zeros(0))


def test_putmask_repeats_values_by_position():
    def f(a, m, v):
        np.putmask(a, m, v)
        np.putmask(a, a < -1, 2.5)

    compiled = kiln.qjit(f)
    for n in SIZES:
        for m in masks(n):
            same_as_numpy(compiled, f, rand(n), m, rand(3))
            same_as_numpy(compiled, f, rand(n), m, rand(n))
            same_as_numpy(compiled, f, rand(n), m, rand(0))
    same_as_numpy(compiled, f, rand((4, 5)), _rng.random((4, 5)) < 0.5, rand(7))


def test_place_and_putmask_refuse_what_numpy_refuses():
    with pytest.raises(ValueError, match="putmask: mask and data must be the same size"):
        kiln.qjit(lambda a, m: np.putmask(a, m, 1.0))(np.zeros(3), np.ones(4, bool))
    with pytest.raises(TypeError, match="Cannot cast array data from dtype\\('float64'\\) to dtype\\('int64'\\)"):
        kiln.qjit(lambda a, v: np.place(a, a > 0, v))(np.ones(3, np.int64), np.ones(2))
