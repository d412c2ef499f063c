"""Stage "jaxpr": loops that write arrays and swap them (`u, un = un, u`), as NumPy.

In: a traced loop body whose carried arrays it writes in place and returns in
one another's slots (a permutation of them), the arrays the loop starts from,
and after the loop its results. Out: which slots swap (they are carried as
values: each iteration reads and writes the array its variable holds then);
after the loop the arrays the loop started from are marked stale, so that
reading them by their old names, or writing to them, is refused: NumPy's
answer would depend on how many times the loop swapped. The results are
those arrays, each reachable through one variable only: plain values.
"""

from __future__ import annotations

from typing import Any

from kiln.core import KilnValueError
from kiln.tracing import Builder, Tracer


def swapped_slots(body: Any, slots: list, outs: list, inits: list, outer: Builder) -> dict:
    """Slot -> the array it starts from, for the carried slots the body
    returns another slot's carried array for, when they form a permutation of
    distinct arrays made in the enclosing scope (not arguments, not views);
    empty otherwise."""
    position = {id(arg): k for k, arg in zip(slots, body.carried)}
    init_of = dict(zip(slots, inits))
    moved = {k: position[id(out)] for k, out in zip(slots, outs)
             if id(out) in position and position[id(out)] != k}
    if not moved or set(moved.values()) != set(moved):
        return {}
    written = body.builder.aliases.written_roots
    if not any(id(arg) in written for k, arg in zip(slots, body.carried) if k in moved):
        return {}  # a swap without writes carries plain values
    starts = [init_of[k] for k in moved]
    if len({id(x) for x in starts}) != len(starts):
        return {}
    for x in starts:
        if not isinstance(x, Tracer) or x.builder is not outer or outer.aliases.root(x) is not x:
            return {}
        if any(x is v for v in outer.invars) or any(x is c for c in outer.constvars):
            return {}
    return {k: init_of[k] for k in moved}


def check_read_by_other_names(name: str, body: Any, swapped: dict) -> None:
    """The body may not read a swapped array by a name from before the loop:
    NumPy would read whichever array that name holds, which the loop has
    written through its own variables."""
    outer = body.builder.parent.aliases
    starts = list(swapped.values())
    for source in body.builder.const_sources:
        if not isinstance(source, Tracer):
            continue
        if any(root is start for root in outer.may_be(source) for start in starts):
            raise KilnValueError(
                f"{name}: the body writes and swaps arrays it carries (`u, un = un, u`) but also reads one of "
                "them by a name from before the loop; NumPy would read the array as the loop has written it "
                "so far, kiln the array as the loop started. Read it through the loop's own variables")


def mark_swapped(builder: Builder, swapped: dict, where: str) -> None:
    """After the loop: the arrays it started from are stale under their old
    names (reading or writing them is refused). The loop's results are those
    arrays at run time, each under one variable only, so they are plain values."""
    message = (f"this array is swapped and written by the loop at {where} (`u, un = un, u`), so after the loop "
               "it holds what one of the loop's variables holds, depending on how many times the loop ran; it "
               "is {how} here by its name from before the loop: use the loop's variables instead")
    for start in swapped.values():
        builder.aliases.stale_copies[id(start)] = message
