"""Wrong results found by running other people's NumPy code (issue 14,
item 8): each program next to NumPy's answer, at sizes 0, 1, odd and large
where the size matters."""

import tempfile

import numpy as np
import pytest

import kiln
import kiln.numpy as knp

SIZES = [0, 1, 5, 1000]


# R4: np.<ufunc>.reduce reduces axis 0 by default (np.sum reduces every axis).
@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("cols", SIZES)
def test_ufunc_reduce_defaults_to_axis_0(ufunc, rows, cols):
    a = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols) % 7 - 3

    got = kiln.qjit(lambda a: ufunc.reduce(a))(a)
    want = ufunc.reduce(a)
    assert got.shape == want.shape == (cols,)
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("ufunc", [np.logical_or, np.logical_and])
def test_logical_ufunc_reduce_defaults_to_axis_0(ufunc):
    a = np.array([[True, False, False], [True, True, False]])

    got = kiln.qjit(lambda a: ufunc.reduce(a))(a)
    np.testing.assert_array_equal(got, ufunc.reduce(a))


def test_ufunc_reduce_axis_none_and_tuple_still_reduce_those_axes():
    a = np.arange(24.0).reshape(2, 3, 4)

    got_all = kiln.qjit(lambda a: np.add.reduce(a, axis=None))(a)
    got_12 = kiln.qjit(lambda a: np.maximum.reduce(a, axis=(1, 2)))(a)
    got_0d = kiln.qjit(lambda a: np.add.reduce(a))(np.array(5.0))
    assert got_all == np.add.reduce(a, axis=None)
    np.testing.assert_array_equal(got_12, np.maximum.reduce(a, axis=(1, 2)))
    assert got_0d == np.add.reduce(np.array(5.0))


# R6: a negative traced size is a ValueError even when the allocation is
# optimized away (only its shape is used).
@pytest.mark.parametrize("make, numpy_make", [
    (knp.zeros, np.zeros), (knp.ones, np.ones), (knp.empty, np.zeros),
    (lambda n: knp.full(n, 2.0), lambda n: np.full(n, 2.0)),
])
def test_negative_traced_size_raises_like_numpy(make, numpy_make):
    f = kiln.qjit(lambda n: make(n).shape[0])
    g = kiln.qjit(lambda n: make((3, n)).sum())

    assert f(0) == 0 and f(4) == 4
    assert g(2) == numpy_make((3, 2)).sum()
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        numpy_make(-1)
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        f(-1)
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        g(-3)


def test_negative_static_size_raises_at_trace_time():
    with pytest.raises(ValueError, match=r"negative dimensions are not allowed \(got -2\)"):
        kiln.qjit(lambda: knp.zeros((3, -2)))()


def test_sizes_from_argument_shapes_need_no_check():
    f = kiln.qjit(lambda x: knp.zeros(x.shape).sum() + knp.ones((x.shape[0], 2)).sum())

    assert f(np.ones(4)) == 8.0
    assert "check" not in str(kiln.get_compilation_stage(f, "jaxpr"))


# R7: ndarray subclasses whose meaning a plain array would lose are refused.
def test_masked_array_argument_is_refused_with_its_remedy():
    m = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])

    with pytest.raises(TypeError, match=r"masked array .* would drop the mask.*filled"):
        kiln.qjit(lambda x: x * 2)(m)


def test_unknown_ndarray_subclass_is_refused():
    class Tagged(np.ndarray):
        pass

    t = np.arange(3.0).view(Tagged)
    with pytest.raises(TypeError, match=r"ndarray subclass .*Tagged.*np\.asarray"):
        kiln.qjit(lambda x: x * 2)(t)


def test_matrix_and_memmap_run_as_plain_arrays_and_receive_writes():
    def bump(x):
        x += 1.0
        return x.sum()

    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    assert kiln.qjit(bump)(m) == 14.0
    np.testing.assert_array_equal(m, [[2.0, 3.0], [4.0, 5.0]])
    with tempfile.NamedTemporaryFile() as f:
        mm = np.memmap(f.name, dtype=np.float64, mode="w+", shape=(3,))
        assert kiln.qjit(bump)(mm) == 3.0
        np.testing.assert_array_equal(mm, [1.0, 1.0, 1.0])


# np.vdot conjugates its first argument.
def test_vdot_conjugates_the_first_argument():
    z = np.array([1 + 2j, 3 - 1j])
    w = np.array([2 - 1j, 1 + 1j])

    got = kiln.qjit(lambda z, w: np.vdot(z, w))(z, w)
    assert got == np.vdot(z, w) == 2 - 1j


@pytest.mark.parametrize("n", SIZES)
def test_vdot_flattens_and_conjugates_at_every_size(n):
    rng = np.random.default_rng(n)
    z = (rng.standard_normal(2 * n) + 1j * rng.standard_normal(2 * n)).reshape(2, n)
    w = (rng.standard_normal(2 * n) - 1j * rng.standard_normal(2 * n)).reshape(2, n)
    r = rng.standard_normal(2 * n).reshape(2, n)

    f = kiln.qjit(lambda a, b: np.vdot(a, b))
    np.testing.assert_allclose(f(z, w), np.vdot(z, w))
    np.testing.assert_allclose(f(r, r), np.vdot(r, r))


# R10: a write through a slice in a loop that can break.
def _shifted_accumulate(y, x, n):
    for k in range(n):
        if k > 100:
            break
        y[k:] += x[:n - k]
    return y


def _shifted_accumulate_early_break(y, x, m):
    n = x.shape[0]
    for k in range(n):
        if k > m:
            break
        y[k:] += x[:n - k]


@pytest.mark.parametrize("n", SIZES)
def test_slice_accumulation_in_a_loop_with_break(n):
    x = np.arange(1.0, n + 1)
    y_kiln, y_numpy = np.zeros(n), np.zeros(n)

    got = kiln.qjit(_shifted_accumulate, autograph=True)(y_kiln, x, n)
    want = _shifted_accumulate(y_numpy, x, n)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(y_kiln, y_numpy)

    z_kiln, z_numpy = np.zeros(n), np.zeros(n)
    kiln.qjit(_shifted_accumulate_early_break, autograph=True)(z_kiln, x, 2)
    _shifted_accumulate_early_break(z_numpy, x, 2)
    np.testing.assert_allclose(z_kiln, z_numpy)


# R5: a 0-d ndarray argument is mutable in NumPy; NumPy scalars and Python
# numbers are not (`x += 1` rebinds them).
def _bump_0d(x, y):
    x += 1.0
    y += 1.0
    return x + y


def _bump_0d_in_branch_in_loop(x, n):
    for k in range(n):
        if k % 2 == 0:
            x += 1.0
    return x * 1.0


@pytest.mark.parametrize("y", [np.float64(2.0), 2.0, np.array(2.0)])
def test_zero_d_array_argument_updated_in_place_is_seen_by_the_caller(y):
    x_kiln, x_numpy = np.array(3.0), np.array(3.0)
    y_kiln, y_numpy = np.copy(y) if isinstance(y, np.ndarray) else y, np.copy(y) if isinstance(y, np.ndarray) else y

    got = kiln.qjit(_bump_0d)(x_kiln, y_kiln)
    want = _bump_0d(x_numpy, y_numpy)
    assert got == want == 7.0
    assert x_kiln == x_numpy == 4.0
    assert y_kiln == y_numpy


@pytest.mark.parametrize("n", [0, 1, 5])
def test_zero_d_array_argument_updated_in_a_branch_in_a_loop(n):
    x_kiln, x_numpy = np.array(1.0), np.array(1.0)

    got = kiln.qjit(_bump_0d_in_branch_in_loop, autograph=True)(x_kiln, n)
    want = _bump_0d_in_branch_in_loop(x_numpy, n)
    assert got == want
    assert x_kiln == x_numpy


def test_zero_d_array_rebound_by_arithmetic_is_not_written():
    def f(x):
        x = x + 1.0
        x += 1.0
        return x

    x = np.array(3.0)
    assert kiln.qjit(f)(x) == f(np.array(3.0)) == 5.0
    assert x == 3.0


# R14 and R13: integer-array writes with traced indices, into arguments
# and into arrays the function makes.
def _swap_rows(A, k):
    A[[0, k]] = A[[k, 0]]
    return A.sum(axis=1)


@pytest.mark.parametrize("rows, k", [(1, 0), (3, 0), (3, 2), (7, -1), (200, 150)])
def test_row_swap_with_traced_index(rows, k):
    A_kiln = np.arange(rows * 3.0).reshape(rows, 3)
    A_numpy = A_kiln.copy()

    got = kiln.qjit(_swap_rows)(A_kiln, k)
    want = _swap_rows(A_numpy, k)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(A_kiln, A_numpy)


def test_index_list_with_traced_entries_reads_and_writes():
    def f(A, k, j):
        B = A[[k, 0, k]]
        A[[[0], [k]]] += 1.0
        A[[j, k], 1] = -1.0
        return B

    A_kiln = np.arange(12.0).reshape(4, 3)
    A_numpy = A_kiln.copy()
    np.testing.assert_array_equal(kiln.qjit(f)(A_kiln, 2, 3), f(A_numpy, 2, 3))
    np.testing.assert_array_equal(A_kiln, A_numpy)


def _fill_made_arrays(x, k, j):
    z = np.zeros_like(x)
    z[k] = 1.0
    z[[k, j]] += 2.0
    z[j:] += x[j:]
    w = knp.zeros(x.shape[0] + 1)
    w[[j]] = 5.0
    w[-1] = z[k]
    return z, w


@pytest.mark.parametrize("n, k, j", [(1, 0, 0), (5, 3, 1), (5, -1, 4), (1001, 500, 7)])
def test_writes_with_traced_indices_into_arrays_the_function_makes(n, k, j):
    x = np.arange(float(n))

    got = kiln.qjit(_fill_made_arrays)(x, k, j)
    want = _fill_made_arrays(x, k, j)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
