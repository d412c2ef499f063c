"""Argument builders for the cases of the NumPy list: `make_args` functions
of a size n and a NumPy Generator (test/numpy_list/case.py).

In: n and rng. Out: fresh NumPy arrays (a case's function may write into them).
"""

from __future__ import annotations

import numpy as np


def floats(rng: np.random.Generator, *shape: int, dtype=np.float64, low: float = -2.0, high: float = 2.0):
    """Uniform floats (or complex: real and imaginary parts uniform) of `shape`."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def ints(rng: np.random.Generator, *shape: int, dtype=np.int64, low: int = -5, high: int = 6):
    """Integers in [low, high) of `shape`."""
    return rng.integers(low, high, shape).astype(dtype)


def bools(rng: np.random.Generator, *shape: int):
    return rng.random(shape) < 0.5


def vec(dtype=np.float64):
    """make_args: one 1-D array of size n."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return lambda n, rng: (bools(rng, n),)
    if dtype.kind in "iu":
        return lambda n, rng: (ints(rng, n, dtype=dtype, low=0 if dtype.kind == "u" else -5),)
    return lambda n, rng: (floats(rng, n, dtype=dtype),)


def mat(cols: int | None = 3, dtype=np.float64):
    """make_args: one (n, cols) array (cols None: (n, n))."""
    return lambda n, rng: (floats(rng, n, n if cols is None else cols, dtype=dtype),)


def two_vecs(dtype=np.float64):
    """make_args: two 1-D arrays of size n."""
    return lambda n, rng: (floats(rng, n, dtype=dtype), floats(rng, n, dtype=dtype))


def size_only(n: int, rng: np.random.Generator) -> tuple:
    """make_args: the size itself, a traced int."""
    return (n,)
