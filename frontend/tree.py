"""Pytrees: nested containers of leaves, flattened into a list and rebuilt.

Containers are tuples, lists, dicts (keys sorted), None, namedtuples,
dataclasses (every field a child, unless its metadata says `static=True`)
and classes registered with `register_pytree_node`; anything else is a leaf.

>>> leaves, tree = flatten((1, {"a": 2}))
>>> unflatten(tree, [x * 10 for x in leaves])
(10, {'a': 20})
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from kiln.errors import KilnTypeError

# type -> (flatten: obj -> (children, aux data), unflatten: (aux data, children) -> obj)
_REGISTERED: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten_fn: Callable[[Any], tuple[Any, Any]],
                         unflatten_fn: Callable[[Any, list], Any]) -> type:
    """Make instances of `cls` pytree nodes: `flatten_fn(obj)` returns
    (children, aux data), `unflatten_fn(aux data, children)` rebuilds it.
    Children are pytrees themselves; the aux data is static (hashable, part
    of the compiled signature). Returns `cls`.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> _ = register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, ch: Pair(*ch))
    >>> flatten(Pair(1, 2))[0]
    [1, 2]
    """
    if not isinstance(cls, type):
        raise KilnTypeError(f"register_pytree_node: expected a class, got {cls!r}")
    if cls in (tuple, list, dict, type(None)):
        raise KilnTypeError(f"register_pytree_node: {cls.__name__} is already a pytree node")
    _REGISTERED[cls] = (flatten_fn, unflatten_fn)
    return cls


def register_pytree_class(cls: type) -> type:
    """Class decorator: `cls` provides `tree_flatten(self) -> (children, aux)`
    and the classmethod `tree_unflatten(aux, children)`.

    >>> @register_pytree_class
    ... class Box:
    ...     def __init__(self, value): self.value = value
    ...     def tree_flatten(self): return (self.value,), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children): return cls(*children)
    """
    return register_pytree_node(cls, cls.tree_flatten, cls.tree_unflatten)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _dataclass_fields(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(child field names, static field names) of a dataclass."""
    children, static = [], []
    for f in dataclasses.fields(cls):
        (static if f.metadata.get("static") else children).append(f.name)
    return tuple(children), tuple(static)


def _new_dataclass(cls: type, names: tuple, values: list) -> Any:
    """An instance of a dataclass with the given field values, without
    running `__init__` / `__post_init__` (they may not accept traced values)."""
    obj = cls.__new__(cls)
    for name, value in zip(names, values):
        object.__setattr__(obj, name, value)
    return obj


def flatten(obj: Any) -> tuple[list, Any]:
    leaves: list = []

    def walk(x):
        t = type(x)
        if t is tuple:
            return ("tuple", [walk(e) for e in x])
        if t is list:
            return ("list", [walk(e) for e in x])
        if t is dict:
            keys = sorted(x)
            return ("dict", keys, [walk(x[k]) for k in keys])
        if x is None:
            return ("none",)
        if t in _REGISTERED:
            children, aux = _REGISTERED[t][0](x)
            return ("custom", t, aux, [walk(c) for c in children])
        if _is_namedtuple(x):
            return ("namedtuple", t, [walk(e) for e in x])
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            children, static = _dataclass_fields(t)
            return ("dataclass", t, children, tuple((n, getattr(x, n)) for n in static),
                    [walk(getattr(x, n)) for n in children])
        # Other subclasses of the built-in containers flatten as their base.
        if isinstance(x, tuple):
            return ("tuple", [walk(e) for e in x])
        if isinstance(x, list):
            return ("list", [walk(e) for e in x])
        if isinstance(x, dict):
            keys = sorted(x)
            return ("dict", keys, [walk(x[k]) for k in keys])
        leaves.append(x)
        return ("leaf",)

    return leaves, walk(obj)


def unflatten(tree: Any, leaves: list) -> Any:
    it = iter(leaves)

    def build(node):
        kind = node[0]
        if kind == "leaf":
            return next(it)
        if kind == "none":
            return None
        if kind == "tuple":
            return tuple(build(c) for c in node[1])
        if kind == "list":
            return [build(c) for c in node[1]]
        if kind == "dict":
            return {k: build(c) for k, c in zip(node[1], node[2])}
        if kind == "namedtuple":
            return node[1](*[build(c) for c in node[2]])
        if kind == "dataclass":
            _, cls, names, static, children = node
            values = [build(c) for c in children] + [v for _, v in static]
            return _new_dataclass(cls, names + tuple(n for n, _ in static), values)
        _, cls, aux, children = node
        return _REGISTERED[cls][1](aux, [build(c) for c in children])

    return build(tree)
