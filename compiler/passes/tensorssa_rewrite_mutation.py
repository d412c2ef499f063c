"""Pass `tensorssa-rewrite-mutation` (stage "functionalized", first).

In: a module whose tensors have reference semantics: tensorssa views and
writes (`tensorssa.copy`, `tensorssa.scatter`).
Out: each write replaced, at its place, by pure `immut` ops:
- *pass up*: the written view's new value (`immut.assign` / `immut.scatter`),
  then each parent's new value by the assign op of the view that made the
  child (`immut.slice_rev`, `immut.reshape_rev`, ...), up to the root array;
  `tensorssa.update(new_root, root)`.
- *pass down*: every other view of the root visible at the write that may
  be read after it gets its new value re-read from the new root
  (`immut.slice`, ...) and an update.
Remaining tensorssa views then become immut access ops. The updates are
resolved by tensorssa-block-propagation, tensorssa-rename and
tensorssa-remove-update.
"""

from __future__ import annotations

from collections import deque

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._tensorssa import (
    ancestor_in_block,
    as_operation,
    defining_op,
    is_nested_in,
    visible_before,
)
from kiln.compiler.passes._util import collect_ops
from kiln.dialects.immut import ACCESS_OF_VIEW, ASSIGN_OF_VIEW
from kiln.dialects.tensorssa import VIEW_OPS, WRITE_OPS


def _create(name: str, result_type: ir.Type, operands: list, attributes) -> ir.Value:
    attrs = {name: attributes[name] for name in attributes} if attributes else {}
    return ir.Operation.create(name, results=[result_type], operands=operands, attributes=attrs).result


def _update(new: ir.Value, old: ir.Value) -> None:
    ir.Operation.create("tensorssa.update", results=[], operands=[new, old])


class _AliasIndex:
    """The alias trees of the input, built once: the views made from each
    value, and the ops (other than views) that use each view. Views are not
    created or removed while writes are rewritten, and the rewritten writes
    are erased only at the end, so the index stays valid."""

    def __init__(self, views: list[ir.Operation]):
        self.children: dict = {}
        self.users: dict = {}
        for view in views:
            self.children.setdefault(view.operands[0], []).append(view)
        for view in views:
            self.users[view] = [as_operation(use.owner) for use in view.results[0].uses
                                if not (as_operation(use.owner).name in VIEW_OPS and use.operand_number == 0)]

    def views_under(self, root: ir.Value) -> list[ir.Operation]:
        """Every view of `root` or of a view of it; parents first."""
        found = []
        frontier = deque([root])
        while frontier:
            for view in self.children.get(frontier.popleft(), ()):
                found.append(view)
                frontier.append(view.results[0])
        return found

    def is_read(self, view: ir.Operation, write: ir.Operation, memo: dict) -> bool:
        """Whether `view` may be read after `write`: used by an op other than
        `write`, or a view of it is, or a view of it is made again in a later
        iteration of a loop around the write. A use earlier in the write's
        block does not count when the view is defined in that block too (it
        cannot run again after the write)."""
        if view in memo:
            return memo[view]
        memo[view] = False
        same_block = view.block == write.block
        for owner in self.users[view]:
            if owner == write:
                continue
            if same_block:
                anc = ancestor_in_block(owner, write.block)
                if anc is not None and anc != write and anc.is_before_in_block(write):
                    continue
            memo[view] = True
            return True
        children = self.children.get(view.results[0], ())
        # A view made from `view` inside a loop that runs the write (with
        # `view` defined outside it) is made again in the next iteration:
        # that reads `view` after the write.
        loop = ancestor_in_block(write, view.block) if not same_block else None
        if loop is not None and loop.name == "stablehlo.while" and any(is_nested_in(c, loop) for c in children):
            memo[view] = True
            return True
        memo[view] = any(self.is_read(child, write, memo) for child in children)
        return memo[view]


def _rewrite_write(write: ir.Operation, index: _AliasIndex) -> None:
    target = write.operands[0]
    if write.name == "tensorssa.copy":
        new_value = _create("immut.assign", target.type, [write.operands[1], target], [])
    else:
        new_value = _create("immut.scatter", target.type, list(write.operands), write.attributes)
    # Pass up: rebuild each parent from its child's new value.
    child, child_new = target, new_value
    view = defining_op(child)
    while view is not None and view.name in VIEW_OPS:
        parent = view.operands[0]
        # slice_rev also needs the box; the other assign ops read base and value only.
        box = list(view.operands)[1:] if view.name == "tensorssa.slice" else []
        child_new = _create(ASSIGN_OF_VIEW[view.name], parent.type, [parent, child_new, *box], view.attributes)
        child = parent
        view = defining_op(child)
    root, root_new = child, child_new
    _update(root_new, root)
    # Pass down: every alias of the root in scope here that may still be
    # read reads the new root.
    new_of = {root: root_new}
    memo: dict = {}
    for alias in index.views_under(root):
        result = alias.results[0]
        parent_new = new_of.get(alias.operands[0])
        if parent_new is None or not visible_before(result, write) or not index.is_read(alias, write, memo):
            continue
        alias_new = _create(ACCESS_OF_VIEW[alias.name], result.type,
                            [parent_new, *list(alias.operands)[1:]], alias.attributes)
        _update(alias_new, result)
        new_of[result] = alias_new


@register_pass
class TensorssaRewriteMutation(ModulePass):
    """Replace tensorssa writes by immut assign chains plus tensorssa.update markers."""

    name = "tensorssa-rewrite-mutation"

    def apply(self, module: ir.Module) -> None:
        index = _AliasIndex([as_operation(view) for view in collect_ops(module, VIEW_OPS)])
        writes = [as_operation(write) for write in collect_ops(module, WRITE_OPS)]
        for write in writes:
            with ir.InsertionPoint(write), write.location:
                _rewrite_write(write, index)
        for write in writes:
            write.erase()
        for view in collect_ops(module, VIEW_OPS):
            view = as_operation(view)
            with ir.InsertionPoint(view), view.location:
                access = _create(ACCESS_OF_VIEW[view.name], view.results[0].type, list(view.operands), view.attributes)
            view.results[0].replace_all_uses_with(access)
            view.erase()
