"""The NumPy list, family "masks": selections by a boolean mask, whose
result size is data (issue 14's boolean masks, listed here for issue 15's
table). test/test_boolean_masks.py holds their edge cases."""

from __future__ import annotations

import numpy as np

from test.numpy_list.args import floats
from test.numpy_list.case import Case
from test.numpy_list.numba_page import page_names

_PAGE = set(page_names())


def _case(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "masks", name in _PAGE, **kw)


def _one(n, rng):
    return (floats(rng, n),)


def _two_d(n, rng):
    return (floats(rng, n, 3),)


def nonzero_method(a):
    return (a > 0).nonzero()


def nonzero_method_2d(a):
    rows, cols = (a > 0).nonzero()
    return rows, cols, a[rows, cols]


def extract_positive(a):
    return np.extract(a > 0, a)


def compress_rows(a):
    return np.compress(a[:, 0] > 0, a, axis=0), np.compress(a.ravel() > 0.5, a)


def mask_read(a):
    return a[a > 0].sum(), a[(a > -0.5) & (a < 0.5)] * 2.0


def mask_write(a):
    a[a < 0] = 0.0
    a[a > 1.0] *= 0.5


def mask_write_rows(a):
    a[a[:, 0] > 0] = -1.0
    return a.sum()


CASES = [
    _case("ndarray.nonzero", nonzero_method, _one),
    _case("ndarray.nonzero", nonzero_method_2d, _two_d),
    _case("numpy.extract", extract_positive, _one),
    _case("numpy.compress", compress_rows, _two_d),
    _case("ndarray.__getitem__ (boolean mask)", mask_read, _one),
    _case("ndarray.__setitem__ (boolean mask)", mask_write, _one),
    _case("ndarray.__setitem__ (boolean mask)", mask_write_rows, _two_d),
]
