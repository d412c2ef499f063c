"""Autograph, at trace time: the helpers converted code calls (as `ag__.NAME`;
those of loops are in loops.py).

In: the values of a converted statement (an iterable, a condition, thunks of
the operands of `and`/`or`) and its body, branches or condition as functions.
Out: Python's result for Python values; for traced ones a kiln.for_loop,
kiln.while_loop or kiln.cond (or logical_and/or/not), traced into the current scope.
"""

from __future__ import annotations

import abc
import builtins
import operator
from typing import Any, Callable, Sequence

import numpy as np

from kiln.errors import KilnError, KilnTypeError, KilnValueError
from kiln.core import is_static_dim
from kiln.numpy.python_builtins import reversed_ as traced_reversed
from kiln.trace_namespace import replace_in_traced_code
from kiln.tracing import Tracer
from kiln.unset_values import UNSET


class _Undefined:
    """The value of a variable that has no value yet (Python would raise
    UnboundLocalError on reading it)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<undefined variable {self.name!r}>"

    def _fail(self, *args: Any, **kwargs: Any):
        raise UnboundLocalError(f"local variable {self.name!r} is read before it is assigned")

    __bool__ = __call__ = __iter__ = __len__ = __index__ = __int__ = __float__ = _fail
    __getitem__ = __setitem__ = __array__ = _fail

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        self._fail()


def _install_undefined_operators() -> None:
    for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor"):
        setattr(_Undefined, f"__{op}__", _Undefined._fail)
        setattr(_Undefined, f"__r{op}__", _Undefined._fail)
    for op in ("lt", "le", "gt", "ge", "neg", "pos", "abs", "invert"):
        setattr(_Undefined, f"__{op}__", _Undefined._fail)


_install_undefined_operators()


def ld(read: Callable[[], Any], name: str) -> Any:
    """The value of a variable that may not be assigned yet."""
    try:
        return read()
    except NameError:
        return _Undefined(name)


def _is_traced(x: Any) -> bool:
    return isinstance(x, Tracer)


def _as_bool(x: Any, where: str, what: str) -> Any:
    """A traced bool scalar for a traced condition (numbers compare != 0)."""
    from kiln import numpy as knp

    if x.aval.shape != ():
        raise KilnTypeError(
            f"{where}: {what} is a traced array of shape {x.aval.str_short()}, whose truth value is "
            "ambiguous; reduce it with knp.any(...) or knp.all(...)")
    if x.dtype == np.bool_:
        return x
    return knp.not_equal(x, 0)


def and_(left: Callable[[], Any], right: Callable[[], Any]) -> Any:
    """`a and b`: Python semantics unless `a` is traced, then logical_and
    (or a cond when `b` has run-time checks, so they only run where Python
    would have evaluated `b`)."""
    a = left()
    if not _is_traced(a):
        return right() if a else a
    return _traced_bool_op("and", _as_bool(a, "`and`", "the left operand"), right)


def or_(left: Callable[[], Any], right: Callable[[], Any]) -> Any:
    """`a or b`: Python semantics unless `a` is traced, then logical_or
    (or a cond, as for `and`)."""
    a = left()
    if not _is_traced(a):
        return a if a else right()
    return _traced_bool_op("or", _as_bool(a, "`or`", "the left operand"), right)


# The comparisons of a chain, by the name of their ast node.
_COMPARISONS = {
    "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt,
    "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not,
    "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b,
}


def compare_chain(operands: Sequence[Callable[[], Any]], ops: Sequence[str]) -> Any:
    """`a < b <= c`: Python's `a < b and b <= c` with `b` evaluated once and
    `c` only when `a < b` holds; a traced link makes the rest an `and_`."""

    def links_from(k: int, left: Any) -> Any:
        right = operands[k + 1]()
        link = _COMPARISONS[ops[k]](left, right)
        if k + 1 == len(ops):
            return link
        return and_(lambda: link, lambda: links_from(k + 1, right))

    return links_from(0, operands[0]())


def _traced_bool_op(op: str, a: Any, right: Callable[[], Any]) -> Any:
    from kiln import numpy as knp
    from kiln.control_flow import cond
    from kiln.tracing import new_scope

    with new_scope() as probe:
        b = right()
    if not _is_traced(b):
        if op == "and":
            return a if b else False
        return True if b else a
    if not any(eqn.primitive.effectful for eqn in probe.eqns):
        b = _as_bool(right(), f"`{op}`", "the right operand")
        return knp.logical_and(a, b) if op == "and" else knp.logical_or(a, b)

    def evaluate_right():
        return _as_bool(right(), f"`{op}`", "the right operand")

    if op == "and":
        chain = cond(a)(evaluate_right)
        chain.otherwise(lambda: False)
    else:
        chain = cond(a)(lambda: True)
        chain.otherwise(evaluate_right)
    return chain()


def not_(x: Any) -> Any:
    """`not x`: Python semantics unless `x` is traced, then logical_not."""
    from kiln import numpy as knp

    if _is_traced(x):
        return knp.logical_not(_as_bool(x, "`not`", "the operand"))
    return not x


def py_cond(x: Any, where: str, reason: str) -> Any:
    """The test of an `if`/`while` autograph leaves to Python."""
    if _is_traced(x):
        raise KilnTypeError(f"{where}: this condition is a traced value, but autograph cannot convert the "
                            f"statement because {reason}. Restructure it (see docs/autograph.md) or make "
                            "the condition a Python value (static_argnums).")
    return x


def py_iter(x: Any, where: str, reason: str) -> Any:
    """The iterable of a `for` autograph leaves to Python."""
    if _is_traced(x) or isinstance(x, _TracedIter):
        raise KilnTypeError(f"{where}: this loop runs over a traced range or array, but autograph cannot "
                            f"convert it because {reason}. Restructure it (see docs/autograph.md) or make "
                            "the range a Python value (static_argnums).")
    return x


# --- iteration over traced ranges and arrays


class _TracedIter(abc.ABC):
    """A sequence whose length or items are traced: `length()` and `item(k)`."""

    @abc.abstractmethod
    def length(self) -> Any:
        """The number of items (a traced int)."""

    @abc.abstractmethod
    def item(self, k: Any) -> Any:
        """Item `k` (k may be traced)."""


class _TracedRange(_TracedIter):
    def __init__(self, start: Any, stop: Any, step: Any):
        self.start, self.stop, self.step = start, stop, step

    def length(self) -> Any:
        from kiln import numpy as knp

        start, stop, step = self.start, self.stop, self.step
        if not _is_traced(step):
            if step == 0:
                raise KilnValueError("range() arg 3 must not be zero")
            if step > 0:
                return knp.maximum((stop - start + (step - 1)) // step, 0)
            return knp.maximum((start - stop + (-step - 1)) // -step, 0)
        up = knp.maximum((stop - start + (step - 1)) // step, 0)
        down = knp.maximum((start - stop + (-step - 1)) // -step, 0)
        return knp.where(step > 0, up, down)

    def item(self, k: Any) -> Any:
        return self.start + k * self.step


class _TracedArray(_TracedIter):
    """Iteration over the first axis of an array (traced or concrete)."""

    def __init__(self, array: Any):
        self.array = array

    def length(self) -> Any:
        return self.array.shape[0]

    def item(self, k: Any) -> Any:
        return self.array[k]


class _TracedEnumerate(_TracedIter):
    def __init__(self, inner: _TracedIter, start: Any):
        self.inner, self.start = inner, start

    def length(self) -> Any:
        return self.inner.length()

    def item(self, k: Any) -> Any:
        index = k if isinstance(self.start, int) and self.start == 0 else k + self.start
        return index, self.inner.item(k)


class _TracedZip(_TracedIter):
    def __init__(self, inners: list):
        self.inners = inners

    def length(self) -> Any:
        from kiln import numpy as knp

        lengths = [it.length() for it in self.inners]
        result = lengths[0]
        for n in lengths[1:]:
            result = min(result, n) if not (_is_traced(result) or _is_traced(n)) else knp.minimum(result, n)
        return result

    def item(self, k: Any) -> Any:
        return tuple(it.item(k) for it in self.inners)


class _TracedNdIndex(_TracedIter):
    """`np.ndindex(shape)` of traced sizes: the index tuples in C order."""

    def __init__(self, shape: tuple):
        self.shape = shape

    def length(self) -> Any:
        total: Any = 1
        for d in self.shape:
            total = total * d
        return total

    def item(self, k: Any) -> Any:
        index = []
        for d in reversed(self.shape):
            index.append(k % d)
            k = k // d
        return tuple(reversed(index))


class _TracedNdEnumerate(_TracedIter):
    """`np.ndenumerate(a)` of a traced array: (index tuple, element) pairs in C order."""

    def __init__(self, array: Any):
        self.array, self.indices = array, _TracedNdIndex(tuple(array.shape))

    def length(self) -> Any:
        return self.indices.length()

    def item(self, k: Any) -> Any:
        index = self.indices.item(k)
        return index, self.array[index]


def traced_ndindex(*shape: Any) -> Any:
    """np.ndindex in traced code: a loop over traced sizes (NumPy's own when every size is a Python int)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if not any(_is_traced(d) for d in shape):
        return np.ndindex(*shape)
    return _TracedNdIndex(tuple(shape))


def traced_ndenumerate(arr: Any) -> Any:
    """np.ndenumerate in traced code: a loop over a traced array's elements with their indices."""
    if not _is_traced(arr):
        return np.ndenumerate(arr)
    return _TracedNdEnumerate(arr)


def traced_nditer(op: Any, *args: Any, **kwargs: Any) -> Any:
    """np.nditer of one traced array, no flags: its elements in C order (kiln's arrays are C-ordered)."""
    if not _is_traced(op):
        return np.nditer(op, *args, **kwargs)
    if args or kwargs or op.ndim == 0:
        raise KilnTypeError("np.nditer: kiln supports iterating over the elements of one traced array of at "
                            "least one dimension (no flags, op_flags or order)")
    from kiln import numpy as knp
    from kiln.numpy._base import check

    flat = knp.ravel(op)
    check(knp.greater(flat.shape[0], 0), "ValueError", "np.nditer: Iteration of zero-sized operands is not "
          "enabled (the array is empty)")
    return _TracedArray(flat)


replace_in_traced_code(np.ndindex, traced_ndindex)
replace_in_traced_code(np.ndenumerate, traced_ndenumerate)
replace_in_traced_code(np.nditer, traced_nditer)


def _traced_view(x: Any, where: str) -> _TracedIter:
    """`x` as a _TracedIter, for zip/enumerate partners of a traced iterable."""
    if isinstance(x, _TracedIter):
        return x
    if isinstance(x, range):
        return _TracedRange(x.start, x.stop, x.step)
    if _is_traced(x):
        if x.ndim == 0:
            raise KilnTypeError(f"{where}: iteration over a 0-d traced array")
        return _TracedArray(x)
    if isinstance(x, (np.ndarray, list, tuple)):
        array = np.asarray(x)
        if array.dtype != object and array.ndim > 0:
            return _TracedArray(array)
    raise KilnTypeError(f"{where}: a {type(x).__name__} cannot be zipped or enumerated together with a traced "
                        "range or array; use ranges, arrays or lists of numbers")


def range_(range_fn: Any, *args: Any) -> Any:
    """`range(...)` in a for statement: traced bounds give a _TracedRange."""
    if range_fn is not builtins.range or not any(_is_traced(a) for a in args):
        return range_fn(*args)
    if not 1 <= len(args) <= 3:
        raise KilnTypeError(f"range expected 1 to 3 arguments, got {len(args)}")
    for a in args:
        if _is_traced(a) and (a.aval.shape != () or a.dtype.kind not in "iu"):
            raise KilnTypeError(f"range(): a bound is a traced {a.aval.str_short()}; bounds must be integer "
                                "scalars")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
    return _TracedRange(start, stop, step)


def reversed_(reversed_fn: Any, sequence: Any) -> Any:
    """`reversed(...)` in a for statement: a range runs backwards
    (`reversed(range(n))` is `range(n - 1, -1, -1)`, traced `n` or not, so a
    static one still compiles to a loop); a traced array gives `x[::-1]`."""
    if reversed_fn is not builtins.reversed:
        return reversed_fn(sequence)
    if isinstance(sequence, range):
        return sequence[::-1]
    if not isinstance(sequence, _TracedRange):
        return traced_reversed(sequence)
    count = sequence.length()
    last = sequence.start + (count - 1) * sequence.step
    return _TracedRange(last, sequence.start - sequence.step, -sequence.step)


def enumerate_(enumerate_fn: Any, iterable: Any, start: Any = 0) -> Any:
    """`enumerate(...)` in a for statement."""
    if enumerate_fn is not builtins.enumerate or not (_is_traced(iterable) or isinstance(iterable, _TracedIter)
                                                        or _is_traced(start)):
        return enumerate_fn(iterable, start)
    return _TracedEnumerate(_traced_view(iterable, "enumerate()"), start)


def zip_(zip_fn: Any, *iterables: Any, **kwargs: Any) -> Any:
    """`zip(...)` in a for statement."""
    if zip_fn is not builtins.zip or kwargs or not any(_is_traced(x) or isinstance(x, _TracedIter)
                                                       for x in iterables):
        return zip_fn(*iterables, **kwargs)
    return _TracedZip([_traced_view(x, "zip()") for x in iterables])


# --- statements


# What a compiled loop or branch can carry: arrays and numbers.
_CARRYABLE = (Tracer, bool, int, float, complex, np.generic, np.ndarray)


def carryable(value: Any) -> bool:
    """An array or a number, or a tuple of carryable values (`best = (i, j)`):
    what kiln's loops and conds carry (tuples as trees of values); or UNSET,
    the value of a `return` inside a loop before it runs (kiln.unset_values)."""
    if isinstance(value, tuple):
        return builtins.all(carryable(v) for v in value)
    return isinstance(value, _CARRYABLE) or value is UNSET


def _carry_check(names: Sequence[str], values: Sequence[Any], where: str, what: str) -> None:
    """Values carried through a compiled loop must exist and be arrays or numbers."""
    for name, value in zip(names, values):
        if isinstance(value, _Undefined):
            raise KilnTypeError(
                f"{where}: variable {name!r} is assigned in the {what} body and used afterwards (after the loop "
                f"or in the next iteration), but has no value before the loop; a loop over traced values may run "
                f"zero times, so give {name!r} a value before the loop.")
        if not carryable(value):
            raise KilnTypeError(
                f"{where}: variable {name!r} is assigned in the {what} body and carried to the next iteration, "
                f"but holds a {type(value).__name__}; a loop over traced values can carry arrays, numbers and "
                "tuples of them only. Keep other Python objects out of the loop body.")


def _rethrow(error: KilnError, where: str, names: Sequence[str]) -> KilnError:
    """Name the user's line and variables in a for_loop/while_loop/cond error."""
    message = str(error)
    if not message.startswith(("for_loop:", "while_loop:", "cond:")):
        return error  # raised by the user's code in a body: its traceback points at the line
    named = ", ".join(f"{k} is " + ("the value of a `return` inside the loop" if n.startswith("retval__")
                                    else repr(n)) for k, n in enumerate(names))
    suffix = f" (carried value {named})" if named else ""
    return type(error)(f"{where}: {message}{suffix}")


def if_stmt(test: Any, if_true: Callable, if_false: Callable, init: tuple, out_names: tuple, where: str,
            returns: bool = False, loop_return: bool = False) -> Any:
    """A converted `if`: Python when the predicate is a Python value,
    kiln.cond (both branches traced) when it is traced. Branches return the
    tuple of variables live after the statement, or (`returns`) the
    function's return value (`loop_return`: the `if returned: return value`
    after a loop whose body returns)."""
    if not _is_traced(test):
        return if_true(*init) if test else if_false(*init)
    from kiln.control_flow import cond

    pred = _as_bool(test, where, "the if condition")
    if returns:
        branches = (lambda: if_true(*init), lambda: if_false(*init))
    else:
        branches = (_checked_branch(if_true, init, out_names, where, "true"),
                    _checked_branch(if_false, init, out_names, where, "false"))
    chain = cond(pred)(branches[0])
    chain.otherwise(branches[1])
    try:
        return chain()
    except KilnError as e:
        if loop_return and str(e).startswith("cond:"):
            raise type(e)(
                f"{where}: a `return` inside this loop gives a value unlike the one the function returns after "
                f"the loop ({str(e)[6:]}); the loop's condition is traced, so kiln compiles both returns and "
                "they must give the same structure (a value, not None, on every path), rank and kind of "
                "dtype") from None
        raise _rethrow(e, where, () if returns else out_names) from None


def ifexp(test: Any, if_true: Callable[[], Any], if_false: Callable[[], Any], where: str) -> Any:
    """`a if c else b`: Python when `c` is a Python value, a cond when traced."""
    if not _is_traced(test):
        return if_true() if test else if_false()
    from kiln.control_flow import cond

    chain = cond(_as_bool(test, where, "the condition of `a if c else b`"))(if_true)
    chain.otherwise(if_false)
    try:
        return chain()
    except KilnError as e:
        raise _rethrow(e, where, ()) from None


def _checked_branch(branch: Callable, init: tuple, out_names: tuple, where: str, which: str) -> Callable:
    def run() -> tuple:
        out = tuple(branch(*init))
        for name, value in zip(out_names, out):
            if isinstance(value, _Undefined):
                raise KilnTypeError(
                    f"{where}: variable {name!r} is used after this `if`, but the {which} branch leaves it "
                    f"undefined; the condition is traced, so both branches are compiled and each must give "
                    f"{name!r} a value. Assign it before the `if` or in every branch.")
            if not carryable(value):
                raise KilnTypeError(
                    f"{where}: variable {name!r} is assigned in this `if` and used after it, but holds a "
                    f"{type(value).__name__}; with a traced condition branches can only produce arrays, "
                    "numbers and tuples of them.")
        return out

    return run


def returned_value(value: Any) -> Any:
    """The value of a `return` inside a traced loop body, kept until the loop
    ends: an array that is (a view of) an array from outside the loop becomes
    a copy, since the loop would otherwise carry an alias of an array it may
    write (it does not: the `return` ends the loop, so the copy holds what
    NumPy's array holds when the function returns)."""
    from kiln import tree
    from kiln.loop_in_place import outer_arrays
    from kiln.numpy._bindings import knp
    from kiln.tracing import current_builder, is_tracing

    if not is_tracing():
        return value
    builder = current_builder()
    if builder.parent is None:
        return value
    leaves, structure = tree.flatten(value)
    copied = [knp.copy(x) if _is_traced(x) and x.ndim > 0 and (x.builder is not builder or outer_arrays(builder, x))
              else x for x in leaves]
    return tree.unflatten(structure, copied)


# --- calls


def unpack(value: Any, targets: int | tuple) -> Any:
    """`a, b, c = value` in converted code: a traced array whose first dim
    is only known at run time unpacks into its rows, with a run-time check
    that it has `count` of them (Python raises ValueError otherwise).
    `targets` is the count, or for nested targets (`(a, b), c = value`) a
    tuple with one entry per target: None for a name, the nested targets'
    tuple for a nested one, whose rows unpack the same way."""
    nested = targets if isinstance(targets, tuple) else (None,) * targets
    count = len(nested)
    if _is_traced(value) and value.ndim > 0 and not is_static_dim(value.shape[0]):
        from kiln.numpy._base import require_equal_dims

        require_equal_dims(value.shape[0], count, "ValueError",
                           "cannot unpack a traced array with {} rows into %d variables" % count)
        rows = tuple(value[k] for k in range(count))
    elif all(t is None for t in nested):
        return value
    else:
        rows = tuple(value)
        if len(rows) != count:
            return rows  # Python's own ValueError, raised by the assignment
    return tuple(row if t is None else unpack(row, t) for row, t in zip(rows, nested))
