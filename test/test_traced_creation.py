"""NumPy's module functions on traced sizes and values, called as users call them
(issue 14 item 1), against NumPy at sizes 0, 1, odd and large; and np.random: compiled
(see test_random.py) or refused with the function and line."""

import threading

import numpy as np
import pytest
from numpy import arange as imported_arange
from numpy import zeros as imported_zeros

import kiln

SIZES = [0, 1, 7, 1000]


def assert_same(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def check(fn, *args, **options):
    """fn compiled by plain kiln.qjit (autograph off too) against NumPy."""
    for autograph in (False, True):
        got = kiln.qjit(fn, autograph=autograph, **options)(*args)
        assert_same(got, fn(*args))


def sized(n):
    """An array argument whose length is the size under test (the traced dim)."""
    return np.linspace(-1.0, 2.0, n)


@pytest.mark.parametrize("n", SIZES)
def test_zeros_ones_empty_full_from_a_traced_size(n):
    def f(x, n):
        e = np.empty(n)
        e[:] = 1.5  # NumPy leaves empty's contents undefined: compare after filling
        a = np.ndarray((n, 3))
        a.fill(-2.0)
        return (np.zeros(n), np.zeros((n, 2), dtype=np.int32), np.ones(x.shape[0]), np.ones((2, n), np.float32),
                e, np.full(x.shape, 2.5), np.full((n,), 7, dtype=np.int16), a)

    check(f, sized(n), n)


@pytest.mark.parametrize("n", SIZES)
def test_like_functions_and_shape_keyword(n):
    def f(x):
        e = np.empty_like(x)
        e[...] = 4.0
        return e, np.zeros_like(x, dtype=np.int64), np.full_like(x, 3.0), np.ones_like(x)

    check(f, sized(n))


@pytest.mark.parametrize("n", SIZES)
def test_eye_identity(n):
    def f(n):
        return np.eye(n), np.eye(n, n + 2, 1), np.identity(n), np.eye(n, dtype=np.int32)

    check(f, n)


@pytest.mark.parametrize("n", SIZES)
def test_arange_forms(n):
    def f(n, a, s):
        return np.arange(n), np.arange(a, n), np.arange(a, n + a, s), np.arange(0.5, n, 0.25), np.arange(n, dtype=np.float32)

    check(f, n, 3, 2)


@pytest.mark.parametrize("n", SIZES)
def test_linspace(n):
    def f(n, lo, hi):
        return np.linspace(lo, hi, n), np.linspace(0.0, 1.0, n, endpoint=False), np.linspace(lo, hi, n, dtype=np.float32)

    check(f, n, -2.0, 3.0)


@pytest.mark.parametrize("n", SIZES)
def test_mgrid_ogrid_meshgrid(n):
    def f(n, x):
        i, j = np.mgrid[0:n, 0:3]
        r, c = np.ogrid[0:n, 1:4]
        gx, gy = np.meshgrid(x, np.arange(3.0))
        ii, jj = np.meshgrid(x, x[:2], indexing="ij", sparse=True)
        return i, j, r, c, gx, gy, ii, jj, np.mgrid[0:n], np.mgrid[0.0:1.0:5j]

    check(f, n, sized(n))


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_array_and_asarray_of_traced_values(n):
    def f(x, s, k):
        return (np.array([x[0], x[-1], s]), np.asarray([[x[0], 1.0], [s, x[-1]]]), np.array([k, 2]),
                np.array([k, 2.5]), np.array([x, x]), np.asarray(x, dtype=np.float32), np.array(x[:3]) + 0)

    check(f, sized(n), 0.5, 3)


@pytest.mark.parametrize("n", SIZES)
def test_scalar_constructors_on_traced_values(n):
    def f(x, n):
        return np.float64(n) / 2, np.int32(x.shape[0]), np.float32(x).dtype == np.float32, np.int64(np.sum(x)), np.bool_(n)

    got = kiln.qjit(f)(sized(n), n)
    want = f(sized(n), n)
    assert_same(got[:2] + got[3:], want[:2] + want[3:])
    assert bool(got[2])


def _make_grid(n, m):
    out = np.zeros((n, m))
    out[:, :] = np.arange(m)
    return out + np.eye(n, m)


def test_helper_functions_imports_and_closures_see_traced_meaning():
    def local_helper(n):
        return imported_zeros(n) + imported_arange(n)

    def f(x, n):
        return _make_grid(n, x.shape[0]), local_helper(n)

    for n in SIZES:
        check(f, sized(3), n)


def test_numpy_outside_the_trace_is_unchanged():
    seen = []

    def f(x, n):
        seen.append((np.zeros, np.float64, np.ndarray))
        return np.zeros(n) + x[0]

    kiln.qjit(f)(sized(3), 4)
    # The trace saw kiln's meaning; this module and NumPy itself did not change.
    assert seen[0][0] is not np.zeros and np.zeros is imported_zeros
    assert np.float64 is np.dtype("float64").type and type(np.zeros(2)) is np.ndarray
    assert isinstance(np.float64(1.0), seen[0][1]) and isinstance(np.zeros(2), seen[0][2])


def test_other_threads_see_numpy_while_a_trace_runs():
    started, release = threading.Event(), threading.Event()
    during = []

    def f(x, n):
        started.set()
        release.wait(10)
        return np.zeros(n) + x[0]

    def other():
        started.wait(10)
        during.append((np.zeros(3), np.zeros, type(np.float64(1.0))))
        release.set()

    thread = threading.Thread(target=other)
    thread.start()
    kiln.qjit(f)(sized(3), 2)
    thread.join()
    arr, fn, scalar_type = during[0]
    assert type(arr) is np.ndarray and fn is imported_zeros and scalar_type is np.float64


def test_global_assignment_in_traced_code_reaches_the_module():
    def f(x):
        global _TRACE_COUNT
        _TRACE_COUNT = _TRACE_COUNT + 1
        return x + 1

    globals()["_TRACE_COUNT"] = 0
    kiln.qjit(f)(np.ones(2))
    assert _TRACE_COUNT == 1  # noqa: F821


@pytest.mark.parametrize("call", [
    lambda x: x + np.random.multivariate_normal([0.0], [[1.0]]),
    lambda x: x + np.random.default_rng(0).multivariate_normal([0.0], [[1.0]]),
])
def test_random_functions_kiln_does_not_compile_are_refused_with_the_function_and_line(call):
    def f(x):
        return call(x)

    line = call.__code__.co_firstlineno
    with pytest.raises(kiln.KilnTypeError, match=rf"test_traced_creation.py:{line}: "
                                                 r"(np\.random|Generator)\.\w+ is not supported inside a compiled "
                                                 "function"):
        kiln.qjit(f)(np.ones(3))


@pytest.mark.parametrize("call", [
    lambda x: x + np.random.normal(),
    lambda x: x + np.random.randint(0, 1000),
    lambda x: x * np.random.rand(3),
    lambda x: x[:2] + np.random.dirichlet([1.0, 2.0]),
])
def test_legacy_random_numbers_are_drawn_per_call_from_the_global_state(call):
    def f(x):
        return call(x)

    compiled = kiln.qjit(f)
    np.random.seed(5)
    first, second = compiled(np.ones(3)), compiled(np.ones(3))
    np.random.seed(5)
    assert_same(first, call(np.ones(3)))
    assert_same(second, call(np.ones(3)))
    assert not np.array_equal(first, second)


def test_default_rng_made_inside_draws_numpys_numbers():
    def f(x):
        return x + np.random.default_rng(0).random()

    assert_same(kiln.qjit(f)(np.ones(3)), f(np.ones(3)))


_RNG = np.random.default_rng(0)


def test_a_global_random_generator_is_refused():
    def f(x):
        return x + _RNG.normal()

    with pytest.raises(kiln.KilnTypeError, match=r"random generator Generator\.normal is not supported inside a "
                                                 r"compiled function; it comes from outside the function.*pass it "
                                                 "as an argument"):
        kiln.qjit(f)(np.ones(3))


def test_functions_without_source_and_nonlocal_cells():
    namespace = {"np": np}
    exec("def made(x, n):\n    return np.zeros(n) + x[0]\n", namespace)
    assert_same(kiln.qjit(namespace["made"])(sized(3), 4), namespace["made"](sized(3), 4))
    assert_same(kiln.qjit(lambda n: np.arange(n) * 2)(5), np.arange(5) * 2)

    calls = 0

    def f(x, n):
        nonlocal calls
        calls += 1
        return np.ones(n) * x[0]

    assert_same(kiln.qjit(f)(sized(3), 6), f(sized(3), 6))
    assert calls == 2  # the trace's increment reached the enclosing function's cell


@pytest.mark.parametrize("n", SIZES)
def test_repeat_with_a_traced_count(n):
    # np.repeat(x, k) with a traced k (NPBench stockham_fft) sizes its result at run time.
    def f(x, k):
        m = x.reshape(-1, 1)
        return np.repeat(x, k), np.repeat(m, k, axis=1), m.repeat(2, axis=0), np.repeat(x, 3)

    check(f, sized(n), 3)
    check(f, sized(n), 0)
