"""Stage "jaxpr": NumPy ufuncs on traced values.

In: operands (tracers, Python scalars, NumPy arrays).
Out: a tracer. Loop dtypes are NumPy's own (`ufunc.resolve_dtypes`), so
promotion follows NumPy 2 (NEP 50) exactly; broadcasting as NumPy, with
run-time checks where dynamic dims must agree.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kiln.core import KilnTypeError, KilnValueError, Literal, Primitive
from kiln.numpy._base import broadcast_shapes, broadcast_to, check, convert, int_literal_fits, materialize, operand
from kiln.primitives import elementwise as ew
from kiln.primitives import mutation
from kiln.tracing import bind



def _u(prim: Primitive) -> Callable[[Any], Any]:
    return lambda x: bind(prim, x)


def _b(prim: Primitive) -> Callable[[Any, Any], Any]:
    return lambda x, y: bind(prim, x, y)


def _c(prim: Primitive) -> Callable[[Any, Any], Any]:
    return lambda x, y: bind(prim, x, y)


def _const_like(x: Any, value: Any) -> Any:
    """A scalar literal of x's dtype, broadcast to x's shape."""
    lit = Literal(np.array(value).astype(x.aval.dtype)[()].item(), x.aval.update(shape=(), weak_type=False))
    return broadcast_to(lit, x.aval.shape)


def _select(pred, a, b):
    return bind(ew.select_p, pred, a, b)


# --- compositions for ufuncs StableHLO has no single op for


def _is_float(x) -> bool:
    return x.aval.dtype.kind in "fc"


def _floor_divide(x, y):
    if not _is_float(x):
        return _int_divmod(x, y)[0]
    return _float_divmod(x, y)[0]


def _remainder(x, y):
    if not _is_float(x):
        return _int_divmod(x, y)[1]
    return _float_divmod(x, y)[1]


def _int_divmod(x, y):
    """Floor division and modulo for ints; division by zero gives 0 as NumPy."""
    zero, one = _const_like(x, 0), _const_like(x, 1)
    y_is_zero = bind(ew.eq_p, y, zero)
    safe_y = _select(y_is_zero, one, y)
    q = bind(ew.div_p, x, safe_y)
    r = bind(ew.rem_p, x, safe_y)
    if x.aval.dtype.kind == "i":
        # Truncating division rounds toward zero; floor needs one less when
        # the remainder is nonzero and its sign differs from the divisor's.
        adjust = bind(ew.and_p, bind(ew.ne_p, r, zero),
                      bind(ew.ne_p, bind(ew.lt_p, r, zero), bind(ew.lt_p, safe_y, zero)))
        q = _select(adjust, bind(ew.sub_p, q, one), q)
        r = _select(adjust, bind(ew.add_p, r, safe_y), r)
    return _select(y_is_zero, zero, q), _select(y_is_zero, zero, r)


def _float_divmod(x, y):
    """NumPy's npy_divmod for floats (floor division and Python-style modulo)."""
    zero = _const_like(x, 0.0)
    mod = bind(ew.rem_p, x, y)
    div = bind(ew.div_p, bind(ew.sub_p, x, mod), y)
    mod_nonzero = bind(ew.ne_p, mod, zero)
    sign_differs = bind(ew.ne_p, bind(ew.lt_p, y, zero), bind(ew.lt_p, mod, zero))
    fix = bind(ew.and_p, mod_nonzero, sign_differs)
    mod = _select(fix, bind(ew.add_p, mod, y), mod)
    div = _select(fix, bind(ew.sub_p, div, _const_like(x, 1.0)), div)
    floordiv = bind(ew.floor_p, div)
    floordiv = _select(
        bind(ew.gt_p, bind(ew.sub_p, div, floordiv), _const_like(x, 0.5)),
        bind(ew.add_p, floordiv, _const_like(x, 1.0)), floordiv)
    y_zero = bind(ew.eq_p, y, zero)
    floordiv = _select(y_zero, bind(ew.div_p, x, y), floordiv)
    return floordiv, mod


def _fmod(x, y):
    if _is_float(x):
        return bind(ew.rem_p, x, y)
    # NumPy's integer fmod by zero is 0; StableHLO's remainder is undefined there.
    zero = _const_like(x, 0)
    y_is_zero = bind(ew.eq_p, y, zero)
    return _select(y_is_zero, zero, bind(ew.rem_p, x, _select(y_is_zero, _const_like(x, 1), y)))


def _sinh(x):
    half = _const_like(x, 0.5)
    return bind(ew.mul_p, half, bind(ew.sub_p, bind(ew.expm1_p, x), bind(ew.expm1_p, bind(ew.neg_p, x))))


def _cosh(x):
    half = _const_like(x, 0.5)
    return bind(ew.mul_p, half, bind(ew.add_p, bind(ew.exp_p, x), bind(ew.exp_p, bind(ew.neg_p, x))))


def _one_minus_square(x):
    one = _const_like(x, 1.0)
    return bind(ew.mul_p, bind(ew.sub_p, one, x), bind(ew.add_p, one, x))


def _arcsin(x):
    return bind(ew.atan2_p, x, bind(ew.sqrt_p, _one_minus_square(x)))


def _arccos(x):
    return bind(ew.atan2_p, bind(ew.sqrt_p, _one_minus_square(x)), x)


def _arctan(x):
    return bind(ew.atan2_p, x, _const_like(x, 1.0))


# Above this magnitude asinh(x) and acosh(x) are log(2|x|) to the last bit,
# and the squares in the general formulas would overflow.
_LARGE = 1e8


def _log_twice(ax):
    return bind(ew.add_p, bind(ew.log_p, ax), _const_like(ax, np.log(2.0)))


def _arcsinh(x):
    one = _const_like(x, 1.0)
    ax = bind(ew.abs_p, x)
    sq = bind(ew.mul_p, ax, ax)
    root = bind(ew.sqrt_p, bind(ew.add_p, one, sq))
    inner = bind(ew.add_p, ax, bind(ew.div_p, sq, bind(ew.add_p, one, root)))
    mag = _select(bind(ew.gt_p, ax, _const_like(x, _LARGE)), _log_twice(ax), bind(ew.log1p_p, inner))
    return _select(bind(ew.lt_p, x, _const_like(x, 0.0)), bind(ew.neg_p, mag), mag)


def _arccosh(x):
    one = _const_like(x, 1.0)
    xm1 = bind(ew.sub_p, x, one)
    # log1p(t + sqrt(t * (t + 2))) with t = x - 1 keeps precision near 1.
    root = bind(ew.sqrt_p, bind(ew.mul_p, xm1, bind(ew.add_p, xm1, _const_like(x, 2.0))))
    near = bind(ew.log1p_p, bind(ew.add_p, xm1, root))
    result = _select(bind(ew.gt_p, x, _const_like(x, _LARGE)), _log_twice(x), near)
    return _select(bind(ew.lt_p, x, one), _const_like(x, np.nan), result)


def _arctanh(x):
    one = _const_like(x, 1.0)
    return bind(ew.mul_p, _const_like(x, 0.5),
                bind(ew.log1p_p, bind(ew.div_p, bind(ew.add_p, x, x), bind(ew.sub_p, one, x))))


def _log_base(base: float):
    return lambda x: bind(ew.div_p, bind(ew.log_p, x), _const_like(x, np.log(base)))


def _exp2(x):
    return bind(ew.exp_p, bind(ew.mul_p, x, _const_like(x, np.log(2.0))))


def _square(x):
    return bind(ew.mul_p, x, x)


def _reciprocal(x):
    return bind(ew.div_p, _const_like(x, 1), x)


def _power(x, y):
    return bind(ew.pow_p, x, y)


def _isnan(x):
    return bind(ew.ne_p, x, x)


def _isinf(x):
    if not _is_float(x):
        return bind(ew.ne_p, x, x)
    return bind(ew.eq_p, bind(ew.abs_p, x), _const_like(x, np.inf))


def _isfinite(x):
    if not _is_float(x):
        return bind(ew.eq_p, x, x)
    return bind(ew.is_finite_p, x)


def _sign(x):
    if _is_float(x):
        # NumPy's sign(nan) is nan; stablehlo.sign agrees.
        return bind(ew.sign_p, x)
    zero = _const_like(x, 0)
    gt = convert(bind(ew.gt_p, x, zero), x.aval.dtype)
    if x.aval.dtype.kind == "u":
        return gt
    lt = convert(bind(ew.lt_p, x, zero), x.aval.dtype)
    return bind(ew.sub_p, gt, lt)


def _absolute(x):
    if x.aval.dtype.kind in "ub":
        return x
    return bind(ew.abs_p, x)


def _logical(prim):
    def fn(x, y):
        return bind(prim, convert(x, np.bool_), convert(y, np.bool_))

    return fn


def _logical_not(x):
    return bind(ew.not_p, convert(x, np.bool_))


def _invert(x):
    return bind(ew.not_p, x)


def _conjugate(x):
    if x.aval.dtype.kind != "c":
        return x
    # re - i*im, assembled from the parts (StableHLO has no conjugate op).
    re = convert(bind(ew.real_p, x), x.aval.dtype)
    im = convert(bind(ew.imag_p, x), x.aval.dtype)
    return bind(ew.sub_p, re, bind(ew.mul_p, im, _const_like(x, 1j)))


def _positive(x):
    return x


def _trunc(x):
    if not _is_float(x):
        return x
    return _select(bind(ew.lt_p, x, _const_like(x, 0.0)), bind(ew.ceil_p, x), bind(ew.floor_p, x))


def _rounding(prim):
    def fn(x):
        if not _is_float(x):
            return x
        return bind(prim, x)

    return fn


def _maximum_fmax(prim, nan_propagating: bool):
    def fn(x, y):
        r = bind(prim, x, y)
        if nan_propagating or not _is_float(x):
            return r
        # fmax/fmin ignore a NaN operand.
        return _select(bind(ew.ne_p, x, x), y, _select(bind(ew.ne_p, y, y), x, r))

    return fn


def _add(x, y):
    if x.aval.dtype == np.bool_:
        return bind(ew.or_p, x, y)
    return bind(ew.add_p, x, y)


def _multiply(x, y):
    if x.aval.dtype == np.bool_:
        return bind(ew.and_p, x, y)
    return bind(ew.mul_p, x, y)


def _right_shift(x, y):
    return bind(ew.shift_right_arithmetic_p if x.aval.dtype.kind == "i" else ew.shift_right_logical_p, x, y)


def _hypot(x, y):
    """max * sqrt(1 + (min / max)^2): no overflow or underflow in the squares;
    an infinite operand gives inf even beside a NaN, as NumPy."""
    ax, ay = bind(ew.abs_p, x), bind(ew.abs_p, y)
    big, small = bind(ew.max_p, ax, ay), bind(ew.min_p, ax, ay)
    zero, inf = _const_like(x, 0.0), _const_like(x, np.inf)
    ratio = bind(ew.div_p, small, _select(bind(ew.eq_p, big, zero), _const_like(x, 1.0), big))
    result = bind(ew.mul_p, big, bind(ew.sqrt_p, bind(ew.add_p, _const_like(x, 1.0), _square(ratio))))
    either_inf = bind(ew.or_p, bind(ew.eq_p, ax, inf), bind(ew.eq_p, ay, inf))
    return _select(either_inf, inf, result)


def _logaddexp(x, y):
    m = bind(ew.max_p, x, y)
    d = bind(ew.neg_p, bind(ew.abs_p, bind(ew.sub_p, x, y)))
    return bind(ew.add_p, m, bind(ew.log1p_p, bind(ew.exp_p, d)))


def _deg2rad(x):
    return bind(ew.mul_p, x, _const_like(x, np.pi / 180.0))


def _rad2deg(x):
    return bind(ew.mul_p, x, _const_like(x, 180.0 / np.pi))


def _divide(x, y):
    return bind(ew.div_p, x, y)


# name -> (implementation on loop-dtype operands, the NumPy ufunc for dtype resolution)
UFUNCS: dict[str, tuple[Callable, np.ufunc]] = {
    "add": (_add, np.add),
    "subtract": (_b(ew.sub_p), np.subtract),
    "multiply": (_multiply, np.multiply),
    "true_divide": (_divide, np.true_divide),
    "divide": (_divide, np.divide),
    "floor_divide": (_floor_divide, np.floor_divide),
    "remainder": (_remainder, np.remainder),
    "mod": (_remainder, np.mod),
    "fmod": (_fmod, np.fmod),
    "power": (_power, np.power),
    "float_power": (_power, np.float_power),
    "maximum": (_maximum_fmax(ew.max_p, True), np.maximum),
    "minimum": (_maximum_fmax(ew.min_p, True), np.minimum),
    "fmax": (_maximum_fmax(ew.max_p, False), np.fmax),
    "fmin": (_maximum_fmax(ew.min_p, False), np.fmin),
    "arctan2": (_b(ew.atan2_p), np.arctan2),
    "hypot": (_hypot, np.hypot),
    "logaddexp": (_logaddexp, np.logaddexp),
    "logical_and": (_logical(ew.and_p), np.logical_and),
    "logical_or": (_logical(ew.or_p), np.logical_or),
    "logical_xor": (_logical(ew.xor_p), np.logical_xor),
    "logical_not": (_logical_not, np.logical_not),
    "bitwise_and": (_b(ew.and_p), np.bitwise_and),
    "bitwise_or": (_b(ew.or_p), np.bitwise_or),
    "bitwise_xor": (_b(ew.xor_p), np.bitwise_xor),
    "invert": (_invert, np.invert),
    "left_shift": (_b(ew.shift_left_p), np.left_shift),
    "right_shift": (_right_shift, np.right_shift),
    "equal": (_c(ew.eq_p), np.equal),
    "not_equal": (_c(ew.ne_p), np.not_equal),
    "less": (_c(ew.lt_p), np.less),
    "less_equal": (_c(ew.le_p), np.less_equal),
    "greater": (_c(ew.gt_p), np.greater),
    "greater_equal": (_c(ew.ge_p), np.greater_equal),
    "negative": (_u(ew.neg_p), np.negative),
    "positive": (_positive, np.positive),
    "conjugate": (_conjugate, np.conjugate),
    "conj": (_conjugate, np.conj),
    "absolute": (_absolute, np.absolute),
    "fabs": (_absolute, np.fabs),
    "sign": (_sign, np.sign),
    "exp": (_u(ew.exp_p), np.exp),
    "exp2": (_exp2, np.exp2),
    "expm1": (_u(ew.expm1_p), np.expm1),
    "log": (_u(ew.log_p), np.log),
    "log2": (_log_base(2.0), np.log2),
    "log10": (_log_base(10.0), np.log10),
    "log1p": (_u(ew.log1p_p), np.log1p),
    "sqrt": (_u(ew.sqrt_p), np.sqrt),
    "cbrt": (_u(ew.cbrt_p), np.cbrt),
    "square": (_square, np.square),
    "reciprocal": (_reciprocal, np.reciprocal),
    "sin": (_u(ew.sin_p), np.sin),
    "cos": (_u(ew.cos_p), np.cos),
    "tan": (_u(ew.tan_p), np.tan),
    "arcsin": (_arcsin, np.arcsin),
    "arccos": (_arccos, np.arccos),
    "arctan": (_arctan, np.arctan),
    "sinh": (_sinh, np.sinh),
    "cosh": (_cosh, np.cosh),
    "tanh": (_u(ew.tanh_p), np.tanh),
    "arcsinh": (_arcsinh, np.arcsinh),
    "arccosh": (_arccosh, np.arccosh),
    "arctanh": (_arctanh, np.arctanh),
    "deg2rad": (_deg2rad, np.deg2rad),
    "radians": (_deg2rad, np.radians),
    "rad2deg": (_rad2deg, np.rad2deg),
    "degrees": (_rad2deg, np.degrees),
    "floor": (_rounding(ew.floor_p), np.floor),
    "ceil": (_rounding(ew.ceil_p), np.ceil),
    "rint": (_rounding(ew.round_p), np.rint),
    "trunc": (_trunc, np.trunc),
    "isnan": (_isnan, np.isnan),
    "isinf": (_isinf, np.isinf),
    "isfinite": (_isfinite, np.isfinite),
}


_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


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
    from kiln import numpy as knp

    check(knp.all(knp.greater_equal(y, 0)), "ValueError", message)


def apply_ufunc(name: str, *args: Any) -> Any:
    """Apply ufunc `name` to traced or constant operands, as NumPy would."""
    impl, ufunc = UFUNCS[name]
    ops = operands = [operand(a) for a in args]
    dtypes = _resolve_dtypes(name, ufunc, ops)
    in_dtypes, out_dtype = dtypes[: len(ops)], dtypes[-1]
    if name in _COMPARISONS and not all(int_literal_fits(x, dt) for x, dt in zip(ops, in_dtypes)):
        # NumPy compares an int array with an out-of-range Python int
        # exactly (int8 array < 300 is all True): compare in a wider type.
        wide = np.dtype(np.float64 if np.dtype(np.uint64) in in_dtypes else np.int64)
        in_dtypes = (wide,) * len(ops)
    if name == "power" and np.dtype(in_dtypes[1]).kind == "i":
        _check_nonnegative_exponent(ops[1])
    weak = all(x.aval.weak_type for x in ops)
    shape = broadcast_shapes([x.aval.shape for x in ops], f"np.{name}")
    ops = [broadcast_to(convert(x, dt, weak), shape) for x, dt in zip(ops, in_dtypes)]
    result = impl(*ops)
    if result.aval.dtype != out_dtype:
        result = convert(result, out_dtype, weak)
    if isinstance(result, Literal):
        result = materialize(result)
    if any(result is x for x in operands):
        # A ufunc returns a new array: an identity (np.positive, np.floor of
        # an int) must not alias its operand, or writes to it would reach it.
        result = bind(mutation.copy_p, result)
    return result


def _make_public(name: str) -> Callable[..., Any]:
    ufunc = UFUNCS[name][1]

    def fn(*args, out=None, **kwargs):
        from kiln.numpy._dispatch import ufunc_entry

        return ufunc_entry(name, args, out, kwargs)

    fn.__name__ = name
    fn.__doc__ = f"kiln's np.{name}: NumPy's semantics on traced values ({ufunc.nin} operand(s))."
    return fn


PUBLIC = {name: _make_public(name) for name in UFUNCS}
