"""Differential fuzzing: random small kiln programs, run by kiln and by NumPy.

In: Hypothesis draws (`program_cases()`), or a seed for plain random use.
Out: a `Program` (Python source of `def f(x, y): ...`, buildable into a
closure) with the inputs to run it on, and `run_case`, which runs it under
`@kiln.qjit`, under the reference interpreter (`kiln.interpret`) and as
plain NumPy on copies of the same arrays and returns an `Outcome` (same
answer / both raised / accepted difference / failure, naming the side
that disagrees).

The programs mix elementwise chains, reductions (axis, keepdims),
broadcasting against a second array, slicing with random bounds and steps,
views and in-place writes through them, integer and integer-array index
writes, and `kiln.for_loop` / `kiln.cond` around them. Outside `qjit`,
`kiln.for_loop` and `kiln.cond` run as plain Python, so the very same
closure is the NumPy reference.
"""

from __future__ import annotations

import linecache
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

import kiln

DTYPES = ("float32", "float64", "int32", "int64", "int8", "uint8", "uint32", "bool")
SIZES = (0, 1, 2, 3, 5, 8, 13)
# kiln's typing rules for loops and branches: carried values keep their
# dtype, branches agree on dtypes (docs/control-flow.md).
KILN_TYPING_RULES = ("enters the loop as", "has different dtypes in different branches")
# Exceptions kiln may raise for a program NumPy also rejects.
USER_ERRORS = (ValueError, IndexError, TypeError, OverflowError)


# --------------------------------------------------------------------------
# Statements. Each renders to lines of Python; `t` is the current value,
# `x` and `y` the arguments (x is written through views and indices).


@dataclass(frozen=True)
class Unary:
    fn: str

    def render(self) -> list[str]:
        if self.fn == "sqrt_abs":
            return ["t = np.sqrt(np.abs(t))"]
        return [f"t = np.{self.fn}(t)"]


@dataclass(frozen=True)
class BinaryY:
    op: str
    reverse: bool

    def render(self) -> list[str]:
        a, b = ("y", "t") if self.reverse else ("t", "y")
        if self.op in ("maximum", "minimum"):
            return [f"t = np.{self.op}({a}, {b})"]
        return [f"t = {a} {self.op} {b}"]


@dataclass(frozen=True)
class BinaryScalar:
    op: str
    value: Any

    def render(self) -> list[str]:
        return [f"t = t {self.op} {self.value!r}"]


@dataclass(frozen=True)
class Reduce:
    fn: str
    axis: Any
    keepdims: bool

    def render(self) -> list[str]:
        return [f"t = np.{self.fn}(t, axis={self.axis!r}, keepdims={self.keepdims})"]


def _slice_text(s: tuple) -> str:
    start, stop, step = s
    text = ("" if start is None else str(start)) + ":" + ("" if stop is None else str(stop))
    return text + ("" if step is None else f":{step}")


def _index_text(index: tuple) -> str:
    parts = [p if isinstance(p, str) else (_slice_text(p) if isinstance(p, tuple) else repr(p)) for p in index]
    return ", ".join(parts) if len(parts) != 1 else parts[0]


@dataclass(frozen=True)
class SliceT:
    index: tuple  # per axis: (start, stop, step) or an int

    def render(self) -> list[str]:
        return [f"t = t[{_index_text(self.index)}]"]


@dataclass(frozen=True)
class ViewWrite:
    """A view of x, written in place: `v = x[a:b:s]; v += c`."""

    index: tuple
    op: str
    value: Any

    def render(self) -> list[str]:
        if self.op == "=":
            return [f"v = x[{_index_text(self.index)}]", f"v[...] = {self.value!r}"]
        return [f"v = x[{_index_text(self.index)}]", f"v {self.op} {self.value!r}"]


@dataclass(frozen=True)
class SetItem:
    """`x[index] = value` / `x[index] op= value`; index an int, a slice or
    an integer-array literal; value a scalar or `t`."""

    index: Any
    op: str
    value: Any

    def render(self) -> list[str]:
        if isinstance(self.index, list):
            target = f"x[np.array({self.index!r})]"
        else:
            target = f"x[{_index_text(self.index)}]"
        return [f"{target} {self.op} {self.value if self.value == 't' else repr(self.value)}"]


@dataclass(frozen=True)
class AugT:
    """In place on t: writes x when t is x or a view of it."""

    op: str
    value: Any

    def render(self) -> list[str]:
        return [f"t {self.op} {self.value!r}"]


@dataclass(frozen=True)
class ScalarRead:
    """`s = x[i]` (or `x[i, j]`): a NumPy scalar, a snapshot that later
    writes to x must not change; the program returns it at the end."""

    name: str
    index: tuple

    def render(self) -> list[str]:
        return [f"{self.name} = x[{', '.join(map(str, self.index))}]"]


# Loop/branch bodies keep dtypes and shapes (kiln's loop rules are
# stricter than plain Python: carried values keep their type).
BODY_EXPRS = ("acc + acc", "acc - 1", "acc * 2", "np.maximum(acc, 0)", "np.abs(acc)", "acc + t0")


@dataclass(frozen=True)
class ForCarry:
    name: str
    lower: int
    upper: Any  # int or "t.shape[0]"-like text
    step: int
    body: tuple  # BODY_EXPRS, applied in turn

    def render(self) -> list[str]:
        lines = ["t0 = t", f"@kiln.for_loop({self.lower}, {self.upper}, {self.step})", f"def {self.name}(i, acc):"]
        lines += [f"    acc = {e}" for e in self.body]
        # A copy: a zero-trip Python loop would return t itself, a kiln loop a new value.
        lines += ["    return acc", f"t = {self.name}(np.copy(t))"]
        return lines


@dataclass(frozen=True)
class ForWrite:
    """A loop over the first axis writing x (or t) element by element."""

    name: str
    target: str  # "x" or "t"
    step: int
    op: str
    value: Any

    def render(self) -> list[str]:
        tgt = self.target
        bounds = f"0, {tgt}.shape[0], {self.step}" if self.step > 0 else f"{tgt}.shape[0] - 1, -1, {self.step}"
        value = "i" if self.value == "i" else repr(self.value)
        return [f"@kiln.for_loop({bounds})", f"def {self.name}(i):", f"    {tgt}[i] {self.op} {value}",
                f"{self.name}()"]


@dataclass(frozen=True)
class Line:
    """A one-line statement given as text (shape functions, masks, out=,
    concatenation, dtype changes...)."""

    text: str

    def render(self) -> list[str]:
        return [self.text]


@dataclass(frozen=True)
class WhileCount:
    """A while_loop carrying a counter and the current value."""

    name: str
    limit: int
    body: tuple

    def render(self) -> list[str]:
        lines = ["t0 = t", f"@kiln.while_loop(lambda k, acc: k < {self.limit})", f"def {self.name}(k, acc):"]
        lines += [f"    acc = {e}" for e in self.body]
        lines += ["    return k + 1, acc", f"_, t = {self.name}(0, np.copy(t))"]
        return lines


@dataclass(frozen=True)
class Cond:
    name: str
    pred: str  # "sum" | "size"
    then: tuple
    other: tuple
    write: Any  # None or a scalar written to x[0] in the first branch

    def render(self) -> list[str]:
        pred = "np.sum(t) > 0" if self.pred == "sum" else "t.size > 2"
        lines = ["t0 = t", f"@kiln.cond({pred})", f"def {self.name}():"]
        if self.write is not None:
            lines.append(f"    x[0] = {self.write!r}")
        lines += ["    acc = t0"] + [f"    acc = {e}" for e in self.then] + ["    return acc"]
        lines += [f"@{self.name}.otherwise", "def _():", "    acc = t0"]
        lines += [f"    acc = {e}" for e in self.other] + ["    return acc", f"t = {self.name}()"]
        return lines


# --------------------------------------------------------------------------
# Programs and inputs


@dataclass
class Program:
    x_rank: int
    stmts: list
    ret: str = "t"  # "t" or "t, x"

    @property
    def source(self) -> str:
        body = ["t = x"]
        for s in self.stmts:
            body += s.render()
        reads = [s.name for s in self.stmts if isinstance(s, ScalarRead)]
        body.append(f"return {', '.join([self.ret] + reads)}")
        return "def f(x, y):\n" + "".join(f"    {line}\n" for line in body)

    def build(self) -> Callable:
        return build_function(self.source)


def build_function(src: str) -> Callable:
    """The function `f` that `src` defines (its source is registered with
    linecache, so autograph, tracebacks and kiln's messages see the lines)."""
    filename = f"<kiln-fuzz-{abs(hash(src)):x}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace: dict[str, Any] = {"np": np, "kiln": kiln}
    exec(compile(src, filename, "exec"), namespace)
    return namespace["f"]


@dataclass
class Inputs:
    x_dtype: str
    y_dtype: str
    y_kind: str  # "same" | "row" | "one" | "scalar" | "other"
    x_layout: str  # "c" | "strided" | "reversed"
    shapes: list  # list of (x_shape, y_shape)
    seed: int
    specials: bool

    def arrays(self, x_shape: tuple, y_shape: tuple) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        x = _values(rng, x_shape, self.x_dtype, self.specials)
        y = _values(rng, y_shape, self.y_dtype, self.specials)
        if self.x_layout == "strided" and x.ndim:
            wide = np.zeros((x.shape[0] * 2,) + x.shape[1:], x.dtype)
            wide[::2] = x
            x = wide[::2]
        elif self.x_layout == "reversed" and x.ndim:
            x = x[::-1].copy()[::-1]
        return x, y


def _values(rng: np.random.Generator, shape: tuple, dtype: str, specials: bool) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    if kind in "iu":
        return rng.integers(-5 if kind == "i" else 0, 6, size=shape).astype(dtype)
    v = np.round(rng.normal(0.0, 3.0, size=shape), 2).astype(dtype)
    if specials and v.size:
        flat = v.reshape(-1)
        for pos, special in zip(rng.integers(0, v.size, size=2), (np.nan, np.inf)):
            flat[pos] = special
    return v


def _y_shape(kind: str, x_shape: tuple, other: int) -> tuple:
    return {"same": x_shape, "row": x_shape[-1:], "one": (1,), "scalar": (), "other": (other,)}[kind]


# --------------------------------------------------------------------------
# Hypothesis strategies

_bound = st.one_of(st.none(), st.integers(-6, 6))
_step = st.sampled_from([None, 1, 2, 3, -1, -2])
_slice = st.tuples(_bound, _bound, _step)
_scalar_int = st.sampled_from([0, 1, 2, -1, 3])
_scalar_any = st.sampled_from([0, 1, 2, -1, 3, 0.5, -2.5])


def _index(rank: int) -> st.SearchStrategy:
    """A basic index of x: slices (and sometimes an int) over its axes."""
    axes = st.lists(st.one_of(_slice, _slice, st.integers(-4, 4)), min_size=1, max_size=max(rank, 1))
    return axes.map(tuple)


@st.composite
def programs(draw, x_rank: int | None = None) -> Program:
    rank = draw(st.sampled_from([1, 2])) if x_rank is None else x_rank
    t_rank = rank
    stmts: list = []
    counter = 0
    for _ in range(draw(st.integers(1, 6))):
        counter += 1
        kind = draw(st.sampled_from(["unary", "biny", "bins", "reduce", "slice", "viewwrite", "setitem",
                                     "augt", "forcarry", "forwrite", "cond", "scalarread", "shape", "misc",
                                   "while"]))
        if kind == "unary":
            stmts.append(Unary(draw(st.sampled_from(["negative", "absolute", "square", "sin", "exp", "tanh",
                                                       "sqrt_abs", "floor"]))))
        elif kind == "biny":
            stmts.append(BinaryY(draw(st.sampled_from(["+", "-", "*", "/", "maximum", "minimum"])),
                                 draw(st.booleans())))
            t_rank = max(t_rank, 1)  # y has rank <= x's; a rank-0 t gains y's rank (approximately)
        elif kind == "bins":
            op = draw(st.sampled_from(["+", "-", "*", "/", "//", "%", "**"]))
            value = 2 if op == "**" else draw(st.sampled_from([2, -1, 3, 0.5, 1.5]))
            stmts.append(BinaryScalar(op, value))
        elif kind == "reduce":
            fn = draw(st.sampled_from(["sum", "max", "min", "mean", "prod"]))
            axis = draw(st.one_of(st.none(), st.integers(-t_rank, t_rank - 1))) if t_rank else None
            keepdims = draw(st.booleans())
            stmts.append(Reduce(fn, axis, keepdims))
            if not keepdims:
                t_rank = 0 if axis is None else t_rank - 1
        elif kind == "slice" and t_rank:
            index = draw(_index(t_rank))
            stmts.append(SliceT(index))
            t_rank -= sum(isinstance(p, int) for p in index)
        elif kind == "viewwrite":
            stmts.append(ViewWrite(draw(_index(rank)), draw(st.sampled_from(["+=", "-=", "*=", "="])),
                                   draw(_scalar_int)))
        elif kind == "setitem":
            index = draw(st.one_of(st.integers(-5, 5).map(lambda i: (i,)), _index(rank),
                                   st.lists(st.integers(-4, 4), min_size=1, max_size=4)))
            op = draw(st.sampled_from(["=", "+=", "*="]))
            value = draw(st.one_of(_scalar_any, st.just("t")))
            stmts.append(SetItem(index, op, value))
        elif kind == "shape" and t_rank:
            axis = draw(st.integers(-t_rank, t_rank - 1))
            text, t_rank = draw(st.sampled_from([
                ("t = t.T", t_rank), ("t = np.ravel(t)", 1), ("t = t.reshape(-1)", 1),
                (f"t = np.cumsum(t, axis={axis})", t_rank), (f"t = np.argmax(t, axis={axis})", t_rank - 1),
                ("t = np.concatenate([t, t])", t_rank), ("t = np.expand_dims(t, 0)", t_rank + 1),
                (f"t = np.swapaxes(t, 0, {axis})", t_rank), ("t = t[::-1]", t_rank),
                ("t = np.stack([t, t], axis=-1)", t_rank + 1)]))
            stmts.append(Line(text))
        elif kind == "misc":
            text = draw(st.sampled_from([
                "t = np.where(t > 0, t, y)", "t = np.where(x > 1, x, 0)", "x[x > 0] = 0",
                "np.clip(x, -1, 2, out=x)", "t = t.astype(np.float32)", "t = t.astype(np.int64)",
                "t = np.clip(t, -2, 2)", "t = (t > 0) * t", "x.fill(3)", "np.copyto(x, 1)",
                "t = t @ t.T" if t_rank == 2 else "t = np.dot(t, t)" if t_rank == 1 else "t = t * t",
                "t = t.copy()", "t = np.mean(t, axis=0) + t" if t_rank else "t = t + 1",
                "x[::2] += x[1::2]" if rank == 1 else "x[:, ::2] = x[:, :1]",
                "t = np.sign(t) - np.square(t) % 3", "x[-1] = x[0]"]))
            stmts.append(Line(text))
            if text == "t = np.dot(t, t)":
                t_rank = 0
        elif kind == "while":
            body = tuple(draw(st.lists(st.sampled_from(BODY_EXPRS), min_size=1, max_size=2)))
            stmts.append(WhileCount(f"loop{counter}", draw(st.integers(0, 3)), body))
        elif kind == "scalarread":
            stmts.append(ScalarRead(f"s{counter}", tuple(draw(st.integers(-3, 3)) for _ in range(rank))))
        elif kind == "augt":
            stmts.append(AugT(draw(st.sampled_from(["+=", "-=", "*="])), draw(_scalar_any)))
        elif kind == "forcarry":
            upper = draw(st.one_of(st.integers(0, 4), st.just("x.shape[0]")))
            body = tuple(draw(st.lists(st.sampled_from(BODY_EXPRS), min_size=1, max_size=3)))
            stmts.append(ForCarry(f"loop{counter}", 0, upper, draw(st.sampled_from([1, 2])), body))
        elif kind == "forwrite":
            target = "t" if t_rank and draw(st.booleans()) else "x"
            stmts.append(ForWrite(f"loop{counter}", target, draw(st.sampled_from([1, 2, -1])),
                                  draw(st.sampled_from(["=", "+=", "*="])), draw(st.sampled_from([1, 2, "i"]))))
        elif kind == "cond":
            exprs = st.lists(st.sampled_from(BODY_EXPRS[:-1]), min_size=1, max_size=2).map(tuple)
            write = draw(st.one_of(st.none(), _scalar_int))
            stmts.append(Cond(f"c{counter}", draw(st.sampled_from(["sum", "size"])), draw(exprs), draw(exprs),
                              write))
    ret = draw(st.sampled_from(["t", "t", "t, x"]))
    return Program(rank, stmts, ret)


@st.composite
def inputs_for(draw, rank: int) -> Inputs:
    x_dtype = draw(st.sampled_from(DTYPES))
    y_dtype = draw(st.one_of(st.just(x_dtype), st.sampled_from(DTYPES)))
    y_kind = draw(st.sampled_from(["same", "same", "row", "one", "scalar", "other"]))
    other = draw(st.sampled_from(SIZES))
    m = draw(st.sampled_from([2, 3, 4, 1]))
    ns = draw(st.lists(st.sampled_from(SIZES), min_size=1, max_size=3, unique=True))
    shapes = []
    for n in ns:
        x_shape = (n,) if rank == 1 else (n, m)
        shapes.append((x_shape, _y_shape(y_kind, x_shape, other)))
    return Inputs(x_dtype, y_dtype, y_kind, draw(st.sampled_from(["c", "c", "strided", "reversed"])), shapes,
                  draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 9)) == 0)


@st.composite
def program_cases(draw) -> tuple[Program, Inputs]:
    program = draw(programs())
    return program, draw(inputs_for(program.x_rank))


# --------------------------------------------------------------------------
# The NumPy reference, with a record of size-1 broadcasting


class _Ref(np.ndarray):
    """An ndarray that notes when NumPy broadcasts a size-1 dim against
    another size; kiln refuses that for dims it treats as dynamic
    (docs/tracing.md), which makes such a difference an accepted one."""

    broadcast_one = False

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        shapes = [np.shape(a) for a in inputs if isinstance(a, np.ndarray)]
        out = kwargs.get("out")
        if out is not None:
            shapes += [np.shape(o) for o in out]
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, _Ref) else o for o in out)
        if method == "__call__" and len(shapes) >= 2:
            _note_size_one(shapes)
        args = [a.view(np.ndarray) if isinstance(a, _Ref) else a for a in inputs]
        result = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        if isinstance(result, np.ndarray) and result.ndim:
            return result.view(_Ref)
        return result

    def __setitem__(self, index, value):
        target = np.ndarray.__getitem__(self.view(np.ndarray), index)
        if isinstance(value, np.ndarray):
            _note_size_one([np.shape(target), value.shape])
        np.ndarray.__setitem__(self.view(np.ndarray), index, value.view(np.ndarray) if isinstance(value, _Ref)
                               else value)


def _note_size_one(shapes: list) -> None:
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    for dims in zip(*padded):
        if 1 in dims and any(d != 1 for d in dims):
            _Ref.broadcast_one = True


# --------------------------------------------------------------------------
# Running one case


@dataclass
class Outcome:
    status: str  # "same" | "both_raise" | "accepted" | "failure"
    detail: str = ""
    counts: dict = field(default_factory=dict)


def _tolerances(dtype: np.dtype) -> dict:
    if dtype == np.float32:
        return {"rtol": 2e-4, "atol": 1e-4}
    return {"rtol": 1e-9, "atol": 1e-12}


def compare(kiln_value: Any, numpy_value: Any, what: str) -> str | None:
    """None when equal (dtype, shape, values within tolerance), else why not."""
    if isinstance(numpy_value, tuple):
        if not isinstance(kiln_value, tuple) or len(kiln_value) != len(numpy_value):
            return f"{what}: kiln returned {type(kiln_value).__name__}, NumPy a tuple of {len(numpy_value)}"
        for i, (k, n) in enumerate(zip(kiln_value, numpy_value)):
            why = compare(k, n, f"{what}[{i}]")
            if why:
                return why
        return None
    k, n = np.asarray(kiln_value), np.asarray(numpy_value).view(np.ndarray)
    if k.dtype != n.dtype:
        return f"{what}: dtype {k.dtype} (kiln) vs {n.dtype} (NumPy)"
    if k.shape != n.shape:
        return f"{what}: shape {k.shape} (kiln) vs {n.shape} (NumPy)"
    if k.dtype.kind == "f":
        ok = np.allclose(k, n, equal_nan=True, **_tolerances(k.dtype))
    else:
        ok = np.array_equal(k, n)
    if not ok:
        return f"{what}: values differ\n  kiln:  {k!r}\n  NumPy: {n!r}"
    return None


def _numpy_reference(fn: Callable, x: np.ndarray, y: np.ndarray) -> tuple[Any, BaseException | None, bool]:
    _Ref.broadcast_one = False
    xr = x.view(_Ref)
    yr = y.view(_Ref) if y.ndim else y
    try:
        with np.errstate(all="ignore"):
            result = fn(xr, yr)
    except Exception as exc:  # noqa: BLE001 - any NumPy rejection is an expected outcome
        return None, exc, _Ref.broadcast_one
    if isinstance(result, tuple):
        result = tuple(np.asarray(r).view(np.ndarray) if isinstance(r, np.ndarray) else r for r in result)
    elif isinstance(result, np.ndarray):
        result = result.view(np.ndarray)
    return result, None, _Ref.broadcast_one


def _error_kind(exc: BaseException) -> tuple:
    return tuple(k for k in USER_ERRORS if isinstance(exc, k))


def run_case(program: Program, inputs: Inputs, compiled: Any = None) -> Outcome:
    """Run `program` on every shape of `inputs` three ways: NumPy, kiln's
    reference interpreter on the traced jaxpr (`kiln.interpret`) and
    compiled code. A failure's detail starts with the side that disagrees:
    the interpreter differs from NumPy -> a tracing (frontend) bug; the
    interpreter agrees with NumPy but compiled code does not -> a compiler
    bug; only the interpreter differs -> an interpreter bug.

    `compiled` (a `kiln.qjit` of `program.build()`) may be passed to reuse
    compilations across calls; one compile serves every size."""
    fn = program.build()
    compiled = compiled if compiled is not None else kiln.qjit(fn)
    interpreted = kiln.interpret(compiled)
    counts = {"same": 0, "both_raise": 0, "accepted": 0, "kind_differs": 0}
    for x_shape, y_shape in inputs.shapes:
        x, y = inputs.arrays(x_shape, y_shape)
        x_np, y_np = x.copy(), y.copy()
        where = f"x: {inputs.x_dtype}{list(x_shape)} ({inputs.x_layout}), y: {inputs.y_dtype}{list(y_shape)}"
        reference = _numpy_reference(fn, x_np, y_np) + (x_np, y_np)
        compiled_verdict = _judge(compiled, x, y, reference)
        interpreted_verdict = _judge(interpreted, x, y, reference)
        if interpreted_verdict[0] == "failure":
            culprit = ("tracing bug (frontend): the interpreter, running the traced jaxpr, disagrees with NumPy"
                       if compiled_verdict[0] == "failure" else
                       "interpreter bug: compiled code agrees with NumPy, the interpreter does not")
            return Outcome("failure", f"{culprit}\n{where}: {interpreted_verdict[1]}"
                           + (f"\n  (compiled: {compiled_verdict[1]})" if compiled_verdict[0] == "failure" else ""))
        if compiled_verdict[0] == "failure":
            return Outcome("failure", f"compiler bug: the interpreter agrees with NumPy, compiled code does not\n"
                                      f"{where}: {compiled_verdict[1]}")
        status, kind_differs = compiled_verdict
        counts[status] += 1
        counts["kind_differs"] += kind_differs
    status = "same" if counts["same"] else ("accepted" if counts["accepted"] else "both_raise")
    return Outcome(status, counts=counts)


def _judge(run: Callable, x: np.ndarray, y: np.ndarray, reference: tuple) -> tuple:
    """Call `run` (compiled or interpreted) on copies of x and y and judge
    it against the NumPy reference: ("same" | "both_raise" | "accepted",
    kind_differs) or ("failure", why)."""
    ref, ref_exc, broadcast_one, x_np, y_np = reference
    x_k, y_k = _same_layout(x), y.copy()
    x_orig = x.copy()
    try:
        with np.errstate(all="ignore"):
            got = run(x_k, y_k)
        kiln_exc = None
    except Exception as exc:  # noqa: BLE001 - classified below
        got, kiln_exc = None, exc
    if kiln_exc is not None and (isinstance(kiln_exc, kiln.KilnInternalError)
                                 or not isinstance(kiln_exc, kiln.KilnError)
                                 or not _error_kind(kiln_exc)):
        return ("failure", f"kiln raised {_describe(kiln_exc, True)}"
                + ("" if ref_exc is None else f"\n  (NumPy raised {_describe(ref_exc)})"))
    if ref_exc is not None and kiln_exc is None:
        return "failure", f"NumPy raised {_describe(ref_exc)} but kiln returned {got!r}"
    if ref_exc is not None:
        if not np.array_equal(x_k, x_orig, equal_nan=x.dtype.kind == "f"):
            return "failure", (f"the call failed ({_describe(kiln_exc)}) but x changed:\n"
                               f"  before: {x_orig!r}\n  after:  {x_k!r}")
        # Both rejected the program, perhaps for different first reasons (e.g. NumPy
        # checks an index before the value's shape, kiln the reverse at trace time).
        return "both_raise", int(not set(_error_kind(ref_exc)) & set(_error_kind(kiln_exc)))
    if kiln_exc is not None:
        if (broadcast_one and isinstance(kiln_exc, ValueError) and "broadcast" in str(kiln_exc)
                and np.array_equal(x_k, x_orig, equal_nan=x.dtype.kind == "f")):
            return "accepted", 0
        if isinstance(kiln_exc, TypeError) and any(rule in str(kiln_exc) for rule in KILN_TYPING_RULES):
            # kiln's documented rule (docs/control-flow.md), which a Python loop or branch
            # of the reference need not meet (e.g. bool - 1 is int64).
            return "accepted", 0
        return "failure", f"kiln raised {_describe(kiln_exc)} but NumPy returned {ref!r}"
    why = compare(got, ref, "result") or compare(x_k, x_np, "x after the call") \
        or compare(y_k, y_np, "y after the call")
    if why:
        return "failure", why
    return "same", 0


def _same_layout(x: np.ndarray) -> np.ndarray:
    """A copy of x with x's memory layout (strided / reversed inputs stay so)."""
    if x.flags.c_contiguous or not x.ndim:
        return x.copy()
    if x.strides[0] < 0:
        return x[::-1].copy()[::-1]
    wide = np.zeros((x.shape[0] * 2,) + x.shape[1:], x.dtype)
    wide[::2] = x
    return wide[::2]


def _describe(exc: BaseException, with_trace: bool = False) -> str:
    text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    if with_trace:
        tb = traceback.extract_tb(exc.__traceback__)[-3:]
        text += "\n" + "".join(traceback.format_list(tb))
    return text
