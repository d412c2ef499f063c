"""Stage "jaxpr": NumPy's aliasing across `kiln.for_loop` / `kiln.while_loop` / `kiln.cond`.

In: a traced loop body (its carried arguments, outputs and written roots)
or the traced branches of a cond. Out: which carried slots the body uses in
place (the initial array itself) and which cond results are an outer value
itself, so that `x += y` in a loop or branch updates `x` as in NumPy.
"""

from __future__ import annotations

from typing import Any

from kiln.core import KilnInternalError, KilnValueError
from kiln.tracing import Builder, Tracer, current_builder


def mark_zero_d_arrays(body: Any, inits: list) -> None:
    """A carried value that starts as a 0-d ndarray is one in the body too
    (`x += 1` writes it; see `kiln.aliasing.Aliases.zero_d_arrays`)."""
    outer = current_builder().aliases
    for arg, init in zip(body.carried, inits):
        if isinstance(init, Tracer) and outer.is_zero_d_array(init):
            body.builder.aliases.zero_d_arrays.add(id(arg))


def same_array_slots(name: str, body: Any, slots: list, outs: list, inits: list) -> list:
    """The carried arrays the body returns unchanged (itself, after writes
    through it or not): in NumPy they are the initial array, every
    iteration, so the body works on that array in place (`x += y` in a
    loop). A write to a carried array the body does not return as it is
    would also reach the initial array in NumPy, on the first iteration
    only: refused."""
    written = body.builder.aliases.written_roots
    same = []
    for k, arg, out, init in zip(slots, body.carried, outs, inits):
        if out is arg and isinstance(init, Tracer) and (arg.aval.ndim > 0 or id(arg) in written):
            same.append(k)
        elif id(arg) in written:
            raise KilnValueError(
                f"{name}: carried value {k} is written in place (or through a view) but the body returns "
                "another array for it. In NumPy the write would change the array the loop started with on "
                "the first iteration and the new array afterwards, which kiln does not track. Return the "
                "written array itself, or write to a copy (v = v.copy()) before writing.")
    return same


def check_in_place_slots(name: str, builder: Builder, in_place: dict, leaves: list) -> None:
    """A slot taken in place must come back unchanged on the second trace too."""
    for k, outer in in_place.items():
        out = leaves[k]
        if out is not outer and builder.outer_source(out) is not outer:
            raise KilnInternalError(f"{name}: carried value {k} was returned unchanged by the body, but not "
                                    "when the body was traced again with the initial array in its place")


def with_in_place(carried: list, in_place: dict) -> list:
    """All the slots' values: the carried results, and the arrays used in place."""
    values = iter(carried)
    return [in_place[k] if k in in_place else next(values) for k in range(len(carried) + len(in_place))]


def unchanged_results(traced: list, count: int) -> dict:
    """Results every branch returns as the same outer value (result k ->
    that value). The cond's result is that value itself, as in NumPy, where
    `if c: x += 1` leaves `x` the same array: later writes to it reach the
    array (and the caller's argument), and a loop around the cond sees its
    carried array come back unchanged."""
    unchanged = {}
    for k in range(count):
        sources = {id(builder.outer_source(outs[k])): builder.outer_source(outs[k])
                   for builder, outs, _ in traced}
        if len(sources) == 1:
            source = next(iter(sources.values()))
            if source is not None:
                unchanged[k] = source
    return unchanged
