"""Pytrees: nested tuples, lists and dicts of leaves, flattened and rebuilt.

>>> leaves, tree = flatten((1, {"a": 2}))
>>> unflatten(tree, [x * 10 for x in leaves])
(10, {'a': 20})
"""

from __future__ import annotations

from typing import Any


def flatten(obj: Any) -> tuple[list, Any]:
    leaves: list = []

    def walk(x):
        if isinstance(x, tuple) and not hasattr(x, "_fields"):
            return ("tuple", [walk(e) for e in x])
        if isinstance(x, list):
            return ("list", [walk(e) for e in x])
        if isinstance(x, dict):
            keys = sorted(x)
            return ("dict", keys, [walk(x[k]) for k in keys])
        if x is None:
            return ("none",)
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
        return {k: build(c) for k, c in zip(node[1], node[2])}

    return build(tree)
