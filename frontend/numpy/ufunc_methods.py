"""Stage "jaxpr": the methods of every declared ufunc that has no faster
rule of its own: `reduce`, `accumulate`, `reduceat`, `outer` and `at`
(`np.subtract.reduce`, `np.power.accumulate`, `np.add.at`, ...).

In: traced arrays. Out: tracers; reduce / accumulate / reduceat are loops
(`for_loop`) applying the ufunc element by element along the axis in
NumPy's order (so non-associative ufuncs agree), `at` writes into its
first argument one index at a time (repeated indices accumulate).
Imported after every `@ufunc` declaration (kiln/numpy/__init__.py).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kiln.control_flow import for_loop
from kiln.core import INDEX_DTYPE, KilnIndexError, KilnTypeError, KilnValueError, is_static_dim
from kiln.numpy._base import broadcast_to, check, convert, materialize, operand
from kiln.numpy._bindings import UFUNC_METHODS, knp
from kiln.numpy._ufunc import UFUNCS, apply_ufunc
from kiln.tracing import Tracer

# NumPy reduces these over several axes at once (their order does not matter).
REORDERABLE = frozenset({"add", "multiply", "bitwise_and", "bitwise_or", "bitwise_xor", "fmax", "fmin", "hypot",
                         "logaddexp", "logaddexp2", "logical_and", "logical_or", "logical_xor", "maximum",
                         "minimum", "gcd"})


def _loop_dtype(name: str, dtype: np.dtype, method: str) -> np.dtype:
    """The dtype a reduction of `name` runs in: the ufunc's output for two
    operands of `dtype`, which must be `dtype` itself (NumPy's rule)."""
    np_ufunc = UFUNCS[name].np_ufunc
    try:
        in1, in2, out = np_ufunc.resolve_dtypes((dtype, dtype, None))
    except (TypeError, np._core._exceptions._UFuncNoLoopError) as e:
        raise KilnTypeError(f"np.{name}.{method}: not defined for {dtype} (NumPy says: {e})") from None
    if not (in1 == in2 == out):
        raise KilnTypeError(f"np.{name}.{method}: No loop matching the specified signature and casting was found "
                            f"for ufunc {name} (its result, {out}, is not its operands' dtype {in1}); NumPy "
                            "cannot feed it back into itself")
    return out


def _index(axis: int, i: Any) -> tuple:
    return (slice(None),) * axis + (i,)


def _fold(name: str, x: Tracer, axis: int, initial: Any) -> Tracer:
    """`x` reduced along `axis` by the ufunc, first element first, starting
    from `initial`, else the ufunc's identity, else the first element."""
    n = x.aval.shape[axis]
    rest = tuple(d for k, d in enumerate(x.aval.shape) if k != axis)
    if initial is not None:
        start = broadcast_to(convert(operand(initial), x.aval.dtype), rest)

        @for_loop(0, n, 1)
        def with_initial(i, acc):
            return convert(apply_ufunc(name, acc, x[_index(axis, i)]), x.aval.dtype)

        return materialize(with_initial(materialize(start)))

    identity = UFUNCS[name].np_ufunc.identity
    if identity is not None:
        # NumPy starts a reduction from the identity (np.hypot.reduce([-1.5]) is 1.5).
        return _fold(name, x, axis, identity)
    if is_static_dim(n) and n == 0:
        raise KilnValueError(f"zero-size array to reduction operation {name} which has no identity")
    if not is_static_dim(n):
        check(knp.greater(n, 0), "ValueError", f"zero-size array to reduction operation {name} which has no identity")
    start = knp.zeros(rest, dtype=x.aval.dtype)

    @for_loop(0, n, 1)
    def fold(i, acc):
        element = x[_index(axis, i)]
        combined = convert(apply_ufunc(name, acc, element), x.aval.dtype)
        return knp.where(knp.equal(i, 0), element, combined)

    return materialize(fold(materialize(start)))


def _reduce_method(name: str) -> Callable[..., Any]:
    def reduce(array: Any, axis: Any = 0, dtype: Any = None, out: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = True) -> Tracer:
        if where is not True:
            raise KilnTypeError(f"np.{name}.reduce: where= is not supported by kiln; mask the operand instead")
        x = materialize(array)
        if dtype is not None:
            x = convert(x, dtype)
        _loop_dtype(name, x.aval.dtype, "reduce")
        if axis is None:
            axes = tuple(range(x.aval.ndim))
        else:
            axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            for ax in axes:
                if not -x.aval.ndim <= ax < x.aval.ndim:
                    raise KilnValueError(f"axis {ax} is out of bounds for array of dimension {x.aval.ndim}")
            axes = tuple(sorted(int(ax) % x.aval.ndim for ax in axes))
        if len(axes) > 1 and name not in REORDERABLE:
            raise KilnValueError(f"reduction operation '{name}' is not reorderable, so at most one axis may be "
                                 "specified")
        result = x
        for ax in reversed(axes):
            result = _fold(name, result, ax, initial)
        if keepdims:
            result = knp.reshape(result, tuple(1 if k in axes else d for k, d in enumerate(x.aval.shape)))
        return _into(name, "reduce", result, out)

    return reduce


def _into(name: str, method: str, result: Tracer, out: Any) -> Tracer:
    if out is None:
        return result
    from kiln.numpy.mutation import write_out

    if isinstance(out, tuple):
        (out,) = out
    return write_out(f"np.{name}.{method}", result, out)


def _accumulate_method(name: str) -> Callable[..., Any]:
    def accumulate(array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Tracer:
        x = materialize(array)
        if dtype is not None:
            x = convert(x, dtype)
        _loop_dtype(name, x.aval.dtype, "accumulate")
        if x.aval.ndim == 0:
            raise KilnTypeError(f"np.{name}.accumulate: cannot accumulate on a scalar")
        if not -x.aval.ndim <= axis < x.aval.ndim:
            raise KilnValueError(f"axis {axis} is out of bounds for array of dimension {x.aval.ndim}")
        axis = int(axis) % x.aval.ndim
        rest = tuple(d for k, d in enumerate(x.aval.shape) if k != axis)
        result = knp.zeros(x.aval.shape, dtype=x.aval.dtype)

        @for_loop(0, x.aval.shape[axis], 1)
        def scan(i, acc):
            element = x[_index(axis, i)]
            acc = knp.where(knp.equal(i, 0), element, convert(apply_ufunc(name, acc, element), x.aval.dtype))
            result[_index(axis, i)] = acc
            return acc

        scan(materialize(knp.zeros(rest, dtype=x.aval.dtype)))
        return _into(name, "accumulate", result, out)

    return accumulate


def _reduceat_method(name: str) -> Callable[..., Any]:
    def reduceat(array: Any, indices: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Tracer:
        """Out[j] reduces x[indices[j]:indices[j + 1]] (to the end for the last
        j); where indices[j] >= indices[j + 1] it is x[indices[j]]."""
        x = materialize(array)
        if dtype is not None:
            x = convert(x, dtype)
        _loop_dtype(name, x.aval.dtype, "reduceat")
        if not -x.aval.ndim <= axis < x.aval.ndim:
            raise KilnValueError(f"axis {axis} is out of bounds for array of dimension {x.aval.ndim}")
        axis = int(axis) % x.aval.ndim
        idx = convert(operand(indices if isinstance(indices, Tracer) else np.asarray(indices)), INDEX_DTYPE)
        if idx.aval.ndim != 1:
            raise KilnValueError(f"np.{name}.reduceat: indices must be one-dimensional")
        n, m = x.aval.shape[axis], idx.aval.shape[0]
        check(knp.all(knp.logical_and(knp.greater_equal(idx, 0), knp.less(idx, n))), "IndexError",
              f"np.{name}.reduceat: an index is out-of-bounds for axis {axis} with size {{}}", n)
        shape = list(x.aval.shape)
        shape[axis] = m
        result = knp.zeros(tuple(shape), dtype=x.aval.dtype)

        @for_loop(0, m, 1)
        def segments(j):
            start = idx[j]
            stop = knp.where(knp.less(j, m - 1), idx[knp.minimum(j + 1, m - 1)], n)

            @for_loop(start + 1, knp.maximum(stop, start + 1), 1)
            def fold(k, acc):
                return convert(apply_ufunc(name, acc, x[_index(axis, k)]), x.aval.dtype)

            result[_index(axis, j)] = fold(x[_index(axis, start)])

        segments()
        return _into(name, "reduceat", result, out)

    return reduceat


def _outer_method(name: str) -> Callable[..., Any]:
    def outer(a: Any, b: Any, out: Any = None, dtype: Any = None) -> Any:
        a, b = (operand(v if isinstance(v, Tracer) else np.asarray(v)) for v in (a, b))
        expanded = knp.reshape(a, tuple(a.aval.shape) + (1,) * b.aval.ndim) if b.aval.ndim else a
        result = apply_ufunc(name, expanded if dtype is None else convert(expanded, dtype),
                             b if dtype is None else convert(b, dtype))
        return _into(name, "outer", result, out)

    return outer


def _at_method(name: str, nin: int) -> Callable[..., Any]:
    def at(a: Any, indices: Any, b: Any = None) -> None:
        """In place, one index at a time: a[i] = ufunc(a[i], b[k]) for the k-th
        index i (so a repeated index applies the ufunc again)."""
        if (b is None) != (nin == 1):
            raise KilnTypeError(f"np.{name}.at: {'a second operand is required' if nin == 2 else 'takes no b'}")
        target = operand(a)
        entries = list(indices) if isinstance(indices, tuple) else [indices]
        arrays = [k for k, e in enumerate(entries) if isinstance(e, (list, np.ndarray)) or
                  (isinstance(e, Tracer) and e.aval.ndim > 0)]
        if any(e is Ellipsis or e is None for e in entries):
            raise KilnTypeError(f"np.{name}.at: kiln supports slices, integers and 1-D integer arrays as the "
                                "index (no Ellipsis or np.newaxis)")

        def apply(index: tuple, value: Any) -> None:
            current = target[index]
            result = apply_ufunc(name, current) if nin == 1 else apply_ufunc(name, current, value)
            target[index] = convert(result, target.aval.dtype)

        if not arrays:
            apply(tuple(entries), b)
            return None
        positions = [operand(entries[p] if isinstance(entries[p], Tracer) else np.asarray(entries[p]))
                     for p in arrays]
        if any(q.aval.ndim != 1 or q.aval.dtype.kind not in "iu" for q in positions):
            raise KilnIndexError(f"np.{name}.at: the index arrays must be 1-D integers")
        if len(positions) > 1:  # several index arrays broadcast together, as NumPy's
            first = positions[0].aval.shape[0]
            for q in positions[1:]:
                d = q.aval.shape[0]
                if is_static_dim(first) and is_static_dim(d):
                    fits = int(first) == int(d) or 1 in (int(first), int(d))
                else:
                    fits = knp.logical_or(knp.equal(first, d), knp.logical_or(knp.equal(first, 1), knp.equal(d, 1)))
                check(fits, "IndexError", "shape mismatch: indexing arrays could not be broadcast together with "
                      "shapes ({},) ({},)", first, d)
            positions = list(knp.broadcast_arrays(*positions))
        selected = target[tuple(entries)]
        values = None if b is None else broadcast_to(operand(b), selected.aval.shape, f"np.{name}.at")
        # NumPy's place of the indexed dim in `selected`: where the advanced indices
        # (arrays and integers) are when they are next to each other, else first.
        advanced = [j for j, e in enumerate(entries) if not isinstance(e, slice)]
        together = advanced == list(range(advanced[0], advanced[-1] + 1))
        advanced_axis = advanced[0] if together else 0
        by_entry = dict(zip(arrays, positions))

        @for_loop(0, positions[0].aval.shape[0], 1)
        def each(k):
            index = tuple(by_entry[j][k] if j in by_entry else e for j, e in enumerate(entries))
            apply(index, None if values is None else values[_index(advanced_axis, k)])

        each()
        return None

    return at


def _install() -> None:
    for name, declared in UFUNCS.items():
        nin = declared.np_ufunc.nin
        if declared.np_ufunc.nout != 1:
            continue
        methods: dict[str, Callable[..., Any]] = {"at": _at_method(name, nin)}
        if nin == 2:
            methods.update(reduce=_reduce_method(name), accumulate=_accumulate_method(name),
                           reduceat=_reduceat_method(name), outer=_outer_method(name))
        for method, impl in methods.items():
            UFUNC_METHODS.setdefault((name, method), impl)


_install()
