"""A cond result that is an outer array (or a view of one) on some run-time
path only (issue 14): in NumPy the result then *is* that array, so a later
write to the array shows through it on that path. kiln keeps such a result
current: a read after a write re-takes the view on the same predicates
(kiln.branch_aliases). What it cannot keep current it refuses at trace
time, naming the lines and the fix: a loop result that is an outer array
on some iteration, a cond result read in a loop before a write to the
array in that loop, and writes through the result (docs/mutation.md).

Runs compiled and through the reference interpreter (conftest `execution`).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import kiln

SIZES = (0, 1, 2, 7, 100)
THIS_FILE = os.path.basename(__file__)


def line_of(marker: str) -> int:
    with open(__file__) as f:
        for number, text in enumerate(f, start=1):
            if text.rstrip().endswith(f"# {marker}"):
                return number
    raise AssertionError(marker)


# --- results kept current: NumPy's answers


def if_expression(x, p):
    b = x.copy()
    y = b if p > 0 else b + 1
    b[:1] = 100.0
    return y


def if_statement(x, p):
    b = x.copy()
    if p > 0:
        y = b
    else:
        y = b * 2
    b[-1:] = 50.0
    return y.sum(), y


def branch_views(x, p):
    b = x.copy()
    y = b[1:] if p > 0 else b[:-1] * 2
    b[1:] += 1.0
    return y


def two_views(x, p):
    b = x.copy()
    y = b[1:] if p > 0 else b[::-2]
    b[:2] = 5.0
    return y


def argument_base(x, p):
    y = x[1:] if p > 0 else x[:-1] + 1
    x[1:2] = 100.0
    return y


def view_taken_before_the_write(x, p):
    b = x.copy()
    y = b[1:] if p > 0 else b[:-1] * 2
    v = y[::2]
    b[1:3] = 50.0
    return v, y


def elif_chain(x, p):
    b = x.copy()
    if p > 1:
        y = b[2:]
    elif p > 0:
        y = b[:-2]
    else:
        y = b[1:-1] * 3
    b[2:3] = -1.0
    b[3:4] += 10.0
    return y


def nested_ifs(x, p, q):
    b = x.copy()
    if p > 0:
        if q > 0:
            y = b
        else:
            y = b[::-1]
    else:
        y = b + 1
    b[:1] = 9.0
    return y.sum(), y


def reads_between_writes(x, p):
    b = x.copy()
    y = b if p > 0 else b + 1
    b[:1] = 1.0
    first = y.sum()
    b[1:2] = 7.0
    return first, y.sum(), y


def traced_bounds(x, p, k):
    b = x.copy()
    y = b[k:] if p > 0 else b[:x.shape[0] - k] * 2
    b[k:k + 1] = 42.0
    return y


def write_in_a_later_branch(x, p):
    b = x.copy()
    y = b if p > 0 else b + 1
    if p > 1:
        b[:1] = 5.0
    return y


def write_in_a_later_loop(x, p, n):
    b = x.copy()
    y = b if p > 0 else b * 2
    for i in range(n):
        b[i] = 0.0
        x[i] = y[i]
    return x


def copied_result(x, p):
    b = x.copy()
    y = b.copy() if p > 0 else b + 1
    b[:1] = 100.0
    return y, b


def swap_buffers(x, n):
    a, b = x.copy(), x * 2.0
    for i in range(n):
        a, b = b, a
    a[-1:] = -1.0
    return a, b


TRACKED = [(if_expression, [(0,), (1,)]), (if_statement, [(0,), (1,)]), (branch_views, [(0,), (1,)]),
           (two_views, [(0,), (1,)]), (argument_base, [(0,), (1,)]), (view_taken_before_the_write, [(0,), (1,)]),
           (elif_chain, [(0,), (1,), (2,)]), (nested_ifs, [(0, 0), (1, 0), (1, 1)]),
           (reads_between_writes, [(0,), (1,)]), (traced_bounds, [(0, 0), (1, 0), (1, 1)]),
           (write_in_a_later_branch, [(0,), (1,), (2,)]), (write_in_a_later_loop, [(0, 0), (1, 0), (1, 1)]),
           (copied_result, [(0,), (1,)]), (swap_buffers, [(0,), (1,), (2,)])]


@pytest.mark.parametrize("fn,cases", TRACKED, ids=[t[0].__name__ for t in TRACKED])
def test_results_match_numpy(fn, cases):
    """Results and the mutated argument, at every size with one compile."""
    compiled = kiln.qjit(fn)
    for n in SIZES:
        for args in cases:
            args = tuple(min(a, n) for a in args) if fn in (traced_bounds, write_in_a_later_loop) else args
            x = np.arange(float(n))
            expected_x, got_x = x.copy(), x.copy()
            expected, got = fn(expected_x, *args), compiled(got_x, *args)
            for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                            got if isinstance(got, tuple) else (got,)):
                np.testing.assert_array_equal(np.asarray(g), np.asarray(e), err_msg=f"size {n}, args {args}")
            np.testing.assert_array_equal(got_x, expected_x)


# --- what kiln cannot keep current: refused at trace time


def loop_carried(x, n):
    b = x.copy()
    y = x * 0
    for i in range(n):  # made:loop_carried
        y = b
    b[:1] = 100.0
    return y


def while_carried(x, n):
    b = x.copy()
    y = x * 0
    i = 0
    while i < n:  # made:while_carried
        y = b[::-1]
        i += 1
    b[:1] = 100.0
    return y


def cond_in_loop(x, n):
    b = x.copy()
    y = x * 0
    for i in range(n):  # made:cond_in_loop
        if i == 2:
            y = b
    b[:1] = 100.0
    return y


def read_in_a_later_iteration(x, n):
    b = x.copy()
    y = x * 0
    total = 0.0
    for i in range(n):  # made:read_in_a_later_iteration
        b[:1] += 1.0
        total += y.sum()
        y = b
    return total


def read_before_a_write_in_a_loop(x, p, n):
    b = x.copy()
    y = b if p > 0 else b * 2  # made:read_before_a_write_in_a_loop
    total = 0.0
    for i in range(n):
        total += y[i]
        b[i] = 0.0
    return total


REFUSED = [(loop_carried, (3,)), (while_carried, (3,)), (cond_in_loop, (5,)), (read_in_a_later_iteration, (4,)),
           (read_before_a_write_in_a_loop, (1, 3))]


@pytest.mark.parametrize("fn,args", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_what_cannot_be_kept_current_is_refused(fn, args):
    made = rf"{THIS_FILE}:{line_of('made:' + fn.__name__)}"
    with pytest.raises(ValueError, match=made + rf".*written at {THIS_FILE}:\d+.*Copy the result where it is made"):
        kiln.qjit(fn)(np.arange(5.0), *args)


def test_write_through_the_result_is_refused():
    def through_cond(x, p):
        b = x.copy()
        y = b if p > 0 else b + 1
        y[0] = -7.0
        return b, y

    def through_loop(x, n):
        y = x * 0
        for i in range(n):
            y = x[1:]
        y += 1.0
        return x

    for fn in (through_cond, through_loop):
        with pytest.raises(ValueError, match=r"on some run-time path only.*copy the result \(np.copy\)"):
            kiln.qjit(fn)(np.arange(5.0), 1)
