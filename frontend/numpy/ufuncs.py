"""Stage "jaxpr": the NumPy ufuncs kiln supports, each declared with
`@ufunc` on its implementation (how a ufunc applies: `_ufunc.py`).

In: operands already converted to the ufunc's loop dtypes and broadcast.
Out: a tracer, from one primitive or a composition where StableHLO has no
single op.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kiln.core import Literal, Primitive
from kiln.numpy._base import broadcast_to, convert, operand
from kiln.numpy._bindings import FUNCTIONS, UFUNC_METHODS, knp, tracer_method
from kiln.numpy._ufunc import UFUNCS, ufunc, ufunc_entry
from kiln.primitives import elementwise as ew
from kiln.tracing import Tracer, bind


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


@ufunc("floor_divide", operator="__floordiv__", reflected="__rfloordiv__", inplace_operator="__ifloordiv__")
def _floor_divide(x, y):
    if not _is_float(x):
        return _int_divmod(x, y)[0]
    return _float_divmod(x, y)[0]


@ufunc("remainder", inplace_operator="__imod__")
@ufunc("mod", operator="__mod__", reflected="__rmod__")
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
    # A zero remainder takes the divisor's sign (np.remainder(2.0, -1.0) is -0.0).
    mod = _select(mod_nonzero, mod, knp.copysign(zero, y))
    div = _select(fix, bind(ew.sub_p, div, _const_like(x, 1.0)), div)
    floordiv = bind(ew.floor_p, div)
    floordiv = _select(
        bind(ew.gt_p, bind(ew.sub_p, div, floordiv), _const_like(x, 0.5)),
        bind(ew.add_p, floordiv, _const_like(x, 1.0)), floordiv)
    # A zero quotient takes the sign of x / y (-1.0 // -2.0 is 0.0, -0.0 // 3.0 is -0.0).
    floordiv = _select(bind(ew.ne_p, div, zero), floordiv, knp.copysign(zero, bind(ew.div_p, x, y)))
    y_zero = bind(ew.eq_p, y, zero)
    floordiv = _select(y_zero, bind(ew.div_p, x, y), floordiv)
    return floordiv, mod


@ufunc("fmod")
def _fmod(x, y):
    if _is_float(x):
        return bind(ew.rem_p, x, y)
    # NumPy's integer fmod by zero is 0; StableHLO's remainder is undefined there.
    zero = _const_like(x, 0)
    y_is_zero = bind(ew.eq_p, y, zero)
    return _select(y_is_zero, zero, bind(ew.rem_p, x, _select(y_is_zero, _const_like(x, 1), y)))


@ufunc("sinh")
def _sinh(x):
    half = _const_like(x, 0.5)
    return bind(ew.mul_p, half, bind(ew.sub_p, bind(ew.expm1_p, x), bind(ew.expm1_p, bind(ew.neg_p, x))))


@ufunc("cosh")
def _cosh(x):
    half = _const_like(x, 0.5)
    return bind(ew.mul_p, half, bind(ew.add_p, bind(ew.exp_p, x), bind(ew.exp_p, bind(ew.neg_p, x))))


def _one_minus_square(x):
    one = _const_like(x, 1.0)
    return bind(ew.mul_p, bind(ew.sub_p, one, x), bind(ew.add_p, one, x))


@ufunc("arcsin")
def _arcsin(x):
    return bind(ew.atan2_p, x, bind(ew.sqrt_p, _one_minus_square(x)))


@ufunc("arccos")
def _arccos(x):
    return bind(ew.atan2_p, bind(ew.sqrt_p, _one_minus_square(x)), x)


@ufunc("arctan")
def _arctan(x):
    return bind(ew.atan2_p, x, _const_like(x, 1.0))


# Above this magnitude asinh(x) and acosh(x) are log(2|x|) to the last bit,
# and the squares in the general formulas would overflow.
_LARGE = 1e8


def _log_twice(ax):
    return bind(ew.add_p, bind(ew.log_p, ax), _const_like(ax, np.log(2.0)))


@ufunc("arcsinh")
def _arcsinh(x):
    one = _const_like(x, 1.0)
    ax = bind(ew.abs_p, x)
    sq = bind(ew.mul_p, ax, ax)
    root = bind(ew.sqrt_p, bind(ew.add_p, one, sq))
    inner = bind(ew.add_p, ax, bind(ew.div_p, sq, bind(ew.add_p, one, root)))
    mag = _select(bind(ew.gt_p, ax, _const_like(x, _LARGE)), _log_twice(ax), bind(ew.log1p_p, inner))
    return _select(bind(ew.lt_p, x, _const_like(x, 0.0)), bind(ew.neg_p, mag), mag)


@ufunc("arccosh")
def _arccosh(x):
    one = _const_like(x, 1.0)
    xm1 = bind(ew.sub_p, x, one)
    # log1p(t + sqrt(t * (t + 2))) with t = x - 1 keeps precision near 1.
    root = bind(ew.sqrt_p, bind(ew.mul_p, xm1, bind(ew.add_p, xm1, _const_like(x, 2.0))))
    near = bind(ew.log1p_p, bind(ew.add_p, xm1, root))
    result = _select(bind(ew.gt_p, x, _const_like(x, _LARGE)), _log_twice(x), near)
    return _select(bind(ew.lt_p, x, one), _const_like(x, np.nan), result)


@ufunc("arctanh")
def _arctanh(x):
    one = _const_like(x, 1.0)
    return bind(ew.mul_p, _const_like(x, 0.5),
                bind(ew.log1p_p, bind(ew.div_p, bind(ew.add_p, x, x), bind(ew.sub_p, one, x))))


def _log_base(base: float):
    return lambda x: bind(ew.div_p, bind(ew.log_p, x), _const_like(x, np.log(base)))


@ufunc("exp2")
def _exp2(x):
    return bind(ew.exp_p, bind(ew.mul_p, x, _const_like(x, np.log(2.0))))


@ufunc("square")
def _square(x):
    return bind(ew.mul_p, x, x)


@ufunc("reciprocal")
def _reciprocal(x):
    return bind(ew.div_p, _const_like(x, 1), x)


@ufunc("power", reflected="__rpow__", inplace_operator="__ipow__", refuses_negative_int_exponent=True)
@ufunc("float_power")
def _power(x, y):
    return bind(ew.pow_p, x, y)


@ufunc("isnan")
def _isnan(x):
    return bind(ew.ne_p, x, x)


@ufunc("isinf")
def _isinf(x):
    if not _is_float(x):
        return bind(ew.ne_p, x, x)
    return bind(ew.eq_p, bind(ew.abs_p, x), _const_like(x, np.inf))


@ufunc("isfinite")
def _isfinite(x):
    if not _is_float(x):
        return bind(ew.eq_p, x, x)
    return bind(ew.is_finite_p, x)


@ufunc("sign")
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


@ufunc("absolute", operator="__abs__")
@ufunc("fabs")
def _absolute(x):
    if x.aval.dtype.kind in "ub":
        return x
    return bind(ew.abs_p, x)


def _logical(prim):
    def fn(x, y):
        return bind(prim, convert(x, np.bool_), convert(y, np.bool_))

    return fn


@ufunc("logical_not")
def _logical_not(x):
    return bind(ew.not_p, convert(x, np.bool_))


@ufunc("invert", operator="__invert__")
def _invert(x):
    return bind(ew.not_p, x)


@ufunc("conjugate")
@ufunc("conj")
def _conjugate(x):
    if x.aval.dtype.kind != "c":
        return x
    # re - i*im, assembled from the parts (StableHLO has no conjugate op).
    re = convert(bind(ew.real_p, x), x.aval.dtype)
    im = convert(bind(ew.imag_p, x), x.aval.dtype)
    return bind(ew.sub_p, re, bind(ew.mul_p, im, _const_like(x, 1j)))


@ufunc("positive", operator="__pos__")
def _positive(x):
    return x


@ufunc("trunc")
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


@ufunc("add", operator="__add__", reflected="__radd__", inplace_operator="__iadd__")
def _add(x, y):
    if x.aval.dtype == np.bool_:
        return bind(ew.or_p, x, y)
    return bind(ew.add_p, x, y)


@ufunc("multiply", operator="__mul__", reflected="__rmul__", inplace_operator="__imul__")
def _multiply(x, y):
    if x.aval.dtype == np.bool_:
        return bind(ew.and_p, x, y)
    return bind(ew.mul_p, x, y)


@ufunc("right_shift", operator="__rshift__", reflected="__rrshift__", inplace_operator="__irshift__")
def _right_shift(x, y):
    return bind(ew.shift_right_arithmetic_p if x.aval.dtype.kind == "i" else ew.shift_right_logical_p, x, y)


@ufunc("hypot")
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


@ufunc("logaddexp")
def _logaddexp(x, y):
    m = bind(ew.max_p, x, y)
    d = bind(ew.neg_p, bind(ew.abs_p, bind(ew.sub_p, x, y)))
    return bind(ew.add_p, m, bind(ew.log1p_p, bind(ew.exp_p, d)))


@ufunc("deg2rad")
@ufunc("radians")
def _deg2rad(x):
    return bind(ew.mul_p, x, _const_like(x, np.pi / 180.0))


@ufunc("rad2deg")
@ufunc("degrees")
def _rad2deg(x):
    return bind(ew.mul_p, x, _const_like(x, 180.0 / np.pi))


@ufunc("true_divide", operator="__truediv__", reflected="__rtruediv__", inplace_operator="__itruediv__")
@ufunc("divide")
def _divide(x, y):
    return bind(ew.div_p, x, y)


# Ufuncs that are one primitive, or one primitive per NumPy dtype kind.
ufunc("subtract", operator="__sub__", reflected="__rsub__", inplace_operator="__isub__")(_b(ew.sub_p))
ufunc("maximum")(_maximum_fmax(ew.max_p, True))
ufunc("minimum")(_maximum_fmax(ew.min_p, True))
ufunc("fmax")(_maximum_fmax(ew.max_p, False))
ufunc("fmin")(_maximum_fmax(ew.min_p, False))
ufunc("arctan2")(_b(ew.atan2_p))
ufunc("logical_and")(_logical(ew.and_p))
ufunc("logical_or")(_logical(ew.or_p))
ufunc("logical_xor")(_logical(ew.xor_p))
ufunc("bitwise_and", operator="__and__", reflected="__rand__", inplace_operator="__iand__")(_b(ew.and_p))
ufunc("bitwise_or", operator="__or__", reflected="__ror__", inplace_operator="__ior__")(_b(ew.or_p))
ufunc("bitwise_xor", operator="__xor__", reflected="__rxor__", inplace_operator="__ixor__")(_b(ew.xor_p))
ufunc("left_shift", operator="__lshift__", reflected="__rlshift__", inplace_operator="__ilshift__")(
    _b(ew.shift_left_p))
ufunc("equal", operator="__eq__", compares=True)(_c(ew.eq_p))
ufunc("not_equal", operator="__ne__", compares=True)(_c(ew.ne_p))
ufunc("less", operator="__lt__", compares=True)(_c(ew.lt_p))
ufunc("less_equal", operator="__le__", compares=True)(_c(ew.le_p))
ufunc("greater", operator="__gt__", compares=True)(_c(ew.gt_p))
ufunc("greater_equal", operator="__ge__", compares=True)(_c(ew.ge_p))
ufunc("negative", operator="__neg__")(_u(ew.neg_p))
ufunc("exp")(_u(ew.exp_p))
ufunc("expm1")(_u(ew.expm1_p))
ufunc("log")(_u(ew.log_p))
ufunc("log2")(_log_base(2.0))
ufunc("log10")(_log_base(10.0))
ufunc("log1p")(_u(ew.log1p_p))
ufunc("sqrt")(_u(ew.sqrt_p))
ufunc("cbrt")(_u(ew.cbrt_p))
ufunc("sin")(_u(ew.sin_p))
ufunc("cos")(_u(ew.cos_p))
ufunc("tan")(_u(ew.tan_p))
ufunc("tanh")(_u(ew.tanh_p))
ufunc("floor")(_rounding(ew.floor_p))
ufunc("ceil")(_rounding(ew.ceil_p))
ufunc("rint")(_rounding(ew.round_p))

# np.abs is np.absolute.
FUNCTIONS["abs"] = FUNCTIONS["absolute"]


@tracer_method("__pow__")
def _pow_operator(self, other):
    # ndarray.__pow__ computes `x ** 2` as np.square(x): a bool array gives int8, not int64.
    if type(other) is int and other == 2:
        return FUNCTIONS["square"](self)
    return FUNCTIONS["power"](self, other)


@tracer_method("conjugate")
@tracer_method("conj")
def _conjugate_method(self):
    return FUNCTIONS["conjugate"](self)


def _outer_method(name: str) -> Callable[..., Any]:
    """`np.<name>.outer(a, b)`: `name(a[..., None, ...], b)` with a result of
    shape `a.shape + b.shape`. As NumPy, the operands are arrays first, so a
    Python scalar takes its default dtype (`np.add.outer(2, f32)` is f64)."""

    def outer(a: Any, b: Any, out: Any = None, dtype: Any = None) -> Any:
        if isinstance(out, tuple):
            (out,) = out
        a, b = (operand(x if isinstance(x, Tracer) else np.asarray(x)) for x in (a, b))
        expanded = FUNCTIONS["reshape"](a, *a.aval.shape, *(1,) * b.aval.ndim) if b.aval.ndim else a
        return ufunc_entry(name, (expanded, b), out, {} if dtype is None else {"dtype": dtype})

    outer.__name__ = outer.__qualname__ = f"{name}.outer"
    return outer


# `.outer` of every binary ufunc (declared above, so after every @ufunc;
# NumPy itself refuses `.outer` of a unary one before dispatching).
for _name, _declared in UFUNCS.items():
    if _declared.np_ufunc.nin == 2:
        UFUNC_METHODS[_name, "outer"] = _outer_method(_name)
