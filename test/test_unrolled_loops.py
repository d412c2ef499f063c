"""Short counted loops of elementwise updates (`for _ in range(10): a = a * s`)
are unrolled and fused into one pass (kiln-unroll-elementwise-loops): NumPy's
results at sizes 0, 1, odd and large, arguments left untouched, views as
inputs, carried arrays swapped, one compile across sizes; loops the pass
must leave alone (run-time trip counts, long loops) stay correct too."""

import numpy as np
import pytest

import kiln

rng = np.random.default_rng(62)
SIZES = [0, 1, 7, 1001, 100_003]


def _loop_body(text: str, name: str) -> str:
    main = text[text.index(f"func.func @{name}("):]
    return main[:main.index("\n  }\n")]


def catalyst(sz: int):
    a0 = np.ones(sz)
    a = a0
    for _ in range(10):
        a = a * sz
    return a0 + a


def test_rebound_array_chain_is_one_pass():
    f = kiln.qjit(catalyst)
    for n in SIZES:
        np.testing.assert_array_equal(f(n), catalyst(n))
    assert f.num_compiles <= 2  # one signature, plus the specialized size-1 one
    linalg = _loop_body(kiln.get_compilation_stage(f, "linalg"), "catalyst")
    assert "scf.while" not in linalg
    assert linalg.count("linalg.generic") == 1, linalg
    bufferized = _loop_body(kiln.get_compilation_stage(f, "bufferized"), "catalyst")
    assert bufferized.count("memref.alloc(") == 1, bufferized


def counter_and_argument(x, y):
    a = x
    for i in range(5):
        a = a * 0.5 + i * y
    return a


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_counter_read_in_body_and_arguments_unchanged(dtype):
    f = kiln.qjit(counter_and_argument)
    for n in SIZES:
        x = rng.standard_normal(n).astype(dtype)
        y = rng.standard_normal(n).astype(dtype)
        xc, yc = x.copy(), y.copy()
        want = counter_and_argument(xc, yc)
        got = f(x, y)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-14)
        np.testing.assert_array_equal(x, xc)
        np.testing.assert_array_equal(y, yc)
    assert f.num_compiles <= 2


def test_views_as_inputs():
    f = kiln.qjit(counter_and_argument)
    base = rng.standard_normal((10, 8))
    kept = base.copy()
    x, y = base[::2, 1], base[1::2, 1]        # strided views of one array
    np.testing.assert_allclose(f(x, y), counter_and_argument(x, y), rtol=1e-14)
    x, y = base[:, 3], base[:, 3]             # the same view twice
    np.testing.assert_allclose(f(x, y), counter_and_argument(x, y), rtol=1e-14)
    np.testing.assert_array_equal(base, kept)


def swapped(a, b):
    for _ in range(6):
        a, b = b, a + b
    return a, b


def test_carried_arrays_swapped():
    f = kiln.qjit(swapped)
    for n in SIZES:
        a, b = rng.standard_normal(n), rng.standard_normal(n)
        for got, want in zip(f(a, b), swapped(a, b)):
            np.testing.assert_allclose(got, want, rtol=1e-14)


def broadcast_rows(m, row):
    for k in range(3):
        m = m * 2.0 - row
    return m


def test_broadcast_operand_in_the_chain():
    f = kiln.qjit(broadcast_rows)
    for n in [0, 1, 5, 301]:
        m, row = rng.standard_normal((n, 3)), rng.standard_normal(3)
        np.testing.assert_allclose(f(m, row), broadcast_rows(m, row), rtol=1e-14)


def integer_chain(x):
    for i in range(4):
        x = x * 3 + i
    return x


def test_integer_chain():
    f = kiln.qjit(integer_chain)
    for n in SIZES:
        x = rng.integers(-100, 100, n)
        np.testing.assert_array_equal(f(x), integer_chain(x))


def run_time_trips(x, n: int):
    for _ in range(n):
        x = x * 0.5 + 1.0
    return x


def long_loop(x):
    for _ in range(40):
        x = x * 0.5 + 1.0
    return x


def test_loops_that_stay_loops():
    f, g = kiln.qjit(run_time_trips), kiln.qjit(long_loop)
    for n in [0, 1, 7, 1001]:
        x = rng.standard_normal(n)
        for trips in [0, 1, 3]:
            np.testing.assert_allclose(f(x, trips), run_time_trips(x, trips), rtol=1e-14)
        np.testing.assert_allclose(g(x), long_loop(x), rtol=1e-14)
    assert "scf.while" in _loop_body(kiln.get_compilation_stage(g, "linalg"), "long_loop")
