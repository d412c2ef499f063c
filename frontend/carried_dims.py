"""Stage "jaxpr": loop bodies that replace a carried array's dims by other dims fixed for the loop.

In: a traced loop body (`kiln.control_flow._Body`: its builder and carried
arguments) and the values it returns, under `allow_array_resizing=INFER`.
Out: the results retyped to the carried dims with a run-time check per
replaced dim (`x = A @ x` with a square `A`), or None when the loop must resize.
"""

from __future__ import annotations

from typing import Any

from kiln.core import is_static_dim, same_dim
from kiln.tracing import Builder


def _outer_dim(builder: Builder, d: Any) -> bool:
    """A dim fixed for the whole loop: static, or captured from outside."""
    return is_static_dim(d) or any(d is c for c in builder.constvars)


def unify_carried_dims(name: str, body: Any, outs: list) -> list | None:
    """INFER mode: the body's results retyped to the carried dims, with a
    run-time check for each dim the body replaced by another dim fixed for
    the whole loop (`x = A @ x` with a square `A`); None when some carried
    array really changes size (the loop must resize)."""
    from kiln.numpy._bindings import knp
    from kiln.numpy._base import require_equal_dims

    pairs = []
    for k, (arg, out) in enumerate(zip(body.carried, outs)):
        if out.aval.ndim != arg.aval.ndim:
            return outs  # _check_shapes reports the rank change
        for axis, (a, b) in enumerate(zip(arg.aval.shape, out.aval.shape)):
            if same_dim(a, b):
                continue
            if not (_outer_dim(body.builder, a) and _outer_dim(body.builder, b)):
                return None
            if is_static_dim(a) and is_static_dim(b):
                return None
            pairs.append((k, axis, a, b))
    if not pairs:
        return outs
    for k, axis, a, b in pairs:
        require_equal_dims(a, b, "ValueError",
                           f"{name}: carried array {k} enters the loop with size {{}} on axis {axis} but the "
                           "body returns size {}; the next iteration would compute with the new size, which "
                           "kiln requires to equal the old one (NumPy would typically fail there): make the "
                           "sizes match (e.g. a square matrix)")
    return [o if all(same_dim(a, b) for a, b in zip(arg.aval.shape, o.aval.shape))
            else knp.reshape(o, arg.aval.shape) for arg, o in zip(body.carried, outs)]
