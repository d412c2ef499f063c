"""Stage "jaxpr": the tracer that turns Python calls into Jaxprs.

In: a Python function and the avals of its arguments (dims may be tracers).
Out: a `Jaxpr` whose types carry dims as other vars; implicit dim inputs and
outputs are flagged in `in_explicit` / `out_explicit`.

Each traced scope (the function, a loop body, a branch) has a `Builder`.
A tracer of an outer scope used in an inner one is *lifted*: it becomes a
constvar of the inner jaxpr (its dims first), and the control-flow equation
passes the outer value as an explicit constant operand.
"""

from __future__ import annotations

import itertools
import os
import sys
import sysconfig
import threading
from typing import Any, Sequence

import numpy as np

from kiln.core import (
    DShapedArray,
    Jaxpr,
    JaxprEqn,
    KilnInternalError,
    KilnTypeError,
    KilnValueError,
    Literal,
    OutDBIdx,
    Primitive,
    SourceInfo,
    Var,
    is_static_dim,
)


class Tracer:
    """A traced array value. `shape` entries are ints or scalar int tracers."""

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

    @property
    def size(self):
        from kiln.numpy import _shape_product

        return _shape_product(self.shape)

    @property
    def T(self):
        from kiln import numpy as knp

        return knp.transpose(self)

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

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from kiln import numpy as knp

        return knp._dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from kiln import numpy as knp

        return knp._dispatch_function(func, args, kwargs)

    def __getattr__(self, name):
        from kiln import numpy as knp

        method = knp._TRACER_METHODS.get(name)
        if method is None:
            raise AttributeError(f"traced array has no attribute {name!r}")
        return method.__get__(self)


def _install_operators():
    """Arithmetic dunders delegate to kiln.numpy (imported lazily)."""
    binary = {
        "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
        "floordiv": "floor_divide", "mod": "mod", "pow": "power", "matmul": "matmul",
        "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
        "lshift": "left_shift", "rshift": "right_shift",
    }

    def make(name, swap):
        def op(self, other):
            from kiln import numpy as knp

            fn = getattr(knp, name)
            return fn(other, self) if swap else fn(self, other)

        return op

    for dunder, name in binary.items():
        setattr(Tracer, f"__{dunder}__", make(name, False))
        setattr(Tracer, f"__r{dunder}__", make(name, True))
        setattr(Tracer, f"__i{dunder}__", _make_inplace(name))
    def pow_(self, other):
        from kiln import numpy as knp

        # ndarray.__pow__ computes `x ** 2` as np.square(x): a bool array gives int8, not int64.
        if type(other) is int and other == 2:
            return knp.square(self)
        return knp.power(self, other)

    Tracer.__pow__ = pow_
    for dunder, name in {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                         "eq": "equal", "ne": "not_equal"}.items():
        setattr(Tracer, f"__{dunder}__", make(name, False))
    for dunder, name in {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}.items():
        def unary(self, _name=name):
            from kiln import numpy as knp

            return getattr(knp, _name)(self)

        setattr(Tracer, f"__{dunder}__", unary)

    def getitem(self, idx):
        from kiln import numpy as knp

        return knp._getitem(self, idx)

    def setitem(self, idx, value):
        from kiln import numpy as knp

        knp._setitem(self, idx, value)

    Tracer.__getitem__ = getitem
    Tracer.__setitem__ = setitem


def _make_inplace(name):
    def op(self, other):
        from kiln import numpy as knp

        return knp._inplace(name, self, other)

    return op


_install_operators()


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
        # Aliasing, for NumPy's view semantics: the operand each view was
        # made from, views whose elements are not contiguous in C order,
        # read-only views, and the roots (invars/constvars) written to.
        self.alias_parent: dict[int, Tracer] = {}
        self.noncontiguous: set[int] = set()
        self.readonly: set[int] = set()
        self.written_roots: set[int] = set()
        # Results that alias an array chosen at run time (a cond branch
        # returning a view of an outer array): writes through them are refused.
        self.unresolved_aliases: set[int] = set()
        # Copies standing for NumPy scalars (`x[0]` of a vector): immutable.
        self.scalars: set[int] = set()
        # For each view: (primitive name, base, params), to ask whether it
        # may be contiguous at run time (see `may_be_contiguous`).
        self.view_steps: dict[int, tuple[str, Tracer, dict]] = {}
        # Dim tracers (by id) known never to be 1 at run time: argument dims
        # when size-1 dims are specialized.
        self.never_unit_dims: set[int] = set()
        # Copies made by reshape where NumPy may return a view (depending on
        # strides and run-time sizes): copy id -> the root it was taken
        # from. Writes to such a copy are refused; a write to its root makes
        # it stale, and reading a stale copy is refused.
        self.ambiguous_copies: dict[int, Tracer] = {}
        self.stale_copies: set[int] = set()

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
        shape = tuple(d if is_static_dim(d) else self.lift(d) for d in outer.aval.shape)
        inner = Tracer(self, outer.aval.update(shape=shape))
        self.constvars.append(inner)
        self.const_sources.append(outer)
        self.lifted[id(x)] = inner
        self.lifted[id(outer)] = inner
        return inner

    # --- equations
    def add_eqn(self, prim: Primitive, ins: list, params: dict) -> list[Tracer]:
        if self._any_stale():
            for x in ins:
                if isinstance(x, Tracer) and self._is_stale(x):
                    raise KilnValueError(_AMBIGUOUS_RESHAPE + " (the reshaped array is read after a write "
                                         "to the array it came from)")
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
            self._record_view(prim, ins[0], outs[0], params)
        return outs

    def _record_view(self, prim: Primitive, base: Tracer, view: Tracer, params: dict) -> None:
        self.alias_parent[id(view)] = base
        self.view_steps[id(view)] = (prim.name, base, params)
        if id(base) in self.readonly:
            self.readonly.add(id(view))
        if id(base) in self.unresolved_aliases:
            self.unresolved_aliases.add(id(view))
        if id(base) in self.noncontiguous or not _view_keeps_contiguity(prim.name, base.aval, view.aval, params):
            self.noncontiguous.add(id(view))

    def alias_root(self, x: Tracer) -> Tracer:
        """The array `x` is a view of (following view equations to the end)."""
        while id(x) in self.alias_parent:
            x = self.alias_parent[id(x)]
        return x

    def outer_source(self, x: Tracer) -> Tracer | None:
        """The outer-scope tracer that constvar `x` captures, if any."""
        for const, source in zip(self.constvars, self.const_sources):
            if const is x and isinstance(source, Tracer) and self.parent is not None:
                return source
        return None

    def is_contiguous(self, x: Tracer) -> bool:
        """Whether `x` is C-contiguous whatever the run-time sizes."""
        if id(x) in self.noncontiguous:
            return False
        source = self.outer_source(x)
        return source is None or self.parent.is_contiguous(source)

    def is_readonly(self, x: Tracer) -> bool:
        if id(x) in self.readonly:
            return True
        source = self.outer_source(self.alias_root(x))
        return source is not None and self.parent.is_readonly(source)

    def may_be_unit(self, d: Any) -> bool:
        """Whether dim `d` can be 1 at run time."""
        if is_static_dim(d):
            return d == 1
        if id(d) in self.never_unit_dims:
            return False
        source = self.outer_source(d)
        return source is None or self.parent.may_be_unit(source)

    def may_be_contiguous(self, x: Tracer) -> bool:
        """Whether `x` is C-contiguous for some run-time sizes (dims of
        size 1 make any stride along them irrelevant)."""
        while id(x) in self.view_steps:
            name, base, params = self.view_steps[id(x)]
            if not _view_keeps_contiguity(name, base.aval, x.aval, params, self.may_be_unit):
                return False
            x = base
        source = self.outer_source(x)
        return source is None or self.parent.may_be_contiguous(source)

    def only_permuted(self, x: Tracer) -> bool:
        """Whether `x` is a contiguous array seen through transposes and
        reshapes only (no slices or reversals)."""
        while id(x) in self.view_steps:
            name, base, _ = self.view_steps[id(x)]
            if name not in ("transpose", "reshape", "match_dims"):
                return False
            x = base
        source = self.outer_source(x)
        return source is None or self.parent.only_permuted(source)

    def _any_stale(self) -> bool:
        builder = self
        while builder is not None:
            if builder.stale_copies:
                return True
            builder = builder.parent
        return False

    def _is_stale(self, x: Tracer) -> bool:
        root = self.alias_root(x)
        if id(root) in self.stale_copies:
            return True
        source = self.outer_source(root)
        return source is not None and self.parent._is_stale(source)

    def mark_written(self, x: Tracer, child: "Builder | None" = None) -> None:
        """Record a write through `x`; a captured root marks the outer array
        too (`child`: the nested scope the write was made in)."""
        root = self.alias_root(x)
        if id(root) in self.ambiguous_copies:
            raise KilnValueError(_AMBIGUOUS_RESHAPE + " (the write is to the reshaped array)")
        for copy_id, source in self.ambiguous_copies.items():
            if source is not root:
                continue
            self.stale_copies.add(copy_id)
            # A nested scope (a loop body) that reads the copy may read it
            # again after this write, in a later iteration.
            if child is not None and any(isinstance(c, Tracer) and id(self.alias_root(c)) == copy_id
                                         for c in child.const_sources):
                raise KilnValueError(_AMBIGUOUS_RESHAPE + " (the reshaped array is read in the loop or "
                                     "branch that writes to the array it came from)")
        self.written_roots.add(id(root))
        for const, source in zip(self.constvars, self.const_sources):
            if const is root and isinstance(source, Tracer) and self.parent is not None:
                self.parent.mark_written(source, self)

    # --- finishing
    def build(self, outs: Sequence[Any], out_explicit: Sequence[bool] | None = None) -> Jaxpr:
        """Turn the recorded scope into a Jaxpr (tracers become Vars)."""
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
        if self._any_stale() and any(isinstance(o, Tracer) and self._is_stale(self.lift(o)) for o in outs):
            raise KilnValueError(_AMBIGUOUS_RESHAPE + " (the reshaped array is returned after a write to "
                                 "the array it came from)")
        outvars = [read(self.lift(o)) if isinstance(o, Tracer) else o for o in outs]
        jaxpr = Jaxpr(
            constvars,
            invars,
            outvars,
            eqns,
            in_explicit=tuple(self.in_explicit),
            out_explicit=tuple(out_explicit) if out_explicit is not None else (True,) * len(outvars),
        )
        return jaxpr


_AMBIGUOUS_RESHAPE = (
    "reshape (or ravel) of a non-contiguous view: NumPy returns a view or a copy depending on the "
    "view's strides and the run-time sizes, so whether a write to one array is seen through the other "
    "is not known when kiln compiles. Copy explicitly before reshaping (v.copy().reshape(...)) to "
    "always get a copy, or reshape after the writes")


def _is_static_unit(d: Any) -> bool:
    return is_static_dim(d) and d == 1


def _view_keeps_contiguity(name: str, base: DShapedArray, view: DShapedArray, params: dict,
                           is_unit=_is_static_unit) -> bool:
    """Whether a view of a C-contiguous array is C-contiguous too, when the
    dims for which `is_unit` holds are 1 (by default: static 1s only)."""
    if name in ("reshape", "match_dims"):
        return True
    if name == "transpose":
        moved = [p for p in params["permutation"] if not is_unit(base.shape[p])]
        return moved == sorted(moved)
    if name == "reverse":
        return all((is_static_dim(base.shape[d]) and base.shape[d] <= 1) or is_unit(base.shape[d])
                   for d in params["dimensions"])
    if name == "slice":
        if any(s != 1 and not is_unit(size) for s, size in zip(params["strides"], view.shape)):
            return False
        # After the first axis of size > 1, every axis must be taken whole.
        first = True
        for axis, (dim, size) in enumerate(zip(base.shape, view.shape)):
            if is_unit(size):
                continue
            whole = params["starts"][axis] == 0 and (
                size is dim or (is_static_dim(size) and is_static_dim(dim) and size == dim))
            if not first and not whole:
                return False
            first = False
        return True
    return False


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


def _is_user_file(filename: str) -> bool:
    if filename.startswith(_KILN_AND_NUMPY_DIRS) or filename.startswith("<frozen "):
        return False
    if filename.startswith(_STDLIB_DIR):
        return "site-packages" in filename or "dist-packages" in filename
    return True


def _user_source_line() -> SourceInfo | None:
    """The innermost stack frame outside kiln, NumPy and the standard
    library: where the user wrote the call (file, line, column)."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if _is_user_file(code.co_filename):
            position = next(itertools.islice(code.co_positions(), frame.f_lasti // 2, None), None)
            column = position[2] if position is not None else None
            return SourceInfo(code.co_filename, frame.f_lineno, column + 1 if column is not None else 0)
        frame = frame.f_back
    return None
