"""NumPy functions the NPBench kernels need, against NumPy: every binary
ufunc's `.outer`, `np.histogram` and `np.linalg.cholesky` (issue 14).

Sizes 0, 1, odd and large; each test runs compiled and through the
reference interpreter (the `execution` fixture of conftest.py). One
compiled function serves every size of a test.
"""

from __future__ import annotations

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 7, 200)
_rng = np.random.default_rng(14)


def assert_same(result, expected, rtol=1e-12, atol=0.0) -> None:
    """Values, shape and dtype agree with NumPy's."""
    if isinstance(expected, tuple):
        assert isinstance(result, tuple) and len(result) == len(expected)
        for r, e in zip(result, expected):
            assert_same(r, e, rtol, atol)
        return
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.shape == expected.shape, f"shape {result.shape} != NumPy's {expected.shape}"
    assert result.dtype == expected.dtype, f"dtype {result.dtype} != NumPy's {expected.dtype}"
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(result, expected)


# --------------------------------------------------------------------------
# ufunc.outer

_OUTER_UFUNCS = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "less", "equal",
                 "arctan2", "hypot", "logical_and", "bitwise_or", "floor_divide"]


def _outer_operands(name: str, n: int):
    if name in ("bitwise_or", "floor_divide"):
        return _rng.integers(1, 9, n), _rng.integers(1, 9, (2, n // 2 + 1))
    if name == "power":
        return _rng.uniform(0.5, 2.0, n), _rng.uniform(-2.0, 2.0, (2, n // 2 + 1))
    return _rng.uniform(-2.0, 2.0, n), _rng.uniform(-2.0, 2.0, (2, n // 2 + 1))


@pytest.mark.parametrize("name", _OUTER_UFUNCS)
def test_ufunc_outer(name):
    ufunc = getattr(np, name)

    def f(a, b):
        return ufunc.outer(a, b)

    compiled = kiln.qjit(f)
    for n in SIZES:
        a, b = _outer_operands(name, n)
        assert_same(compiled(a, b), f(a, b))


def test_outer_scalars_dtypes_and_out():
    def f(a, b, c):
        out = np.zeros((a.shape[0], b.shape[0]), dtype=np.float32)
        np.add.outer(a, b, out=out)
        return (np.multiply.outer(2, b), np.subtract.outer(a, 1.5), np.maximum.outer(c, c),
                np.add.outer(a, b, dtype=np.float64), out, np.minimum.outer(c[0], c))

    compiled = kiln.qjit(f)
    for n in SIZES:
        a = _rng.uniform(-1, 1, n).astype(np.float32)
        b = _rng.uniform(-1, 1, n + 2).astype(np.float32)
        c = _rng.integers(-5, 5, (n + 1, 2)).astype(np.int8)
        assert_same(compiled(a, b, c), f(a, b, c), rtol=1e-6)


def test_outer_of_views_in_a_loop():
    """NPBench floyd_warshall: `np.add.outer(path[:, k], path[k, :])` in a time loop."""

    def f(path):
        for k in range(path.shape[0]):
            path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))

    compiled = kiln.qjit(f)
    for n in SIZES:
        path = _rng.integers(1, 100, (n, n)).astype(np.int32)
        expected, got = path.copy(), path.copy()
        f(expected)
        compiled(got)
        assert_same(got, expected)
