"""The NumPy list, family "creation": every np.* creation function, with
sizes and values that vary per call (issue 15, part "the list and the
general surface")."""

from __future__ import annotations

import numpy as np

from test.numpy_list.args import floats, ints, mat, size_only, vec
from test.numpy_list.case import Case


def _case(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "creation", True, **kw)


def _add(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "creation", False, **kw)


def arange(n):
    return np.arange(n), np.arange(1, n + 1, 2), np.arange(n, dtype=np.float32), np.arange(0.5, n, 0.5)


def array(a):
    return np.array(a), np.array(a, dtype=np.float32), np.array([a, 2 * a])


def array_tuple(a):
    return np.array(((a[0], a[1]), (a[2], 1.0))), np.array([1, 2, 3])


def _at_least_3(n, rng):
    return (floats(rng, n + 3),)


def asarray(a):
    b = np.asarray(a)
    b[:1] = 4.0
    return np.asarray(a, dtype=np.int64), np.asarray([1.5, 2.5])


def asfortranarray(a):
    return np.asfortranarray(a), np.asfortranarray(a).T


def copy(a):
    b = np.copy(a)
    b[:1] = 4.0
    return a, b


def diag(a):
    return np.diag(a), np.diag(a, 1), np.diag(np.diag(a)), np.diag(a[:, None] * a, -1)


def empty(n):
    return np.empty(n).shape, np.empty((n, 2), dtype=np.int32).dtype == np.int32


def empty_like(a):
    return np.empty_like(a).shape, np.empty_like(a, dtype=np.int8).shape


def eye(n):
    return np.eye(n), np.eye(n, 3), np.eye(n, n + 1, 1, dtype=np.int32), np.eye(3, k=-1)


def full(n):
    return np.full(n, 2.5), np.full((2, n), 7, dtype=np.int32), np.full((n,), np.nan)


def full_like(a):
    return np.full_like(a, 3), np.full_like(a, 1.5, dtype=np.float32)


def identity(n):
    return np.identity(n), np.identity(n, dtype=np.int64)


def linspace(n):
    return np.linspace(0, 1, n), np.linspace(-2.0, 3.0, n + 2), np.linspace(0, n, 5, endpoint=False)


def ones(n):
    return np.ones(n), np.ones((n, 2), dtype=np.int8)


def ones_like(a):
    return np.ones_like(a), np.ones_like(a, dtype=np.bool_)


def zeros(n):
    return np.zeros(n), np.zeros((3, n), dtype=np.complex128)


def zeros_like(a):
    return np.zeros_like(a), np.zeros_like(a, dtype=np.int32)


def tri(n):
    return np.tri(n), np.tri(n, 4, 1), np.tri(n, k=-1, dtype=np.int32)


def tril(a):
    return np.tril(a), np.tril(a, 1), np.tril(a, -2)


def triu(a):
    return np.triu(a), np.triu(a, 1), np.triu(a, -1)


def vander(a):
    return np.vander(a), np.vander(a, 3), np.vander(a, 4, increasing=True)


def frombuffer(a):
    return np.frombuffer(a, dtype=np.float64), np.frombuffer(a, dtype=np.int64)


def scalar_type(name):
    t = getattr(np, name)

    def make(a):
        return t(a[0]), t(a), t(3)
    make.__name__ = f"scalar_{name}"
    return make


def iinfo(a):
    return np.iinfo(a.dtype).max - a, np.iinfo(np.int8).min


def finfo(a):
    return np.finfo(a.dtype).eps * a, np.finfo(np.float32).max


def meshgrid(a, b):
    return np.meshgrid(a, b), np.meshgrid(a, b, indexing="ij")


def mgrid(n):
    return np.mgrid[0:n, 0:3], np.ogrid[0:n, 1:4]


def tril_indices(n):
    return np.tril_indices(n), np.tril_indices(n, -1, 3)


def triu_indices(n):
    return np.triu_indices(n), np.triu_indices(n, 1)


def tril_indices_from(a):
    return np.tril_indices_from(a), np.tril_indices_from(a, 1)


def triu_indices_from(a):
    return np.triu_indices_from(a), np.triu_indices_from(a, -1)


def windows(n):
    return np.bartlett(n), np.blackman(n), np.hamming(n), np.hanning(n), np.kaiser(n, 14.0)


def _int_vec(n, rng):
    return (ints(rng, n, low=0, high=4),)


_SCALAR_TYPES = ("bool_ complex64 complex128 float32 float64 int8 int16 int32 int64 intc intp uint8 uint16 uint32 "
                 "uint64 uintc uintp").split()


CASES = [
    _case("numpy.arange", arange, size_only),
    _case("numpy.array", array, vec()),
    _case("numpy.array", array_tuple, _at_least_3),
    _case("numpy.asarray", asarray, vec()),
    _case("numpy.asfortranarray", asfortranarray, mat()),
    _case("numpy.copy", copy, vec()),
    _case("numpy.diag", diag, vec()),
    _case("numpy.empty", empty, size_only),
    _case("numpy.empty_like", empty_like, mat()),
    _case("numpy.eye", eye, size_only),
    _case("numpy.full", full, size_only),
    _case("numpy.full_like", full_like, mat()),
    _case("numpy.identity", identity, size_only),
    _case("numpy.linspace", linspace, size_only),
    _case("numpy.ones", ones, size_only),
    _case("numpy.ones_like", ones_like, mat()),
    _case("numpy.zeros", zeros, size_only),
    _case("numpy.zeros_like", zeros_like, mat()),
    _case("numpy.tri", tri, size_only),
    _case("numpy.tril", tril, mat(None)),
    _case("numpy.tril", tril, mat(4)),
    _case("numpy.triu", triu, mat(None)),
    _case("numpy.triu", triu, mat(4)),
    _case("numpy.vander", vander, vec()),
    _case("numpy.vander", vander, _int_vec),
    _case("numpy.frombuffer", frombuffer, vec(), note="of a traced array: its bytes as a dtype of the same width"),
    *[_case(f"numpy.{t}", scalar_type(t), _int_vec) for t in _SCALAR_TYPES],
    _case("numpy.iinfo", iinfo, vec(np.int32)),
    _case("numpy.finfo", finfo, vec(np.float32)),
    _add("numpy.meshgrid", meshgrid, lambda n, rng: (floats(rng, n), floats(rng, 3))),
    _add("numpy.mgrid", mgrid, size_only),
    _add("numpy.ogrid", mgrid, size_only),
    _case("numpy.tril_indices", tril_indices, size_only),
    _case("numpy.triu_indices", triu_indices, size_only),
    _case("numpy.tril_indices_from", tril_indices_from, mat(None)),
    _case("numpy.triu_indices_from", triu_indices_from, mat(None)),
    _case("numpy.bartlett", windows, size_only, rtol=1e-10, atol=1e-15),
    _case("numpy.blackman", windows, size_only, rtol=1e-10, atol=1e-15),
    _case("numpy.hamming", windows, size_only, rtol=1e-10, atol=1e-15),
    _case("numpy.hanning", windows, size_only, rtol=1e-10, atol=1e-15),
    _case("numpy.kaiser", windows, size_only, rtol=1e-10, atol=1e-15),
]
