"""The NumPy list, family "array": attributes and methods of ndarray
(issue 15, part "the list and the general surface").

Cases return arrays and numbers only (a compiled function returns no dtype
or flags objects): attributes that are not arrays are checked through what
a user computes with them.
"""

from __future__ import annotations

import numpy as np

from test.numpy_list.args import floats, ints, mat, vec
from test.numpy_list.case import Case


def _case(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "array", True, **kw)


def _add(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "array", False, **kw)


def _complex_vec(n, rng):
    return (floats(rng, n, dtype=np.complex128),)


def _mat_and_index(n, rng):
    return floats(rng, n, 4), ints(rng, 3, low=0, high=4)


def dtype_(a):
    return np.zeros(2, dtype=a.dtype), a.astype(a.dtype)


def flags(a):
    f = a[::2].flags
    return a.flags.c_contiguous, a.flags.contiguous, f.c_contiguous, a.T.flags.f_contiguous


def flat_iter(a):
    total = 0.0
    for v in a.flat:
        total += v
    return total


def flat_index(a):
    return a.flat[2], a.flat[a.size - 1]


def flat_write(a):
    a.flat[1] = 7.0
    return a.sum()


def itemsize(a):
    return a.itemsize * a.size, a.astype(np.float32).itemsize


def ndim(a):
    return a.ndim, a[0].ndim, a[:, :, None].ndim


def shape(a):
    return a.shape, a.T.shape


def size(a):
    return a.size, a[1:].size


def strides(a):
    return a.strides, a.T.strides, a[:, ::2].strides


def transpose_T(a):
    return a.T, a.T.T + 1


def real_complex(z):
    return z.real, z.imag, z.real * 2 + z.imag


def real_float(a):
    return a.real, a.imag


def real_write(z):
    z.real[:] = 1.0
    z.imag[1:] = 2.0
    return z


def calc_all(a):
    return a.all(), (a > 0).all(), (a > -3).all(axis=0)


def calc_any(a):
    return a.any(), (a > 1).any(), (a > 1).any(axis=1)


def calc_argmax(a):
    return a.argmax(), a.argmax(axis=1)


def calc_argmin(a):
    return a.argmin(), a.argmin(axis=1)


def calc_conj(z):
    return z.conj(), z.real.conj()


def calc_conjugate(z):
    return z.conjugate()


def calc_cumprod(a):
    return a.cumprod(), a.cumprod(axis=0)


def calc_cumsum(a):
    return a.cumsum(), a.cumsum(axis=1)


def calc_max(a):
    return a.max(), a.max(axis=1)


def calc_mean(a):
    return a.mean(), a.mean(axis=0)


def calc_min(a):
    return a.min(), a.min(axis=1)


def calc_prod(a):
    return a.prod(), a.prod(axis=1)


def calc_std(a):
    return a.std(), a.std(axis=0), a.std(ddof=1)


def calc_var(a):
    return a.var(), a.var(axis=1)


def calc_take(a, idx):
    return a.take(idx), a.take(idx, axis=1)


def calc_sum(a):
    return a.sum(), a.sum(axis=0), a.sum(axis=1, dtype=np.float32)


def m_astype(a):
    return a.astype(np.int32), a.astype(np.float32), (a > 0).astype(np.int64)


def m_copy(a):
    b = a.copy()
    b[0] = 5.0
    return a, b


def m_dot(a, b):
    return a.dot(b), a.dot(b.T).shape


def _two_mats(n, rng):
    return floats(rng, n, 3), floats(rng, 4, 3)


def m_flatten(a):
    b = a.flatten()
    b[:1] = 9.0
    return a, b, a.T.flatten()


def m_item(a):
    return a[:1].item()


def m_item_index(a):
    return a.item(0), a.item(-1)


def m_ravel(a):
    return a.ravel(), a.T.ravel()


def m_repeat(a):
    return a.repeat(2), a.repeat(3, axis=0)


def m_reshape(a):
    return a.reshape(-1), a.reshape((3, -1)), a.reshape(a.shape[0], 3), a.reshape(-1, 1)


def m_transpose(a):
    return a.transpose(), a.transpose(1, 0), a.transpose((1, 0))


def m_view(a):
    return a.view(), a.view(np.int64), a.view(np.uint64)[::2]


def m_diagonal(a):
    return a.diagonal(), a.diagonal(1), a.diagonal(-1)


def m_fill(a):
    a.fill(3.5)
    b = np.empty(a.shape[0], dtype=np.int32)
    b.fill(2)
    return b


def nbytes(a):
    return a.nbytes, a[1:].nbytes


def m_squeeze(a):
    return a[:, None, :].squeeze(), a[:, :1].squeeze(axis=1)


def m_swapaxes(a):
    return a.swapaxes(0, 1), a[None].swapaxes(0, 2)


def top_level(name):
    """The top-level function of a calculation method: np.<name>(a) and along an axis."""
    fn = getattr(np, name)

    def call(a):
        if name == "take":
            return fn(a, [0, 2]), fn(a, [1, -1], axis=1)
        return fn(a), fn(a, axis=1)
    call.__name__ = f"np_{name}"
    return call


def dtype_function(a):
    return np.zeros(a.shape[0], dtype=np.dtype("float32")), a.astype(np.dtype(a.dtype)), np.dtype(a.dtype).itemsize


def matmul(a, b):
    return np.matmul(a, b.T), np.matmul(a[:, 0], b)


CASES = [
    _case("ndarray.dtype", dtype_, vec(np.float32)),
    _case("ndarray.dtype", dtype_, vec(np.int32)),
    _case("ndarray.flags", flags, mat()),
    _case("ndarray.flat", flat_iter, mat()),
    _case("ndarray.flat", flat_index, mat()),
    _case("ndarray.flat", flat_write, mat()),
    _case("ndarray.itemsize", itemsize, vec()),
    _case("ndarray.ndim", ndim, lambda n, rng: (floats(rng, n + 1, 3),)),
    _case("ndarray.shape", shape, mat()),
    _case("ndarray.size", size, mat()),
    _case("ndarray.strides", strides, mat(4), sizes=(1, 5, 17),
          note="strides of C-contiguous arguments and of views of them (an empty array's are NumPy's choice)"),
    _case("ndarray.T", transpose_T, mat()),
    _case("ndarray.real", real_complex, _complex_vec),
    _case("ndarray.real", real_float, vec()),
    _case("ndarray.real", real_write, _complex_vec,
          status="refused: writes through z.real / z.imag of a complex array (kiln's parts are copies)"),
    _case("ndarray.imag", real_complex, _complex_vec),
    _case("ndarray.imag", real_float, vec(np.int32)),
    _case("ndarray.all", calc_all, mat()),
    _case("ndarray.any", calc_any, mat()),
    _case("ndarray.argmax", calc_argmax, mat()),
    _case("ndarray.argmin", calc_argmin, mat()),
    _case("ndarray.conj", calc_conj, _complex_vec),
    _case("ndarray.conjugate", calc_conjugate, _complex_vec),
    _case("ndarray.cumprod", calc_cumprod, mat()),
    _case("ndarray.cumsum", calc_cumsum, mat()),
    _case("ndarray.max", calc_max, mat()),
    _case("ndarray.mean", calc_mean, mat()),
    _case("ndarray.min", calc_min, mat()),
    _case("ndarray.prod", calc_prod, mat()),
    _case("ndarray.std", calc_std, mat(), rtol=1e-10),
    _case("ndarray.take", calc_take, _mat_and_index),
    _case("ndarray.var", calc_var, mat(), rtol=1e-10),
    _case("ndarray.astype", m_astype, mat()),
    _case("ndarray.copy", m_copy, vec()),
    _case("ndarray.dot", m_dot, _two_mats),
    _case("ndarray.flatten", m_flatten, mat()),
    _case("ndarray.item", m_item, vec()),
    _case("ndarray.item", m_item_index, vec(np.int32)),
    _case("ndarray.ravel", m_ravel, mat()),
    _case("ndarray.repeat", m_repeat, mat()),
    _case("ndarray.reshape", m_reshape, mat()),
    _case("ndarray.sum", calc_sum, mat(), rtol=1e-5),
    _case("ndarray.transpose", m_transpose, mat()),
    _case("ndarray.view", m_view, vec()),
    *[_case(f"numpy.{name}", top_level(name), mat(), rtol=1e-10)
      for name in ("all", "any", "argmax", "argmin", "cumprod", "cumsum", "max", "mean", "min", "prod", "std",
                   "var", "sum")],
    _case("numpy.take", top_level("take"), lambda n, rng: (floats(rng, n + 3, 4),)),
    _case("numpy.dtype", dtype_function, vec(np.int32)),
    _add("numpy.matmul", matmul, lambda n, rng: (floats(rng, n, 3), floats(rng, 4, 3)), rtol=1e-10),
    _add("ndarray.diagonal", m_diagonal, mat(None)),
    _add("ndarray.diagonal", m_diagonal, mat(4)),
    _add("ndarray.fill", m_fill, vec()),
    _add("ndarray.nbytes", nbytes, vec(np.float32)),
    _add("ndarray.squeeze", m_squeeze, mat()),
    _add("ndarray.swapaxes", m_swapaxes, mat()),
]
