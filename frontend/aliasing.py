"""Stage "jaxpr": alias tracking for NumPy's view semantics, one `Aliases`
per traced scope (its `Builder`).

In: the view equations the scope records (each view primitive's
`ViewRule`), writes, and the values the scope captures from outer scopes.
Out: what the numpy layer asks before it reads or writes: which array a
view aliases (its root), whether a view is C-contiguous (so `reshape`
copies as NumPy), read-only, or a stale ambiguous copy, and which roots
were written (written function arguments become write-back results).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from kiln.core import Literal, Primitive, is_static_dim
from kiln.errors import KilnValueError

if TYPE_CHECKING:
    from kiln.tracing import Builder, Tracer

AMBIGUOUS_RESHAPE = (
    "reshape (or ravel) of a non-contiguous view: NumPy returns a view or a copy depending on the "
    "view's strides and the run-time sizes, so whether a write to one array is seen through the other "
    "is not known when kiln compiles. Copy explicitly before reshaping (v.copy().reshape(...)) to "
    "always get a copy, or reshape after the writes")


def run_time_alias_message(made_at: str, written_at: str) -> str:
    """Why reading a stale loop result is refused ("{how}" is filled in)."""
    return (f"the value made by the loop or branch at {made_at} is an outer array itself (or a view of it) "
            f"after some iteration or branch (NumPy then returns that very array), and that array is written at "
            f"{written_at} before the value is {{how}}; kiln keeps a branch's result up to date after such writes, "
            "but not a loop's, nor one read in a loop before the loop writes the array. Copy the result where it "
            "is made (`y = b.copy()`), or write to the array before the loop")


class _Writes(threading.local):
    """Per thread: a count of the writes recorded so far (a refreshed value
    stays current until the next one), and whether a refresh is being traced
    (its own reads of the stale value are the old value, on purpose)."""

    def __init__(self):
        self.count = itertools.count(1)
        self.generation = 0
        self.refreshing = False


_writes = _Writes()


@contextlib.contextmanager
def refreshing() -> Iterator[None]:
    """While a refresh is traced, stale values are read as they are."""
    previous, _writes.refreshing = _writes.refreshing, True
    try:
        yield
    finally:
        _writes.refreshing = previous


def _is_static_unit(d: Any) -> bool:
    return is_static_dim(d) and d == 1


class Aliases:
    """The aliasing facts of one scope. Tracers are keyed by id; a value the
    scope captured from an outer scope answers as its outer source does."""

    def __init__(self, scope: "Builder"):
        self.scope = scope
        # The operand each view was made from, and (primitive, base, params)
        # to ask its ViewRule again with run-time unit dims.
        self.parent_of: dict[int, Tracer] = {}
        self.view_steps: dict[int, tuple[Primitive, Tracer, dict]] = {}
        # Views whose elements are not contiguous in C order.
        self.noncontiguous: set[int] = set()
        # Read-only views (broadcast_to results and views of them).
        self.readonly: set[int] = set()
        # Roots (invars/constvars) written to.
        self.written_roots: set[int] = set()
        # Results that alias an array chosen at run time (a cond branch
        # returning a view of an outer array): writes through them are refused.
        self.unresolved: set[int] = set()
        # Copies standing for NumPy scalars (`x[0]` of a vector): immutable.
        self.scalars: set[int] = set()
        # 0-d values that are ndarrays (a 0-d array argument, or a carried
        # value that starts as one): `x += 1` writes them in place. Other
        # 0-d values are NumPy scalars, which in-place operators rebind.
        self.zero_d_arrays: set[int] = set()
        # Dim tracers known never to be 1 at run time: argument dims when
        # size-1 dims are specialized.
        self.never_unit_dims: set[int] = set()
        # Copies made by reshape where NumPy may return a view (depending on
        # strides and run-time sizes): copy id -> the root it was taken
        # from. Writes to such a copy are refused; a write to its root makes
        # it stale, and reading a stale copy is refused.
        self.ambiguous_copies: dict[int, Tracer] = {}
        # Other copies that stand for NumPy views kiln cannot write through
        # (`z.real` of a complex z, `x.view(dtype)`): copy id -> (what it is,
        # the fix), refused and made stale as the ambiguous reshapes are.
        self.copy_reasons: dict[int, tuple[str, str]] = {}
        # Results that may be an outer array (or a view of one) chosen at run
        # time: a cond branch or a loop body returned one for them. Result id
        # -> (the roots it may be, where the cond or loop is). kiln keeps such
        # a result as a value of its own, so a later write to one of those
        # roots makes it stale: reading it then reads its refresh, or is
        # refused when it has none.
        self.run_time_aliases: dict[int, tuple[list, str]] = {}
        # The refresh of such a result, when kiln can recompute it (a cond
        # branch's views of the array: kiln.branch_aliases), and this scope's
        # refreshed values: value id -> (current value, write generation).
        self.refreshers: dict[int, Callable[[Any], Any]] = {}
        self.refreshed: dict[int, tuple[Any, int]] = {}
        # Stale copies -> the message refusing a read ("{how}": read/returned).
        self.stale_copies: dict[int, str] = {}

    @property
    def _outer(self) -> "Aliases | None":
        return self.scope.parent.aliases if self.scope.parent is not None else None

    def record_view(self, prim: Primitive, base: "Tracer", view: "Tracer", params: dict) -> None:
        self.parent_of[id(view)] = base
        self.view_steps[id(view)] = (prim, base, params)
        if id(base) in self.readonly:
            self.readonly.add(id(view))
        if id(base) in self.unresolved:
            self.unresolved.add(id(view))
        if id(base) in self.noncontiguous or not prim.view.keeps_contiguity(base.aval, view.aval, params,
                                                                           _is_static_unit):
            self.noncontiguous.add(id(view))

    def copy_for_view(self, copy: "Tracer", source: "Tracer", what: str, fix: str) -> None:
        """`copy` (computed from `source`) stands for a NumPy view kiln does
        not write through: writes to it are refused, and reading it after a
        write to `source` is refused as stale (`what` names it, `fix` says what to do)."""
        self.ambiguous_copies[id(copy)] = self.root(source)
        self.copy_reasons[id(copy)] = (what, fix)

    def root(self, x: "Tracer") -> "Tracer":
        """The array `x` is a view of (following view equations to the end)."""
        while id(x) in self.parent_of:
            x = self.parent_of[id(x)]
        return x

    def is_contiguous(self, x: "Tracer") -> bool:
        """Whether `x` is C-contiguous whatever the run-time sizes."""
        if id(x) in self.noncontiguous:
            return False
        source = self.scope.outer_source(x)
        return source is None or self._outer.is_contiguous(source)

    def is_zero_d_array(self, x: "Tracer") -> bool:
        if id(x) in self.zero_d_arrays:
            return True
        source = self.scope.outer_source(x)
        return source is not None and self._outer.is_zero_d_array(source)

    def is_readonly(self, x: "Tracer") -> bool:
        if id(x) in self.readonly:
            return True
        source = self.scope.outer_source(self.root(x))
        return source is not None and self._outer.is_readonly(source)

    def may_be_unit(self, d: Any) -> bool:
        """Whether dim `d` can be 1 at run time."""
        if is_static_dim(d):
            return d == 1
        if id(d) in self.never_unit_dims:
            return False
        source = self.scope.outer_source(d)
        return source is None or self._outer.may_be_unit(source)

    def may_be_contiguous(self, x: "Tracer") -> bool:
        """Whether `x` is C-contiguous for some run-time sizes (dims of
        size 1 make any stride along them irrelevant)."""
        while id(x) in self.view_steps:
            prim, base, params = self.view_steps[id(x)]
            if not prim.view.keeps_contiguity(base.aval, x.aval, params, self.may_be_unit):
                return False
            x = base
        source = self.scope.outer_source(x)
        return source is None or self._outer.may_be_contiguous(source)

    def only_regrouped(self, x: "Tracer") -> bool:
        """Whether `x` is a contiguous array seen through views that keep
        every element (transposes and reshapes; no slices or reversals)."""
        while id(x) in self.view_steps:
            prim, base, _ = self.view_steps[id(x)]
            if not prim.view.regroups_only:
                return False
            x = base
        source = self.scope.outer_source(x)
        return source is None or self._outer.only_regrouped(source)

    # --- ambiguous reshapes
    def any_stale(self) -> bool:
        aliases: Aliases | None = self
        while aliases is not None:
            if aliases.stale_copies:
                return True
            aliases = aliases._outer
        return False

    def _stale_entry(self, x: "Tracer") -> tuple | None:
        """(why reading `x` is refused, the refresh that recomputes it or
        None) when `x` is a stale copy or a view of one."""
        root = self.root(x)
        if id(root) in self.stale_copies:
            return self.stale_copies[id(root)], self.refreshers.get(id(root))
        source = self.scope.outer_source(root)
        return self._outer._stale_entry(source) if source is not None else None

    def current_values(self, values: list, how: str) -> list:
        """`values` as an equation reads them (`how`: "read", "returned"):
        a stale cond result (or a view of it) is refreshed, once per write;
        reading another stale copy is refused."""
        if _writes.refreshing or not self.any_stale():
            return values
        current = []
        for x in values:
            entry = None if isinstance(x, Literal) else self._stale_entry(x)
            if entry is None:
                current.append(x)
                continue
            reason, refresh = entry
            if refresh is None:
                raise KilnValueError(reason.replace("{how}", how))
            cached = self.refreshed.get(id(x))
            if cached is None or cached[1] != _writes.generation:
                cached = (refresh(x), _writes.generation)
                self.refreshed[id(x)] = cached
            current.append(cached[0])
        return current

    def may_be(self, x: "Tracer") -> list:
        """The arrays of this scope that `x` may be a view of at run time: its
        root, or the roots a cond or loop result may be (`run_time_aliases`)."""
        root = self.root(x)
        if id(root) not in self.run_time_aliases:
            return [root]
        found: list = []
        for r in self.run_time_aliases[id(root)][0]:
            found.extend(r2 for r2 in self.may_be(r) if not any(r2 is f for f in found))
        return found

    def _stale_copies_of(self, root: "Tracer", where: str) -> dict:
        """The copies a write to `root` makes stale: copy id -> (why a later
        read is refused, with "{how}"; why a read by the nested scope that
        made the write is refused)."""
        stale = {}
        for copy_id, source in self.ambiguous_copies.items():
            if source is not root:
                continue
            if copy_id in self.copy_reasons:
                what, fix = self.copy_reasons[copy_id]
                stale[copy_id] = (
                    f"{what} is a copy in kiln where NumPy gives a view, and it is {{how}} after a write to the "
                    f"array it came from, which NumPy's view would see; {fix}",
                    f"{what} is a copy in kiln where NumPy gives a view, and it is read in the loop or branch "
                    f"that writes to the array it came from; {fix}")
                continue
            stale[copy_id] = (
                AMBIGUOUS_RESHAPE + " (the reshaped array is {how} after a write to the array it came from)",
                AMBIGUOUS_RESHAPE + " (the reshaped array is read in the loop or branch that writes to the "
                                    "array it came from)")
        for result_id, (roots, made_at) in self.run_time_aliases.items():
            if any(r is root for r in roots):
                message = run_time_alias_message(made_at, where)
                stale[result_id] = (message, message.replace("{how}", "read in the loop or branch that makes "
                                                                      "the write (so again after it)"))
        return stale

    def mark_written(self, x: "Tracer", child: "Aliases | None" = None, where: str = "") -> None:
        """Record a write through `x` (`where`: the user's line); a captured
        root marks the outer array too (`child`: the aliases of the nested
        scope the write was made in)."""
        root = self.root(x)
        if id(root) in self.copy_reasons:
            what, fix = self.copy_reasons[id(root)]
            raise KilnValueError(f"a write to {what}: kiln computes it as a copy where NumPy gives a view, so the "
                                 f"write would not reach the array it came from; {fix}")
        if id(root) in self.ambiguous_copies:
            raise KilnValueError(AMBIGUOUS_RESHAPE + " (the write is to the reshaped array)")
        where = where or self.scope.user_line()
        _writes.generation = next(_writes.count)
        for copy_id, (reason, nested_reason) in self._stale_copies_of(root, where).items():
            self.stale_copies[copy_id] = reason
            # A nested scope (a loop body) that reads the copy may read it
            # again after this write, in a later iteration.
            if child is not None and any(not isinstance(c, np.ndarray) and id(self.root(c)) == copy_id
                                         for c in child.scope.const_sources):
                raise KilnValueError(nested_reason)
        self.written_roots.add(id(root))
        source = self.scope.outer_source(root)
        if source is not None:
            self._outer.mark_written(source, self, where)
