"""Differential fuzzing with programs shaped like user code and NPBench kernels.

In: Hypothesis draws (`user_program_cases()`).
Out: a `UserProgram` (Python source: helper functions, then `def f(x, y)`
written the way users write NumPy: `for` loops over `range`, `while` with
`break`, `if` on array values — autograph turns them into kiln loops and
branches) with `Inputs` to run it on; `program_gen.run_case` runs it
three ways (NumPy on the plain function, `kiln.interpret`, compiled) and
names the side that disagrees.

A program chains one to three kernels, each appending its result to the
returned tuple and leaving its writes in `x` for the next: time loops of
stencil updates on slices, triangular loops writing elements, row
recurrences, data-dependent `while` loops with `break` (and `while True`,
nested `while` with `and`, `continue`) and with a convergence test, views of `x` made before a loop and written inside it,
and helper functions (one of which writes its argument).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from fuzz.program_gen import SIZES, Inputs, _y_shape, build_function

FLOAT_DTYPES = ("float64", "float32")
INT_DTYPES = ("int64", "int32")
HELPERS = {
    "scale_add": ["def scale_add(a, b, c):", "    return a * c + b"],
    "bump_first": ["def bump_first(a, by):", "    a[0] += by", "    return a"],
    "row_sum": ["def row_sum(a, i):", "    s = a[i] * 0", "    for j in range(i):", "        s = s + a[j]",
                "    return s"],
}


@dataclass
class UserProgram:
    helpers: tuple  # names in HELPERS
    kernels: tuple  # lists of body lines, each ending with `results.append(...)`
    x_rank: int

    @property
    def source(self) -> str:
        lines: list[str] = []
        for name in self.helpers:
            lines += HELPERS[name] + [""]
        lines.append("def f(x, y):")
        lines.append("    results = []")
        for kernel in self.kernels:
            lines += [f"    {line}" for line in kernel]
        lines.append("    return tuple(results) + (x,)")
        return "\n".join(lines) + "\n"

    def build(self):
        return build_function(self.source)


def _c(draw, integer: bool) -> str:
    return repr(draw(st.sampled_from([2, 3, -1]))) if integer else repr(draw(st.sampled_from([0.5, 0.25, -0.5, 1.5])))


def _stencil(draw, k: int, rank: int, integer: bool) -> list[str]:
    """A time loop of slice updates (Jacobi-like), on x itself or a copy."""
    steps = draw(st.integers(0, 3))
    a = draw(st.sampled_from(["x", "x.copy()"]))
    div = " // 3" if integer else f" * {_c(draw, False)}"
    if rank == 1:
        update = f"a{k}[1:-1] = (a{k}[:-2] + a{k}[1:-1] + a{k}[2:]){div}"
    else:
        update = (f"a{k}[1:-1, 1:-1] = (a{k}[1:-1, 1:-1] + a{k}[:-2, 1:-1] + a{k}[2:, 1:-1] + a{k}[1:-1, :-2]"
                  f" + a{k}[1:-1, 2:]){div}")
    lines = [f"a{k} = {a}", f"for t in range({steps}):", f"    {update}"]
    if draw(st.booleans()):  # a second array, ping-pong
        lines = [f"a{k} = {a}", f"b{k} = a{k}.copy()", f"for t in range({steps}):", f"    {update}",
                 f"    b{k}[...] = a{k}", f"    a{k} = a{k} + b{k}{div}" if not integer else f"    a{k} = a{k} - b{k}"]
    return lines + [f"results.append(a{k}.sum())"]


def _triangular(draw, k: int, rank: int, integer: bool) -> list[str]:
    """Loops over a triangle writing elements (x square when rank 2)."""
    if rank == 1:
        inner = draw(st.sampled_from(["range(i)", "range(i + 1, n{k})"])).format(k=k)
        return [f"n{k} = x.shape[0]", f"s{k} = x[:0].sum()", f"for i in range(n{k}):",
                f"    for j in {inner}:", f"        s{k} = s{k} + x[j] * x[i]",
                f"    x[i] = x[i] + s{k}" + (" // 4" if integer else " * 0.125"), f"results.append(s{k})"]
    inner = draw(st.sampled_from(["range(i)", "range(i + 1, n{k})", "range(i, n{k})"])).format(k=k)
    op = draw(st.sampled_from(["-", "+"]))
    body = (f"x[i, j] = x[i, j] {op} x[j, i] * {_c(draw, integer)}" if draw(st.booleans()) else
            f"x[i, j] = x[j, i] {op} x[i, i]")
    return [f"n{k} = x.shape[0]", f"for i in range(n{k}):", f"    for j in {inner}:",
            f"        {body}", f"results.append(x[:, 0].sum())"]


def _recurrence(draw, k: int, rank: int, integer: bool) -> list[str]:
    """Each row (element) from the one before it."""
    c = _c(draw, integer)
    lower = draw(st.sampled_from([0, 1]))  # from 0, x[i - 1] wraps to the last row, as in NumPy
    return [f"for i in range({lower}, x.shape[0]):", f"    x[i] = x[i] - x[i - 1] * {c}",
            "results.append(x.sum())"]


def _while_break(draw, k: int, rank: int, integer: bool) -> list[str]:
    """Scan until a data-dependent condition, with break."""
    item = "x[i]" if rank == 1 else f"x[i, {draw(st.sampled_from([0, -1]))}]"
    threshold = draw(st.sampled_from([0, 2, -1])) if integer else draw(st.sampled_from([0.0, 1.5, -2.0]))
    return [f"i{k} = 0", f"total{k} = x.dtype.type(0)", f"while i{k} < x.shape[0]:",
            f"    if {item.replace('[i', f'[i{k}')} > {threshold!r}:", "        break",
            f"    total{k} = total{k} + {item.replace('[i', f'[i{k}')}", f"    i{k} += 1",
            f"results.append(total{k})", f"results.append(i{k})"]


def _runs(draw, k: int, rank: int, integer: bool) -> list[str]:
    """Nested while loops over runs of positive values; `while True` with
    break; `continue`."""
    item = "x[{i}]" if rank == 1 else "x[{i}, 0]"
    kind = draw(st.sampled_from(["nested", "while_true", "continue"]))
    if kind == "nested":
        return [f"i{k} = 0", f"count{k} = 0", f"while i{k} < x.shape[0]:", f"    j{k} = i{k}",
                f"    while j{k} < x.shape[0] and {item.format(i=f'j{k}')} > 0:", f"        j{k} += 1",
                f"    count{k} += j{k} - i{k}", f"    i{k} = j{k} + 1", f"results.append(count{k})"]
    if kind == "while_true":
        return [f"i{k} = 0", "while True:", f"    if i{k} >= x.shape[0] or {item.format(i=f'i{k}')} < 0:",
                "        break", f"    i{k} += 1", f"results.append(i{k})"]
    return [f"s{k} = x[:0].sum()", f"for i in range(x.shape[0]):", f"    if {item.format(i='i')} < 0:",
            "        continue", f"    s{k} = s{k} + {item.format(i='i')}", f"results.append(s{k})"]


def _converge(draw, k: int, rank: int, integer: bool) -> list[str]:
    """A while loop with a convergence test on the whole array."""
    limit = draw(st.integers(0, 6))
    step = "t{k} // 2" if integer else "t{k} * 0.5"
    return [f"t{k} = x.copy()", f"k{k} = 0", f"while np.sum(np.abs(t{k})) > 1 and k{k} < {limit}:",
            f"    t{k} = {step.format(k=k)}", f"    k{k} += 1", f"results.append(t{k})", f"results.append(k{k})"]


def _view_before_loop(draw, k: int, rank: int, integer: bool) -> list[str]:
    """A view of x made before a loop and written inside it."""
    view = draw(st.sampled_from(["x[1:]", "x[::2]", "x[::-1]"] + (["x[:, 0]", "x[1:, :-1]"] if rank == 2 else [])))
    op = draw(st.sampled_from(["v{k} *= {c}", "v{k} += x[0]" if rank == 1 else "v{k} += 1",
                               "v{k}[...] = v{k} - 1"]))
    return [f"v{k} = {view}", f"for r in range({draw(st.integers(0, 3))}):",
            f"    {op.format(k=k, c=_c(draw, integer))}", f"results.append(v{k}.copy())"]


def _helpers(draw, k: int, rank: int, integer: bool) -> tuple[list[str], tuple]:
    """Helper functions: a pure one in a loop, one writing its argument, one with its own loop."""
    kind = draw(st.sampled_from(["scale_add", "bump_first", "row_sum"]))
    if kind == "scale_add":
        return ([f"h{k} = x.copy()", f"for r in range({draw(st.integers(0, 3))}):",
                 f"    h{k} = scale_add(h{k}, x, {_c(draw, integer)})", f"results.append(h{k})"], ("scale_add",))
    if kind == "bump_first":
        return ([f"bump_first(x, {_c(draw, True)})", "results.append(x.sum())"],
                ("bump_first",))
    return ([f"results.append(row_sum(x, x.shape[0] // 2))"], ("row_sum",))


KERNELS = (_stencil, _triangular, _recurrence, _while_break, _runs, _converge, _view_before_loop)


@st.composite
def user_programs(draw) -> UserProgram:
    rank = draw(st.sampled_from([1, 2]))
    integer = draw(st.integers(0, 3)) == 0
    kernels: list = []
    helpers: set = set()
    for k in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 4)) == 0:
            lines, used = _helpers(draw, k, rank, integer)
            helpers.update(used)
        else:
            lines = draw(st.sampled_from(KERNELS))(draw, k, rank, integer)
        kernels.append(tuple(lines))
    return UserProgram(tuple(sorted(helpers)), tuple(kernels), rank), integer


@st.composite
def user_program_cases(draw) -> tuple[UserProgram, Inputs]:
    program, integer = draw(user_programs())
    dtype = draw(st.sampled_from(INT_DTYPES if integer else FLOAT_DTYPES))
    ns = draw(st.lists(st.sampled_from(SIZES), min_size=1, max_size=3, unique=True))
    shapes = [((n,) if program.x_rank == 1 else (n, n), None) for n in ns]
    shapes = [(x_shape, _y_shape("same", x_shape, 0)) for x_shape, _ in shapes]
    inputs = Inputs(dtype, dtype, "same", draw(st.sampled_from(["c", "c", "strided", "reversed"])), shapes,
                    draw(st.integers(0, 2**32 - 1)), False)
    return program, inputs
