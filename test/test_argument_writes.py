"""Writes to arguments land in the caller's buffer in place (no copy of the
whole argument in or out) and keep NumPy's semantics: reads of the old
value, views, non-contiguous and 0-d arguments, loops and branches, a
failed check that leaves the arguments untouched, a second size without
recompiling. Compared against NumPy on copies of the same arrays."""

from __future__ import annotations

import numpy as np
import pytest

import kiln

SIZES = [0, 1, 5, 64]


def _run_both(fn, make_args):
    """fn compiled and fn in NumPy on equal copies; returns (kiln, numpy)
    results and arguments."""
    compiled = kiln.qjit(fn)
    kargs, nargs = make_args(), make_args()
    return compiled, compiled(*kargs), fn(*nargs), kargs, nargs


def _same(a, b):
    if a is None or b is None:
        assert a is None and b is None
        return
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _check(fn, make_args):
    compiled, kres, nres, kargs, nargs = _run_both(fn, make_args)
    _same(kres, nres)
    for k, n in zip(kargs, nargs):
        if isinstance(n, np.ndarray):
            _same(k, n)
    return compiled


def last_row_increment(X):
    X[-1] += 1.0


def column_through_transpose(X):
    X.T[0] = -1.0


def swap_rows(X):
    X[0] = X[1]
    X[1] = X[0]
    return X[0] * 2


def keep_old_value(X):
    y = X.copy()
    X[0] = 7.0
    return y


def view_of_argument(X):
    v = X[1:]
    X[:, 0] = 3.0
    return v.sum(axis=0)


def reverse_in_place(x):
    x[:] = x[::-1]


def broadcast_row(X, r):
    X[...] += r


def rows_in_a_loop(X):
    for i in range(X.shape[0]):
        X[i] = X[i - 1] + 1.0


def write_in_branch(X, p):
    if p > 0:
        X[0] += p
    else:
        X[-1] -= p
    return X.sum()


def write_and_return(X):
    X[0] = 1.0
    return X


# Size 0 only for the loop: the others index row or column 0/-1, an IndexError
# on an empty matrix (tested below).
@pytest.mark.parametrize("fn, n", [(fn, n) for fn in (last_row_increment, column_through_transpose, keep_old_value,
                                                      view_of_argument, rows_in_a_loop, write_and_return)
                                   for n in SIZES if n or fn is rows_in_a_loop])
def test_matrix_writes_match_numpy(fn, n):
    rng = np.random.default_rng(n)
    base = rng.random((n, n + 2))
    _check(fn, lambda: (base.copy(),))


@pytest.mark.parametrize("layout", ["strided", "transposed", "reversed", "fortran"])
def test_non_contiguous_arguments_receive_the_writes(layout):
    rng = np.random.default_rng(1)
    base = rng.random((7, 10))

    def make():
        b = base.copy()
        return {"strided": b[:, ::2], "transposed": b.T, "reversed": b[::-1],
                "fortran": np.asfortranarray(b)}[layout]

    for fn in (last_row_increment, column_through_transpose, swap_rows, keep_old_value):
        kx, nx = make(), make()
        kres, nres = kiln.qjit(fn)(kx), fn(nx)
        _same(kres, nres)
        _same(kx, nx)
        # The write reaches the base of a view argument too.
        if kx.base is not None:
            _same(kx.base, nx.base)


@pytest.mark.parametrize("n", SIZES)
def test_reads_of_the_old_value(n):
    _check(reverse_in_place, lambda: (np.arange(float(n)),))
    if n >= 2:
        _check(swap_rows, lambda: (np.arange(float(n * 3)).reshape(n, 3),))


@pytest.mark.parametrize("n", [1, 6])
def test_broadcast_and_branches(n):
    _check(broadcast_row, lambda: (np.arange(float(n * 4)).reshape(n, 4), np.arange(4.0)))
    for p in (2.0, -3.0):
        _check(write_in_branch, lambda: (np.ones((n, 3)), p))


def test_zero_d_argument_receives_the_write():
    def bump(x):
        x += 1
        return x * 2

    _check(bump, lambda: (np.array(3.0),))


def test_second_size_does_not_recompile_and_writes_in_place():
    f = kiln.qjit(last_row_increment)
    x = np.zeros((4, 3))
    f(x)
    y = np.zeros((9, 2))
    f(y)
    assert len(f.cache) == 1
    np.testing.assert_array_equal(x[-1], 1.0)
    np.testing.assert_array_equal(y[-1], 1.0)
    np.testing.assert_array_equal(y[:-1], 0.0)
    # The written argument is updated in place: bufferization may write it,
    # and the library returns nothing for it.
    linalg = f.stage("linalg")
    assert "bufferization.writable = true" in linalg
    assert "kiln.written_argument" in linalg
    assert "kiln.written_argument" not in f.stage("bufferized")


def test_a_check_after_a_write_keeps_the_arguments_untouched():
    def f(x, y, i):
        x[:] = 5.0
        y[0] = 7.0
        y[i] = 1.0

    compiled = kiln.qjit(f)
    x, y = np.zeros(3), np.zeros(4)
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        compiled(x, y, 10)
    np.testing.assert_array_equal(x, 0.0)
    np.testing.assert_array_equal(y, 0.0)
    # Such a function is not updated in place (its arguments stay read-only
    # to bufferization; the final values are stored at the return).
    assert "bufferization.writable = true" not in compiled.stage("linalg")
    compiled(x, y, -1)
    np.testing.assert_array_equal(x, 5.0)
    np.testing.assert_array_equal(y, [7.0, 0.0, 0.0, 1.0])


def test_empty_matrix_write_raises_and_leaves_it_untouched():
    f = kiln.qjit(last_row_increment)
    x = np.zeros((0, 3))
    with pytest.raises(IndexError):
        f(x)


def test_same_array_twice_is_refused():
    def add_in_place(x, y):
        x += y

    f = kiln.qjit(add_in_place)
    a = np.arange(4.0)
    with pytest.raises(ValueError, match="overlaps argument 1"):
        f(a, a)
    np.testing.assert_array_equal(a, np.arange(4.0))


def test_python_call_path_copies_back_copied_arguments(monkeypatch):
    """Without the C hot path a non-contiguous or 0-d written argument is
    passed as a copy and copied back after the call."""
    f = kiln.qjit(last_row_increment)
    x = np.zeros((5, 8))[:, ::2]
    f(x)
    entry = next(iter(f.cache.values()))
    monkeypatch.setattr(entry.executable, "_caller", None)
    y = np.zeros((5, 8))[:, ::2]
    f(y)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(y[-1], 1.0)


def test_a_pipeline_without_the_store_pass_is_refused():
    from kiln.compiler.pipeline import DEFAULT_PIPELINE

    mine = [(stage, [p for p in passes if p != "kiln-store-written-arguments"]) for stage, passes in DEFAULT_PIPELINE]
    f = kiln.qjit(last_row_increment, pipelines=mine)
    with pytest.raises(ValueError, match="must be followed by kiln-store-written-arguments"):
        f(np.zeros((2, 2)))
