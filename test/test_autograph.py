"""autograph: Python control flow on traced values, compared against NumPy.

Each compiled function is called at several sizes and must compile once
(`num_compiles == 1`): converted loops and branches are dynamic.
"""

import os

import numpy as np
import pytest

import kiln
from kiln import numpy as knp
from kiln.autograph import convert

THIS_FILE = os.path.abspath(__file__)


def line_of(marker: str) -> int:
    """The line of this file holding `# <marker>`."""
    with open(THIS_FILE) as f:
        for number, text in enumerate(f, start=1):
            if text.rstrip().endswith(f"# {marker}"):
                return number
    raise AssertionError(f"marker {marker} not found")


def at_line(marker: str) -> str:
    """A `match=` pattern for `this_file:line`."""
    return f"test_autograph.py:{line_of(marker)}\\b"


SIZES = (3, 7, 12)


@pytest.fixture(autouse=True)
def seeded():
    np.random.seed(0)


# --------------------------------------------------------------------------
# for


def test_for_range_accumulation_is_one_dynamic_loop():
    @kiln.qjit(autograph=True)
    def f(x, n):
        acc = 0.0
        for i in range(n):
            acc = acc + x[i] * 2.0
        return acc

    for size in SIZES:
        x = np.random.rand(size)
        np.testing.assert_allclose(f(x, size - 1), (x[: size - 1] * 2.0).sum())
    assert f.num_compiles == 1
    assert "for_loop" in str(f.jaxpr)


def test_for_range_start_stop_step_and_negative_step():
    @kiln.qjit(autograph=True)
    def f(x, lo, hi, step):
        total = 0.0
        for i in range(lo, hi, step):
            total = total + x[i] * i
        return total

    x = np.arange(10.0)
    for lo, hi, step in [(1, 9, 2), (0, 10, 3), (8, 0, -2), (5, 5, 1), (9, -1, -1)]:
        expected = sum(x[i] * i for i in range(lo, hi, step))
        np.testing.assert_allclose(f(x, lo, hi, step), expected)
    assert f.num_compiles == 1


def test_reversed_traced_range_and_negative_step_loops():
    """`reversed(range(n))` with a traced `n` and `range(n - 1, -1, -1)` run
    backwards, at sizes 0, 1 and more (issue 14); a static reversed range is
    one compiled loop, not an unrolled one."""

    def backwards(x, n):
        horner, seen = 0.0, np.zeros(x.shape[0])
        for i in reversed(range(n)):
            horner = horner * 2.0 + x[i]
        for k, i in enumerate(reversed(range(1, n, 2))):
            seen[k] = x[i]
        for i in range(n - 1, -1, -1):
            horner = horner * 3.0 + x[i]
        return horner, seen

    def static_backwards(x):
        total = 0.0
        for i in reversed(range(5)):
            total = total * 2.0 + x[i]
        return total

    f = kiln.qjit(backwards)
    x = np.random.rand(9)
    for n in (0, 1, 2, 7, 9):
        expected = backwards(x, n)
        got = f(x, n)
        np.testing.assert_allclose(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
    assert f.num_compiles == 1
    g = kiln.qjit(static_backwards)
    np.testing.assert_allclose(g(x), static_backwards(x))
    assert "for_loop[" in str(g.jaxpr)


def test_for_range_of_shape_updates_an_array():
    @kiln.qjit(autograph=True)
    def f(x):
        y = knp.zeros_like(x)
        for i in range(x.shape[0]):
            y = y + x[i]
        return y

    for size in SIZES:
        x = np.random.rand(size)
        np.testing.assert_allclose(f(x), np.full(size, x.sum()))
    assert f.num_compiles == 1


def test_row_update_loop_writes_in_place():
    @kiln.qjit(autograph=True)
    def f(b):
        b = b.copy()
        for i in range(b.shape[0]):
            b[i] = b[i] + 1.0
        return b

    for size in SIZES:
        b = np.random.rand(size, 3)
        before = b.copy()
        np.testing.assert_allclose(f(b), before + 1.0)
        np.testing.assert_array_equal(b, before)
    assert f.num_compiles == 1


def test_len_of_a_traced_array_is_its_first_dim():
    @kiln.qjit(autograph=True)
    def f(x):
        total = 0.0
        for i in range(len(x)):
            total = total + x[i] * i
        return total

    for size in SIZES:
        x = np.random.rand(size)
        np.testing.assert_allclose(f(x), (x * np.arange(size)).sum())
    assert f.num_compiles == 1


def test_write_under_a_traced_if_inside_a_traced_loop():
    @kiln.qjit(autograph=True)
    def relu(x):
        y = x.copy()
        for i in range(y.shape[0]):
            if y[i] < 0:
                y[i] = 0.0
        return y

    for size in SIZES:
        x = np.random.randn(size)
        np.testing.assert_allclose(relu(x), np.maximum(x, 0.0))
    assert relu.num_compiles == 1


def test_loop_writes_reach_an_argument():
    @kiln.qjit(autograph=True)
    def fill(out, x):
        for i in range(x.shape[0]):
            out[i] = x[i] * 2.0

    for size in SIZES:
        out, x = np.zeros(size), np.random.rand(size)
        fill(out, x)
        np.testing.assert_allclose(out, x * 2.0)
    assert fill.num_compiles == 1


def test_for_over_rows_of_a_traced_array():
    @kiln.qjit(autograph=True)
    def f(x):
        total = knp.zeros(x.shape[1])
        for row in x:
            total = total + row * row
        return total

    for size in SIZES:
        x = np.random.rand(size, 4)
        np.testing.assert_allclose(f(x), (x * x).sum(axis=0))
    assert f.num_compiles == 1


def test_for_enumerate_and_zip():
    @kiln.qjit(autograph=True)
    def f(x, y):
        s = 0.0
        for i, (a, b) in enumerate(zip(x, y)):
            s = s + a * b * i
        for k, v in enumerate(x, 2):
            s = s + v * k
        return s

    for size in SIZES:
        x, y = np.random.rand(size), np.random.rand(size + 2)
        expected = sum(i * a * b for i, (a, b) in enumerate(zip(x, y))) + sum(k * v for k, v in enumerate(x, 2))
        np.testing.assert_allclose(f(x, y), expected)
    assert f.num_compiles == 1


def test_nested_traced_loops():
    @kiln.qjit(autograph=True)
    def f(a):
        total = 0.0
        for i in range(a.shape[0]):
            for j in range(i + 1):
                total = total + a[i, j]
        return total

    for size in SIZES:
        a = np.random.rand(size, size)
        np.testing.assert_allclose(f(a), np.tril(a).sum())
    assert f.num_compiles == 1


# --------------------------------------------------------------------------
# while


def test_newton_while_loop_is_data_dependent():
    @kiln.qjit(autograph=True)
    def sqrt(a):
        x = a
        steps = 0
        while knp.max(knp.abs(x * x - a) / a) > 1e-12 and steps < 100:
            x = 0.5 * (x + a / x)
            steps += 1
        return x, steps

    for size in SIZES:
        a = np.random.rand(size) * 100 + 1
        root, steps = sqrt(a)
        np.testing.assert_allclose(root, np.sqrt(a))
        assert 0 < steps < 100
    assert sqrt.num_compiles == 1
    assert "while_loop" in str(sqrt.jaxpr)


def test_while_on_a_python_condition_stays_python():
    @kiln.qjit(autograph=True)
    def f(x):
        k = 0
        while k < 3:
            x = x * 2.0
            k += 1
        return x

    x = np.random.rand(5)
    np.testing.assert_allclose(f(x), x * 8.0)
    assert "while_loop" not in str(f.jaxpr)


def test_while_becomes_traced_after_python_iterations():
    @kiln.qjit(autograph=True)
    def f(x, n):
        i = 0
        total = 0.0
        while i < n:
            total = total + x[i]
            i = i + 1
        return total

    for size in SIZES:
        x = np.random.rand(size)
        np.testing.assert_allclose(f(x, size), x.sum())
    assert f.num_compiles == 1


# --------------------------------------------------------------------------
# if / elif / else, and / or / not


def test_if_elif_else_on_traced_predicates():
    @kiln.qjit(autograph=True)
    def f(x):
        if x.sum() > 1.0:
            y = x * 2.0
        elif x.sum() < -1.0:
            y = x - 10.0
        else:
            y = -x
        return y

    for size in SIZES:
        for x in (np.random.rand(size) + 1, -np.random.rand(size) - 1, np.zeros(size)):
            s = x.sum()
            expected = x * 2.0 if s > 1.0 else (x - 10.0 if s < -1.0 else -x)
            np.testing.assert_allclose(f(x), expected)
    assert f.num_compiles == 1
    assert "cond" in str(f.jaxpr)


def test_if_without_else_keeps_the_old_value():
    @kiln.qjit(autograph=True)
    def f(x, t):
        y = x
        if x.max() > t:
            y = x / x.max()
        return y

    x = np.array([1.0, 4.0, 2.0])
    np.testing.assert_allclose(f(x, 3.0), x / 4.0)
    np.testing.assert_allclose(f(x, 5.0), x)
    assert f.num_compiles == 1


def test_early_return_under_a_traced_if():
    @kiln.qjit(autograph=True)
    def f(x):
        if x.sum() > 0:
            return x * 2.0
        y = x - 1.0
        return y

    for size in SIZES:
        for x in (np.random.rand(size), -np.random.rand(size)):
            np.testing.assert_allclose(f(x), x * 2.0 if x.sum() > 0 else x - 1.0)
    assert f.num_compiles == 1


def test_and_or_not_on_traced_values():
    @kiln.qjit(autograph=True)
    def f(x, y):
        if (x.sum() > 0 and y.sum() > 0) or not (x.max() < 3):
            r = x + y
        else:
            r = x - y
        return r

    cases = [(1, 1), (1, -1), (-1, 1), (-1, -1)]
    for sx, sy in cases:
        for big in (False, True):
            x = sx * np.random.rand(4) + (5.0 if big else 0.0)
            y = sy * np.random.rand(4)
            take = (x.sum() > 0 and y.sum() > 0) or not (x.max() < 3)
            np.testing.assert_allclose(f(x, y), x + y if take else x - y)
    assert f.num_compiles == 1


def test_traced_and_short_circuits_a_checked_right_operand():
    @kiln.qjit(autograph=True)
    def first_big(x):
        i = 0
        while i < x.shape[0] and x[i] < 5.0:
            i += 1
        return i

    assert first_big(np.array([1.0, 2.0, 7.0, 1.0])) == 2
    assert first_big(np.array([1.0, 2.0, 3.0])) == 3  # x[3] is never read
    assert first_big.num_compiles == 1


@pytest.mark.parametrize("size", [0, 1, 7, 50])
def test_chained_comparisons_on_traced_values(size):
    """`lo <= v < hi` (test/corpus image.box_blur, audio.band_energies):
    Python's `lo <= v and v < hi`, with `v` evaluated once and the second
    link only where the first holds (`x[i]` is never read out of bounds)."""

    def in_band(x, lo, hi):
        count = 0
        i = 0
        while i < x.shape[0] and 0 <= i < x.shape[0] and lo <= x[i] < hi:
            i += 1
        for v in x:
            if lo <= v < hi != lo:
                count += 1
        return count, i, 1 < 0 < 2, lo < hi > lo

    x = np.linspace(0.0, 10.0, size)
    got = kiln.qjit(in_band)(x, 0.5, 6.0)
    assert [bool(g) if isinstance(w, bool) else int(g) for g, w in zip(got, in_band(x, 0.5, 6.0))] == \
        list(in_band(x, 0.5, 6.0))


def test_a_chained_comparison_evaluates_each_operand_once_and_stops_early():
    calls = []

    def middle(v):
        calls.append(v)
        return v

    converted = convert(_chain_of_python_values)
    assert converted(2, middle) == (True, False)
    assert calls == [2, 2]  # once per chain: the second chain stops before its last operand


def _chain_of_python_values(a, middle):
    return 1 < middle(a) < 3, 5 < middle(a) < (1 / 0)


def test_scalar_arguments_as_predicates():
    @kiln.qjit(autograph=True)
    def larger(a, b):
        if a > b:
            m = a
        else:
            m = b
        return m

    assert larger(3.0, 5.0) == 5.0
    assert larger(7.0, 5.0) == 7.0
    assert larger.num_compiles == 1


def test_while_on_a_traced_integer_compares_with_zero():
    @kiln.qjit(autograph=True)
    def f(x, n):
        k = n
        s = 0.0
        while k:
            s = s + x[k - 1]
            k -= 1
        return s

    x = np.arange(6.0)
    np.testing.assert_allclose(f(x, 4), x[:4].sum())


def test_conditional_expression_and_boolean_values_outside_conditions():
    @kiln.qjit(autograph=True)
    def f(x, y):
        both = x.sum() > 0 and y.sum() > 0
        scale = 2.0 if both else 0.5
        return x * scale, not both

    for sx, sy in [(1, 1), (1, -1), (-1, -1)]:
        x, y = sx * np.random.rand(4), sy * np.random.rand(4)
        both = x.sum() > 0 and y.sum() > 0
        out, negated = f(x, y)
        np.testing.assert_allclose(out, x * (2.0 if both else 0.5))
        assert negated == (not both)
    assert f.num_compiles == 1


def test_boolean_operators_keep_python_semantics_on_python_values():
    def f(a, b):
        return (a and b), (a or b), (not a), (a if b else "no")

    g = convert(f)
    for a, b in [(0, 5), (3, 0), ([], "x"), ("y", [])]:
        assert g(a, b) == f(a, b)


def test_static_branches_and_loops_keep_python_semantics():
    @kiln.qjit(autograph=True, static_argnums=(1,))
    def f(x, mode):
        ops = []
        for k in range(3):
            ops.append(k)
        if mode == "double":
            y = x * 2.0
        else:
            y = x + len(ops)
        return y

    x = np.random.rand(4)
    np.testing.assert_allclose(f(x, "double"), x * 2.0)
    np.testing.assert_allclose(f(x, "add"), x + 3)
    text = str(f.jaxpr)
    assert "for_loop" not in text and "cond" not in text


def test_python_loop_over_a_list_is_unrolled():
    @kiln.qjit(autograph=True)
    def f(x):
        for scale in [1.0, 2.0, 3.0]:
            x = x * scale
        return x

    x = np.random.rand(5)
    np.testing.assert_allclose(f(x), x * 6.0)
    assert "for_loop" not in str(f.jaxpr)


# --------------------------------------------------------------------------
# break / continue


def test_while_with_break_and_continue():
    def reference(x, n):
        i = 0
        s = 0.0
        while i < n:
            if x[i] < 0:
                break
            if x[i] > 5:
                i += 1
                continue
            s = s + x[i]
            i += 1
        return s, i

    f = kiln.qjit(reference, autograph=True)
    for x in (np.array([1.0, 7.0, 2.0, -1.0, 3.0]), np.array([1.0, 2.0, 9.0]), np.array([-2.0, 1.0])):
        s, i = f(x, x.shape[0])
        es, ei = reference(x, x.shape[0])
        np.testing.assert_allclose(s, es)
        assert i == ei
    assert f.num_compiles == 1


def test_for_with_break_continue_and_else():
    def reference(x):
        s = 0.0
        for i in range(x.shape[0]):
            if x[i] > 5:
                continue
            if x[i] < 0:
                break
            s = s + x[i]
        else:
            s = s + 100.0
        return s

    f = kiln.qjit(reference, autograph=True)
    for x in (np.array([1.0, 7.0, 2.0, -1.0, 3.0]), np.array([1.0, 2.0, 9.0]), np.array([-1.0, 4.0])):
        np.testing.assert_allclose(f(x), reference(x))
    assert f.num_compiles == 1


def test_break_in_zip_of_a_stepped_range_and_an_array():
    def reference(x, lo, hi, step):
        s = 0.0
        for i, v in zip(range(lo, hi, step), x):
            if v > 100:
                break
            s = s + v * i
        return s

    f = kiln.qjit(reference, autograph=True)
    x = np.arange(10.0)
    x[7] = 500.0
    for lo, hi, step in [(0, 10, 1), (1, 9, 2), (9, 0, -2), (5, 5, 1), (9, -1, -1), (0, 3, 1)]:
        np.testing.assert_allclose(f(x, lo, hi, step), reference(x, lo, hi, step))
    assert f.num_compiles == 1


def test_break_in_a_static_loop_stops_it():
    def reference(x):
        for k in range(10):
            if k == 3:
                break
            x = x + 1.0
        return x

    f = kiln.qjit(reference, autograph=True)
    x = np.zeros(3)
    np.testing.assert_allclose(f(x), reference(x))
    # A static range is one compiled loop (its break a flag in the
    # condition), not ten unrolled iterations.
    assert str(f.jaxpr).count("while_loop[") == 1 and "for_loop" not in str(f.jaxpr)


def test_while_true_with_traced_break():
    def reference(x):
        k = 0
        while True:
            if x.sum() > 50:
                break
            x = x * 2.0
            k += 1
        return x, k

    f = kiln.qjit(reference, autograph=True)
    for x in (np.ones(3), np.full(5, 100.0), np.full(4, 0.25)):
        out, k = f(x)
        expected, ek = reference(x)
        np.testing.assert_allclose(out, expected)
        assert k == ek
    assert f.num_compiles == 1


def test_continue_over_rows():
    def reference(x):
        s = 0.0
        for v in x:
            if v < 0:
                continue
            s = s + v
        return s

    f = kiln.qjit(reference, autograph=True)
    for size in SIZES:
        x = np.random.randn(size)
        np.testing.assert_allclose(f(x), reference(x))
    assert f.num_compiles == 1


def test_python_loops_with_return_or_break_else_keep_python_semantics():
    def with_return(x):
        for k in range(10):
            x = x + 1.0
            if k == 2:
                return x
        return x * 0.0

    def break_else(x):
        for k in range(10):
            if k == 2:
                break
            x = x + 1.0
        else:
            return x * 0.0
        return x

    for reference in (with_return, break_else):
        x = np.ones(3)
        np.testing.assert_allclose(kiln.qjit(reference, autograph=True)(x), reference(x))


def test_loop_target_used_after_the_loop():
    def reference(x, n):
        i = -1
        for i in range(n):
            x = x + 1.0
        return x, i

    f = kiln.qjit(reference, autograph=True)
    for n in (0, 4):
        out, i = f(np.zeros(3), n)
        expected, ei = reference(np.zeros(3), n)
        np.testing.assert_allclose(out, expected)
        assert i == ei


# --------------------------------------------------------------------------
# errors point at the user's line


def test_loop_variable_undefined_before_a_traced_loop():
    @kiln.qjit(autograph=True)
    def f(x, n):
        for i in range(n):  # undefined-loop
            last = x[i]
        return last

    with pytest.raises(kiln.KilnTypeError, match=at_line("undefined-loop") + r".*'last'.*before the loop"):
        f(np.ones(3), 2)


def test_branch_variable_undefined_in_one_branch():
    @kiln.qjit(autograph=True)
    def f(x):
        if x.sum() > 0:  # undefined-branch
            y = x
        return y

    with pytest.raises(kiln.KilnTypeError, match=at_line("undefined-branch") + r".*'y'.*false branch"):
        f(np.ones(3))


def test_branch_only_variable_is_fine_when_unused_after():
    @kiln.qjit(autograph=True)
    def f(x):
        out = x
        if x.sum() > 0:
            tmp = x * 3.0
            out = tmp + 1.0
        return out

    x = np.ones(3)
    np.testing.assert_allclose(f(x), x * 3.0 + 1.0)


def test_return_inside_a_traced_loop_returns_at_that_iteration():
    @kiln.qjit(autograph=True)
    def f(x, n):
        for i in range(n):
            if i > 2:
                return x
        return x * 2.0

    for n in (0, 1, 3, 4, 5):
        np.testing.assert_allclose(f(np.ones(3), n), np.ones(3) if n > 3 else np.full(3, 2.0))


def test_return_inside_a_try_in_a_traced_loop_is_an_error_naming_the_line():
    @kiln.qjit(autograph=True)
    def f(x, n):
        for i in range(n):  # return-in-try
            try:
                if i > 2:
                    return x
            finally:
                pass
        return x * 2.0

    with pytest.raises(kiln.KilnTypeError, match=at_line("return-in-try") + r".*`return`"):
        f(np.ones(3), 5)


def test_carried_dtype_error_names_line_and_variable():
    @kiln.qjit(autograph=True)
    def f(x, n):
        acc = knp.zeros(3, dtype=knp.int32)
        for i in range(n):  # dtype-loop
            acc = acc + x
        return acc

    with pytest.raises(kiln.KilnTypeError, match=at_line("dtype-loop") + r".*'acc'"):
        f(np.ones(3), 2)


def test_traced_errors_in_converted_code_point_at_the_user_line():
    @kiln.qjit(autograph=True)
    def f(x):
        total = 0.0
        for row in x:
            total = total + float(row)  # float-of-traced
        return total

    with pytest.raises(kiln.KilnTypeError, match="float") as info:
        f(np.ones((3, 2)))
    frames = [(tb.tb_frame.f_code.co_filename, tb.tb_lineno) for tb in _walk(info.tb)]
    assert (THIS_FILE, line_of("float-of-traced")) in frames


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_without_autograph_python_if_on_traced_value_fails():
    @kiln.qjit(autograph=False)
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(kiln.KilnTypeError, match="kiln.cond"):
        f(np.ones(3))


def test_functions_without_source_are_rejected():
    namespace = {}
    exec("def f(x):\n    return x\n", namespace)
    with pytest.raises(kiln.KilnTypeError, match="source"):
        convert(namespace["f"])


# --------------------------------------------------------------------------
# called functions, closures, globals

OFFSET = 1.0


def clip_positive(v):
    if v.sum() > 0:
        r = v
    else:
        r = -v
    return r


def test_called_user_functions_are_converted():
    @kiln.qjit(autograph=True)
    def f(x):
        return clip_positive(x) + OFFSET

    for x in (np.random.rand(4), -np.random.rand(4)):
        np.testing.assert_allclose(f(x), np.abs(x) + OFFSET)


def test_autograph_exclude_leaves_called_functions_alone():
    @kiln.qjit(autograph=True, autograph_exclude=[f"{__name__}.clip_positive"])
    def f(x):
        return clip_positive(x)

    with pytest.raises(kiln.KilnTypeError, match="kiln.cond"):
        f(np.ones(3))


def test_closures_share_cells_with_the_original():
    scale = 2.0

    def f(x, n):
        for i in range(n):
            x = x * scale
        return x

    g = convert(f)
    assert g.__globals__ is f.__globals__
    scale = 3.0
    np.testing.assert_allclose(g(np.ones(2), 2), np.full(2, 9.0))
    assert scale == 3.0


def test_nested_function_defined_inside_is_converted():
    @kiln.qjit(autograph=True)
    def f(x):
        def pick(v):
            if v.sum() > 0:
                out = v * 2.0
            else:
                out = v
            return out

        return pick(x) + pick(-x)

    x = np.random.rand(3)
    np.testing.assert_allclose(f(x), x * 2.0 - x)


def library_like_sign(v):
    if v.sum() > 0:
        r = v
    else:
        r = -v
    return r


library_like_sign.__module__ = "numpy.kiln_test_helpers"


def test_autograph_include_converts_library_functions():
    def call_it(x):
        return library_like_sign(x)

    with pytest.raises(kiln.KilnTypeError, match="kiln.cond"):
        kiln.qjit(call_it, autograph=True)(np.ones(3))
    f = kiln.qjit(call_it, autograph=True, autograph_include=["numpy.kiln_test_helpers"])
    for x in (np.random.rand(3), -np.random.rand(3)):
        np.testing.assert_allclose(f(x), np.abs(x))


def _kaplan_meier_style(t, d):
    # a list grown in a while loop with a traced condition (corpus reliability.kaplan_meier)
    out = []
    i = 0
    while i < len(t):
        if d[i] > 0:
            out.append(t[i])
        i += 1
    return np.array(out)


def _count_positive_by_list(x):
    hits = []
    i = 0
    while i < len(x):
        if x[i] > 0:
            hits.append(i)
        i += 1
    return len(hits)  # kiln used to return 1 here (the append ran once, at trace time)


def _append_over_traced_range(x):
    out = []
    for i in range(len(x)):
        out.append(x[i] * 2)
    return np.array(out)


def _append_in_static_loop(x):
    out = []
    for i in range(3):
        out.append(x[i] * 2)
    return np.array(out)


def _np_add_in_traced_loop(x):
    acc = np.zeros(2)
    for i in range(len(x)):
        acc = np.add(acc, x[i])  # `.add` of a module, not of a container: compiles
    return acc


@pytest.mark.parametrize("fn, line, loop_offset", [(_kaplan_meier_style, "out.append", 4),
                                                   (_count_positive_by_list, "hits.append", 3),
                                                   (_append_over_traced_range, "out.append", 2)])
def test_python_container_mutated_in_a_compiled_loop_is_refused_naming_the_loop(fn, line, loop_offset):
    lineno = fn.__code__.co_firstlineno + loop_offset
    with pytest.raises(kiln.errors.KilnTypeError,
                       match=rf"test_autograph.py:{lineno}: this loop .* calls {line}\(\) on a Python container.*np.append"):
        kiln.qjit(fn)(np.arange(-2.0, 5.0), *((np.ones(7),) if fn is _kaplan_meier_style else ()))


def test_container_appends_in_unrolled_loops_and_module_calls_still_compile():
    x = np.arange(5.0)
    np.testing.assert_array_equal(kiln.qjit(_append_in_static_loop)(x), _append_in_static_loop(x))
    np.testing.assert_array_equal(kiln.qjit(_np_add_in_traced_loop)(x), _np_add_in_traced_loop(x))


_SOURCES = '''
import functools
import numpy as np


def deco(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


@deco
def decorated(x, n):
    s = np.zeros_like(x)
    for i in range(n):
        s += x * i  # a comment on the last line of the loop
    return s


def one_line(x): return x * 2.0 + 1.0


def ends_in_a_lambda(x, n):
    f = lambda v: (v +
                   1.0)
    for _ in range(n):
        x = f(x)
    return x


class Holder:
    @staticmethod
    def method(x, n):
        t = x
        for _ in range(n):
            t = t * 0.5
        return t


def make_closure(c):
    def inner(x, n):
        for _ in range(n):
            x = x + c
        return x
    return inner


def last_statement_spans_lines(x, n):
    for _ in range(n):
        x = x * 0.5
    return (x +
            1.0)
trailing = 1
'''


def test_functions_are_converted_from_the_lines_their_code_spans(tmp_path, monkeypatch):
    """autograph cuts a function's definition from its file by the lines
    its code spans (no tokenizer): decorated functions, one-line defs,
    methods, closures and definitions that end in a multi-line lambda or
    expression convert and compute what Python does."""
    import importlib.util
    import types

    from kiln.autograph import entry

    path = tmp_path / "kiln_autograph_sources.py"
    path.write_text(_SOURCES)
    spec = importlib.util.spec_from_file_location("kiln_autograph_sources", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.arange(5.0)
    cases = [(module.decorated.__wrapped__, (x, 3)), (module.one_line, (x,)), (module.ends_in_a_lambda, (x, 3)),
             (module.Holder.method, (x, 3)), (module.make_closure(2.5), (x, 3)),
             (module.last_statement_spans_lines, (x, 3))]
    for fn, args in cases:
        assert isinstance(fn, types.FunctionType)
        found = entry._definition_by_lines(fn)
        assert found is not None, fn.__name__
        assert found[0].body[0].name == fn.__name__
        converted = convert(fn)
        assert converted is not fn and hasattr(converted, "kiln_autograph_source")
        np.testing.assert_allclose(kiln.qjit(fn)(*args), fn(*args))
    # The decorated function's lines include its decorator, as inspect's do.
    assert found_first_line(entry, module.decorated.__wrapped__) == _SOURCES.split("\n").index("@deco") + 1


def found_first_line(entry, fn) -> int:
    return entry._definition_by_lines(fn)[2]


def test_a_definition_the_lines_do_not_give_falls_back_to_inspect(monkeypatch):
    """When the cut lines do not parse to the function's definition (here:
    a span that stops at the `def` line), inspect's tokenizer decides."""
    from kiln.autograph import entry

    def f(x, n):
        for _ in range(n):
            x = x * 2.0
        return x

    monkeypatch.setattr(entry, "_last_line", lambda code: code.co_firstlineno)
    assert entry._definition_by_lines(f) is None
    monkeypatch.setattr(entry, "_CACHE", type(entry._CACHE)())
    np.testing.assert_allclose(kiln.qjit(f)(np.ones(3), 3), np.full(3, 8.0))
