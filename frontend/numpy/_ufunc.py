"""Stage "jaxpr": how a NumPy ufunc applies to traced values, and `@ufunc`,
which declares one.

In: operands (tracers, Python scalars, NumPy arrays) of a declared ufunc.
Out: a tracer. Loop dtypes are NumPy's own (`ufunc.resolve_dtypes`), so
promotion follows NumPy 2 (NEP 50) exactly; broadcasting as NumPy, with
run-time checks where dynamic dims must agree; `out=` writes in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from kiln.core import KilnTypeError, KilnValueError, Literal, ShapedArray
from kiln.numpy._base import broadcast_shapes, broadcast_to, check, convert, int_literal_fits, materialize, operand
from kiln.numpy._bindings import install_on_tracer, publish, traced
from kiln.numpy.mutation import inplace, write_out
from kiln.numpy.reductions import all as all_of
from kiln.primitives import mutation
from kiln.tracing import Tracer, bind, is_static_dim, is_tracing


@dataclass(frozen=True)
class Ufunc:
    """A NumPy ufunc kiln supports: `impl` computes it on operands already
    converted to the loop dtypes and broadcast to one shape."""

    impl: Callable[..., Any]
    np_ufunc: np.ufunc
    # Comparisons compare an int array with an out-of-range Python int exactly.
    compares: bool = False
    # np.power refuses negative integer exponents.
    refuses_negative_int_exponent: bool = False


# ufunc name -> its declaration (what `np.<name>(tracer)` reaches).
UFUNCS: dict[str, Ufunc] = {}


def ufunc(name: str, *, operator: str | None = None, reflected: str | None = None, inplace_operator: str | None = None,
          compares: bool = False, refuses_negative_int_exponent: bool = False) -> Callable[[Callable], Callable]:
    """Declare `impl` as NumPy's ufunc `name` on traced values: `knp.name`,
    `np.name(tracer)` and, when given, the traced array's operators
    (`operator(self, other)`, `reflected` for `other op self`,
    `inplace_operator` for `self op= other`).

    >>> @ufunc("add", operator="__add__", reflected="__radd__", inplace_operator="__iadd__")
    ... def _add(x, y): ...
    """

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        np_ufunc = getattr(np, name)
        UFUNCS[name] = Ufunc(impl, np_ufunc, compares, refuses_negative_int_exponent)
        public = _public_function(name, np_ufunc)
        publish(name, public)
        if operator is not None:
            install_on_tracer(operator, public)
        if reflected is not None:
            install_on_tracer(reflected, lambda self, other: public(other, self))
        if inplace_operator is not None:
            install_on_tracer(inplace_operator, lambda self, other: _augmented_assignment(name, self, other))
        return impl

    return register


def _numpy_shape(shape: tuple) -> str:
    dims = [str(d) if is_static_dim(d) else "?" for d in shape]
    return f"({dims[0]},)" if len(dims) == 1 else "(" + ",".join(dims) + ")"


def _check_output_shape(target: Tracer, result: Any, what: str) -> None:
    """NumPy writes an in-place result into the target as it is: the operands
    must broadcast to the target's shape, not to a larger one."""
    ts, rs = target.aval.shape, operand(result).aval.shape
    grows = len(rs) > len(ts) or any(
        is_static_dim(r) and is_static_dim(t) and r != t for t, r in zip(ts, rs[len(rs) - len(ts):]))
    if grows:
        raise KilnValueError(
            f"{what}: non-broadcastable output operand with shape {_numpy_shape(ts)} doesn't match the broadcast "
            f"shape {_numpy_shape(rs)} (NumPy writes the result into the left operand, whose shape cannot change; "
            "use `x = x op y` for a new array)")


def _augmented_assignment(name: str, x: Tracer, other: Any) -> Tracer:
    """`x op= other` on a traced array."""
    result = apply_ufunc(name, x, other)
    if x.aval.ndim > 0:
        _check_output_shape(x, result, f"augmented assignment (np.{name})")
    return inplace(x, result, name)


def _public_function(name: str, np_ufunc: np.ufunc) -> Callable[..., Any]:
    def fn(*args, out=None, **kwargs):
        return ufunc_entry(name, args, out, kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"kiln's np.{name}: NumPy's semantics on traced values ({np_ufunc.nin} operand(s))."
    return fn


def ufunc_entry(name: str, args: tuple, out: Any, kwargs: dict) -> Any:
    """`np.name(*args, out=out, **kwargs)`: NumPy's own on concrete values
    outside a trace, else kiln's (with `dtype=` and `out=`)."""
    if not is_tracing() and not traced(*args, out):
        return getattr(np, name)(*args, out=out, **kwargs)
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise KilnTypeError(f"np.{name}: keyword argument {sorted(kwargs)[0]!r} is not supported by kiln on traced "
                            "values (supported: dtype, out); see docs/numpy.md")
    if dtype is not None:
        args = tuple(convert(a, dtype) for a in args)
    result = apply_ufunc(name, *args)
    if out is not None:
        if isinstance(out, Tracer):
            _check_output_shape(out, result, f"np.{name}(..., out=...)")
        return write_out(f"np.{name}", result, out)
    return result


def _resolve_dtypes(name: str, ufunc: np.ufunc, ops: list) -> tuple:
    # NumPy resolves Python scalar types (NEP 50) only beside a real dtype:
    # all-weak operands resolve as their default dtypes (np.less(int, int)
    # would otherwise give an object loop), and weak bools are plain bools.
    all_weak = all(x.aval.weak_type for x in ops)
    key = []
    for x in ops:
        if x.aval.weak_type and not all_weak and x.aval.dtype.kind != "b":
            key.append({"i": int, "u": int, "f": float, "c": complex}[x.aval.dtype.kind])
        else:
            key.append(x.aval.dtype)
    try:
        return ufunc.resolve_dtypes(tuple(key) + (None,) * ufunc.nout)
    except (TypeError, np._core._exceptions._UFuncNoLoopError) as e:
        raise KilnTypeError(
            f"np.{name} is not defined for dtypes {', '.join(str(k) for k in key)} (NumPy says: {e})"
        ) from None


def _check_nonnegative_exponent(y: Any) -> None:
    """NumPy refuses integer powers with a negative integer exponent."""
    message = "Integers to negative integer powers are not allowed (np.power); use a float base or exponent."
    if isinstance(y, Literal):
        if y.val < 0:
            raise KilnValueError(message)
        return
    check(all_of(apply_ufunc("greater_equal", y, 0)), "ValueError", message)


# Integer ufuncs whose divisor may be zero: NumPy gives 0 there and warns.
_INTEGER_DIVISIONS = frozenset({"floor_divide", "remainder", "mod", "fmod"})


def _warn_on_zero_divisor(np_ufunc: np.ufunc, y: Any) -> None:
    """After the call, warn as NumPy does when an integer divisor is zero
    (once per call: "divide by zero encountered in floor_divide")."""
    message = f"divide by zero encountered in {np_ufunc.__name__}"
    if isinstance(y, Literal):
        if y.val != 0:
            return
        nonzero = materialize(Literal(False, ShapedArray((), np.dtype(np.bool_))))
    else:
        nonzero = all_of(apply_ufunc("not_equal", y, 0))
    check(nonzero, "RuntimeWarning", message)


def apply_ufunc(name: str, *args: Any) -> Any:
    """Apply ufunc `name` to traced or constant operands, as NumPy would."""
    declared = UFUNCS[name]
    ops = operands = [operand(a) for a in args]
    dtypes = _resolve_dtypes(name, declared.np_ufunc, ops)
    in_dtypes, out_dtype = dtypes[: len(ops)], dtypes[-1]
    if declared.compares and not all(int_literal_fits(x, dt) for x, dt in zip(ops, in_dtypes)):
        # NumPy compares an int array with an out-of-range Python int
        # exactly (int8 array < 300 is all True): compare in a wider type.
        wide = np.dtype(np.float64 if np.dtype(np.uint64) in in_dtypes else np.int64)
        in_dtypes = (wide,) * len(ops)
    if declared.refuses_negative_int_exponent and np.dtype(in_dtypes[1]).kind == "i":
        _check_nonnegative_exponent(ops[1])
    if name in _INTEGER_DIVISIONS and np.dtype(in_dtypes[1]).kind in "iu":
        _warn_on_zero_divisor(declared.np_ufunc, ops[1])
    weak = all(x.aval.weak_type for x in ops)
    shape = broadcast_shapes([x.aval.shape for x in ops], f"np.{name}")
    ops = [broadcast_to(convert(x, dt, weak), shape) for x, dt in zip(ops, in_dtypes)]
    result = declared.impl(*ops)
    if result.aval.dtype != out_dtype:
        result = convert(result, out_dtype, weak)
    if isinstance(result, Literal):
        result = materialize(result)
    if any(result is x for x in operands):
        # A ufunc returns a new array: an identity (np.positive, np.floor of
        # an int) must not alias its operand, or writes to it would reach it.
        result = bind(mutation.copy_p, result)
    return result
