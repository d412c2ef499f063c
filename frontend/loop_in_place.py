"""Stage "jaxpr": NumPy's aliasing across `kiln.for_loop` / `kiln.while_loop` / `kiln.cond`.

In: a traced loop body (its carried arguments, outputs and written roots)
or the traced branches of a cond. Out: which carried slots the body uses in
place (the initial array itself) and which cond results are an outer value
itself, so that `x += y` in a loop or branch updates `x` as in NumPy; and
which results may be an outer array only on some run-time path (marked so
that writes through them, and reads after writes to that array, are refused).
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


def same_array_slots(name: str, body: Any, slots: list, outs: list, inits: list, swapped: dict) -> list:
    """The carried arrays the body returns unchanged (itself, after writes
    through it or not): in NumPy they are the initial array, every
    iteration, so the body works on that array in place (`x += y` in a
    loop). A write to a carried array the body does not return as it is
    would also reach the initial array in NumPy, on the first iteration
    only: refused, unless the body swaps it with other carried arrays
    (`swapped`, see `kiln.swapped_buffers`)."""
    written = body.builder.aliases.written_roots
    same = []
    for k, arg, out, init in zip(slots, body.carried, outs, inits):
        if out is arg and isinstance(init, Tracer) and (arg.aval.ndim > 0 or id(arg) in written):
            same.append(k)
        elif id(arg) in written and k not in swapped:
            raise KilnValueError(
                f"{name}: carried value {k} is written in place (or through a view) but the body returns "
                "another array for it. In NumPy the write would change the array the loop started with on "
                "the first iteration and the new array afterwards, which kiln does not track. Return the "
                "written array itself, or write to a copy (v = v.copy()) before writing."
                + (" A loop that swaps the arrays it writes (`u, un = un, u`) works on distinct arrays the "
                   "function makes before the loop (`u = u0.copy()`, `un = np.empty_like(u)`), not on its "
                   "arguments or views." if any(out is a for a in body.carried) else ""))
    return same


def check_in_place_slots(name: str, builder: Builder, in_place: dict, leaves: list) -> None:
    """A slot taken in place must come back unchanged on the second trace too."""
    for k, outer in in_place.items():
        out = leaves[k]
        if out is not outer and builder.outer_source(out) is not outer:
            raise KilnInternalError(f"{name}: carried value {k} was returned unchanged by the body, but not "
                                    "when the body was traced again with the initial array in its place")


def outer_arrays(builder: Builder, x: Any) -> list:
    """The arrays of the enclosing scope that `x`, a value of the nested
    scope `builder`, may be (or view) at run time: captured outer arrays,
    directly or through a cond or loop result that may be one."""
    if not isinstance(x, Tracer):
        return []
    outer = builder.parent.aliases
    found: list = []
    for root in builder.aliases.may_be(x):
        source = builder.outer_source(root)
        if source is not None:
            found.extend(r for r in outer.may_be(source) if not any(r is f for f in found))
    return found


def mark_run_time_alias(builder: Builder, result: Any, roots: list, where: str, refresh: Any = None) -> None:
    """`result` (of a cond or loop in `builder`'s scope) may be one of `roots`
    at run time: writes through it are refused, and reads of it after a
    write to one of the roots (see `kiln.aliasing.Aliases.run_time_aliases`)."""
    if not roots or not isinstance(result, Tracer):
        return
    builder.aliases.unresolved.add(id(result))
    builder.aliases.run_time_aliases[id(result)] = (roots, where)
    if refresh is not None:
        builder.aliases.refreshers[id(result)] = refresh


def found_aliases(builder: Builder, slots: list, outs: list, aliased: dict) -> bool:
    """Record the outer arrays the body returns (views of) for its carried
    slots; True when that adds any (the body is traced again with them)."""
    added = False
    for k, out in zip(slots, outs):
        known = aliased.setdefault(k, [])
        for root in outer_arrays(builder, out):
            if not any(root is r for r in known):
                known.append(root)
                added = True
        if not known:
            del aliased[k]
    return added


def mark_aliased_slots(body: Any, slots: list, aliased: dict, where: str) -> None:
    """A carried value whose slot the body returns (a view of) an outer array
    for is that array from the second iteration on (see `found_aliases`)."""
    for k, arg in zip(slots, body.carried):
        if k in aliased:
            mark_run_time_alias(body.builder, arg, [body.builder.lift(r) for r in aliased[k]], where)


def mark_loop_aliases(results: list, aliased: dict, where: str) -> None:
    """A loop result for a slot whose body returns (a view of) an outer
    array is that array in NumPy (see `kiln.branch_aliases`)."""
    builder = current_builder()
    for k, roots in aliased.items():
        mark_run_time_alias(builder, results[k], roots, where)


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
