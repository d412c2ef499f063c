"""Stage "jaxpr": the tracer that turns Python calls into Jaxprs.

In: a Python function and the avals of its arguments (dims may be tracers).
Out: a `Jaxpr` whose types carry dims as other vars; implicit dim inputs and
outputs are flagged in `in_explicit` / `out_explicit`.

Each traced scope (the function, a loop body, a branch) has a `Builder`
(its alias tracking, for NumPy's views, is `kiln.aliasing.Aliases`).
A tracer of an outer scope used in an inner one is *lifted*: it becomes a
constvar of the inner jaxpr (its dims first), and the control-flow equation
passes the outer value as an explicit constant operand.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import threading
import types
from typing import Any, Sequence

import numpy as np

from kiln.aliasing import Aliases
from kiln.errors import KilnAttributeError
from kiln.core import (
    DShapedArray,
    Jaxpr,
    JaxprEqn,
    KilnInternalError,
    KilnTypeError,
    Literal,
    OutDBIdx,
    Primitive,
    SourceInfo,
    Var,
    is_static_dim,
)


class Tracer:
    """A traced array value. `shape` entries are ints or scalar int tracers.

    Its NumPy surface (operators, methods such as `x.sum()`, `x.T`, indexing,
    `__array_ufunc__` / `__array_function__`) is installed by kiln.numpy,
    which declares each next to its implementation.
    """

    __array_priority__ = 1000
    __slots__ = ("builder", "aval", "__weakref__")

    def __init__(self, builder: "Builder", aval: DShapedArray):
        self.builder = builder
        self.aval = aval

    # --- array attributes
    @property
    def shape(self) -> tuple:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    def __len__(self) -> int:
        if not self.shape:
            raise KilnTypeError("len() of a 0-d traced array")
        if is_static_dim(self.shape[0]):
            return int(self.shape[0])
        raise KilnTypeError(
            f"len() of a traced array whose first dim is dynamic ({self.aval.str_short()}): "
            "use x.shape[0], which is a traced int usable as a size."
        )

    def __repr__(self) -> str:
        return f"Tracer<{self.aval.str_short()}>"

    # --- Python conversions that cannot work on a traced value
    def __bool__(self):
        raise KilnTypeError(
            f"a Python `if`/`while`/`and`/`or`/bool() on a traced value ({self.aval.str_short()}): "
            "its value is only known when the compiled function runs. Use kiln.cond for "
            "branches and kiln.while_loop for loops, or mark the argument static (static_argnums)."
        )

    def __int__(self):
        raise KilnTypeError(
            f"int() on a traced value ({self.aval.str_short()}): its value is only known at run time. "
            "Keep it traced (it works as a size in kiln.numpy), use kiln.cond / kiln.while_loop for "
            "control flow, or mark the argument static (static_argnums)."
        )

    def __float__(self):
        raise KilnTypeError(
            f"float() on a traced value ({self.aval.str_short()}): its value is only known at run time; "
            "keep it traced or mark the argument static (static_argnums)."
        )

    __index__ = __int__

    def __iter__(self):
        if self.ndim == 0:
            raise KilnTypeError("iteration over a 0-d traced array")
        n = self.shape[0]
        if not is_static_dim(n):
            raise KilnTypeError(
                f"iteration over a traced array with a dynamic first dim ({self.aval.str_short()}): "
                "use kiln.for_loop(0, x.shape[0], 1) instead."
            )
        return (self[i] for i in range(n))

    def __hash__(self):
        return id(self)

    # --- NumPy protocols
    def __array__(self, dtype=None, copy=None):
        raise KilnTypeError(
            f"a traced value ({self.aval.str_short()}) was converted to a concrete NumPy array; "
            "its value is only known at run time. Use kiln.numpy (or NumPy functions that kiln "
            "supports) on traced values."
        )

    def __getattr__(self, name):
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise KilnAttributeError(
                f"x.{name}: NumPy arrays have it, but kiln's traced arrays do not support it; see "
                "docs/numpy.md (the NumPy list) for what kiln supports, or compute it from supported functions")
        raise AttributeError(f"traced array has no attribute {name!r}")


# --------------------------------------------------------------------------
# Scopes


class Builder:
    """Records the equations of one traced scope."""

    def __init__(self, parent: "Builder | None" = None):
        self.parent = parent
        self.invars: list[Tracer] = []
        self.in_explicit: list[bool] = []
        self.constvars: list[Tracer] = []
        # For each constvar: the outer Tracer it captures, or the concrete
        # NumPy value it holds (hoisted constants live in the outermost scope).
        self.const_sources: list[Any] = []
        self.lifted: dict[int, Tracer] = {}
        self.eqns: list[JaxprEqn] = []
        # Pairs of dims (by id) a run-time check in this scope proved equal.
        self.proven_equal_dims: set[frozenset] = set()
        # (operand dim, result dim) pairs, by id, a run-time check in this
        # scope proved broadcastable: the operand dim is 1 or the result dim.
        self.proven_broadcast_dims: set[tuple[int, int]] = set()
        # Dims broadcasting made at run time (`select(a == 1, b, a)`), by
        # id: the two dims they were made from.
        self.broadcast_results: dict[int, tuple] = {}
        # Which values are views of which arrays (NumPy's view semantics).
        self.aliases = Aliases(self)
        # Values the numpy layer derives once per scope, by its own keys
        # (the true positions of a mask: kiln/numpy/boolean_masks.py).
        self.derived: dict[Any, Any] = {}

    # --- values entering the scope
    def new_arg(self, aval: DShapedArray, explicit: bool = True) -> Tracer:
        t = Tracer(self, aval)
        self.invars.append(t)
        self.in_explicit.append(explicit)
        return t

    def add_const(self, value: np.ndarray) -> Tracer:
        if self.parent is not None:
            return self.lift(self.parent.add_const(value))
        aval = DShapedArray(value.shape, value.dtype)
        t = Tracer(self, aval)
        self.constvars.append(t)
        self.const_sources.append(value)
        return t

    def lift(self, x: Any) -> Any:
        """Make `x` usable in this scope: tracers of outer scopes become constvars."""
        if isinstance(x, Literal):
            return x
        if not isinstance(x, Tracer):
            raise KilnInternalError(f"lift of a non-tracer {x!r}")
        if x.builder is self:
            return x
        if id(x) in self.lifted:
            return self.lifted[id(x)]
        if self.parent is None:
            raise KilnTypeError(
                f"a traced value ({x.aval.str_short()}) escaped the function or loop body that "
                "created it; return it from that body instead of storing it in Python state."
            )
        outer = self.parent.lift(x)
        if id(outer) in self.lifted:
            # `x` is of an outer scope that the parent had already lifted, and this
            # scope had lifted the parent's tracer: one constvar for both.
            self.lifted[id(x)] = self.lifted[id(outer)]
            return self.lifted[id(outer)]
        shape = tuple(d if is_static_dim(d) else self.lift(d) for d in outer.aval.shape)
        inner = Tracer(self, outer.aval.update(shape=shape))
        self.constvars.append(inner)
        self.const_sources.append(outer)
        self.lifted[id(x)] = inner
        self.lifted[id(outer)] = inner
        return inner

    # --- equations
    def add_eqn(self, prim: Primitive, ins: list, params: dict) -> list[Tracer]:
        ins = self.aliases.current_values(ins, "read")
        rule = prim.abstract_eval
        if rule is None:
            raise KilnInternalError(f"primitive {prim.name} has no abstract-evaluation rule")
        out_avals = rule(*ins, **params)
        if not prim.multiple_results:
            out_avals = [out_avals]
        outs: list[Tracer] = []
        for aval in out_avals:
            shape = tuple(outs[d.val] if isinstance(d, OutDBIdx) else d for d in aval.shape)
            outs.append(Tracer(self, aval.update(shape=shape)))
        self.eqns.append(JaxprEqn(prim, list(ins), outs, dict(params), _user_source_line()))
        if prim.is_view and isinstance(ins[0], Tracer):
            self.aliases.record_view(prim, ins[0], outs[0], params)
        return outs

    def user_line(self) -> str:
        """Where the user's code runs now (`file.py:LINE`), for messages."""
        line = _user_source_line()
        return str(line) if line is not None else "an earlier line"

    def outer_source(self, x: Tracer) -> Tracer | None:
        """The outer-scope tracer that constvar `x` captures, if any."""
        for const, source in zip(self.constvars, self.const_sources):
            if const is x and isinstance(source, Tracer) and self.parent is not None:
                return source
        return None

    # --- finishing
    def build(self, outs: Sequence[Any], out_explicit: Sequence[bool] | None = None) -> Jaxpr:
        """Turn the recorded scope into a Jaxpr (tracers become Vars)."""
        # A stale cond result returned here is refreshed first (new equations).
        outs = [self.lift(o) if isinstance(o, Tracer) else o for o in outs]
        if self.aliases.any_stale():
            outs = self.aliases.current_values(outs, "returned")
        var_of: dict[int, Var] = {}

        def to_var(t: Tracer) -> Var:
            shape = tuple(d if is_static_dim(d) else read(d) for d in t.aval.shape)
            v = Var(t.aval.update(shape=shape))
            var_of[id(t)] = v
            return v

        def read(x: Any) -> Any:
            if isinstance(x, Literal):
                return x
            if id(x) not in var_of:
                raise KilnInternalError(f"tracer {x!r} used before it was defined")
            return var_of[id(x)]

        constvars = [to_var(t) for t in self.constvars]
        invars = [to_var(t) for t in self.invars]
        eqns = []
        for eqn in self.eqns:
            ins = [read(x) for x in eqn.invars]
            outvars = []
            for t in eqn.outvars:
                outvars.append(to_var(t))
            eqns.append(JaxprEqn(eqn.primitive, ins, outvars, eqn.params, eqn.source_info))
        outvars = [read(o) if isinstance(o, Tracer) else o for o in outs]
        jaxpr = Jaxpr(
            constvars,
            invars,
            outvars,
            eqns,
            in_explicit=tuple(self.in_explicit),
            out_explicit=tuple(out_explicit) if out_explicit is not None else (True,) * len(outvars),
        )
        return jaxpr


class _ScopeStack(threading.local):
    def __init__(self):
        self.stack: list[Builder] = []


_scopes = _ScopeStack()


def current_builder() -> Builder:
    if not _scopes.stack:
        raise KilnInternalError("no active trace")
    return _scopes.stack[-1]


def is_tracing() -> bool:
    return bool(_scopes.stack)


class scope:
    """Context manager: push a new Builder (child of the current one)."""

    def __init__(self, builder: Builder):
        self.builder = builder

    def __enter__(self) -> Builder:
        _scopes.stack.append(self.builder)
        return self.builder

    def __exit__(self, *exc):
        popped = _scopes.stack.pop()
        if popped is not self.builder:
            raise KilnInternalError("trace scopes popped out of order")


def new_scope() -> scope:
    parent = _scopes.stack[-1] if _scopes.stack else None
    return scope(Builder(parent))


# --------------------------------------------------------------------------
# bind


def literal(value: Any, dtype: Any = None) -> Literal:
    """A scalar literal; Python scalars are weakly typed (NEP 50)."""
    weak = isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)
    if dtype is None:
        if isinstance(value, bool):
            dtype = np.bool_
        elif isinstance(value, int):
            dtype = np.int64
        elif isinstance(value, float):
            dtype = np.float64
        elif isinstance(value, complex):
            dtype = np.complex128
        else:
            dtype = np.asarray(value).dtype
    return Literal(value, DShapedArray((), dtype, weak_type=weak))


def as_operand(x: Any) -> Any:
    """A Tracer or Literal for `x` in the current scope."""
    b = current_builder()
    if isinstance(x, Tracer):
        return b.lift(x)
    if isinstance(x, Literal):
        return x
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return literal(x)
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return literal(x[()])
        return b.add_const(np.ascontiguousarray(x))
    raise KilnTypeError(f"cannot use a value of type {type(x).__name__} in a traced computation")


def bind(prim: Primitive, *args: Any, **params: Any):
    """Record `prim(*args, **params)` in the current scope; return its tracer(s)."""
    b = current_builder()
    ins = [as_operand(a) for a in args]
    outs = b.add_eqn(prim, ins, params)
    return outs if prim.multiple_results else outs[0]


_FRONTEND_DIR = os.path.dirname(os.path.abspath(__file__))
# Frames in these folders are never the user's line: kiln itself and NumPy
# (`np.sum(x)` reaches kiln through numpy's dispatch code); nor is the standard
# library (contextlib, functools), but packages installed inside it may be.
_KILN_AND_NUMPY_DIRS = (_FRONTEND_DIR + os.sep, os.path.dirname(os.path.abspath(np.__file__)) + os.sep)
_STDLIB_DIR = os.path.join(sysconfig.get_paths()["stdlib"], "")


@functools.lru_cache(maxsize=1024)
def _is_user_file(filename: str) -> bool:
    # Cached: every bound operation asks it for each frame up to the user's.
    if filename.startswith(_KILN_AND_NUMPY_DIRS) or filename.startswith("<frozen "):
        return False
    if filename.startswith(_STDLIB_DIR):
        return "site-packages" in filename or "dist-packages" in filename
    return True


@functools.lru_cache(maxsize=256)
def _positions(code: types.CodeType) -> tuple:
    """`code.co_positions()` as a tuple, one entry per instruction: a
    function traced once asks it for every operation it binds, and walking
    the iterator to the current instruction each time was quadratic in the
    function's length (channel_flow's converted loop body: 2 s of its
    trace)."""
    return tuple(code.co_positions())


def _user_source_line() -> SourceInfo | None:
    """The innermost stack frame outside kiln, NumPy and the standard
    library: where the user wrote the call (file, line, column)."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if _is_user_file(code.co_filename):
            positions = _positions(code)
            index = frame.f_lasti // 2
            position = positions[index] if 0 <= index < len(positions) else None
            column = position[2] if position is not None else None
            return SourceInfo(code.co_filename, frame.f_lineno, column + 1 if column is not None else 0)
        frame = frame.f_back
    return None
