"""The NumPy list, family "ufuncs": every ufunc of Numba's tables, called
plainly and with `out=`, and every method of the binary ones (reduce,
accumulate, outer, at, reduceat) (issue 15, part "the list and the general
surface")."""

from __future__ import annotations

import numpy as np

from test.numpy_list.args import floats, ints
from test.numpy_list.case import Case

# name -> (number of inputs, input kind): "f" floats in [-2, 2), "p" positive
# floats, "u" floats in (-1, 1), "g" floats >= 1, "i" ints, "s" small
# non-negative ints (shift counts), "b" bools.
UFUNCS: dict[str, tuple[int, str]] = {
    # math operations
    "add": (2, "f"), "subtract": (2, "f"), "multiply": (2, "f"), "divide": (2, "f"), "logaddexp": (2, "f"),
    "logaddexp2": (2, "f"), "true_divide": (2, "f"), "floor_divide": (2, "f"), "negative": (1, "f"),
    "power": (2, "p"), "remainder": (2, "f"), "mod": (2, "f"), "fmod": (2, "f"), "abs": (1, "f"),
    "absolute": (1, "f"), "fabs": (1, "f"), "rint": (1, "f"), "sign": (1, "f"), "conj": (1, "c"),
    "exp": (1, "f"), "exp2": (1, "f"), "log": (1, "p"), "log2": (1, "p"), "log10": (1, "p"),
    "expm1": (1, "f"), "log1p": (1, "p"), "sqrt": (1, "p"), "square": (1, "f"), "reciprocal": (1, "f"),
    "conjugate": (1, "c"),
    # trigonometric functions
    "sin": (1, "f"), "cos": (1, "f"), "tan": (1, "f"), "arcsin": (1, "u"), "arccos": (1, "u"),
    "arctan": (1, "f"), "arctan2": (2, "f"), "hypot": (2, "f"), "sinh": (1, "f"), "cosh": (1, "f"),
    "tanh": (1, "f"), "arcsinh": (1, "f"), "arccosh": (1, "g"), "arctanh": (1, "u"), "deg2rad": (1, "f"),
    "rad2deg": (1, "f"), "degrees": (1, "f"), "radians": (1, "f"),
    # bit-twiddling functions
    "bitwise_and": (2, "i"), "bitwise_or": (2, "i"), "bitwise_xor": (2, "i"), "bitwise_not": (1, "i"),
    "invert": (1, "i"), "left_shift": (2, "s"), "right_shift": (2, "s"),
    # comparison functions
    "greater": (2, "f"), "greater_equal": (2, "f"), "less": (2, "f"), "less_equal": (2, "f"),
    "not_equal": (2, "f"), "equal": (2, "f"), "logical_and": (2, "b"), "logical_or": (2, "b"),
    "logical_xor": (2, "b"), "logical_not": (1, "b"), "maximum": (2, "f"), "minimum": (2, "f"),
    "fmax": (2, "f"), "fmin": (2, "f"),
    # floating functions
    "isfinite": (1, "f"), "isinf": (1, "f"), "isnan": (1, "f"), "signbit": (1, "f"), "copysign": (2, "f"),
    "nextafter": (2, "f"), "modf": (1, "f"), "ldexp": (2, "l"), "frexp": (1, "f"), "floor": (1, "f"),
    "ceil": (1, "f"), "trunc": (1, "f"), "spacing": (1, "f"),
}
# Extra ufuncs beyond Numba's tables that the issue names.
EXTRA = {"heaviside": (2, "f"), "float_power": (2, "p"), "cbrt": (1, "f"), "positive": (1, "f")}

# The methods of binary ufuncs, by the ufunc's kind of result: NumPy defines
# reduce & co. for every binary ufunc with one output, but a comparison's
# reduce raises (its bool result cannot feed back): the case then checks that
# kiln raises as NumPy does.
METHODS = ("reduce", "accumulate", "outer", "at", "reduceat")


def _values(rng, kind: str, *shape: int):
    if kind == "p":
        return floats(rng, *shape, low=0.1, high=3.0)
    if kind == "u":
        return floats(rng, *shape, low=-0.95, high=0.95)
    if kind == "g":
        return floats(rng, *shape, low=1.0, high=4.0)
    if kind == "c":
        return floats(rng, *shape, dtype=np.complex128)
    if kind == "i":
        return ints(rng, *shape, low=-50, high=50)
    if kind == "s":
        return ints(rng, *shape, low=0, high=8)
    if kind == "b":
        return rng.random(shape) < 0.5
    values = floats(rng, *shape)
    if values.size:
        values.flat[0] = 0.0  # zero, and an exact integer, on every size
    return values


def _args(arity: int, kind: str):
    def make(n, rng):
        first = _values(rng, kind, n, 3)
        if arity == 1:
            return (first,)
        second = ints(rng, n, 3, low=-3, high=4) if kind == "l" else _values(rng, kind, n, 3)
        return first, second
    return make


def _call(name: str, arity: int):
    u = getattr(np, name)
    if arity == 1:
        def call(a):
            return u(a), u(a[:, 0])
    else:
        def call(a, b):
            return u(a, b), u(a[:, 0], b[:, 1]), u(a, b[0])
    call.__name__ = f"call_{name}"
    return call


def _table(names: list[str]) -> list[str]:
    return [n for n in names if UFUNCS.get(n, EXTRA.get(n))[0] == 2 and getattr(np, n).nout == 1]


# The tables of Numba's page, in its order (their binary ufuncs share method cases).
TABLES = {
    "math": list(UFUNCS)[:30], "trigonometric": list(UFUNCS)[30:48], "bit-twiddling": list(UFUNCS)[48:55],
    "comparison": list(UFUNCS)[55:69], "floating": list(UFUNCS)[69:] + list(EXTRA),
}


def _out_case(table: str, names: list[str]) -> Case:
    """`out=` of every ufunc of a table (two outputs for modf / frexp)."""
    def with_out(a, b, c, d):
        results = []
        for name in names:
            u = getattr(np, name)
            arity, kind = UFUNCS.get(name, EXTRA.get(name))
            x, y = {"b": (c, d), "i": (a.astype(np.int64), b.astype(np.int64))}.get(kind, (a, b))
            if kind in "pg":
                x, y = np.abs(x) + 1.0, np.abs(y) + 0.5
            if kind == "u":
                x = x / 3.0
            if kind == "s":
                y = np.abs(b.astype(np.int64)) % 8
                x = a.astype(np.int64)
            if kind == "l":
                y = b.astype(np.int64)
            if kind == "c":
                x = x + 1j * y
            args = (x,) if arity == 1 else (x, y)
            if u.nout == 2:
                outs = (np.empty_like(u(*args)[0]), np.empty_like(u(*args)[1]))
                u(*args, out=outs)
                results.extend(outs)
            else:
                out = np.empty_like(u(*args))
                r = u(*args, out=out)
                results.extend((r, out))
        return tuple(results)
    with_out.__name__ = f"out_{table}"

    def make(n, rng):
        return (floats(rng, n, 3, low=-3, high=3).round(1), floats(rng, n, 3, low=-3, high=3).round(1),
                rng.random((n, 3)) < 0.5, rng.random((n, 3)) < 0.5)
    return Case("ufunc out=", with_out, make, "ufuncs", False, rtol=1e-13)


def _fold(u, a: np.ndarray, axis: int) -> np.ndarray:
    """`u.reduce(a, axis)` as NumPy defines it, one elementwise call of `u`
    per step along `axis` (at least one element)."""
    parts = np.moveaxis(a, axis, 0)
    result = parts[0]
    for part in parts[1:]:
        result = u(result, part)
    return result


def _fold_at(u, a: np.ndarray, indices: list[int], axis: int) -> np.ndarray:
    """`u.reduceat(a, indices, axis)` as NumPy defines it: the fold of
    `a[i:j]` for each index `i` and the next `j` (to the end for the last),
    `a[i]` where `j <= i`."""
    parts = np.moveaxis(a, axis, 0)
    bounds = list(indices[1:]) + [len(parts)]
    rows = [_fold(u, parts[i:j], 0) if i < j else parts[i] for i, j in zip(indices, bounds)]
    return np.moveaxis(np.stack(rows), 0, axis)


def _reduce_is_sound(name: str) -> bool:
    """Whether NumPy's own `reduce` of `name` along a contiguous axis
    agrees with the fold that defines it on this machine. NumPy 2.4's
    AVX-512 loops of `power` and `arctan2` reduce wrongly (the reduction of
    [1, 2, 3] along axis 1 is arctan2(1, 3), the middle element skipped;
    with NPY_DISABLE_CPU_FEATURES="AVX512_ICL AVX512_SPR X86_V4" it is
    right), so those cases compare kiln with the fold instead."""
    u = getattr(np, name)
    probe = np.array([[1.5, 2.0, 0.7, 1.2, 0.9]])
    try:
        with np.errstate(all="ignore"):
            return bool(np.allclose(u.reduce(probe, axis=1), _fold(u, probe, 1), rtol=1e-12, equal_nan=True))
    except TypeError:  # integer-only ufuncs
        return True


def _method(names: list[str], method: str, folded: frozenset = frozenset()):
    """Every `method` form of each ufunc of `names`; the reductions of the
    names in `folded` computed by `_fold` / `_fold_at` instead (the
    reference where NumPy's own is wrong: `_method_reference`)."""
    def fn(a, b):
        results = []
        for name in names:
            u = getattr(np, name)
            fold = name in folded
            if method == "reduce":
                results += [_fold(u, a, 0) if fold and len(a) > 1 else u.reduce(a),
                            _fold(u, a, 1) if fold else u.reduce(a, axis=1)]
            elif method == "accumulate":
                results += [u.accumulate(a), u.accumulate(a, axis=1)]
            elif method == "outer":
                results += [u.outer(a[:, 0], b[:, 1]), u.outer(a[:2, 0], b)]
            elif method == "reduceat":
                results += [_fold_at(u, a, [0, 2, 1], 0) if fold else u.reduceat(a, [0, 2, 1]),
                            _fold_at(u, a, [0, 2], 1) if fold else u.reduceat(a, [0, 2], axis=1)]
            else:
                x, y = a.copy(), b.copy()
                u.at(x, [0, 1, 0], y[0])
                u.at(y, (slice(None), 2), y[:, 0])
                u.at(x, ([0, 1, 0], [2, -1, 2]), y[1])  # two index arrays: the entries (0, 2), (1, -1), (0, 2)
                results += [x, y]
        return tuple(results)
    fn.__name__ = f"{method}_{'_'.join(names[:2])}"
    return fn


def _method_reference(names: list[str], method: str):
    """NumPy's answer to `_method(names, method)` with the reductions NumPy
    gets wrong on this machine (`_reduce_is_sound`) folded instead; None
    when NumPy's own is right."""
    broken = frozenset(name for name in names if not _reduce_is_sound(name))
    if method not in ("reduce", "reduceat") or not broken:
        return None
    return _method(names, method, broken)


def _method_args(kind: str, method: str):
    make = _args(2, kind)
    if method == "at":
        return lambda n, rng: make(n + 2, rng)   # rows 0 and 1 exist at every size
    if method == "reduceat":
        return lambda n, rng: make(n + 3, rng)   # so do the indices 0, 1, 2
    return make


def _cases() -> list[Case]:
    cases = []
    for table, on_page in ((UFUNCS, True), (EXTRA, False)):
        for name, (arity, kind) in table.items():
            cases.append(Case(f"numpy.{name}", _call(name, arity), _args(arity, kind), "ufuncs", on_page,
                              rtol=1e-13))
    for title, names in TABLES.items():
        cases.append(_out_case(title, names))
        binary = _table(names)
        by_kind: dict[str, list[str]] = {}
        for name in binary:
            by_kind.setdefault(UFUNCS.get(name, EXTRA.get(name))[1], []).append(name)
        for kind, group in by_kind.items():
            for method in METHODS:
                cases.append(Case(f"ufunc.{method}", _method(group, method), _method_args(kind, method),
                                  "ufuncs", False, rtol=1e-12, reference=_method_reference(group, method)))
    return cases


CASES = _cases()
