"""`kiln.numpy`: the NumPy surface on traced values (stage "jaxpr").

Inside a `@kiln.qjit` function these functions record equations; outside
one, on concrete arrays, they are NumPy's own. NumPy's functions reach the
same code through `__array_ufunc__` / `__array_function__`, so `np.exp(x)`
works on a tracer too.

>>> import kiln, kiln.numpy as knp
>>> @kiln.qjit
... def f(x):
...     return knp.exp(x) * 2.0
"""

# Importing the family modules declares their functions (@numpy_function,
# @ufunc, ...) and installs the traced array's methods and operators.
from kiln.numpy import _dispatch, array_attributes, array_math, boolean_masks, contractions, creation  # noqa: F401
from kiln.numpy import elementwise, histograms, indexing, lapack, linalg, linalg_derived, mutation  # noqa: F401
from kiln.numpy import python_builtins, rearranging, reductions, sets, shape_ops, signals, sorting  # noqa: F401
from kiln.numpy import special_arrays, statistics, traced_names, ufuncs, ufuncs_floating  # noqa: F401
# After every @ufunc: the methods of the ufuncs that have no rule of their own.
from kiln.numpy import ufunc_methods  # noqa: F401
from kiln.numpy._bindings import FUNCTIONS as _FUNCTIONS

# dtypes, so `knp.float32` works like `np.float32`
from numpy import (  # noqa: F401
    bool_, complex64, complex128, dtype, e, float16, float32, float64, inf, int8, int16, int32, int64,
    nan, newaxis, pi, uint8, uint16, uint32, uint64,
)


def __getattr__(name: str):
    """`knp.exp`, `knp.cumprod`, ...: the functions the family modules declare."""
    try:
        return _FUNCTIONS[name]
    except KeyError:
        raise AttributeError(f"module 'kiln.numpy' has no attribute {name!r}") from None


def __dir__() -> list:
    return sorted(set(globals()) | set(_FUNCTIONS))
