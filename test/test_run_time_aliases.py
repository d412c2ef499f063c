"""A cond or loop result that is an outer array (or a view of one) on some
run-time path only (issue 14): NumPy's result then *is* that array, so a
later write to the array shows through it on that path. kiln keeps the
result as a value of its own and refuses, at trace time, what would tell
the two apart: a read of the result after a write to such an array, and a
write through the result (docs/mutation.md). Everything else matches NumPy.

Runs compiled and through the reference interpreter (conftest `execution`).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import kiln

SIZES = (1, 2, 7, 100)
THIS_FILE = os.path.basename(__file__)


def line_of(marker: str) -> int:
    with open(__file__) as f:
        for number, text in enumerate(f, start=1):
            if text.rstrip().endswith(f"# {marker}"):
                return number
    raise AssertionError(marker)


def _refused(marker: str) -> str:
    """The refusal names the line that made the result and the fix."""
    return rf"{THIS_FILE}:{line_of(marker)}.*written at {THIS_FILE}:\d+.*Copy the result where it is made"


# --- reads after a write to the array the result may be: refused


def if_expression(x, p):
    b = x.copy()
    y = b if p > 0 else b + 1  # made:if_expression
    b[0] = 100.0
    return y


def if_statement(x, p):
    b = x.copy()
    if p > 0:  # made:if_statement
        y = b
    else:
        y = b * 2
    b[-1] = 50.0
    return y.sum()


def branch_view(x, p):
    b = x.copy()
    y = b[1:] if p > 0 else b[:-1] * 2  # made:branch_view
    b[1:] += 1.0
    return y


def two_views(x, p):
    b = x.copy()
    y = b[1:] if p > 0 else b[:-1]  # made:two_views
    b[0] = 5.0
    return y


def argument_base(x, p):
    y = x if p > 0 else x + 1  # made:argument_base
    x[0] = 100.0
    return y


def loop_carried(x, n):
    b = x.copy()
    y = x * 0
    for i in range(n):  # made:loop_carried
        y = b
    b[0] = 100.0
    return y


def while_carried(x, n):
    b = x.copy()
    y = x * 0
    i = 0
    while i < n:  # made:while_carried
        y = b[::-1]
        i += 1
    b[0] = 100.0
    return y


def cond_in_loop(x, n):
    b = x.copy()
    y = x * 0
    for i in range(n):  # made:cond_in_loop
        if i == 2:
            y = b
    b[0] = 100.0
    return y


def read_in_a_later_iteration(x, n):
    b = x.copy()
    y = x * 0
    total = 0.0
    for i in range(n):  # made:read_in_a_later_iteration
        b[0] += 1.0
        total += y.sum()
        y = b
    return total


def write_in_a_later_loop(x, p, n):
    b = x.copy()
    y = b if p > 0 else b * 2  # made:write_in_a_later_loop
    for i in range(n):
        b[i] = 0.0
        x[i] = y[i]
    return x


REFUSED = [(if_expression, "made:if_expression", (1,)), (if_statement, "made:if_statement", (0,)),
           (branch_view, "made:branch_view", (1,)), (two_views, "made:two_views", (0,)),
           (argument_base, "made:argument_base", (1,)), (loop_carried, "made:loop_carried", (3,)),
           (while_carried, "made:while_carried", (3,)), (cond_in_loop, "made:cond_in_loop", (5,)),
           (read_in_a_later_iteration, "made:read_in_a_later_iteration", (4,)),
           (write_in_a_later_loop, "made:write_in_a_later_loop", (1, 3))]


@pytest.mark.parametrize("fn,marker,args", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_read_after_a_write_to_the_array_is_refused(fn, marker, args):
    with pytest.raises(ValueError, match=_refused(marker)):
        kiln.qjit(fn)(np.arange(5.0), *args)


def test_write_through_the_result_is_refused():
    def f(x, p):
        b = x.copy()
        y = b if p > 0 else b + 1
        y[0] = -7.0
        return b, y

    def g(x, n):
        y = x * 0
        for i in range(n):
            y = x[1:]
        y += 1.0
        return x

    for fn in (f, g):
        with pytest.raises(ValueError, match=r"on some run-time path only.*copy the result \(np.copy\)"):
            kiln.qjit(fn)(np.arange(5.0), 1)


# --- the fix the message suggests, and programs that never tell: NumPy's answers


def if_expression_copied(x, p):
    b = x.copy()
    y = b.copy() if p > 0 else b + 1
    b[0] = 100.0
    return y, b


def read_before_the_write(x, p):
    b = x.copy()
    y = b[1:] if p > 0 else b[:-1] * 2
    s = y.sum() * 2.0
    b[0] = 100.0
    return s, b


def result_unused_after_the_write(x, p):
    b = x.copy()
    y = b if p > 0 else b + 1
    total = y.sum()
    b[-1] = 7.0
    return total, b


def write_before_the_branch(x, p):
    b = x.copy()
    b[0] = 100.0
    y = b if p > 0 else b + 1
    return y * 1.0


def loop_result_read_only(x, n):
    b = x.copy()
    y = x * 0
    for i in range(n):
        if i % 2 == 0:
            y = b[::-1]
    return y + 1.0


def swap_buffers(x, n):
    a, b = x.copy(), x * 2.0
    for i in range(n):
        a, b = b, a
    a[-1] = -1.0
    return a, b


MATCHING = [if_expression_copied, read_before_the_write, result_unused_after_the_write, write_before_the_branch,
            loop_result_read_only, swap_buffers]


@pytest.mark.parametrize("fn", MATCHING, ids=[f.__name__ for f in MATCHING])
def test_programs_that_never_tell_match_numpy(fn):
    compiled = kiln.qjit(fn)
    for n in SIZES:
        for p in (0, 1, 3):
            x = np.arange(float(n))
            expected_x, got_x = x.copy(), x.copy()
            expected = fn(expected_x, min(p, n))
            got = compiled(got_x, min(p, n))
            for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                            got if isinstance(got, tuple) else (got,)):
                np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
            np.testing.assert_array_equal(got_x, expected_x)
