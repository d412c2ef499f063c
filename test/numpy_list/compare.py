"""How a compiled run of a NumPy-list case is compared with NumPy's: the
rules test/test_numpy_list.py applies to kiln, and
cmake-free-scripts/bench_numpy_list.py applies to kiln, Numba and JAX alike.

In: a result (or the arguments after a call) and NumPy's. Out: nothing, or
an AssertionError naming what differs (structure, shape, dtype, values).
"""

from __future__ import annotations

import warnings

import numpy as np

# Float results narrower than float64 are compared at their own precision.
MIN_RTOL = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-5, np.dtype(np.complex64): 1e-5}


def assert_same(result, expected, rtol: float, atol: float, what: str) -> None:
    """`result` (the compiled run's) equals `expected` (NumPy's): structure,
    shape, dtype, values (NaNs alike)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(result, (tuple, list)), f"{what}: got {type(result).__name__}, NumPy a sequence"
        assert len(result) == len(expected), f"{what}: {len(result)} results, NumPy has {len(expected)}"
        for i, (r, e) in enumerate(zip(result, expected)):
            assert_same(r, e, rtol, atol, f"{what}[{i}]")
        return
    expected = np.asarray(expected)
    result = np.asarray(result)
    assert result.shape == expected.shape, f"{what}: shape {result.shape} != NumPy's {expected.shape}"
    assert result.dtype == expected.dtype, f"{what}: dtype {result.dtype} != NumPy's {expected.dtype}"
    if expected.dtype.kind in "fc":
        tol = max(rtol, MIN_RTOL.get(expected.dtype, 0.0))
        np.testing.assert_allclose(result, expected, rtol=tol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(result, expected, err_msg=what)


def numpy_answer(case, args):
    """(result, None) or (None, the exception NumPy raised) of `case.fn(*args)`
    (of `case.reference(*args)` when the case has one)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return (case.reference or case.fn)(*args), None
        except Exception as exc:  # noqa: BLE001 - any NumPy error is the expected behaviour
            return None, exc
