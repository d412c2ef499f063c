"""Stage "jaxpr": dot_general (contractions with batch dims).

In: lhs, rhs of one dtype and `dimension_numbers =
((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`.
Out: batch dims, then lhs free dims, then rhs free dims (as StableHLO).
"""

from __future__ import annotations

from kiln.core import DShapedArray, KilnInternalError, Primitive
from kiln.primitives._rules import require_same_dtypes

dot_general_p = Primitive("dot_general")


@dot_general_p.def_abstract_eval
def _dot_general_rule(lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    dtype = require_same_dtypes("dot_general", [lhs.aval, rhs.aval])
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise KilnInternalError(f"dot_general: bad dimension numbers {dimension_numbers}")
    ls, rs = lhs.aval.shape, rhs.aval.shape
    batch = [ls[i] for i in lb]
    lhs_free = [d for i, d in enumerate(ls) if i not in lc and i not in lb]
    rhs_free = [d for i, d in enumerate(rs) if i not in rc and i not in rb]
    return DShapedArray(batch + lhs_free + rhs_free, dtype, lhs.aval.weak_type and rhs.aval.weak_type)


PRIMITIVES = [dot_general_p]


# --------------------------------------------------------------------------
# Interpreter rule (kiln.interpreter): an einsum whose subscripts spell the
# dimension numbers.

import numpy as np  # noqa: E402

from kiln.interpreter import interpret_rule  # noqa: E402


@interpret_rule(dot_general_p)
def _dot_general_value(lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lhs_names = [next(letters) for _ in range(lhs.ndim)]
    rhs_names = [next(letters) for _ in range(rhs.ndim)]
    for i, j in zip(list(lc) + list(lb), list(rc) + list(rb)):
        rhs_names[j] = lhs_names[i]
    batch = [lhs_names[i] for i in lb]
    lhs_free = [n for i, n in enumerate(lhs_names) if i not in lc and i not in lb]
    rhs_free = [n for j, n in enumerate(rhs_names) if j not in rc and j not in rb]
    spec = f"{''.join(lhs_names)},{''.join(rhs_names)}->{''.join(batch + lhs_free + rhs_free)}"
    return np.einsum(spec, lhs, rhs, optimize=lhs.dtype.kind in "fc")
