"""kiln's NumPy surface against NumPy itself.

Each test compiles a small function with `@kiln.qjit` and compares its
results with NumPy's at several sizes (0, 1, 7 and a larger one where
meaningful). Compiling dominates the run time, so one compiled function
serves every size of a test: sizes other than 1 share one binary.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import kiln
import kiln.numpy as knp

SIZES = (0, 1, 7, 33)
FLOATS = (np.float32, np.float64)
INTS = (np.int32, np.int64)


def rtol_for(dtype) -> float:
    return 2e-5 if np.dtype(dtype) == np.float32 else 1e-12


def assert_same(result, expected, rtol=None, atol=0.0) -> None:
    """Values, shape and dtype agree with NumPy's (NaNs in the same places)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(result, (tuple, list)) and len(result) == len(expected)
        for r, e in zip(result, expected):
            assert_same(r, e, rtol, atol)
        return
    expected = np.asarray(expected)
    result = np.asarray(result)
    assert result.shape == expected.shape, f"shape {result.shape} != NumPy's {expected.shape}"
    assert result.dtype == expected.dtype, f"dtype {result.dtype} != NumPy's {expected.dtype}"
    if expected.dtype.kind in "fc":
        tol = rtol_for(expected.dtype) if rtol is None else rtol
        np.testing.assert_allclose(result, expected, rtol=tol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(result, expected)


def compare(compiled, reference, *args, rtol=None, atol=0.0) -> None:
    # NumPy warns on empty means and invalid values; kiln computes the same values silently.
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = reference(*args)
    assert_same(compiled(*args), expected, rtol, atol)


_rng = np.random.default_rng(1234)


def rand(shape, dtype=np.float64, low=-2.0, high=2.0):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return _rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return _rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    return _rng.uniform(low, high, size=shape).astype(dtype)


# --------------------------------------------------------------------------
# creation with traced sizes


def _creation(x):
    n = x.shape[0]
    return (
        knp.zeros(n),
        knp.ones((n, 3), dtype=np.float32),
        knp.full((2, n), 2.5),
        knp.full(n, 7, dtype=np.int32),
        knp.empty((n, 2)).shape[0] + 0 * knp.zeros(()),
        knp.zeros_like(x),
        np.ones_like(x),
        knp.full_like(x, -3.0),
        np.zeros_like(x, dtype=np.int64),
        knp.empty_like(x).shape[0] + 0 * knp.zeros(()),
    )


def _creation_ref(x):
    n = x.shape[0]
    return (
        np.zeros(n), np.ones((n, 3), dtype=np.float32), np.full((2, n), 2.5), np.full(n, 7, dtype=np.int32),
        np.float64(n), np.zeros_like(x), np.ones_like(x), np.full_like(x, -3.0),
        np.zeros_like(x, dtype=np.int64), np.float64(n),
    )


_creation_jit = kiln.qjit(_creation)


@pytest.mark.parametrize("n", SIZES)
def test_creation_traced_sizes(n):
    compare(_creation_jit, _creation_ref, rand(n))


def test_empty_shape_and_dtype():
    f = kiln.qjit(lambda x: knp.empty((x.shape[0], 4), dtype=np.int32))
    r = f(np.ones(6))
    assert r.shape == (6, 4) and r.dtype == np.int32


def _arange(x, k):
    n = x.shape[0]
    return (
        knp.arange(5), knp.arange(2, 9, 3), knp.arange(0.0, 1.0, 0.25), knp.arange(n),
        knp.arange(1, n, 2), knp.arange(n, 0, -1), knp.arange(k), knp.arange(-k, n), knp.arange(k, dtype=np.float32),
    )


def _arange_ref(x, k):
    n = x.shape[0]
    return (
        np.arange(5), np.arange(2, 9, 3), np.arange(0.0, 1.0, 0.25), np.arange(n),
        np.arange(1, n, 2), np.arange(n, 0, -1), np.arange(k), np.arange(-k, n), np.arange(k, dtype=np.float32),
    )


_arange_jit = kiln.qjit(_arange)


@pytest.mark.parametrize("n,k", [(0, 0), (1, 3), (7, 2), (33, 5), (7, -2)])
def test_arange(n, k):
    compare(_arange_jit, _arange_ref, rand(n), k)


def _linspace(x):
    n = x.shape[0]
    return (knp.linspace(0, 1, n), knp.linspace(-2.0, 3.0, n, endpoint=False), knp.linspace(1, 2, 5),
            knp.linspace(0, 10, n, dtype=np.float32))


def _linspace_ref(x):
    n = x.shape[0]
    return (np.linspace(0, 1, n), np.linspace(-2.0, 3.0, n, endpoint=False), np.linspace(1, 2, 5),
            np.linspace(0, 10, n, dtype=np.float32))


_linspace_jit = kiln.qjit(_linspace)


@pytest.mark.parametrize("n", SIZES)
def test_linspace(n):
    compare(_linspace_jit, _linspace_ref, rand(n))


def _eye(x):
    n = x.shape[0]
    return knp.eye(n), knp.eye(n, 3, k=1), knp.eye(3, dtype=np.int32), knp.eye(n, k=-2)


def _eye_ref(x):
    n = x.shape[0]
    return np.eye(n), np.eye(n, 3, k=1), np.eye(3, dtype=np.int32), np.eye(n, k=-2)


_eye_jit = kiln.qjit(_eye)


@pytest.mark.parametrize("n", SIZES)
def test_eye(n):
    compare(_eye_jit, _eye_ref, rand(n))


# --------------------------------------------------------------------------
# ufuncs

from kiln.numpy._ufunc import UFUNCS  # noqa: E402

# Input ranges where NumPy's result is finite (or where the ufunc is meant to
# be tested); anything not listed draws from [-2, 2].
_UNARY_DOMAIN = {
    "log": (0.1, 5.0), "log2": (0.1, 5.0), "log10": (0.1, 5.0), "sqrt": (0.0, 5.0),
    "log1p": (-0.9, 5.0), "reciprocal": (0.5, 3.0), "arcsin": (-0.99, 0.99), "arccos": (-0.99, 0.99),
    "arctanh": (-0.95, 0.95), "arccosh": (1.0, 5.0), "tan": (-1.4, 1.4),
}
_BINARY_DOMAIN = {"power": ((0.1, 3.0), (-2.0, 2.0)), "float_power": ((0.1, 3.0), (-2.0, 2.0))}
# (ldexp takes an integer exponent: the NumPy list's cases cover it, test/numpy_list/cases_ufuncs.py.)
_NO_FLOAT = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift", "ldexp"}
# Ufuncs NumPy defines on integers, and the int ranges they are tested on.
_INT_OK = {
    "add", "subtract", "multiply", "floor_divide", "remainder", "mod", "fmod", "power", "maximum",
    "minimum", "fmax", "fmin", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "negative", "positive", "absolute", "sign", "square",
    "isnan", "isinf", "isfinite", "true_divide", "divide", "floor", "ceil", "trunc", "rint", "sqrt", "exp",
    "sin", "arctan2", "hypot",
}
_INT_DOMAIN = {"power": ((-3, 3), (0, 4)), "left_shift": ((-50, 50), (0, 8)), "right_shift": ((-50, 50), (0, 8)),
               "sqrt": ((0, 50),)}
# floor_divide and friends by zero give 0 for ints, as NumPy; exercise it.
_INT_DEFAULT = (-9, 9)

_ufunc_cache: dict = {}


def _ufunc_fn(name: str, via_numpy: bool):
    key = (name, via_numpy)
    if key not in _ufunc_cache:
        fn = getattr(np, name) if via_numpy else getattr(knp, name)
        nin = UFUNCS[name].np_ufunc.nin
        _ufunc_cache[key] = kiln.qjit((lambda x: fn(x)) if nin == 1 else (lambda x, y: fn(x, y)))
    return _ufunc_cache[key]


def _ufunc_inputs(name: str, dtype, n: int):
    nin = UFUNCS[name].np_ufunc.nin
    if np.dtype(dtype).kind in "iu":
        domains = _INT_DOMAIN.get(name, (_INT_DEFAULT,) * nin)
        domains = domains if len(domains) == nin else domains * nin
    elif nin == 1:
        domains = (_UNARY_DOMAIN.get(name, (-2.0, 2.0)),)
    else:
        domains = _BINARY_DOMAIN.get(name, ((-2.0, 2.0), (-2.0, 2.0)))
    return [rand(n, dtype, lo, hi) for lo, hi in domains]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(n for n in UFUNCS if n not in _NO_FLOAT))
def test_ufunc_float(name, dtype):
    via_numpy = dtype == np.float64  # np.exp(x) through __array_ufunc__, knp.exp for f32
    f = _ufunc_fn(name, via_numpy)
    ref = getattr(np, name)
    for n in (0, 7, 100):
        args = _ufunc_inputs(name, dtype, n)
        # Trigonometric and exponential functions may differ in the last bits.
        compare(f, ref, *args, rtol=1e-5 if dtype == np.float32 else 1e-10, atol=1e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(n for n in UFUNCS if n in _INT_OK))
def test_ufunc_int(name, dtype):
    f = _ufunc_fn(name, True)
    ref = getattr(np, name)
    for n in (0, 7, 100):
        compare(f, ref, *_ufunc_inputs(name, dtype, n))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor", "logical_not", "invert",
                                  "bitwise_and", "bitwise_xor", "add", "multiply", "equal", "maximum"])
def test_ufunc_bool(name):
    f = _ufunc_fn(name, True)
    for n in (0, 7):
        args = [rand(n, np.bool_) for _ in range(UFUNCS[name].np_ufunc.nin)]
        compare(f, getattr(np, name), *args)


def test_special_float_values():
    x = np.array([0.0, -0.0, 1.0, -1.5, 2.5, np.inf, -np.inf, np.nan, 0.5, -0.5])
    fns = ("isnan", "isinf", "isfinite", "sign", "floor", "ceil", "rint", "trunc", "absolute", "square")
    f = kiln.qjit(lambda x: tuple(getattr(np, n)(x) for n in fns))
    compare(f, lambda x: tuple(getattr(np, n)(x) for n in fns), x)
    g = kiln.qjit(lambda x, y: (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y),
                                np.floor_divide(x, y), np.remainder(x, y), np.fmod(x, y)))
    y = np.array([1.0, 2.0, np.nan, 0.0, -2.0, 1.0, 3.0, 1.0, -0.25, 0.0])
    compare(g, lambda x, y: (np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y),
                             np.floor_divide(x, y), np.remainder(x, y), np.fmod(x, y)), x, y)


_EXTREMES = np.array([0.0, 1e-300, 1e-8, 0.5, 1.0, 3.0, 1e8, 1e200, 1e308, -1e200, np.inf, -np.inf, np.nan])
_EXTREME_UNARY = ("arcsinh", "arccosh", "arctanh", "sinh", "cosh", "tanh", "expm1", "log1p", "cbrt", "arcsin",
                  "arccos", "arctan", "reciprocal", "exp2", "log2")
_EXTREME_BINARY = ("hypot", "logaddexp", "arctan2", "fmax", "true_divide", "floor_divide", "remainder")


def test_extreme_float_values():
    """Large, tiny, infinite and NaN inputs: no overflow inside the formulas
    kiln composes (asinh, acosh, hypot, ...)."""
    y = np.array([1.0, -1e200, 3.0, 1e-300, 0.0, np.inf, -np.inf, 1.0, 2.0, 1e200, -np.inf, 5.0, 1.0])
    f = kiln.qjit(lambda x, y: tuple(getattr(np, n)(x) for n in _EXTREME_UNARY)
                  + tuple(getattr(np, n)(x, y) for n in _EXTREME_BINARY))
    compare(f, lambda x, y: tuple(getattr(np, n)(x) for n in _EXTREME_UNARY)
            + tuple(getattr(np, n)(x, y) for n in _EXTREME_BINARY), _EXTREMES, y)


# --------------------------------------------------------------------------
# where, clip, astype


def _where_clip_astype(x, y):
    return (
        np.where(x > 0, x, y), knp.where(x > y, 1.0, 0.0), np.where(x > 0, x, 0),
        np.clip(x, -0.5, 0.5), knp.clip(x, 0.0, None), x.clip(-1, 1),
        x.astype(np.float32), x.astype(np.int32), (x > 0).astype(np.float64), knp.astype(x, np.int64),
    )


_wca_jit = kiln.qjit(_where_clip_astype)


@pytest.mark.parametrize("n", SIZES)
def test_where_clip_astype(n):
    x, y = rand(n) * 3, rand(n)
    compare(_wca_jit, lambda x, y: (
        np.where(x > 0, x, y), np.where(x > y, 1.0, 0.0), np.where(x > 0, x, 0), np.clip(x, -0.5, 0.5),
        np.clip(x, 0.0, None), x.clip(-1, 1), x.astype(np.float32), x.astype(np.int32),
        (x > 0).astype(np.float64), x.astype(np.int64)), x, y)


def test_astype_int_to_float_and_bool():
    f = kiln.qjit(lambda x: (x.astype(np.float32), x.astype(np.bool_), x.astype(np.int8), np.clip(x, 0, 3)))
    for n in (0, 9):
        compare(f, lambda x: (x.astype(np.float32), x.astype(np.bool_), x.astype(np.int8), np.clip(x, 0, 3)),
                rand(n, np.int64, -5, 5))


# --------------------------------------------------------------------------
# reductions

_AXES = (None, 0, 1, -1, (0, 1), (0, 2))
_reduce_cache: dict = {}


def _reduce_fn(name: str):
    if name not in _reduce_cache:
        _reduce_cache[name] = kiln.qjit(lambda x: _reduce_all(getattr(np, name), x))
    return _reduce_cache[name]


def _reduce_all(fn, x):
    out = []
    # argmax / argmin take one axis at most.
    for axis in _AXES if fn not in (np.argmax, np.argmin) else _AXES[:4]:
        for keepdims in (False, True):
            out.append(fn(x, axis=axis, keepdims=keepdims))
    return tuple(out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all"])
def test_reductions(name, dtype):
    if dtype == np.bool_ and name in ("mean", "prod", "argmax", "argmin"):
        pytest.skip("covered by the numeric dtypes")
    f = _reduce_fn(name)
    ref = getattr(np, name)
    needs_nonempty = name in ("max", "min", "argmax", "argmin")
    shapes = [(3, 4, 5), (7, 2, 6), (1, 5, 3)] + ([] if needs_nonempty else [(0, 3, 2)])
    for shape in shapes:
        x = rand(shape, dtype, -3, 3)
        if name == "prod" and np.dtype(dtype).kind == "f":
            x = rand(shape, dtype, 0.5, 1.5)
        # float32 sums are accumulated in a different order than NumPy's pairwise sums.
        compare(f, lambda x: _reduce_all(ref, x), x, rtol=1e-4 if dtype == np.float32 else 1e-12)


def test_statically_empty_reductions():
    def f(x):
        return (knp.zeros((0, 3)).sum(0) + x[0], knp.zeros((3, 0)).sum(0), knp.ones((0, 3), dtype=np.int32).prod(),
                knp.zeros((2, 0)).any(1), np.cumsum(knp.zeros((0, 2)), axis=0), knp.zeros((0, 2)).mean(0))

    def ref(x):
        return (np.zeros((0, 3)).sum(0) + x[0], np.zeros((3, 0)).sum(0), np.ones((0, 3), dtype=np.int32).prod(),
                np.zeros((2, 0)).any(1), np.cumsum(np.zeros((0, 2)), axis=0), np.zeros((0, 2)).mean(0))

    compare(kiln.qjit(f), ref, np.ones(2))


def test_reduction_methods_and_dtype():
    f = kiln.qjit(lambda x: (x.sum(), x.sum(axis=0), x.mean(axis=1), x.max(axis=0), np.sum(x, dtype=np.float64),
                             np.add.reduce(x, axis=0), x.min(), x.argmax(axis=1), np.any(x > 5), np.all(x > -5)))
    for shape in [(3, 4), (7, 9)]:
        x = rand(shape, np.int32, -9, 9)
        compare(f, lambda x: (x.sum(), x.sum(axis=0), x.mean(axis=1), x.max(axis=0), np.sum(x, dtype=np.float64),
                              np.add.reduce(x, axis=0), x.min(), x.argmax(axis=1), np.any(x > 5), np.all(x > -5)), x)


def test_argmax_first_occurrence_and_nan():
    f = kiln.qjit(lambda x: (np.argmax(x), np.argmin(x), np.max(x)))
    for x in ([1.0, 3.0, 3.0, 0.0], [2.0, np.nan, 5.0, np.nan], [4.0, 4.0, 4.0]):
        x = np.array(x)
        compare(f, lambda x: (np.argmax(x), np.argmin(x), np.max(x)), x)


# --------------------------------------------------------------------------
# dot, matmul


_matmul_cases = {
    "vec_vec": ((7,), (7,)), "mat_vec": ((5, 7), (7,)), "vec_mat": ((7,), (7, 4)), "mat_mat": ((5, 7), (7, 4)),
    "batched": ((3, 5, 7), (3, 7, 4)), "broadcast_batch": ((3, 5, 7), (7, 4)), "bcast_both": ((2, 1, 5, 7), (3, 7, 4)),
}
_matmul_jit = kiln.qjit(lambda a, b: (a @ b, np.matmul(a, b)))
_dot_jit = kiln.qjit(lambda a, b: (np.dot(a, b), knp.dot(a, b), a.dot(b)))


def _resize(shape, n):
    """The case's shape with its contracted size 7 replaced by n."""
    return tuple(n if d == 7 else d for d in shape)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", sorted(_matmul_cases))
def test_matmul(case, dtype):
    sa, sb = _matmul_cases[case]
    for n in (0, 7, 40):
        a, b = rand(_resize(sa, n), dtype), rand(_resize(sb, n), dtype)
        compare(_matmul_jit, lambda a, b: (a @ b, np.matmul(a, b)), a, b, rtol=1e-4 if dtype == np.float32 else 1e-12,
                atol=1e-5 if dtype == np.float32 else 1e-12)
        if a.ndim <= 2 and b.ndim <= 2:
            compare(_dot_jit, lambda a, b: (np.dot(a, b), np.dot(a, b), a.dot(b)), a, b,
                    rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-5 if dtype == np.float32 else 1e-12)


def test_dot_int_and_mixed():
    f = kiln.qjit(lambda a, b: (np.dot(a, b), a @ b.astype(np.float64)))
    a, b = rand((4, 6), np.int32, -5, 5), rand((6, 3), np.int64, -5, 5)
    compare(f, lambda a, b: (np.dot(a, b), a @ b.astype(np.float64)), a, b)


# --------------------------------------------------------------------------
# shapes


def _shapes(x):
    n = x.shape[0]
    return (
        x.reshape(-1), x.reshape(n * 2, 2), x.reshape(-1, 2), np.reshape(x, (2, -1)), x.reshape(n, 2, 2),
        x.T, np.transpose(x), x.transpose(1, 0), np.swapaxes(x.reshape(n, 2, 2), 0, 2), np.expand_dims(x, 0),
        np.expand_dims(x, -1), knp.expand_dims(x, (0, 2)), np.squeeze(x.reshape(n, 1, 4), 1),
        np.squeeze(np.expand_dims(x, 0)), np.broadcast_to(x, (3, n, 4)),
        knp.broadcast_to(x.sum(axis=1, keepdims=True), (n, 5)),
        np.ravel(x), x.flatten(), np.moveaxis(x.reshape(n, 2, 2), 0, -1),
    )


def _shapes_ref(x):
    n = x.shape[0]
    return (
        x.reshape(-1), x.reshape(n * 2, 2), x.reshape(-1, 2), np.reshape(x, (2, -1)), x.reshape(n, 2, 2),
        x.T, np.transpose(x), x.transpose(1, 0), np.swapaxes(x.reshape(n, 2, 2), 0, 2), np.expand_dims(x, 0),
        np.expand_dims(x, -1), np.expand_dims(x, (0, 2)), np.squeeze(x.reshape(n, 1, 4), 1),
        np.squeeze(np.expand_dims(x, 0)), np.broadcast_to(x, (3, n, 4)),
        np.broadcast_to(x.sum(axis=1, keepdims=True), (n, 5)),
        np.ravel(x), x.flatten(), np.moveaxis(x.reshape(n, 2, 2), 0, -1),
    )


_shapes_jit = kiln.qjit(_shapes)


@pytest.mark.parametrize("n", (0, 2, 7, 33))
def test_shape_ops(n):
    compare(_shapes_jit, _shapes_ref, rand((n, 4)))


def test_reshape_traced_sizes():
    f = kiln.qjit(lambda x, y: (x.reshape(y.shape[0], -1), x.reshape(y.shape[0], x.shape[0] // y.shape[0])))
    for n, m in ((6, 3), (12, 4), (20, 5)):
        x, y = rand(n), rand(m)
        compare(f, lambda x, y: (x.reshape(m, -1), x.reshape(m, n // m)), x, y)


def _join(x, y):
    return (
        np.concatenate([x, y]), np.concatenate([x, y, x], axis=0), np.concatenate([x, x], axis=1),
        knp.concatenate([x, 2 * x], axis=-1), np.concatenate([x, y], axis=None), np.stack([x, x]),
        np.stack([x, x + 1], axis=1), knp.stack([x, x, x], axis=-1),
    )


_join_jit = kiln.qjit(_join)


@pytest.mark.parametrize("n,m", [(0, 3), (3, 0), (7, 5), (33, 2)])
def test_concatenate_stack(n, m):
    x, y = rand((n, 3)), rand((m, 3))
    compare(_join_jit, lambda x, y: (
        np.concatenate([x, y]), np.concatenate([x, y, x], axis=0), np.concatenate([x, x], axis=1),
        np.concatenate([x, 2 * x], axis=-1), np.concatenate([x, y], axis=None), np.stack([x, x]),
        np.stack([x, x + 1], axis=1), np.stack([x, x, x], axis=-1)), x, y)


def _stacks_and_triangles(v, x, k):
    return (np.hstack([v, v * 2]), np.hstack((x, x[:, :1])), np.vstack([v, v]), np.vstack((x, x)),
            np.atleast_2d(v), np.atleast_2d(x), np.triu(x), np.triu(x, 1), np.tril(x, -1), np.tril(x, k),
            np.triu(v), np.triu(x[None], k))


_stacks_and_triangles_jit = kiln.qjit(_stacks_and_triangles)


@pytest.mark.parametrize("n", SIZES)
def test_hstack_vstack_triu_tril(n):
    for k in (-1, 0, 2):
        compare(_stacks_and_triangles_jit, _stacks_and_triangles, rand(n), rand((n, 4)), k)


def _flip_diff(x):
    return (np.flip(x), np.flip(x, 0), np.flip(x, axis=(0, 1)), np.diff(x), np.diff(x, axis=0), np.diff(x, n=2),
            np.diff(x > 0.5, axis=1), np.diff(x, n=0))


_flip_diff_jit = kiln.qjit(_flip_diff)


@pytest.mark.parametrize("shape", [(0, 3), (2, 1), (3, 4), (33, 5)])
def test_flip_diff(shape):
    compare(_flip_diff_jit, _flip_diff, _rng.random(shape))


def _cumulative(x):
    return (np.cumsum(x), np.cumsum(x, axis=0), x.cumsum(axis=1), np.cumprod(x, axis=1), knp.cumsum(x, axis=-1),
            np.add.accumulate(x, axis=0), np.cumsum(x, dtype=np.float32), np.maximum.accumulate(x, axis=1),
            np.minimum.accumulate(x), (x > 1).cumsum(axis=1), np.maximum.accumulate(x > 1))


_cumulative_jit = kiln.qjit(_cumulative)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_cumsum_cumprod(dtype):
    for shape in ((0, 3), (1, 4), (7, 3), (33, 5), (6, 0)):
        x = rand(shape, dtype, -3, 3) if np.dtype(dtype).kind in "iu" else rand(shape, dtype, 0.5, 1.5)
        compare(_cumulative_jit, _cumulative, x, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_cumsum_bool_1d():
    f = kiln.qjit(lambda x: (np.cumsum(x), np.cumsum(x > 0.5)))
    for n in (0, 1, 7, 100):
        x = _rng.random(n)
        compare(f, lambda x: (np.cumsum(x), np.cumsum(x > 0.5)), x)


# --------------------------------------------------------------------------
# indexing


def _basic_index(x, i, a, b):
    return (
        x[2], x[-1], x[i], x[-i - 1], x[1:5], x[a:b], x[a:], x[:b], x[-b:], x[::2], x[1::3], x[::-1],
        x[5:1:-1], x[b:a:-1], x[::-2], x[..., None], x[None], x[None, 1:], x[a:b:2], x[-100:100],
    )


_basic_index_jit = kiln.qjit(_basic_index)


@pytest.mark.parametrize("n,i,a,b", [(7, 0, 1, 4), (7, 6, 0, 7), (33, 3, -5, -1), (7, 2, 5, 2), (7, 1, -100, 100)])
def test_basic_indexing_1d(n, i, a, b):
    compare(_basic_index_jit, _basic_index, rand(n), i, a, b)


def _index_2d(x, i, j, a):
    return (x[i], x[i, j], x[:, j], x[-1, :], x[..., -j - 1], x[a:, 1], x[i][j], x[1:3, ::-1], x[None, i, :],
            x[:, None, ::2], x[:, -2:])


_index_2d_jit = kiln.qjit(_index_2d)


@pytest.mark.parametrize("shape,i,j,a", [((4, 5), 0, 2, 1), ((7, 3), 6, 0, 5), ((33, 6), -2, -1, -3)])
def test_basic_indexing_2d(shape, i, j, a):
    compare(_index_2d_jit, _index_2d, rand(shape), i, j, a)


def test_traced_scalar_index_from_array():
    """An index that is a 0-d array argument (an i64 tensor at run time)."""
    f = kiln.qjit(lambda x, k: (x[k], x[k:], x[:k][::-1]))
    for n, k in ((5, 2), (9, 8), (9, 0)):
        compare(f, lambda x, k: (x[k], x[k:], x[:k][::-1]), rand(n), np.array(k, dtype=np.int32))


def _array_index(x, idx):
    return (x[idx], x[np.array([0, -1, 1])], x[idx][::-1], np.take(x, idx), x[[2, 0]])


_array_index_jit = kiln.qjit(_array_index)


@pytest.mark.parametrize("n,k", [(7, 0), (7, 1), (7, 5), (33, 40)])
def test_integer_array_index_1d(n, k):
    idx = _rng.integers(-n, n, size=k)
    compare(_array_index_jit, _array_index, rand(n), idx)


def _array_index_2d(x, idx, idx2):
    return (x[idx], x[:, idx2], x[idx2 % 2], x[1, idx2], x[idx.reshape(-1, 1)], np.take(x, idx2, axis=1))


_array_index_2d_jit = kiln.qjit(_array_index_2d)


@pytest.mark.parametrize("n,k", [(5, 3), (9, 1), (9, 12)])
def test_integer_array_index_2d(n, k):
    x = rand((n, 4))
    idx, idx2 = _rng.integers(-n, n, size=k).astype(np.int32), _rng.integers(0, 4, size=k)
    compare(_array_index_2d_jit, _array_index_2d, x, idx, idx2)


# --------------------------------------------------------------------------
# dtype promotion (NEP 50)


def test_promotion_python_scalars_are_weak():
    f = kiln.qjit(lambda x, i: (x + 1.5, x * 2, 3.0 - x, x / 2, i + 1, i * 2.5, i + True, x ** 2))
    x, i = rand(5, np.float32), rand(5, np.int32, -5, 5)
    r = f(x, i)
    expected = (x + 1.5, x * 2, 3.0 - x, x / 2, i + 1, i * 2.5, i + True, x ** 2)
    assert [a.dtype for a in r] == [e.dtype for e in expected]
    assert r[0].dtype == np.float32 and r[4].dtype == np.int32
    assert_same(r, expected)


@pytest.mark.parametrize("ta,tb", [(np.int32, np.int64), (np.int32, np.float32), (np.int64, np.float32),
                                   (np.int64, np.float64), (np.bool_, np.int32), (np.bool_, np.float32),
                                   (np.float32, np.float64), (np.int8, np.int16), (np.uint8, np.int8)],
                         ids=lambda t: np.dtype(t).name)
def test_promotion_arrays(ta, tb):
    f = kiln.qjit(lambda a, b: (a + b, a * b, np.maximum(a, b), a == b, np.where(a > 0, a, b)))
    a, b = rand(6, ta, 0, 5), rand(6, tb, 0, 5)
    compare(f, lambda a, b: (a + b, a * b, np.maximum(a, b), a == b, np.where(a > 0, a, b)), a, b)


def _complex(z, x):
    return (z + z, z * z, z * (1 + 2j), np.abs(z), np.exp(z), z.sum(), x + 1j, np.real(z), np.imag(z), np.conj(z),
            z.conjugate(), np.real(x), np.imag(x), np.conjugate(x))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_complex_arithmetic(dtype):
    z = np.array([1 + 2j, -0.5 + 0.1j, 3j], dtype=dtype)
    compare(kiln.qjit(_complex), _complex, z, np.arange(3.0), rtol=1e-6 if dtype == np.complex64 else 1e-12)


def test_python_int_out_of_range():
    """NEP 50: arithmetic with a Python int the array's dtype cannot hold is an
    OverflowError; comparisons with it are exact."""
    f = kiln.qjit(lambda a: (a == 300, a < 300, a != -200, a >= -129, a + 100, a == 1))
    a = np.array([1, 2, 100], np.int8)
    compare(f, lambda a: (a == 300, a < 300, a != -200, a >= -129, a + 100, a == 1), a)
    g = kiln.qjit(lambda u: (u < -1, u == 2**63, u > 5))
    u = np.array([1, 2**63], np.uint64)
    compare(g, lambda u: (u < -1, u == 2**63, u > 5), u)
    with pytest.raises(OverflowError, match="300 out of bounds for int8"):
        kiln.qjit(lambda a: a + 300)(a)


def test_promotion_scalar_arguments():
    """Python scalars passed to the compiled function are weak too."""
    f = kiln.qjit(lambda x, s, k: (x * s, x + k, k * s))
    x = rand(4, np.float32)
    r = f(x, 0.5, 3)
    assert r[0].dtype == np.float32 and r[1].dtype == np.float32
    assert_same(r, (x * 0.5, x + 3, np.float64(1.5)))


# --------------------------------------------------------------------------
# dynamic dims: one binary for every length


def test_one_compile_for_five_lengths():
    f = kiln.qjit(lambda x, y: np.sum(np.exp(x) * y[::-1]) + x[1:] @ y[:-1] + np.cumsum(x)[-1])
    for n in (2, 5, 17, 100, 1000):
        x, y = rand(n), rand(n)
        compare(f, lambda x, y: np.sum(np.exp(x) * y[::-1]) + x[1:] @ y[:-1] + np.cumsum(x)[-1], x, y)
    assert f.num_compiles == 1


def test_size_one_dims_specialize_once():
    f = kiln.qjit(lambda x: x * 2 + x.sum())
    for n in (1, 3, 1, 8):
        compare(f, lambda x: x * 2 + x.sum(), rand(n))
    assert f.num_compiles == 2


# --------------------------------------------------------------------------
# errors


def test_python_if_on_traced_value():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="kiln.cond"):
        kiln.qjit(f, autograph=False)(np.ones(3))


def test_int_of_traced_value():
    with pytest.raises(TypeError, match=r"int\(\)"):
        kiln.qjit(lambda x: x * int(x[0]))(np.ones(3))


def test_static_shape_mismatch_at_trace_time():
    f = kiln.qjit(lambda x: x.reshape(3, 4) + np.ones((3, 5)))
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones(12))
    g = kiln.qjit(lambda x: x[:, :2] @ np.ones((3, 4)))
    with pytest.raises(ValueError, match="inner dimensions"):
        g(np.ones((5, 6)))


def test_dynamic_shape_mismatch_at_run_time():
    f = kiln.qjit(lambda x, y: x + y)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones(3), np.ones(4))
    # The same binary still serves matching sizes afterwards.
    assert_same(f(np.ones(5), np.arange(5.0)), np.ones(5) + np.arange(5.0))
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones(6), np.ones(2))


def test_dynamic_size_errors_at_run_time():
    reshape = kiln.qjit(lambda x, y: x.reshape(y.shape[0], -1))
    with pytest.raises(ValueError, match="reshape"):
        reshape(np.ones(7), np.ones(3))
    concat = kiln.qjit(lambda x, y: np.concatenate([x, y]))
    with pytest.raises(ValueError, match="concatenate"):
        concat(np.ones((3, 4)), np.ones((2, 5)))
    matmul = kiln.qjit(lambda a, b: a @ b)
    with pytest.raises(ValueError, match="inner dimensions"):
        matmul(np.ones((3, 4)), np.ones((5, 2)))
    zeros = kiln.qjit(lambda x, k: knp.zeros(k) + x[0])
    with pytest.raises(ValueError, match="negative"):
        zeros(np.ones(2), -1)


def test_negative_integer_power():
    f = kiln.qjit(lambda a, b: a ** b)
    assert_same(f(np.array([2, 3]), np.array([1, 2])), np.array([2, 9]))
    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.array([2, 3]), np.array([1, -2]))
    with pytest.raises(ValueError, match="negative integer powers"):
        kiln.qjit(lambda a: a ** -1)(np.array([2, 3]))


def test_out_of_bounds_traced_index():
    f = kiln.qjit(lambda x, i: x[i])
    assert f(np.arange(4.0), 3) == 3.0
    assert f(np.arange(4.0), -4) == 0.0
    with pytest.raises(IndexError, match="out of bounds"):
        f(np.arange(4.0), 4)
    with pytest.raises(IndexError, match="out of bounds"):
        f(np.arange(4.0), -5)
    with pytest.raises(IndexError, match="out of bounds"):
        f(np.arange(0.0), 0)


def test_out_of_bounds_static_index():
    with pytest.raises(IndexError, match="out of bounds"):
        kiln.qjit(lambda x: x[:, 5])(np.ones((3, 4)))
    # A static index into a dynamic dim is checked at run time.
    f = kiln.qjit(lambda x: x[5])
    with pytest.raises(IndexError, match="out of bounds"):
        f(np.ones(3))


def test_out_of_bounds_index_array():
    f = kiln.qjit(lambda x, idx: x[idx])
    with pytest.raises(IndexError, match="out of bounds"):
        f(np.arange(4.0), np.array([0, 4]))


@pytest.mark.parametrize("fn,name", [(lambda x: np.fft.fft(x), "fft.fft"), (lambda x: np.lexsort((x,)), "lexsort"),
                                     (lambda x: np.sort_complex(x), "sort_complex"),
                                     (lambda x: np.linalg.tensorinv(x), "linalg.tensorinv")])
def test_unsupported_numpy_function(fn, name):
    with pytest.raises(TypeError, match=rf"np\.{re.escape(name)} is not supported"):
        kiln.qjit(fn)(np.ones(3))


def test_empty_reduction_without_identity():
    f = kiln.qjit(lambda x: np.max(x))
    assert f(np.array([1.0, 5.0, 2.0])) == 5.0
    with pytest.raises(ValueError, match="zero-size array"):
        f(np.ones(0))


def _norms_and_diagonals(x, v):
    return (np.linalg.norm(x), np.linalg.norm(v), np.linalg.norm(x, axis=1), np.linalg.norm(x, axis=0, keepdims=True),
            np.linalg.norm(v, 1), np.linalg.norm(v, 0), np.linalg.norm(v, 3), np.linalg.norm(x, "fro"),
            np.linalg.norm(x.astype(np.float32)), np.linalg.norm((10 * v).astype(np.int32)),
            np.diag(x), np.diag(x, 1), np.diag(x, -2), np.diag(v), np.diag(v, 2), np.diag(v, -1),
            np.count_nonzero(v), np.count_nonzero(x > 0.5, axis=0), np.count_nonzero(x, axis=1, keepdims=True))


def _norms_of_nonempty(x, v):
    return (np.linalg.norm(v, np.inf), np.linalg.norm(v, -np.inf), np.linalg.norm(x, 1), np.linalg.norm(x, np.inf),
            np.linalg.norm(x, -1), np.linalg.norm(x, -np.inf, keepdims=True))


_norms_jit, _nonempty_norms_jit = kiln.qjit(_norms_and_diagonals), kiln.qjit(_norms_of_nonempty)


@pytest.mark.parametrize("n", SIZES)
def test_norm_diag_and_count_nonzero(n):
    """np.linalg.norm, np.diag, np.count_nonzero (test/corpus: least squares,
    shading, correlation matrices, Hamming distances)."""
    x, v = rand((n, n + 2)), rand(n)
    v[::3] = 0.0
    compare(_norms_jit, _norms_and_diagonals, x, v)
    if n:
        compare(_nonempty_norms_jit, _norms_of_nonempty, x, v)
    else:  # max/min of an empty axis: NumPy's ValueError, at run time
        with pytest.raises(ValueError, match="zero-size array"):
            _nonempty_norms_jit(x, v)


def test_invalid_norm_orders_raise_as_numpy():
    with pytest.raises(ValueError, match="Invalid norm order for matrices"):
        kiln.qjit(lambda x: np.linalg.norm(x, 3))(np.ones((2, 2)))
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        kiln.qjit(lambda x: np.linalg.norm(x, "fro", axis=0))(np.ones((2, 2)))


# --------------------------------------------------------------------------
# smaller dtypes, unsigned ints and assorted functions


def _unsigned(a, b):
    return (a + b, a - b, a * b, a // (b + 1), a % (b + 1), np.maximum(a, b), a < b, a >> 1, a << 1, ~a,
            a.sum(), np.max(a, initial=3), np.cumsum(a), np.cumprod(a, dtype=a.dtype), a.astype(np.float32), np.sign(a),
            np.maximum.accumulate(a), np.minimum.accumulate(b))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.int8, np.int16], ids=lambda d: np.dtype(d).name)
def test_small_and_unsigned_ints(dtype):
    f = kiln.qjit(_unsigned)
    for n in (0, 9):
        # Unsigned values above the signed range check the scans' sign-bit handling.
        low, high = (0, 250) if np.dtype(dtype).kind == "u" else (-100, 100)
        a, b = rand(n, dtype, low, high), rand(n, dtype, low, high)
        compare(f, _unsigned, a, b)


def _assorted(x, y):
    return (
        np.var(y), np.std(y, axis=0), y.var(axis=1, ddof=1), np.std(y, keepdims=True),
        np.outer(x, x[::-1]), np.inner(x, x), np.vdot(x, 2 * x), np.round(x * 10), np.round(x, 2),
        np.max(x, initial=0.5), np.min(x, initial=-1), knp.stack([x[0], x[-1], x.sum()]),
        np.concatenate([x, np.array([1.0, 2.0])]), x ** 0.5, 2 ** x, x ** -1, abs(x - 0.5), -x,
        np.where(x > 0.5, 1, 0), np.mean(y, axis=(0, 1)), np.var(x, ddof=5), np.add(x, y[:, 0], dtype=np.float32),
    )


_assorted_jit = kiln.qjit(_assorted)


@pytest.mark.parametrize("n", (2, 9, 40))
def test_assorted_functions(n):
    x = _rng.random(n)
    compare(_assorted_jit, _assorted, x, _rng.random((n, 3)))


def _traced_slices_2d(y, i, j, idx):
    return (y[i:, j:], y[:i, ::-1], y[::-2, j], y[i, j:], y[idx], y[idx, 1], y[1:, idx % 3], y[..., idx % 3],
            y[i:i + 2], y[i - 2:i])


@pytest.mark.parametrize("n,i,j", [(5, 3, 1), (9, 2, 0), (9, 8, 2)])
def test_traced_slices_and_array_index_2d(n, i, j):
    f = _traced_slices_2d_jit
    idx = _rng.integers(-n, n, size=(2, 2))
    compare(f, _traced_slices_2d, _rng.random((n, 3)), i, j, idx)


_traced_slices_2d_jit = kiln.qjit(_traced_slices_2d)


def _rounding(a, x, y):
    return (np.round(a, -1), np.round(a, 1), np.round(a), np.round(x, 1), np.round(x, -1), np.around(y, 2),
            np.round(y), x.round(2))


def test_round_decimals():
    a, x = np.array([15, 25, -35, 144]), np.array([1.25, 2.5, -0.5, 155.0, 0.125])
    compare(kiln.qjit(_rounding), _rounding, a, x, x.astype(np.float32))


def test_bool_reductions_and_cumsum():
    f = kiln.qjit(lambda b: (b.sum(), np.sum(b, axis=0), b.mean(), np.cumsum(b), b.any(axis=1), b.all(),
                             b.max(initial=False)))
    for shape in ((0, 3), (7, 3)):
        b = rand(shape, np.bool_)
        compare(f, lambda b: (b.sum(), np.sum(b, axis=0), b.mean(), np.cumsum(b), b.any(axis=1), b.all(),
                              b.max(initial=False)), b)


def test_float_floor_divide_and_remainder_give_numpys_signed_zeros():
    # found by the user corpus (ufunc.at case): -1.0 // -1.99 is 0.0 in NumPy, kiln gave -0.0,
    # and a following division by zero then gave -inf where NumPy gives inf.
    vals = [-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, -np.inf, np.nan, 1e300, -1e-300]
    a = np.repeat(vals, len(vals))
    b = np.tile(vals, len(vals))
    for dtype in (np.float64, np.float32):
        x, y = a.astype(dtype), b.astype(dtype)
        got = kiln.qjit(lambda x, y: (np.floor_divide(x, y), np.remainder(x, y), x // y, x % y))(x, y)
        with np.errstate(all="ignore"):
            want = (np.floor_divide(x, y), np.remainder(x, y), x // y, x % y)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
