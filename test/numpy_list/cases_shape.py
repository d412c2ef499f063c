"""The NumPy list, family "shape": stacking, splitting and shape functions
(issue 15, part "the list and the general surface")."""

from __future__ import annotations

import numpy as np

from test.numpy_list.args import floats, ints, mat, two_vecs, vec
from test.numpy_list.case import Case


def _case(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "shape", True, **kw)


def _add(name, fn, make_args, **kw):
    return Case(name, fn, make_args, "shape", False, **kw)


def _vec_and_mat(n, rng):
    return floats(rng, n), floats(rng, n, 3)


def _two_mats(n, rng):
    return floats(rng, n, 3), floats(rng, n, 3)


def _cube(n, rng):
    return (floats(rng, n, 3, 2),)


def append(a, b):
    return np.append(a, b), np.append(a, 1.5), np.append(b, b, axis=0)


def _append_args(n, rng):
    return floats(rng, n), floats(rng, n, 3)


def atleast_1d(a):
    return np.atleast_1d(a), np.atleast_1d(a[0]), np.atleast_1d(a, a[:2])


def atleast_2d(a):
    return np.atleast_2d(a), np.atleast_2d(a[0]), np.atleast_2d(a[:, None])


def atleast_3d(a):
    return np.atleast_3d(a), np.atleast_3d(a[0]), np.atleast_3d(a[:, None]), np.atleast_3d(a[:, None, None])


def column_stack(a, b):
    return np.column_stack((a, b)), np.column_stack([a, a, b])


def concatenate(a, b):
    return np.concatenate((a, b)), np.concatenate([a, b], axis=1), np.concatenate((a, b), axis=None)


def delete(a):
    return np.delete(a, 0), np.delete(a, [0, 2]), np.delete(a, -1)


def _at_least_3(n, rng):
    return (floats(rng, n + 3),)


def dstack(a, b):
    return np.dstack((a, b)), np.dstack((a[:, 0], b[:, 0]))


def expand_dims(a):
    return np.expand_dims(a, 0), np.expand_dims(a, -1), np.expand_dims(a, (0, 2))


def hstack(a, b):
    return np.hstack((a, b)), np.hstack((a[:, 0], b[:, 1]))


def vstack(a, b):
    return np.vstack((a, b)), np.vstack((a[:, 0], b[:, 1]))


def ravel(a):
    return np.ravel(a), np.ravel(a.T)


def reshape(a):
    return np.reshape(a, -1), np.reshape(a, (3, a.shape[0])), np.reshape(a, (a.shape[0], 3, 1))


def repeat(a):
    return np.repeat(a, 2), np.repeat(a, 3, axis=1), np.repeat(a, a.shape[0])


def repeat_counts(a, r):
    return np.repeat(a, r), np.repeat(a[:, None], r, axis=0)


def _repeat_counts_args(n, rng):
    return floats(rng, n), ints(rng, n, low=0, high=4)


def roll(a):
    return np.roll(a, 1), np.roll(a, -2), np.roll(a, a.shape[0] + 1)


def roll_axis(a):
    return np.roll(a, 1, axis=0), np.roll(a, -1, axis=1), np.roll(a, 2)


def stack(a, b):
    return np.stack((a, b)), np.stack([a, b], axis=1), np.stack((a, b), axis=-1)


def transpose(a):
    return np.transpose(a), np.transpose(a, (1, 0, 2)), np.transpose(a, (2, 0, 1))


def shape(a):
    return np.shape(a), np.shape(a[0])


def pad(a):
    return np.pad(a, 1), np.pad(a, (2, 1), constant_values=3.0), np.pad(a, (1, 2), mode="edge")


def pad_2d(a):
    return np.pad(a, ((1, 0), (2, 1))), np.pad(a, 1, mode="reflect"), np.pad(a, 2, mode="wrap")


def tile(a):
    return np.tile(a, 2), np.tile(a, (2, 1)), np.tile(a[:, None], (1, 3))


def split(a):
    return np.split(a, 3), np.split(a, [1, 2]), np.split(a, 3, axis=1)


def _split_args(n, rng):
    return (floats(rng, 3 * n, 3),)


def array_split(a):
    return np.array_split(a, 3), np.array_split(a, 2, axis=1), np.array_split(a, [1, 4])


def hsplit(a):
    return np.hsplit(a, 3), np.hsplit(a, [1])


def vsplit(a):
    return np.vsplit(a, 3), np.vsplit(a, [2])


def dsplit(a):
    return np.dsplit(a, 2), np.dsplit(a, [1])


def flip(a):
    return np.flip(a), np.flip(a, 0), np.flip(a, axis=1)


def fliplr(a):
    return np.fliplr(a)


def flipud(a):
    return np.flipud(a), np.flipud(a[:, 0])


def rot90(a):
    return np.rot90(a), np.rot90(a, 2), np.rot90(a, -1), np.rot90(a, 1, axes=(1, 0))


def insert(a):
    return np.insert(a, 1, 9.0), np.insert(a, 0, [1.0, 2.0]), np.insert(a, a.shape[0], 5.0)


def broadcast_arrays(a, b):
    x, y = np.broadcast_arrays(a[:, None], b)
    return x, y


def broadcast_to(a):
    return np.broadcast_to(a, (3, a.shape[0])), np.broadcast_to(a[:1], a.shape)


def take_along_axis(a, idx):
    return (np.take_along_axis(a, idx, axis=1), np.take_along_axis(a.T, idx.T, axis=0),
            np.take_along_axis(a[:, 0], idx[:, 1], axis=None))


def _take_along_args(n, rng):
    return floats(rng, n, 4), ints(rng, n, 2, low=0, high=4)


def put_along_axis(a, idx):
    np.put_along_axis(a, idx, -1.0, axis=1)
    return a


def squeeze(a):
    return np.squeeze(a[:, None]), np.squeeze(a[None, :, None], axis=2)


def swapaxes(a):
    return np.swapaxes(a, 0, 1), np.swapaxes(a, 0, 2)


def moveaxis(a):
    return np.moveaxis(a, 0, -1), np.moveaxis(a, -1, 0), np.moveaxis(a, [0, 1], [1, 2])


def diagonal(a):
    return np.diagonal(a), np.diagonal(a, 1), np.diagonal(a[None], axis1=1, axis2=2)


CASES = [
    _case("numpy.append", append, _append_args),
    _case("numpy.atleast_1d", atleast_1d, _at_least_3),
    _case("numpy.atleast_2d", atleast_2d, vec()),
    _case("numpy.atleast_3d", atleast_3d, vec()),
    _case("numpy.column_stack", column_stack, two_vecs()),
    _case("numpy.column_stack", column_stack, _vec_and_mat),
    _case("numpy.concatenate", concatenate, _two_mats),
    _case("numpy.delete", delete, _at_least_3),
    _case("numpy.dstack", dstack, _two_mats),
    _case("numpy.expand_dims", expand_dims, mat()),
    _case("numpy.hstack", hstack, _two_mats),
    _case("numpy.vstack", vstack, _two_mats),
    _case("numpy.ravel", ravel, mat()),
    _case("numpy.reshape", reshape, mat()),
    _case("numpy.repeat", repeat, mat()),
    _case("numpy.repeat", repeat_counts, _repeat_counts_args),
    _case("numpy.roll", roll, vec()),
    _case("numpy.roll", roll_axis, mat()),
    _case("numpy.stack", stack, _two_mats),
    _case("numpy.transpose", transpose, _cube),
    _case("numpy.shape", shape, mat()),
    _add("numpy.pad", pad, vec()),
    _add("numpy.pad", pad_2d, lambda n, rng: (floats(rng, n + 2, 4),)),
    _add("numpy.tile", tile, vec()),
    _add("numpy.split", split, _split_args),
    _add("numpy.array_split", array_split, mat()),
    _add("numpy.hsplit", hsplit, lambda n, rng: (floats(rng, n, 6),)),
    _add("numpy.vsplit", vsplit, _split_args),
    _add("numpy.dsplit", dsplit, lambda n, rng: (floats(rng, n, 2, 4),)),
    _add("numpy.flip", flip, mat()),
    _add("numpy.fliplr", fliplr, mat()),
    _add("numpy.flipud", flipud, mat()),
    _add("numpy.rot90", rot90, mat()),
    _add("numpy.insert", insert, vec()),
    _add("numpy.broadcast_arrays", broadcast_arrays, lambda n, rng: (floats(rng, n), floats(rng, 3))),
    _add("numpy.broadcast_to", broadcast_to, vec()),
    _add("numpy.take_along_axis", take_along_axis, _take_along_args),
    _add("numpy.put_along_axis", put_along_axis, _take_along_args),
    _add("numpy.squeeze", squeeze, vec()),
    _add("numpy.swapaxes", swapaxes, _cube),
    _add("numpy.moveaxis", moveaxis, _cube),
    _add("numpy.diagonal", diagonal, mat(None)),
    _add("numpy.diagonal", diagonal, mat(4)),
]
