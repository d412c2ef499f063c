"""Stage "jaxpr": the reference interpreter, `eval_jaxpr`.

In: a `Jaxpr`, its constants and argument values (implicit dims first).
Out: the values of its outvars as NumPy arrays, computed with NumPy: view
primitives return NumPy views that alias their base, writes go through
them, control flow runs nested jaxprs, failed checks raise.

Each primitive's rule sits beside its abstract-evaluation rule in its
family module (`@interpret_rule(prim)`, at the end of the module); this
module owns the table and imports nothing of the compiler.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from kiln.core import Jaxpr, Literal, Primitive, is_static_dim
from kiln.errors import CHECK_ERRORS, KilnInternalError, KilnValueError

# rule(*operand values, **eqn.params) -> one value, or a list when the
# primitive has multiple results. Operands are NumPy arrays (0-d for scalars).
InterpretRule = Callable[..., Any]
INTERPRET_RULES: dict[Primitive, InterpretRule] = {}


def interpret_rule(*prims: Primitive) -> Callable[[InterpretRule], InterpretRule]:
    """Register `rule` as the interpreter rule of each primitive."""

    def register(rule: InterpretRule) -> InterpretRule:
        for p in prims:
            INTERPRET_RULES[p] = rule
        return rule

    return register



class CheckFailed(Exception):
    """A run-time check failed while interpreting; `eval_jaxpr` turns it into
    the error compiled code raises, naming the equation's source line."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message

    def user_error(self, source_info: Any) -> Exception:
        # Compiled code appends the op's location the same way (kiln-lower-checks).
        where = "" if source_info is None else f" (at {source_info.filename}:{source_info.line})"
        return CHECK_ERRORS[self.kind](self.message + where)


def check_failure(kind: str, message: str, values: Sequence[Any]) -> CheckFailed:
    """What a check's rule raises when it fails: the message is formatted
    with the reported values as i64 (two slots, unused ones 0), as the
    runtime does."""
    reported = [int(v) for v in values] + [0] * (2 - len(values))
    return CheckFailed(kind, message.format(*reported))


def checked_shape(dims: Sequence[Any]) -> tuple:
    """A result shape as ints; a negative size raises as compiled code's
    allocation check does."""
    shape = tuple(int(d) for d in dims)
    if any(d < 0 for d in shape):
        raise KilnValueError("negative dimensions are not allowed: a size computed at run time is negative "
                             "(kiln-check-alloc-sizes)")
    return shape


def fill_dims(static: Sequence[Any], dynamic: Sequence[Any]) -> list:
    """The `None` entries of a static shape/starts param filled from the
    dynamic operands, in order."""
    values = iter(dynamic)
    return [int(next(values)) if d is None else int(d) for d in static]


def detach(value: np.ndarray, others: Sequence[Any]) -> np.ndarray:
    """`value`, copied when it may share memory with any of `others`
    (a value that is not a view must alias nothing)."""
    for other in others:
        if isinstance(other, np.ndarray) and np.may_share_memory(value, other):
            return np.array(value, copy=True)
    return value


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list:
    """Run `jaxpr` on NumPy values: `consts` bind its constvars, `args` its
    invars (implicit dim inputs first). Returns every outvar's value
    (implicit dim outputs first) as a NumPy array; 0-d for scalars.

    >>> f = kiln.qjit(lambda x: x * 2.0)
    >>> _ = f(np.arange(3.0))  # traces (and compiles) once; f.jaxpr is that trace
    >>> eval_jaxpr(f.jaxpr, f.jaxpr.consts, 3, np.arange(3.0))
    [array([0., 2., 4.])]
    """
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise KilnInternalError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.constvars)} consts and "
                                f"{len(jaxpr.invars)} arguments, got {len(consts)} and {len(args)}")
    env: dict[int, np.ndarray] = {}
    for var, value in zip(list(jaxpr.constvars) + list(jaxpr.invars), list(consts) + list(args)):
        env[id(var)] = _as_value(value, var.aval.dtype)

    def read(x: Any) -> np.ndarray:
        if isinstance(x, Literal):
            return np.asarray(x.val, dtype=x.aval.dtype)
        try:
            return env[id(x)]
        except KeyError:
            raise KilnInternalError(f"eval_jaxpr: {x} is read before it is bound") from None

    with np.errstate(all="ignore"):
        for eqn in jaxpr.eqns:
            rule = INTERPRET_RULES.get(eqn.primitive)
            if rule is None:
                raise KilnInternalError(f"primitive {eqn.primitive.name} has no interpreter rule")
            operands = [read(x) for x in eqn.invars]
            try:
                result = rule(*operands, **eqn.params)
            except CheckFailed as failure:
                raise failure.user_error(eqn.source_info) from None
            results = result if eqn.primitive.multiple_results else [result]
            if len(results) != len(eqn.outvars):
                raise KilnInternalError(f"interpreter rule of {eqn.primitive.name} gave {len(results)} results, "
                                        f"the equation has {len(eqn.outvars)}")
            for var, value in zip(eqn.outvars, results):
                value = _as_value(value, var.aval.dtype)
                if not eqn.primitive.is_view:
                    value = detach(value, operands)
                _check_shape(eqn.primitive, var.aval.shape, value, env)
                env[id(var)] = value
    return [read(v) for v in jaxpr.outvars]


def _as_value(value: Any, dtype: np.dtype) -> np.ndarray:
    """An ndarray of exactly `dtype` (views stay views: no copy when the
    dtype already matches)."""
    if isinstance(value, np.ndarray) and value.dtype == dtype:
        return value
    value = np.asarray(value)
    if value.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        value = value.real
    return value.astype(dtype)


def _check_shape(prim: Primitive, dims: tuple, value: np.ndarray, env: dict) -> None:
    """The result has the shape its aval states (a broken rule is a bug)."""
    expected = tuple(int(d) if is_static_dim(d) else int(env[id(d)]) if id(d) in env else None for d in dims)
    if len(expected) != value.ndim or any(e is not None and e != s for e, s in zip(expected, value.shape)):
        raise KilnInternalError(f"interpreter rule of {prim.name} gave shape {value.shape}, its type says "
                                f"{expected}")
