"""Stage "jaxpr": avals, types with de Bruijn indices, and the Jaxpr IR.

In: nothing (this is the vocabulary every other frontend module uses).
Out: `DShapedArray`, `DBIdx`/`InDBIdx`/`OutDBIdx`, `Var`, `Literal`,
`JaxprEqn`, `Jaxpr`, `Primitive`, and the deterministic Jaxpr printer.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from kiln.errors import KilnError, KilnIndexError, KilnInternalError, KilnTypeError, KilnValueError  # noqa: F401


# --------------------------------------------------------------------------
# de Bruijn indices: how types name dims across scopes.


class DBIdx(NamedTuple):
    """A dim that is the value of input number `val` of the same in_type."""

    val: int


class InDBIdx(NamedTuple):
    """In an out_type: a dim that is input number `val` of the jaxpr."""

    val: int


class OutDBIdx(NamedTuple):
    """In an out_type: a dim that is output number `val` of the jaxpr."""

    val: int


# --------------------------------------------------------------------------
# dtypes

_SHORT_DTYPE_NAMES = {
    np.dtype("float16"): "f16",
    np.dtype("float32"): "f32",
    np.dtype("float64"): "f64",
    np.dtype("int8"): "i8",
    np.dtype("int16"): "i16",
    np.dtype("int32"): "i32",
    np.dtype("int64"): "i64",
    np.dtype("uint8"): "u8",
    np.dtype("uint16"): "u16",
    np.dtype("uint32"): "u32",
    np.dtype("uint64"): "u64",
    np.dtype("bool"): "bool",
    np.dtype("complex64"): "c64",
    np.dtype("complex128"): "c128",
}

SUPPORTED_DTYPES = frozenset(_SHORT_DTYPE_NAMES)
INDEX_DTYPE = np.dtype("int64")


def short_dtype_name(dtype: np.dtype) -> str:
    return _SHORT_DTYPE_NAMES[np.dtype(dtype)]


# --------------------------------------------------------------------------
# Avals


def is_static_dim(d: Any) -> bool:
    return isinstance(d, (int, np.integer)) and not isinstance(d, bool)


def same_dim(a: Any, b: Any) -> bool:
    """Dims are equal when both are the same int, or the very same var/tracer."""
    if is_static_dim(a) and is_static_dim(b):
        return int(a) == int(b)
    return a is b


class DShapedArray:
    """An abstract array value: a dtype and a shape whose entries are ints or
    dims that are themselves values (scalar int tracers in avals, `Var`s in
    jaxprs, `DBIdx`/`InDBIdx`/`OutDBIdx` in types).

    >>> DShapedArray((3, 4), np.float64).str_short()
    'f64[3,4]'
    """

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: Sequence[Any], dtype: Any, weak_type: bool = False):
        self.shape = tuple(int(d) if is_static_dim(d) else d for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(is_static_dim(d) for d in self.shape)

    def update(self, shape=None, dtype=None, weak_type=None) -> "DShapedArray":
        return DShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def same_type(self, other: "DShapedArray") -> bool:
        return (
            self.dtype == other.dtype
            and self.ndim == other.ndim
            and all(same_dim(a, b) for a, b in zip(self.shape, other.shape))
        )

    def str_short(self, name_of: Callable[[Any], str] | None = None) -> str:
        def dim(d):
            if is_static_dim(d):
                return str(d)
            if isinstance(d, (DBIdx, InDBIdx, OutDBIdx)):
                return repr(d)
            return name_of(d) if name_of else "?"

        return f"{short_dtype_name(self.dtype)}[{','.join(dim(d) for d in self.shape)}]"

    def __repr__(self) -> str:
        return f"DShapedArray({self.str_short()}{', weak' if self.weak_type else ''})"


class ShapedArray(DShapedArray):
    """The all-static special case of `DShapedArray`."""

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False):
        if not all(is_static_dim(d) for d in shape):
            raise KilnInternalError(f"ShapedArray with a dynamic dim: {shape}")
        super().__init__(shape, dtype, weak_type)


# --------------------------------------------------------------------------
# Jaxpr IR

_var_ids = itertools.count()


class Var:
    """A jaxpr variable. Its aval's dims are ints or other `Var`s."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: DShapedArray):
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self) -> str:
        return f"Var{self.id}:{self.aval.str_short()}"


class Literal:
    """A Python/NumPy scalar constant used directly as an equation operand."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: DShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val})"


@dataclass(frozen=True)
class ViewRule:
    """What a view primitive says about the memory layout of its result.

    `keeps_contiguity(base, view, params, is_unit)`: whether a view of a
    C-contiguous operand (aval `base`) is C-contiguous too, when the dims for
    which `is_unit(d)` holds are 1 (the tracer asks with static 1s only, and
    again with every dim that may be 1 at run time).
    `regroups_only`: the view holds every element of its operand in C order
    or an axis permutation of it (transpose, reshape), nothing skipped or
    reversed (a slice, a reversal).
    """

    keeps_contiguity: Callable[[DShapedArray, DShapedArray, dict, Callable[[Any], bool]], bool]
    regroups_only: bool = False


class Primitive:
    """An operation of the Jaxpr IR, declared once in its family module
    (`frontend/primitives/*.py`) with the facts every stage needs.

    `effectful`: its equations (checks, writes) are never removed or merged.
    `view`: a `ViewRule` when the result is an alias of operand 0
    (reference semantics: writes through either are seen by both).

    >>> reverse_p = Primitive("reverse", view=ViewRule(keeps_contiguity=...))
    """

    def __init__(self, name: str, *, multiple_results: bool = False, effectful: bool = False,
                 view: ViewRule | None = None):
        self.name = name
        self.multiple_results = multiple_results
        self.effectful = effectful
        self.view = view
        self.abstract_eval: Callable[..., Any] | None = None

    @property
    def is_view(self) -> bool:
        return self.view is not None

    def def_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.abstract_eval = rule
        return rule

    def __repr__(self) -> str:
        return self.name


class SourceInfo(NamedTuple):
    """Where the user wrote an equation: file, line and 1-based column (0 when
    Python does not know it). Prints as `file.py:LINE`."""

    filename: str
    line: int
    column: int = 0

    def __str__(self) -> str:
        return f"{os.path.basename(self.filename)}:{self.line}"


@dataclass
class JaxprEqn:
    primitive: Primitive
    invars: list  # Var | Literal
    outvars: list  # Var
    params: dict
    source_info: SourceInfo | None = None


@dataclass
class Jaxpr:
    """`{ lambda CONSTS ; ARGS . let EQNS in (OUTS) }`.

    `invars` holds implicit dim inputs first, then explicit ones; `outvars`
    likewise holds implicit dim outputs first. `in_explicit`/`out_explicit`
    flag which is which.
    """

    constvars: list
    invars: list
    outvars: list
    eqns: list
    in_explicit: tuple = ()
    out_explicit: tuple = ()
    consts: list = field(default_factory=list)
    # Top level only: explicit argument positions whose final contents are
    # the last len(writeback) outputs (writes to arguments reach the caller).
    writeback: tuple = ()
    # Top level only: the last explicit input is the global RandomState's
    # state words (legacy np.random functions), written back by the call.
    global_random_state: bool = False

    @property
    def in_type(self) -> tuple:
        """Input types with dims as `DBIdx` into the (constvars + invars) list."""
        binders = list(self.constvars) + list(self.invars)
        index = {id(v): i for i, v in enumerate(binders)}
        explicit = (True,) * len(self.constvars) + tuple(self.in_explicit or (True,) * len(self.invars))
        result = []
        for v, ex in zip(binders, explicit):
            shape = tuple(d if is_static_dim(d) else DBIdx(index[id(d)]) for d in v.aval.shape)
            result.append((v.aval.update(shape=shape), ex))
        return tuple(result)

    @property
    def out_type(self) -> tuple:
        """Output types; dims are `InDBIdx` (an input) or `OutDBIdx` (an output)."""
        binders = list(self.constvars) + list(self.invars)
        in_index = {id(v): i for i, v in enumerate(binders)}
        out_index = {}
        for i, v in enumerate(self.outvars):
            if isinstance(v, Var):
                out_index.setdefault(id(v), i)
        explicit = tuple(self.out_explicit or (True,) * len(self.outvars))
        result = []
        for v, ex in zip(self.outvars, explicit):
            shape = []
            for d in v.aval.shape:
                if is_static_dim(d):
                    shape.append(d)
                elif id(d) in out_index:
                    shape.append(OutDBIdx(out_index[id(d)]))
                elif id(d) in in_index:
                    shape.append(InDBIdx(in_index[id(d)]))
                else:
                    raise KilnInternalError(f"output dim {d} is neither an input nor an output")
            result.append((v.aval.update(shape=shape), ex))
        return tuple(result)

    def pretty(self, source_info: bool = False) -> str:
        """The jaxpr in Jaxpr syntax; `source_info=True` ends each equation
        with `# file.py:LINE`, where the user wrote it.

        >>> print(jaxpr.pretty(source_info=True))  # doctest: +SKIP
        { lambda ; a:f64[3]. let
            b:f64[3] = sin a  # my_script.py:7
          in (b) }
        """
        return JaxprPrinter(source_info).jaxpr(self, indent=0)

    def __str__(self) -> str:
        return self.pretty()


# --------------------------------------------------------------------------
# Printer


def _var_name(n: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    name = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        name = letters[r] + name
    return name


class JaxprPrinter:
    """Deterministic Jaxpr syntax: vars are named a, b, ..., z, ba, bb, ...
    in order of first binding, across nested jaxprs too."""

    def __init__(self, source_info: bool = False):
        self.names: dict[int, str] = {}
        self.source_info = source_info

    def name(self, v: Any) -> str:
        if isinstance(v, Literal):
            return _format_literal(v)
        if id(v) not in self.names:
            self.names[id(v)] = _var_name(len(self.names))
        return self.names[id(v)]

    def typed(self, v: Var) -> str:
        return f"{self.name(v)}:{v.aval.str_short(self.name)}"

    def jaxpr(self, jaxpr: Jaxpr, indent: int) -> str:
        pad = " " * indent
        consts = " ".join(self.typed(v) for v in jaxpr.constvars)
        args = " ".join(self.typed(v) for v in jaxpr.invars)
        lines = [f"{{ lambda {consts}{' ' if consts else ''}; {args}. let"]
        for eqn in jaxpr.eqns:
            lines.append(self.eqn(eqn, indent + 4))
        outs = " ".join(self.name(v) for v in jaxpr.outvars)
        lines.append(f"{pad}  in ({outs}) }}")
        return "\n".join(lines)

    def eqn(self, eqn: JaxprEqn, indent: int) -> str:
        pad = " " * indent
        lhs = " ".join(self.typed(v) for v in eqn.outvars) or "_"
        rhs_args = " ".join(self.name(v) for v in eqn.invars)
        params = self.params(eqn.params, indent)
        line = f"{pad}{lhs} = {eqn.primitive.name}{params} {rhs_args}".rstrip()
        if self.source_info and eqn.source_info is not None:
            line += f"  # {eqn.source_info}"
        return line

    def params(self, params: dict, indent: int) -> str:
        if not params:
            return ""
        items = []
        nested = False
        for key in sorted(params):
            value = params[key]
            if isinstance(value, Jaxpr):
                nested = True
                items.append((key, self.jaxpr(value, indent + 4)))
            elif isinstance(value, (list, tuple)) and value and all(isinstance(j, Jaxpr) for j in value):
                nested = True
                inner = ("\n" + " " * (indent + 4)).join(self.jaxpr(j, indent + 4) for j in value)
                items.append((key, "(\n" + " " * (indent + 4) + inner + "\n" + " " * (indent + 2) + ")"))
            else:
                items.append((key, _format_param(value)))
        if not nested:
            return "[" + " ".join(f"{k}={v}" for k, v in items) + "]"
        body = ("\n" + " " * (indent + 2)).join(f"{k}={v}" for k, v in items)
        return "[\n" + " " * (indent + 2) + body + "\n" + " " * indent + "]"


def _format_literal(lit: Literal) -> str:
    val = lit.val
    if isinstance(val, (bool, np.bool_)):
        return "True" if val else "False"
    if np.dtype(lit.aval.dtype).kind == "f":
        return repr(float(val))
    if np.dtype(lit.aval.dtype).kind == "c":
        return repr(complex(val))
    return str(int(val))


def _format_param(value: Any) -> str:
    if isinstance(value, np.dtype):
        return short_dtype_name(value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return short_dtype_name(np.dtype(value))
    if isinstance(value, tuple):
        inner = ",".join(_format_param(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if value is None:
        return "None"
    return str(value)
