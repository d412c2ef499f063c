"""Helpers shared by the tensorssa-* passes: the op that defines a value,
and whether an op or a value sits inside another op's regions."""

from __future__ import annotations

from kiln.compiler.mlir import ir

CONTROL_OPS = ("stablehlo.while", "stablehlo.if", "stablehlo.case")


def as_operation(op) -> ir.Operation:
    return op.operation if hasattr(op, "operation") else op


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
