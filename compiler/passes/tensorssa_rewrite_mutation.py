"""Pass `tensorssa-rewrite-mutation` (stage "functionalized", first).

In: a module whose tensors have reference semantics: tensorssa views and
writes (`tensorssa.copy`, `tensorssa.scatter`).
Out: each write replaced, at its place, by pure `immut` ops:
- *pass up*: the written view's new value (`immut.assign` / `immut.scatter`),
  then each parent's new value by the assign op of the view that made the
  child (`immut.slice_rev`, `immut.reshape_rev`, ...), up to the root array;
  `tensorssa.update(new_root, root)`.
- *pass down*: every other view of the root visible at the write gets its new
  value re-read from the new root (`immut.slice`, ...) and an update.
Remaining tensorssa views then become immut access ops. The updates are
resolved by tensorssa-block-propagation, tensorssa-rename and
tensorssa-remove-update.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import register_pass
from kiln.compiler.passes._tensorssa import as_operation, defining_op, views_of, visible_before
from kiln.compiler.passes._util import collect_ops
from kiln.dialects.immut import ACCESS_OF_VIEW, ASSIGN_OF_VIEW
from kiln.dialects.tensorssa import VIEW_OPS, WRITE_OPS


def _create(name: str, result_type: ir.Type, operands: list, attributes) -> ir.Value:
    attrs = {name: attributes[name] for name in attributes} if attributes else {}
    return ir.Operation.create(name, results=[result_type], operands=operands, attributes=attrs).result


def _update(new: ir.Value, old: ir.Value) -> None:
    ir.Operation.create("tensorssa.update", results=[], operands=[new, old])


def _rewrite_write(write: ir.Operation) -> None:
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
    # Pass down: every alias of the root in scope here reads the new root.
    new_of = [(root, root_new)]
    for alias in views_of(root):
        result = alias.results[0]
        if not visible_before(result, write):
            continue
        parent_new = next((n for v, n in new_of if v == alias.operands[0]), None)
        if parent_new is None:
            continue
        alias_new = _create(ACCESS_OF_VIEW[alias.name], result.type,
                            [parent_new, *list(alias.operands)[1:]], alias.attributes)
        _update(alias_new, result)
        new_of.append((result, alias_new))


@register_pass("tensorssa-rewrite-mutation")
def rewrite_mutation(module: ir.Module, options: dict) -> None:
    """Replace tensorssa writes by immut assign chains plus tensorssa.update markers."""
    for write in collect_ops(module, WRITE_OPS):
        write = as_operation(write)
        with ir.InsertionPoint(write), write.location:
            _rewrite_write(write)
        write.erase()
    for view in collect_ops(module, VIEW_OPS):
        view = as_operation(view)
        with ir.InsertionPoint(view), view.location:
            access = _create(ACCESS_OF_VIEW[view.name], view.results[0].type, list(view.operands), view.attributes)
        view.results[0].replace_all_uses_with(access)
        view.erase()
