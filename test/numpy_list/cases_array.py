"""The NumPy list, family "array": attributes and methods of ndarray
(issue 15, part "the list and the general surface")."""

from __future__ import annotations

import numpy as np

from test.numpy_list.args import floats, mat, vec
from test.numpy_list.case import Case


def _case(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "array", True, **kw)


def _shape(a):
    return a.shape


def _ndim(a):
    return a.ndim


def _item(a):
    return a[:1].item()


CASES = [
    _case("ndarray.shape", _shape, mat()),
    _case("ndarray.ndim", _ndim, mat()),
    _case("ndarray.item", _item, vec(), sizes=(1, 5, 17)),
]
