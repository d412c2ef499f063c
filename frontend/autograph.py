"""Stage "jaxpr", before tracing: autograph rewrites Python control flow.

In: a function whose for/while/if/and/or/not may act on traced values.
Out: the same function recompiled from a rewritten AST (same globals, closure
cells, file and lines) whose statements call the runtime helpers below, which
run Python for Python values and emit for_loop/while_loop/cond for traced ones.
"""

from __future__ import annotations

import abc
import ast
import builtins
import inspect
import itertools
import os
import sys
import textwrap
import types
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from kiln.core import KilnError, KilnTypeError, KilnValueError
from kiln.tracing import Tracer

__all__ = ["convert"]

_AG = "ag__"


# ==========================================================================
# Runtime: what converted code calls while it is traced


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


def _ld(read: Callable[[], Any], name: str) -> Any:
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


def _and(left: Callable[[], Any], right: Callable[[], Any]) -> Any:
    """`a and b`: Python semantics unless `a` is traced, then logical_and
    (or a cond when `b` has run-time checks, so they only run where Python
    would have evaluated `b`)."""
    a = left()
    if not _is_traced(a):
        return right() if a else a
    return _traced_bool_op("and", _as_bool(a, "`and`", "the left operand"), right)


def _or(left: Callable[[], Any], right: Callable[[], Any]) -> Any:
    """`a or b`: Python semantics unless `a` is traced, then logical_or
    (or a cond, as for `and`)."""
    a = left()
    if not _is_traced(a):
        return a if a else right()
    return _traced_bool_op("or", _as_bool(a, "`or`", "the left operand"), right)


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


def _not(x: Any) -> Any:
    """`not x`: Python semantics unless `x` is traced, then logical_not."""
    from kiln import numpy as knp

    if _is_traced(x):
        return knp.logical_not(_as_bool(x, "`not`", "the operand"))
    return not x


def _py_cond(x: Any, where: str, reason: str) -> Any:
    """The test of an `if`/`while` autograph leaves to Python."""
    if _is_traced(x):
        raise KilnTypeError(f"{where}: this condition is a traced value, but autograph cannot convert the "
                            f"statement because {reason}. Restructure it (see docs/autograph.md) or make "
                            "the condition a Python value (static_argnums).")
    return x


def _py_iter(x: Any, where: str, reason: str) -> Any:
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


def _range(range_fn: Any, *args: Any) -> Any:
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


def _enumerate(enumerate_fn: Any, iterable: Any, start: Any = 0) -> Any:
    """`enumerate(...)` in a for statement."""
    if enumerate_fn is not builtins.enumerate or not (_is_traced(iterable) or isinstance(iterable, _TracedIter)
                                                        or _is_traced(start)):
        return enumerate_fn(iterable, start)
    return _TracedEnumerate(_traced_view(iterable, "enumerate()"), start)


def _zip(zip_fn: Any, *iterables: Any, **kwargs: Any) -> Any:
    """`zip(...)` in a for statement."""
    if zip_fn is not builtins.zip or kwargs or not any(_is_traced(x) or isinstance(x, _TracedIter)
                                                       for x in iterables):
        return zip_fn(*iterables, **kwargs)
    return _TracedZip([_traced_view(x, "zip()") for x in iterables])


# --- statements


# What a compiled loop or branch can carry: arrays and numbers.
_CARRYABLE = (Tracer, bool, int, float, complex, np.generic, np.ndarray)


def _carry_check(names: Sequence[str], values: Sequence[Any], where: str, what: str) -> None:
    """Values carried through a compiled loop must exist and be arrays or numbers."""
    for name, value in zip(names, values):
        if isinstance(value, _Undefined):
            raise KilnTypeError(
                f"{where}: variable {name!r} is assigned in the {what} body and used afterwards (after the loop "
                f"or in the next iteration), but has no value before the loop; a loop over traced values may run "
                f"zero times, so give {name!r} a value before the loop.")
        if not isinstance(value, _CARRYABLE):
            raise KilnTypeError(
                f"{where}: variable {name!r} is assigned in the {what} body and carried to the next iteration, "
                f"but holds a {type(value).__name__}; a loop over traced values can carry arrays and numbers "
                "only. Keep other Python objects out of the loop body.")


def _rethrow(error: KilnError, where: str, names: Sequence[str]) -> KilnError:
    """Name the user's line and variables in a for_loop/while_loop/cond error."""
    message = str(error)
    if not message.startswith(("for_loop:", "while_loop:", "cond:")):
        return error  # raised by the user's code in a body: its traceback points at the line
    named = ", ".join(f"{k} is {n!r}" for k, n in enumerate(names))
    suffix = f" (carried value {named})" if named else ""
    return type(error)(f"{where}: {message}{suffix}")


def _loop_adapter(body: Callable, count: int) -> Callable:
    """Converted bodies return a tuple; kiln loops want one value, a tuple, or None."""

    def adapted(*args: Any) -> Any:
        out = body(*args)
        if count == 0:
            return None
        return out[0] if count == 1 else tuple(out)

    return adapted


def _loop_result(out: Any, count: int) -> tuple:
    if count == 0:
        return ()
    return (out,) if count == 1 else tuple(out)


def _for_stmt(iterable: Any, body: Callable, init: tuple, names: tuple, where: str,
              break_flag: int | None = None) -> tuple:
    """A converted `for`: a Python loop over Python iterables (unrolled at
    trace time), kiln.for_loop over traced ranges and arrays (a
    kiln.while_loop when the body can `break`)."""
    if _is_traced(iterable):
        if iterable.ndim == 0:
            raise KilnTypeError(f"{where}: iteration over a 0-d traced array")
        iterable = _TracedArray(iterable)
    if not isinstance(iterable, _TracedIter):
        state = tuple(init)
        for item in iterable:
            state = tuple(body(item, *state))
            if break_flag is not None and not _is_traced(state[break_flag]) and state[break_flag]:
                break
        return state
    _carry_check(names, init, where, "for-loop")
    from kiln.control_flow import for_loop, while_loop

    try:
        if break_flag is None:
            if isinstance(iterable, _TracedRange):
                loop = for_loop(iterable.start, iterable.stop, iterable.step)(_loop_adapter(body, len(init)))
            else:
                def indexed(k, *state, _it=iterable):
                    return body(_it.item(k), *state)

                loop = for_loop(0, iterable.length(), 1)(_loop_adapter(indexed, len(init)))
            return _loop_result(loop(*init), len(init))
        from kiln import numpy as knp

        length = iterable.length()

        def keep_going(k, *state):
            flag = state[break_flag]
            running = knp.less(k, length)
            if not _is_traced(flag):
                return running if not flag else False
            return knp.logical_and(running, knp.logical_not(flag))

        def step(k, *state):
            return (k + 1, *body(iterable.item(k), *state))

        try:
            out = while_loop(keep_going)(step)(0, *init)
        except KilnError as e:
            raise _rethrow(e, where, ("<loop index>", *names)) from None
        return tuple(out[1:])
    except KilnError as e:
        raise _rethrow(e, where, names) from None


def _probe(cond: Callable, state: tuple) -> Any:
    """Evaluate a while condition to learn whether it is traced, in a scope
    that is thrown away: a traced test is evaluated again inside the loop,
    and its run-time checks must not run before the loop."""
    from kiln.tracing import is_tracing, new_scope

    if not is_tracing():
        return cond(*state)
    with new_scope():
        return cond(*state)


def _while_stmt(cond: Callable, body: Callable, init: tuple, names: tuple, where: str) -> tuple:
    """A converted `while`: a Python loop while the condition is a Python
    value, kiln.while_loop from the first time it is traced."""
    state = tuple(init)
    while True:
        test = _probe(cond, state)
        if _is_traced(test):
            break
        if not test:
            return state
        state = tuple(body(*state))
    _as_bool(test, where, "the while condition")
    _carry_check(names, state, where, "while-loop")
    from kiln.control_flow import while_loop

    def traced_cond(*carried):
        test = cond(*carried)
        return _as_bool(test, where, "the while condition") if _is_traced(test) else bool(test)

    try:
        out = while_loop(traced_cond)(_loop_adapter(body, len(state)))(*state)
    except KilnError as e:
        raise _rethrow(e, where, names) from None
    return _loop_result(out, len(state))


def _if_stmt(test: Any, if_true: Callable, if_false: Callable, init: tuple, out_names: tuple, where: str,
             returns: bool = False) -> Any:
    """A converted `if`: Python when the predicate is a Python value,
    kiln.cond (both branches traced) when it is traced. Branches return the
    tuple of variables live after the statement, or (`returns`) the
    function's return value."""
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
        raise _rethrow(e, where, () if returns else out_names) from None


def _ifexp(test: Any, if_true: Callable[[], Any], if_false: Callable[[], Any], where: str) -> Any:
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
            if not isinstance(value, _CARRYABLE):
                raise KilnTypeError(
                    f"{where}: variable {name!r} is assigned in this `if` and used after it, but holds a "
                    f"{type(value).__name__}; with a traced condition branches can only produce arrays "
                    "and numbers.")
        return out

    return run


# --- calls


def _len(x: Any) -> Any:
    """`len(x)` in converted code: a traced array's first dim may be traced."""
    if _is_traced(x) and x.ndim > 0:
        return x.shape[0]
    return len(x)


class _Context:
    """The `ag__` object of converted code: the helpers, and the options
    that decide which called functions are converted too."""

    def __init__(self, include: tuple, exclude: tuple):
        self.include = include
        self.exclude = exclude

    ld = staticmethod(_ld)
    and_ = staticmethod(_and)
    or_ = staticmethod(_or)
    not_ = staticmethod(_not)
    py_cond = staticmethod(_py_cond)
    py_iter = staticmethod(_py_iter)
    range_ = staticmethod(_range)
    enumerate_ = staticmethod(_enumerate)
    zip_ = staticmethod(_zip)
    for_stmt = staticmethod(_for_stmt)
    while_stmt = staticmethod(_while_stmt)
    if_stmt = staticmethod(_if_stmt)
    ifexp = staticmethod(_ifexp)

    def call(self, fn: Any) -> Any:
        """`fn`, converted when it is a user function."""
        if fn is builtins.len:
            return _len
        if not isinstance(fn, types.FunctionType) or not _should_convert(fn, self.include, self.exclude):
            return fn
        try:
            return _convert(fn, self.include, self.exclude)
        except _NoSource:
            return fn


_CONVERTED_CODE: "weakref.WeakSet[types.CodeType]" = weakref.WeakSet()
_LIBRARY_ROOTS = {"kiln", "numpy", "scipy", "jax", "jaxlib", "numba", "pytest", "_pytest", "torch_mlir"}
_LIBRARY_DIRS = tuple(
    os.path.normcase(os.path.realpath(p)) + os.sep
    for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})


def _matches(module: str, qualname: str, patterns: tuple) -> bool:
    full = f"{module}.{qualname}"
    for p in patterns:
        if module == p or module.startswith(p + ".") or full == p or full.startswith(p + "."):
            return True
    return False


def _should_convert(fn: types.FunctionType, include: tuple, exclude: tuple) -> bool:
    if fn.__code__ in _CONVERTED_CODE or fn.__name__ == "<lambda>":
        return False
    module = fn.__module__ or ""
    if _matches(module, fn.__qualname__, exclude):
        return False
    if _matches(module, fn.__qualname__, include):
        return True
    root = module.split(".")[0]
    if root in _LIBRARY_ROOTS or root in sys.stdlib_module_names:
        return False
    filename = os.path.normcase(os.path.realpath(fn.__code__.co_filename))
    if "site-packages" in filename or "dist-packages" in filename:
        return False
    return not any(filename.startswith(d) for d in _LIBRARY_DIRS)


# ==========================================================================
# Static analysis: which names a statement reads, writes, and needs after


def _stores(nodes: Sequence[ast.AST]) -> set:
    """Names bound in this scope by `nodes` (not inside nested functions,
    lambdas, classes or comprehensions)."""
    found: set = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
            return
        if isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        if isinstance(node, ast.NamedExpr):
            found.add(node.target.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for n in nodes:
        visit(n)
    return found


def _loads(node: ast.AST | None) -> set:
    """Names read anywhere in `node` (nested scopes included: an over-approximation)."""
    if node is None:
        return set()
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for n in ast.walk(node):
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            found.add(n.target.id)
    return found


def _kills(stmt: ast.stmt) -> set:
    """Names an unconditional simple statement surely overwrites."""
    targets: list = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    names = set()
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return names


class _Liveness:
    """Backward liveness over one function body. Annotates each If/For/While
    with `kiln_live_out` (names read after it) and loops with
    `kiln_live_head` (names live at the top of each iteration)."""

    def __init__(self, annotate: bool):
        self.annotate = annotate
        self.loops: list = []  # (live after the loop, live at its head)

    def block(self, stmts: Sequence[ast.stmt], live_out: set) -> set:
        live = set(live_out)
        for s in reversed(stmts):
            live = self.stmt(s, live)
        return live

    def stmt(self, s: ast.stmt, live: set) -> set:
        if isinstance(s, ast.If):
            if self.annotate:
                s.kiln_live_out = set(live)
                quiet = _Liveness(annotate=False)
                s.kiln_exposed = quiet.block(s.body, set()) | quiet.block(s.orelse, set())
            return _loads(s.test) | self.block(s.body, live) | self.block(s.orelse, live)
        if isinstance(s, (ast.For, ast.While)):
            return self.loop(s, live)
        if isinstance(s, ast.Break):
            return set(self.loops[-1][0]) if self.loops else set(live)
        if isinstance(s, ast.Continue):
            return set(self.loops[-1][1]) if self.loops else set(live)
        if isinstance(s, (ast.Return, ast.Raise)):
            return _loads(s)
        if isinstance(s, ast.Try):
            final = self.block(s.finalbody, live)
            handlers = set()
            for h in s.handlers:
                handlers |= self.block(h.body, final) | _loads(h.type)
            body = self.block(s.body, self.block(s.orelse, final) | handlers)
            return body | handlers
        if isinstance(s, (ast.With, ast.AsyncWith)):
            inner = self.block(s.body, live) - _stores([i.optional_vars for i in s.items if i.optional_vars])
            return inner | set().union(*(_loads(i.context_expr) for i in s.items))
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return (live - {s.name}) | _loads(s)
        return (live - _kills(s)) | _loads(s)

    def loop(self, s: ast.For | ast.While, live: set) -> set:
        exit_live = self.block(s.orelse, live) | live
        head = set(exit_live)
        if isinstance(s, ast.While):
            head |= _loads(s.test)
        if getattr(s, "kiln_break_flag", None):
            head.add(s.kiln_break_flag)  # read by _for_stmt after every iteration
        while True:
            self.loops.append((live, head))
            body_in = self.block(s.body, head)
            self.loops.pop()
            if isinstance(s, ast.For):
                body_in = (body_in - _stores([s.target])) | _loads(s.target)
            new_head = head | body_in
            if new_head == head:
                break
            head = new_head
        if self.annotate:
            s.kiln_live_out = set(live)
            s.kiln_live_head = set(head)
            # Re-run once with the final head so nested statements carry it.
            self.loops.append((live, head))
            self.block(s.body, head)
            self.loops.pop()
        return head | (_loads(s.iter) if isinstance(s, ast.For) else set())


def _definitely_assigned(s: ast.stmt) -> set:
    """Names surely bound after `s` runs (conservative)."""
    if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom,
                      ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return _stores([s])
    if isinstance(s, (ast.With, ast.AsyncWith)):
        return _stores([i.optional_vars for i in s.items if i.optional_vars]) | _block_assigned(s.body)
    if isinstance(s, ast.If):
        return _block_assigned(s.body) & _block_assigned(s.orelse)
    return set()


def _block_assigned(stmts: Sequence[ast.stmt]) -> set:
    out: set = set()
    for s in stmts:
        out |= _definitely_assigned(s)
    return out


def _walk_scope(nodes: Sequence[ast.AST]):
    """ast.walk over statements, not entering nested functions or classes."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _find(nodes: Sequence[ast.AST], kinds: tuple, stop_at_loops: bool = False) -> ast.AST | None:
    """The first node of `kinds` in this scope (optionally not inside nested loops)."""
    stack = list(nodes)
    while stack:
        node = stack.pop(0)
        if isinstance(node, kinds):
            return node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if stop_at_loops and isinstance(child, (ast.For, ast.While, ast.AsyncFor)):
                continue
            stack.append(child)
    return None


# ==========================================================================
# Normalization: break / continue become flags, early returns nest the rest


class _Names:
    def __init__(self):
        self.counter = itertools.count(1)

    def fresh(self, kind: str) -> str:
        return f"{kind}__{next(self.counter)}"


def _assign(name: str, value: bool, at: ast.AST) -> ast.stmt:
    return ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], ast.Constant(value)), at)


def _not_name(name: str, at: ast.AST) -> ast.expr:
    return ast.copy_location(ast.UnaryOp(ast.Not(), ast.Name(name, ast.Load())), at)


def _always_exits(stmts: Sequence[ast.stmt]) -> bool:
    """The block ends in `return` on every path."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return _always_exits(last.body) and _always_exits(last.orelse)
    return False


class _Normalizer:
    """Rewrites a function body so that structured control flow can express it."""

    def __init__(self, names: _Names):
        self.names = names

    def function(self, fn: ast.FunctionDef) -> None:
        body = fn.body
        if _find(body, (ast.Return,)) is not None and not _always_exits(body):
            body = body + [ast.copy_location(ast.Return(ast.Constant(None)), body[-1])]
        fn.body = self.block(body)

    def block(self, stmts: Sequence[ast.stmt]) -> list:
        out: list = []
        stmts = list(stmts)
        for k, s in enumerate(stmts):
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.function(s)
                out.append(s)
            elif isinstance(s, ast.If):
                rest = stmts[k + 1:]
                if rest and _always_exits(s.body) and not _always_exits(s.orelse):
                    s.orelse = s.orelse + rest
                    rest = []
                elif rest and _always_exits(s.orelse) and not _always_exits(s.body):
                    s.body = s.body + rest
                    rest = []
                s.body = self.block(s.body)
                s.orelse = self.block(s.orelse)
                out.append(s)
                if not rest:
                    return out
            elif isinstance(s, (ast.For, ast.While)):
                s.body = self.block(s.body)
                s.orelse = self.block(s.orelse)
                out.extend(self.loop(s))
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                s.body = self.block(s.body)
                out.append(s)
            elif isinstance(s, ast.Try):
                s.body, s.orelse, s.finalbody = self.block(s.body), self.block(s.orelse), self.block(s.finalbody)
                for h in s.handlers:
                    h.body = self.block(h.body)
                out.append(s)
            else:
                out.append(s)
        return out

    def loop(self, s: ast.For | ast.While) -> list:
        """break/continue → flags (when they only sit under `if`s), loop else → an `if` after."""
        exits = self._exits(s.body)
        if exits is None or _unconvertible(s.body) is not None:
            return [s]  # stays a Python loop, with its own break/continue/else
        has_break, has_continue = exits
        before: list = []
        after: list = []
        if has_break or has_continue:
            skip = self.names.fresh("skip")
            brk = self.names.fresh("broke") if has_break else None
            s.body = [_assign(skip, False, s)] + self._guard(s.body, skip, brk)
            if brk is not None:
                before.append(_assign(brk, False, s))
                if isinstance(s, ast.While):
                    s.test = ast.copy_location(ast.BoolOp(ast.And(), [_not_name(brk, s), s.test]), s.test)
                else:
                    s.kiln_break_flag = brk
        if s.orelse:
            if has_break:
                after.append(ast.copy_location(ast.If(_not_name(brk, s), s.orelse, []), s.orelse[0]))
            else:
                after.extend(s.orelse)
            s.orelse = []
        return before + [s] + after

    def _exits(self, body: Sequence[ast.stmt]) -> tuple | None:
        """(has break, has continue) of this loop, or None when one sits
        somewhere other than under `if`s (then the loop stays Python)."""
        has_break = has_continue = False
        stack = [(s, True) for s in body]
        while stack:
            node, reachable_by_ifs = stack.pop()
            if isinstance(node, (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, (ast.Break, ast.Continue)):
                if not reachable_by_ifs:
                    return None
                has_break |= isinstance(node, ast.Break)
                has_continue |= isinstance(node, ast.Continue)
                continue
            nested_ok = reachable_by_ifs and isinstance(node, ast.If)
            for child in ast.iter_child_nodes(node):
                stack.append((child, nested_ok))
        return has_break, has_continue

    def _guard(self, stmts: Sequence[ast.stmt], skip: str, brk: str | None) -> list:
        out: list = []
        stmts = list(stmts)
        for k, s in enumerate(stmts):
            if isinstance(s, ast.Break):
                out += [_assign(brk, True, s), _assign(skip, True, s)]
                return out
            if isinstance(s, ast.Continue):
                out.append(_assign(skip, True, s))
                return out
            if isinstance(s, ast.If) and _find([s], (ast.Break, ast.Continue), stop_at_loops=True) is not None:
                s.body = self._guard(s.body, skip, brk)
                s.orelse = self._guard(s.orelse, skip, brk)
                out.append(s)
                rest = self._guard(stmts[k + 1:], skip, brk)
                if rest:
                    out.append(ast.copy_location(ast.If(_not_name(skip, s), rest, []), rest[0]))
                return out
            out.append(s)
        return out


# ==========================================================================
# Conversion: statements → calls of the runtime helpers


def _ag(attr: str) -> ast.expr:
    return ast.Attribute(ast.Name(_AG, ast.Load()), attr, ast.Load())


def _call(attr: str, *args: ast.expr, **keywords: ast.expr) -> ast.Call:
    return ast.Call(_ag(attr), list(args), [ast.keyword(k, v) for k, v in keywords.items()])


def _str_tuple(names: Sequence[str]) -> ast.expr:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _arguments(names: Sequence[str]) -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in names], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])


def _function(name: str, params: Sequence[str], body: list, at: ast.AST) -> ast.FunctionDef:
    fn = ast.FunctionDef(name=name, args=_arguments(params), body=body or [ast.Pass()], decorator_list=[],
                         returns=None, type_comment=None)
    return ast.copy_location(fn, at)


def _return_tuple(names: Sequence[str], at: ast.AST) -> ast.stmt:
    return ast.copy_location(ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())), at)


def _unpack(names: Sequence[str], value: ast.expr, at: ast.AST) -> ast.stmt:
    if not names:
        return ast.copy_location(ast.Expr(value), at)
    target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
    return ast.copy_location(ast.Assign([target], value), at)


class _ExpressionConverter(ast.NodeTransformer):
    """`and` / `or` / `not` / `a if c else b` → ag__.and_ / or_ / not_ / ifexp."""

    def __init__(self, filename: str):
        self.filename = filename

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        helper = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(helper, _thunk(value), _thunk(result))
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("not_", node.operand), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        where = ast.Constant(f"{self.filename}:{node.lineno}")
        return ast.copy_location(_call("ifexp", node.test, _thunk(node.body), _thunk(node.orelse), where), node)


def _thunk(expr: ast.expr) -> ast.expr:
    return ast.copy_location(ast.Lambda(_arguments([]), expr), expr)


def _convert_iter(expr: ast.expr) -> ast.expr:
    """range / enumerate / zip calls of a for statement → ag__.range_ / ..."""
    helpers = {"range": "range_", "enumerate": "enumerate_", "zip": "zip_"}
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in helpers):
        return expr
    if any(isinstance(a, ast.Starred) for a in expr.args):
        return expr
    args = [_convert_iter(a) for a in expr.args] if expr.func.id != "range" else expr.args
    call = _call(helpers[expr.func.id], ast.Name(expr.func.id, ast.Load()), *args)
    call.keywords = expr.keywords
    return ast.copy_location(call, expr)


class _CallWrapper(ast.NodeTransformer):
    """`f(...)` → `ag__.call(f)(...)` so user functions are converted when called."""

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == _AG:
            return node
        node.func = ast.copy_location(_call("call", func), func)
        return node


class _Converter:
    def __init__(self, filename: str, names: _Names):
        self.filename = filename
        self.names = names

    def where(self, node: ast.AST) -> str:
        return f"{self.filename}:{node.lineno}"

    def function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        _Liveness(annotate=True).block(fn.body, set())
        a = fn.args
        params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        params |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
        scoped = set()
        for node in _walk_scope(fn.body):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                scoped.update(node.names)
        saved, self.scoped = getattr(self, "scoped", set()), scoped
        fn.body = self.block(fn.body, params)
        self.scoped = saved

    def block(self, stmts: Sequence[ast.stmt], defined: set) -> list:
        out: list = []
        defined = set(defined)
        for s in stmts:
            new, assigned = self.stmt(s, defined)
            out.extend(new)
            defined |= assigned
        return out

    def stmt(self, s: ast.stmt, defined: set) -> tuple[list, set]:
        if isinstance(s, ast.If):
            return self.if_stmt(s, defined)
        if isinstance(s, ast.For):
            return self.for_stmt(s, defined)
        if isinstance(s, ast.While):
            return self.while_stmt(s, defined)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(s)
            return [s], {s.name}
        if isinstance(s, (ast.With, ast.AsyncWith)):
            s.body = self.block(s.body, defined)
        elif isinstance(s, ast.Try):
            s.body = self.block(s.body, defined)
            s.orelse = self.block(s.orelse, defined)
            s.finalbody = self.block(s.finalbody, defined)
            for h in s.handlers:
                h.body = self.block(h.body, defined)
        return [s], _definitely_assigned(s)

    # --- helpers
    def load(self, name: str, defined: set, at: ast.AST) -> ast.expr:
        if name in defined:
            return ast.Name(name, ast.Load())
        read = ast.Lambda(_arguments([]), ast.Name(name, ast.Load()))
        return ast.copy_location(_call("ld", read, ast.Constant(name)), at)

    def loads(self, names: Sequence[str], defined: set, at: ast.AST) -> ast.expr:
        return ast.Tuple([self.load(n, defined, at) for n in names], ast.Load())

    def unconvertible(self, body: Sequence[ast.stmt]) -> str | None:
        return _unconvertible(body)

    # --- if
    def if_stmt(self, s: ast.If, defined: set) -> tuple[list, set]:
        where = self.where(s)
        returning = _tail_returns(s.body) and _tail_returns(s.orelse)
        reason = None
        if not returning:
            reason = self.unconvertible(s.body + s.orelse)
            if reason is None and _find(s.body + s.orelse, (ast.Break, ast.Continue), stop_at_loops=True):
                reason = "it contains break/continue that autograph could not turn into flags"
        else:
            rest = _tail_returns_bodies(s)
            reason = self.unconvertible(rest)
            if reason is None and _find(rest, (ast.Break, ast.Continue), stop_at_loops=True):
                reason = "it contains break/continue"
        if reason is not None:
            s.test = ast.copy_location(_call("py_cond", s.test, ast.Constant(where), ast.Constant(reason)), s.test)
            s.body = self.block(s.body, defined)
            s.orelse = self.block(s.orelse, defined)
            return [s], _definitely_assigned(s)
        assigned = (_stores(s.body) | _stores(s.orelse)) - self.scoped
        outputs = [] if returning else sorted(assigned & s.kiln_live_out)
        inputs = sorted(set(outputs) | (assigned & s.kiln_exposed))
        inner = defined | set(inputs)
        true_name, false_name = self.names.fresh("if_true"), self.names.fresh("if_false")
        true_body = self.block(s.body, inner)
        false_body = self.block(s.orelse, inner)
        if not returning:
            true_body.append(_return_tuple(outputs, s))
            false_body.append(_return_tuple(outputs, s))
        call = _call("if_stmt", s.test, ast.Name(true_name, ast.Load()),
                     ast.Name(false_name, ast.Load()), self.loads(inputs, defined, s), _str_tuple(outputs),
                     ast.Constant(where))
        if returning:
            call.keywords.append(ast.keyword("returns", ast.Constant(True)))
            last = ast.copy_location(ast.Return(call), s)
        else:
            last = _unpack(outputs, call, s)
        return [_function(true_name, inputs, true_body, s), _function(false_name, inputs, false_body, s),
                last], set(outputs)

    # --- loops
    def loop_reason(self, s: ast.For | ast.While) -> str | None:
        reason = self.unconvertible(s.body)
        if reason is None and _find(s.body, (ast.Break, ast.Continue), stop_at_loops=True) is not None:
            reason = "it uses break/continue inside a `with`/`try` block"
        return reason

    def for_stmt(self, s: ast.For, defined: set) -> tuple[list, set]:
        where = self.where(s)
        reason = self.loop_reason(s)
        if reason is not None:
            s.iter = ast.copy_location(_call("py_iter", _convert_iter(s.iter), ast.Constant(where), ast.Constant(reason)), s.iter)
            s.body = self.block(s.body, defined)
            s.orelse = self.block(s.orelse, defined)
            return [s], set()
        brk = getattr(s, "kiln_break_flag", None)
        assigned = (_stores(s.body) | _stores([s.target])) - self.scoped
        carried = sorted(assigned & s.kiln_live_head)
        if brk is not None and brk not in carried:
            carried.append(brk)
        item = self.names.fresh("item")
        body_name = self.names.fresh("for_body")
        target_assign = ast.copy_location(ast.Assign([s.target], ast.Name(item, ast.Load())), s.target)
        body = [target_assign] + self.block(s.body, defined | set(carried) | _stores([s.target]))
        body.append(_return_tuple(carried, s))
        call = _call("for_stmt", _convert_iter(s.iter), ast.Name(body_name, ast.Load()),
                     self.loads(carried, defined, s), _str_tuple(carried), ast.Constant(where))
        if brk is not None:
            call.args.append(ast.Constant(carried.index(brk)))
        return [_function(body_name, [item] + carried, body, s), _unpack(carried, call, s)], set(carried)

    def while_stmt(self, s: ast.While, defined: set) -> tuple[list, set]:
        where = self.where(s)
        reason = self.loop_reason(s)
        if reason is None and any(isinstance(n, ast.NamedExpr) for n in ast.walk(s.test)):
            reason = "its condition assigns a variable with `:=`"
        if reason is not None or s.orelse:
            s.test = ast.copy_location(_call("py_cond", s.test, ast.Constant(where),
                                             ast.Constant(reason or "it has an `else` clause")), s.test)
            s.body = self.block(s.body, defined)
            s.orelse = self.block(s.orelse, defined)
            return [s], set()
        assigned = _stores(s.body) - self.scoped
        carried = sorted(assigned & s.kiln_live_head)
        cond_name, body_name = self.names.fresh("while_cond"), self.names.fresh("while_body")
        cond_fn = _function(cond_name, carried, [ast.copy_location(ast.Return(s.test), s.test)], s)
        body = self.block(s.body, defined | set(carried))
        body.append(_return_tuple(carried, s))
        call = _call("while_stmt", ast.Name(cond_name, ast.Load()), ast.Name(body_name, ast.Load()),
                     self.loads(carried, defined, s), _str_tuple(carried), ast.Constant(where))
        return [cond_fn, _function(body_name, carried, body, s), _unpack(carried, call, s)], set(carried)


def _unconvertible(body: Sequence[ast.stmt]) -> str | None:
    """Why a statement with this body must stay Python, or None."""
    checks = (((ast.Return,), "it contains `return`"), ((ast.Raise,), "it contains `raise`"),
              ((ast.Yield, ast.YieldFrom), "it contains `yield`"),
              ((ast.Global, ast.Nonlocal), "it declares global/nonlocal names"),
              ((ast.Try,), "it contains `try`"))
    for kinds, reason in checks:
        if _find(body, kinds) is not None:
            return reason
    return None


def _tail_returns(stmts: Sequence[ast.stmt]) -> bool:
    """Every path ends in a `return`, and `return` appears nowhere else."""
    if not stmts:
        return False
    *rest, last = stmts
    if _find(rest, (ast.Return,)) is not None:
        return False
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _tail_returns(last.body) and _tail_returns(last.orelse)


def _tail_returns_bodies(s: ast.If) -> list:
    """The statements of a returning `if` other than its tail returns/ifs."""
    out: list = []
    for block in (s.body, s.orelse):
        *rest, last = block
        out.extend(rest)
        if isinstance(last, ast.If):
            out.extend(_tail_returns_bodies(last))
    return out


# ==========================================================================
# convert


class _NoSource(KilnTypeError):
    pass


_CACHE: "weakref.WeakKeyDictionary[types.FunctionType, dict]" = weakref.WeakKeyDictionary()


def convert(fn: Callable, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Callable:
    """Rewrite `fn`'s Python control flow so it works on traced values.

    `include` / `exclude` list modules or qualified function names whose
    functions are (or are not) converted when the converted code calls them;
    by default user functions are converted and library ones are not.

    >>> def f(x, n):
    ...     acc = 0.0
    ...     for i in range(n):
    ...         acc = acc + x[i]
    ...     return acc
    >>> g = convert(f)   # g(x, n) traces a kiln.for_loop when n is traced
    """
    if not isinstance(fn, types.FunctionType):
        raise KilnTypeError(f"autograph can only convert Python functions, got a {type(fn).__name__}; "
                            "pass autograph=False or wrap the callable in a def")
    try:
        return _convert(fn, tuple(include), tuple(exclude))
    except _NoSource as e:
        raise KilnTypeError(str(e)) from None


def _convert(fn: types.FunctionType, include: tuple, exclude: tuple) -> types.FunctionType:
    if fn.__code__ in _CONVERTED_CODE:
        return fn
    per_options = _CACHE.setdefault(fn, {})
    key = (include, exclude)
    if key not in per_options:
        per_options[key] = _build(fn, _Context(include, exclude))
    return per_options[key]


def _build(fn: types.FunctionType, context: _Context) -> types.FunctionType:
    name = fn.__qualname__
    if fn.__name__ == "<lambda>":
        raise _NoSource(f"autograph cannot convert the lambda {name}; use a def")
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise _NoSource(f"autograph needs the source code of {name}, which is not available (functions "
                        "typed into an interactive prompt or built with exec have none); define it in a "
                        "file or pass autograph=False") from None
    source = "".join(lines)
    indent = len(lines[0]) - len(lines[0].lstrip())
    try:
        module = ast.parse(textwrap.dedent(source))
    except SyntaxError as e:
        raise _NoSource(f"autograph could not parse the source of {name} ({e.msg}); pass autograph=False") from None
    node = module.body[0]
    if not isinstance(node, ast.FunctionDef) or node.name != fn.__name__:
        raise _NoSource(f"autograph could not find the definition of {name} in its source")
    for n in ast.walk(module):
        if hasattr(n, "col_offset") and n.col_offset is not None:
            n.col_offset += indent
            if getattr(n, "end_col_offset", None) is not None:
                n.end_col_offset += indent
    ast.increment_lineno(module, first_line - 1)
    node.decorator_list = []

    filename = fn.__code__.co_filename
    names = _Names()
    _Normalizer(names).function(node)
    _Converter(filename, names).function(node)
    _ExpressionConverter(filename).visit(node)
    _CallWrapper().visit(node)

    freevars = fn.__code__.co_freevars
    factory = ast.FunctionDef(name="kiln_autograph_factory__", args=_arguments([_AG, *freevars]),
                              body=[node, ast.Return(ast.Name(node.name, ast.Load()))], decorator_list=[],
                              returns=None, type_comment=None)
    ast.copy_location(factory, node)
    module = ast.Module([factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec", dont_inherit=True)
    factory_code = _child_code(code, factory.name)
    fn_code = _child_code(factory_code, node.name)

    cells = dict(zip(freevars, fn.__closure__ or ()))
    cells[_AG] = types.CellType(context)
    closure = tuple(cells[v] for v in fn_code.co_freevars)
    new = types.FunctionType(fn_code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__doc__ = fn.__doc__
    new.__annotations__ = dict(getattr(fn, "__annotations__", {}))
    new.__dict__.update(fn.__dict__)
    new.kiln_autograph_source = ast.unparse(node)
    _register(fn_code)
    return new


def _child_code(code: types.CodeType, name: str) -> types.CodeType:
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise KilnTypeError(f"autograph: compiled code has no function {name!r} (this is a bug in kiln)")


def _register(code: types.CodeType) -> None:
    _CONVERTED_CODE.add(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _register(const)
