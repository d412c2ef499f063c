"""Stage "jaxpr": sorting and selection along the last axis.

In: an array of rank >= 1 (any real dtype or bool) and `kth`, an int64 1-D
array of positions along the last axis (increasing, in bounds: the numpy
layer normalizes them), empty for a full sort.
Out: `sort` gives the sorted values (NumPy's order, NaNs last) or, with
`indices=True`, the stable argsort (int64); with a non-empty `kth`, only a
partition: each kth position holds its sorted element, the others are on
the right side of it (their order is unspecified, as NumPy's).
"""

from __future__ import annotations

import numpy as np

from kiln.core import INDEX_DTYPE, DShapedArray, KilnInternalError, Primitive

sort_p = Primitive("sort")


@sort_p.def_abstract_eval
def _sort_rule(x, kth, *, indices):
    if x.aval.ndim == 0 or x.aval.dtype.kind not in "biuf":
        raise KilnInternalError(f"sort: needs a real or bool array of rank >= 1, got {x.aval}")
    if kth.aval.ndim != 1 or kth.aval.dtype != INDEX_DTYPE:
        raise KilnInternalError(f"sort: kth must be a 1-D int64 array, got {kth.aval}")
    return DShapedArray(x.aval.shape, INDEX_DTYPE if indices else x.aval.dtype, False if indices else x.aval.weak_type)


PRIMITIVES = [sort_p]


# --------------------------------------------------------------------------
# Interpreter rule (kiln.interpreter): NumPy's stable sort, or its partition.

from kiln.interpreter import interpret_rule  # noqa: E402


@interpret_rule(sort_p)
def _sort_value(x, kth, *, indices):
    x = np.asarray(x)
    if len(kth):
        return np.argpartition(x, kth, axis=-1) if indices else np.partition(x, kth, axis=-1)
    return np.argsort(x, axis=-1, kind="stable") if indices else np.sort(x, axis=-1, kind="stable")
