"""Shared helpers for abstract-evaluation rules (stage "jaxpr")."""

from __future__ import annotations

from typing import Any

from kiln.core import DShapedArray, KilnInternalError, is_static_dim, same_dim


def require_same_shapes(name: str, avals: list[DShapedArray]) -> tuple:
    """Operands of a strict primitive share one shape (the numpy layer broadcasts first)."""
    first = avals[0]
    for a in avals[1:]:
        if a.ndim != first.ndim or not all(same_dim(x, y) for x, y in zip(a.shape, first.shape)):
            raise KilnInternalError(
                f"{name}: operand shapes {first.str_short()} and {a.str_short()} differ "
                "(the numpy layer must broadcast before binding)"
            )
    return first.shape


def require_same_dtypes(name: str, avals: list[DShapedArray]) -> Any:
    first = avals[0]
    for a in avals[1:]:
        if a.dtype != first.dtype:
            raise KilnInternalError(f"{name}: operand dtypes {first.dtype} and {a.dtype} differ")
    return first.dtype


def shape_with_dynamic(static_shape: tuple, dyn_operands: list) -> tuple:
    """Fill the `None` entries of `static_shape` with the dyn operands, in order."""
    dyn = iter(dyn_operands)
    shape = tuple(d if d is not None else next(dyn) for d in static_shape)
    for d in shape:
        if not is_static_dim(d) and d.aval.shape != ():
            raise KilnInternalError(f"dynamic dim operand must be a scalar, got {d.aval}")
    return shape


def all_weak(avals: list[DShapedArray]) -> bool:
    return all(a.weak_type for a in avals)
