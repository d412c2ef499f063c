"""Stage "jaxpr": primitives with reference semantics (copies and writes).

Views (`slice`, `reshape`, `transpose`, `reverse`, `match_dims`, declared
with a `ViewRule` in their family modules) return an alias of their
operand: a write through any alias is seen by every alias. `copy` makes a fresh array that aliases nothing.
`assign(target, value)` overwrites the target (a view or a whole array)
with a value of its shape and dtype; `scatter(target, indices, updates,
axis)` overwrites `target[..., indices, ...]` along `axis`. Both are
effectful and have no results.
"""

from __future__ import annotations

from kiln.core import KilnInternalError, Primitive, same_dim

copy_p = Primitive("copy")
assign_p = Primitive("assign", multiple_results=True, effectful=True)
scatter_p = Primitive("scatter", multiple_results=True, effectful=True)
WRITE_PRIMITIVES = (assign_p, scatter_p)


@copy_p.def_abstract_eval
def _copy_rule(x):
    return x.aval


@assign_p.def_abstract_eval
def _assign_rule(target, value):
    t, v = target.aval, value.aval
    if t.dtype != v.dtype or t.ndim != v.ndim or not all(same_dim(a, b) for a, b in zip(t.shape, v.shape)):
        raise KilnInternalError(f"assign: value {v.str_short()} must match target {t.str_short()}")
    return []


@scatter_p.def_abstract_eval
def _scatter_rule(target, indices, updates, *, axis):
    t = target.aval
    expected = t.shape[:axis] + indices.aval.shape + t.shape[axis + 1:]
    u = updates.aval
    if u.dtype != t.dtype or len(u.shape) != len(expected) or not all(
            same_dim(a, b) for a, b in zip(u.shape, expected)):
        raise KilnInternalError(f"scatter: updates {u.str_short()} do not match the indexed target")
    return []


PRIMITIVES = [copy_p, assign_p, scatter_p]


# --------------------------------------------------------------------------
# Interpreter rules (kiln.interpreter): writes go through the target, a
# NumPy view of its base, so every alias sees them.

import numpy as np  # noqa: E402

from kiln.interpreter import interpret_rule  # noqa: E402


@interpret_rule(copy_p)
def _copy_value(x):
    return np.array(x, copy=True)


@interpret_rule(assign_p)
def _assign_value(target, value):
    np.copyto(target, value)
    return []


@interpret_rule(scatter_p)
def _scatter_value(target, indices, updates, *, axis):
    target[(slice(None),) * axis + (indices,)] = updates
    return []
