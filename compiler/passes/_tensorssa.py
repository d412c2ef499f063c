"""Helpers shared by the tensorssa-* passes: program order and visibility
of values and ops across nested regions."""

from __future__ import annotations

from kiln.compiler.mlir import ir

CONTROL_OPS = ("stablehlo.while", "stablehlo.if", "stablehlo.case")


def as_operation(op) -> ir.Operation:
    return op.operation if hasattr(op, "operation") else op


def ancestor_in_block(op: ir.Operation, block: ir.Block) -> ir.Operation | None:
    """The op of `block` that is `op` or contains it, else None."""
    op = as_operation(op)
    # A top-level op (the module) has no block: stop before asking for it.
    while op is not None and op.name != "builtin.module":
        if op.block == block:
            return op
        parent = op.parent
        op = as_operation(parent) if parent is not None else None
    return None


def is_after(op: ir.Operation, point: ir.Operation) -> bool:
    """Whether `op` runs after `point` in `point`'s block (directly or nested)."""
    anc = ancestor_in_block(op, point.block)
    return anc is not None and anc != point and point.is_before_in_block(anc)


def defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return as_operation(owner)


def is_nested_in(op: ir.Operation, container: ir.Operation) -> bool:
    """Whether `op` sits (at any depth) in one of `container`'s regions."""
    while op is not None:
        parent = op.parent
        if parent is None:
            return False
        op = as_operation(parent)
        if op == container:
            return True
    return False


def defined_inside(value: ir.Value, container: ir.Operation) -> bool:
    """Whether `value` is defined in one of `container`'s regions."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        op = as_operation(owner.owner)
        return op == container or is_nested_in(op, container)
    return is_nested_in(as_operation(owner), container)


def visible_before(value: ir.Value, point: ir.Operation) -> bool:
    """Whether `value` is defined before `point` and in scope there."""
    op = defining_op(value)
    if op is None:
        block = value.owner
        return ancestor_in_block(point, block) is not None
    anc = ancestor_in_block(point, op.block)
    return anc is not None and op.is_before_in_block(anc)
