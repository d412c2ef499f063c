"""In-place updates inside branches inside loops keep NumPy's aliasing
(issue 14, items 5 and 8): every loop kind x branch kind x target.

The silent wrong result this guards against: `x += 1.0` inside an `if`
inside a loop left the caller's array (or the base of a view) unchanged.
Each program is generated into a module file (autograph reads the source),
run under NumPy (kiln's loops and conds run as Python outside a trace) and
under kiln.qjit(autograph=True), at array sizes 0, 1, odd and large.
"""

import importlib.util
import itertools
import textwrap

import numpy as np
import pytest

import kiln

# How `t` is made from the argument `x`; `base` is the array whose every
# element the test compares afterwards.
TARGETS = {
    "argument": "base = x\nt = base",
    "local": "base = x * 2.0\nt = base",
    "view_of_argument": "base = x\nt = base[1:]",
    "view_of_local": "base = x * 2.0\nt = base[1:]",
}

# One branch on the traced loop index `k` that updates `t` in place.
BRANCHES = {
    "kiln_cond": """
        t = kiln.cond(k >= 0)(lambda: np.add(t, 1.0, out=t)).otherwise(lambda: t)()
    """,
    "if": """
        if k >= 0:
            t += 1.0
    """,
    "if_else": """
        if k % 2 == 0:
            t += 1.0
        else:
            t *= 3.0
    """,
    "nested_if": """
        if k >= 0:
            if k < 100:
                t -= 0.5
            t *= 2.0
    """,
}

# The loop around the branch, running `n` times.
LOOPS = {
    "kiln_for_loop": """
        def body(k, t):
            {branch}
            return t

        t = kiln.for_loop(0, n, 1)(body)(t)
    """,
    "kiln_while_loop": """
        def body(k, t):
            {branch}
            return k + 1, t

        k, t = kiln.while_loop(lambda k, t: k < n)(body)(0, t)
    """,
    "python_for": """
        for k in range(n):
            {branch}
    """,
    "python_while": """
        k = 0
        while k < n:
            {branch}
            k += 1
    """,
}

COMBINATIONS = list(itertools.product(LOOPS, BRANCHES, TARGETS))


def _indent(text: str, spaces: int) -> str:
    return textwrap.indent(textwrap.dedent(text).strip("\n"), " " * spaces)


def _source(loop: str, branch: str, target: str) -> str:
    loop_text = textwrap.dedent(LOOPS[loop]).strip("\n")
    branch_line = next(line for line in loop_text.splitlines() if "{branch}" in line)
    depth = len(branch_line) - len(branch_line.lstrip())
    body = loop_text.replace(branch_line, _indent(BRANCHES[branch], depth))
    return (f"def f_{loop}_{branch}_{target}(x, n):\n"
            f"{_indent(TARGETS[target], 4)}\n"
            f"{_indent(body, 4)}\n"
            "    return base * 1.0\n")


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """All the generated programs, in one module file."""
    path = tmp_path_factory.mktemp("aliasing") / "aliasing_programs.py"
    path.write_text("import numpy as np\nimport kiln\n\n\n" +
                    "\n\n".join(_source(*combo) for combo in COMBINATIONS))
    spec = importlib.util.spec_from_file_location("aliasing_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("loop, branch, target", COMBINATIONS,
                         ids=["-".join(c) for c in COMBINATIONS])
def test_in_place_update_in_branch_in_loop(programs, loop, branch, target):
    fn = getattr(programs, f"f_{loop}_{branch}_{target}")
    compiled = kiln.qjit(fn, autograph=True)
    for size, trips in [(0, 3), (1, 3), (5, 4), (1000, 3), (5, 0)]:
        x_numpy = np.linspace(-1.0, 1.0, size)
        x_kiln = x_numpy.copy()
        want = fn(x_numpy, trips)
        got = compiled(x_kiln, trips)
        np.testing.assert_allclose(got, want, err_msg=f"result at size {size}, {trips} trips")
        np.testing.assert_allclose(x_kiln, x_numpy, err_msg=f"argument at size {size}, {trips} trips")
    assert compiled.num_compiles <= 3


# The two programs of the report, verbatim.
def _bump_in_branch(x, n):
    for k in range(n):
        if k >= 0:
            x += 1.0


def _bump_view_in_branch(x, n):
    v = x[1:]
    for k in range(n):
        if k >= 0:
            v += 1.0
    return x.sum()


def _bump_view_in_branch_while(x, n):
    v = x[1:]
    k = 0
    while k < n:
        if k >= 0:
            v += 1.0
        k += 1
    return x.sum()


def test_reported_update_in_branch_reaches_the_caller():
    x = np.zeros(3)
    kiln.qjit(_bump_in_branch, autograph=True)(x, 4)
    np.testing.assert_array_equal(x, [4.0, 4.0, 4.0])


@pytest.mark.parametrize("fn", [_bump_view_in_branch, _bump_view_in_branch_while])
def test_reported_update_through_view_in_branch_reaches_the_base(fn):
    x = np.zeros(3)
    assert kiln.qjit(fn, autograph=True)(x, 4) == 8.0
    np.testing.assert_array_equal(x, [0.0, 4.0, 4.0])


# NPBench contour_integral: `Tz += zz * Ham[n]` in a loop.
def _accumulate_powers(Tz, z, Ham):
    zz = 1.0
    for n in range(Ham.shape[0]):
        Tz += zz * Ham[n]
        zz *= z
    return Tz.sum()


@pytest.mark.parametrize("size", [0, 1, 5, 64])
def test_whole_array_accumulation_in_a_loop(size):
    rng = np.random.default_rng(size)
    Ham = rng.standard_normal((4, size, size))
    Tz_numpy = np.zeros((size, size))
    Tz_kiln = Tz_numpy.copy()

    want = _accumulate_powers(Tz_numpy, 0.5, Ham)
    got = kiln.qjit(_accumulate_powers, autograph=True)(Tz_kiln, 0.5, Ham)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(Tz_kiln, Tz_numpy)


def test_rebinding_in_one_branch_and_writing_in_the_other_is_refused():
    # NumPy writes the caller's array until the first rebinding, then a new
    # array: which one a write reaches is only known at run time.
    def f(x, n):
        for k in range(n):
            if k % 2 == 0:
                x += 1.0
            else:
                x = x * 2.0
        return x

    with pytest.raises(ValueError, match="written in place .* but the body returns another array"):
        kiln.qjit(f, autograph=True)(np.zeros(3), 4)


def test_write_then_rebind_after_the_branch_is_refused():
    def f(x, n):
        for k in range(n):
            if k >= 0:
                x += 1.0
            x = x + 0.0
        return x

    with pytest.raises(ValueError, match="written in place"):
        kiln.qjit(f, autograph=True)(np.zeros(3), 4)


def test_write_in_branch_then_later_write_outside_the_loop_reaches_the_argument():
    def f(x, c):
        if c > 0:
            x += 1.0
        x[0] = 7.0

    x = np.zeros(3)
    kiln.qjit(f, autograph=True)(x, 1)
    np.testing.assert_array_equal(x, [7.0, 1.0, 1.0])
    kiln.qjit(f, autograph=True)(x, 0)
    np.testing.assert_array_equal(x, [7.0, 1.0, 1.0])


def _grow_until(t):
    while t.sum() < 10:
        t += 1.0
    return t.sum()


def _bump_until_break(x, n):
    for k in range(n):
        if x[0] > 2.5:
            break
        x += 1.0
    return x.sum()


def _nested_loops_write_view_and_base(x, n, m):
    v = x[::2]
    for i in range(n):
        for j in range(m):
            if (i + j) % 2 == 0:
                v *= 2.0
            else:
                x[0] += 1.0
    return x.sum()


@pytest.mark.parametrize("fn, make_args", [
    (_grow_until, lambda size: (np.zeros(size + 1),)),
    (_bump_until_break, lambda size: (np.zeros(size + 1), 10)),
    (_nested_loops_write_view_and_base, lambda size: (np.ones(size + 1), 3, 2)),
], ids=["while_condition_reads_it", "for_with_break", "nested_loops_view_and_base"])
@pytest.mark.parametrize("size", [0, 1, 4, 999])
def test_in_place_update_with_loop_exits_and_nesting(fn, make_args, size):
    args_numpy = make_args(size)
    args_kiln = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args_numpy]

    want = fn(*args_numpy)
    got = kiln.qjit(fn, autograph=True)(*args_kiln)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(args_kiln[0], args_numpy[0])
