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
  (`immut.slice`, ...) and an update, parents before children.
Remaining tensorssa views then become immut access ops. The updates are
resolved by tensorssa-block-propagation, tensorssa-rename and
tensorssa-remove-update.

A view may be read after a write when the view or a view of it (at any
depth) is used by an op other than the write (for a view made in the
write's own block: by an op after the write), or is viewed again inside a
loop that holds the write (the next iteration makes that view again).

Linear in the writes to one array when the views read after a write sit
in the write's own block: op positions are numbered once, before any op is
inserted, and a write asks only about the views of its root in the blocks
around it. A view in the write's own block is read after it exactly when
its last use, or that of a view of it in the same block, comes after the
write, or a view of it in a nested block is used at all: that one number
per view, computed once, lets each (root, block) keep a list of the views
still read, which only shrinks as the writes of that block go by. A view
in an enclosing block is asked about directly, from a list per root and
block in program order without the views nothing uses or views; any use
of it counts as a read, so the output (and the time) grows with such views
times the writes nested below them.
"""

from __future__ import annotations

import bisect

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._tensorssa import as_operation, defining_op
from kiln.compiler.passes._util import collect_ops
from kiln.dialects.immut import ACCESS_OF_VIEW, ASSIGN_OF_VIEW
from kiln.dialects.tensorssa import VIEW_OPS, WRITE_OPS

# A view read after every later write of its block (a view of it in a nested block is used).
_READ_TO_THE_END = float("inf")


def _create(name: str, result_type: ir.Type, operands: list, attributes) -> ir.Value:
    attrs = {name: attributes[name] for name in attributes} if attributes else {}
    return ir.Operation.create(name, results=[result_type], operands=operands, attributes=attrs).result


def _update(new: ir.Value, old: ir.Value) -> None:
    ir.Operation.create("tensorssa.update", results=[], operands=[new, old])


def _enclosing(op: ir.Operation) -> list[ir.Operation]:
    """The ops that hold `op`, innermost first, up to (not including) the function."""
    found = []
    parent = op.parent
    while parent is not None:
        parent = as_operation(parent)
        if parent.name in ("func.func", "builtin.module"):
            break
        found.append(parent)
        parent = parent.parent
    return found


class _AliasIndex:
    """The alias trees and program positions of the input, built once: the
    views made from each value, the ops (other than views) that use each
    view, each op's pre-order position, and per root and block its views in
    program order. Views are not created or removed while writes are
    rewritten, the rewritten writes are erased only at the end, and the ops
    inserted are never asked about, so the index stays valid."""

    def __init__(self, module: ir.Module):
        self.position: dict = {}
        self.views: list[ir.Operation] = []
        self.writes: list[ir.Operation] = []

        def visit(op):
            self.position[op] = len(self.position)
            if op.name in VIEW_OPS:
                self.views.append(op)
            elif op.name in WRITE_OPS:
                self.writes.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        self.children: dict = {}
        self.users: dict = {}
        for view in self.views:
            self.children.setdefault(view.operands[0], []).append(view)
        for view in self.views:
            self.users[view] = [as_operation(use.owner) for use in view.results[0].uses
                                if not (as_operation(use.owner).name in VIEW_OPS and use.operand_number == 0)]
        # The ops holding some child of each view (for a loop that makes the child again).
        self.child_holders: dict = {view: set() for view in self.views}
        for view in self.views:
            parent = defining_op(view.operands[0])
            if parent is not None and parent in self.child_holders:
                self.child_holders[parent].update(_enclosing(view))
        self._number_trees()
        self._summarize()

    def _number_trees(self) -> None:
        """Each view's root, and its rank in its root's breadth-first order
        (parents first, children in program order)."""
        view_results = {view.results[0] for view in self.views}
        self.root: dict = {}
        self.rank: dict = {}
        for view in self.views:
            base = view.operands[0]
            if base in view_results or base in self.rank:
                continue
            self.rank[base] = len(self.rank)
            frontier = [base]
            while frontier:
                following = []
                for value in frontier:
                    for child in self.children.get(value, ()):
                        self.root[child] = base
                        self.rank[child] = len(self.rank)
                        following.append(child.results[0])
                frontier = following

    def _summarize(self) -> None:
        """Per view, the last position in its own block at which it or a view
        of it is read (`_READ_TO_THE_END` when a view of it in a nested block
        is used); and per (root, block), in program order, the views that
        may be read after a later write of that block, and those that may be
        read after a write nested deeper (something uses or views them)."""
        self.read_until: dict = {}
        used_below: dict = {}
        for view in reversed(self.views):  # children come after their parents
            last = max((self.position[owner] for owner in self.users[view]), default=-1)
            used = bool(self.users[view])
            for child in self.children.get(view.results[0], ()):
                used = used or used_below[child]
                if child.block == view.block:
                    last = max(last, self.read_until[child])
                elif used_below[child]:
                    last = _READ_TO_THE_END
            self.read_until[view] = last
            used_below[view] = used
        self.in_block: dict = {}      # (root, block) -> views that may be read after a later write there
        self.around: dict = {}        # (root, block) -> views that may be read after a write nested deeper
        for view in self.views:
            key = (self.root[view], view.block)
            if self.read_until[view] > self.position[view]:
                self.in_block.setdefault(key, _Pending()).views.append(view)
            if used_below[view] or view.results[0] in self.children:
                self.around.setdefault(key, []).append(view)
        self.around_positions = {key: [self.position[view] for view in views] for key, views in self.around.items()}

    def views_to_refresh(self, write: ir.Operation, root: ir.Value) -> list[ir.Operation]:
        """The views of `root` visible at `write` that may be read after it,
        in breadth-first order of the root's tree."""
        at = self.position[write]
        found = []
        pending = self.in_block.get((root, write.block))
        if pending is not None:
            found += pending.read_after(at, self)
        holders = _enclosing(write)
        if holders:
            holder_in = {holder.block: holder for holder in holders}
            memo: dict = {}
            for holder in holders:
                key = (root, holder.block)
                views = self.around.get(key, ())
                visible = bisect.bisect_left(self.around_positions.get(key, ()), self.position[holder])
                found += [view for view in views[:visible] if self.is_read(view, write, holder_in, memo)]
        return sorted(found, key=self.rank.__getitem__)

    def is_read(self, view: ir.Operation, write: ir.Operation, holder_in: dict, memo: dict) -> bool:
        """Whether `view` may be read after `write`: used by an op other than
        `write`, or a view of it is, or a view of it is made again in a later
        iteration of a loop around the write. A use earlier in the write's
        block does not count when the view is defined in that block too (it
        cannot run again after the write). `holder_in` maps each block
        around the write to its op that holds the write."""
        if view in memo:
            return memo[view]
        memo[view] = False
        same_block = view.block == write.block
        at = self.position[write]
        for owner in self.users[view]:
            if owner == write or (same_block and self.position[owner] < at):
                continue
            memo[view] = True
            return True
        children = self.children.get(view.results[0], ())
        # A view made from `view` inside a loop that runs the write (with
        # `view` defined outside it) is made again in the next iteration:
        # that reads `view` after the write.
        loop = holder_in.get(view.block) if not same_block else None
        if loop is not None and loop.name == "stablehlo.while" and loop in self.child_holders[view]:
            memo[view] = True
            return True
        memo[view] = any(self.is_read(child, write, holder_in, memo) for child in children)
        return memo[view]


class _Pending:
    """The views of one root in one block not yet known to be unread after
    every later write of that block, in program order; the writes of the
    block ask in program order, so a view dropped once stays dropped."""

    def __init__(self) -> None:
        self.views: list[ir.Operation] = []
        self.made = 0          # views[:made] are made before the last write asked
        self.live: list[ir.Operation] = []

    def read_after(self, at: int, index: _AliasIndex) -> list[ir.Operation]:
        while self.made < len(self.views) and index.position[self.views[self.made]] < at:
            self.live.append(self.views[self.made])
            self.made += 1
        self.live = [view for view in self.live if index.read_until[view] > at]
        return self.live


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
    # read reads the new root (its parent is one of them, or the root).
    new_of = {root: root_new}
    for alias in index.views_to_refresh(write, root):
        result = alias.results[0]
        alias_new = _create(ACCESS_OF_VIEW[alias.name], result.type,
                            [new_of[alias.operands[0]], *list(alias.operands)[1:]], alias.attributes)
        _update(alias_new, result)
        new_of[result] = alias_new


@register_pass
class TensorssaRewriteMutation(ModulePass):
    """Replace tensorssa writes by immut assign chains plus tensorssa.update markers."""

    name = "tensorssa-rewrite-mutation"

    def apply(self, module: ir.Module) -> None:
        index = _AliasIndex(module)
        for write in index.writes:
            with ir.InsertionPoint(write), write.location:
                _rewrite_write(write, index)
        for write in index.writes:
            write.erase()
        for view in collect_ops(module, VIEW_OPS):
            view = as_operation(view)
            with ir.InsertionPoint(view), view.location:
                access = _create(ACCESS_OF_VIEW[view.name], view.results[0].type, list(view.operands), view.attributes)
            view.results[0].replace_all_uses_with(access)
            view.erase()
