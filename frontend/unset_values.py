"""Stage "jaxpr": values no path reads before it sets them, in branches and loops.

In: `UNSET` among the results of cond branches or the initial values of a loop:
autograph's slot for the value a `return` inside a loop gives back, which the
function reads only when the flag beside it says the `return` ran.
Out: where another path (the other branch, the loop body) gives the slot a value,
a placeholder of that value's type — zeros of its dtype, with the dims the
enclosing scope knows and 0 for the others — so that every path carries the
same structure. A slot no path sets stays UNSET: it is a pytree node without
leaves, so branches and loops carry nothing for it.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kiln import tree
from kiln.core import is_static_dim
from kiln.tracing import Builder, Tracer


class _Unset:
    """The type of UNSET (one instance)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"

    def __reduce__(self) -> str:
        return "UNSET"


UNSET = _Unset()
tree.register_pytree_node(_Unset, lambda _: ((), None), lambda aux, children: UNSET)


def has_unset(value: Any) -> bool:
    """`value` is UNSET or a tuple/list holding one."""
    if value is UNSET:
        return True
    return isinstance(value, (tuple, list)) and any(has_unset(v) for v in value)


def _template(values: list) -> Any:
    """For one position of several paths' results: the first value given to
    it, recursing into tuples/lists of one length so that nested UNSETs are
    matched too; UNSET when no path sets it."""
    given = [v for v in values if v is not UNSET]
    if not given:
        return UNSET
    first = given[0]
    if isinstance(first, (tuple, list)) and all(type(v) is type(first) and len(v) == len(first) for v in given):
        return type(first)(_template([v[k] for v in given]) for k in range(len(first)))
    return first


def _filled(value: Any, template: Any, placeholder: Callable[[Any], Any]) -> Any:
    if value is UNSET:
        if template is UNSET:
            return UNSET
        leaves, structure = tree.flatten(template)
        return tree.unflatten(structure, [placeholder(leaf) for leaf in leaves])
    if isinstance(value, (tuple, list)) and type(template) is type(value) and len(template) == len(value):
        return type(value)(_filled(v, t, placeholder) for v, t in zip(value, template))
    return value


def placeholder_maker(sources: list[Builder]) -> Callable[[Any], Any]:
    """A function making, in the current scope, a zero like a leaf of one of
    the scopes `sources` (children of the current scope or of its parent):
    its static dims, the dims of enclosing scopes (captured by those scopes
    or not), 0 for dims they computed themselves."""
    captured = {id(c): s for source in sources for c, s in zip(source.constvars, source.const_sources)}

    def placeholder(leaf: Any) -> Any:
        from kiln.numpy._bindings import knp

        if isinstance(leaf, (bool, int, float, complex)) and not isinstance(leaf, np.generic):
            return type(leaf)(0)
        if isinstance(leaf, (np.generic, np.ndarray)):
            return np.zeros_like(leaf)
        if not isinstance(leaf, Tracer):
            return leaf
        aval = leaf.aval
        if aval.weak_type and aval.shape == ():
            return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}[aval.dtype.kind]
        return knp.zeros(tuple(dim(d) for d in aval.shape), aval.dtype)

    def dim(d: Any) -> Any:
        if is_static_dim(d):
            return int(d)
        if id(d) in captured:
            return captured[id(d)]
        if isinstance(d, Tracer) and not any(d.builder is source for source in sources):
            return d  # a dim of an enclosing scope, which the current scope sees too
        return 0

    return placeholder


def fill(value: Any, others: list, placeholder: Callable[[Any], Any]) -> Any:
    """`value` with each UNSET that one of `others` (other paths' values for
    the same positions) sets replaced by placeholders of that value."""
    if not has_unset(value):
        return value
    return _filled(value, _template([value, *others]), placeholder)
