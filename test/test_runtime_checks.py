"""Run-time checks: dims that must agree and indices that must be in bounds
are checked in the compiled code and raise ValueError / IndexError with a
message naming the operation and the sizes; the caller's arrays are left
untouched. `qjit(runtime_checks=False)` leaves the checks out.
"""

from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln import numpy as knp


def _frozen(*arrays: np.ndarray) -> list[np.ndarray]:
    """Copies to compare the caller's arrays against after a failed call."""
    return [a.copy() for a in arrays]


def _untouched(arrays: tuple, before: list) -> None:
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------
# Dims that must agree (ValueError)


@kiln.qjit
def add(x, y):
    return x + y


@kiln.qjit
def matmul(a, b):
    return a @ b


@kiln.qjit
def reshape_like(x, y):
    return x.reshape(y.shape[0], 2)


@kiln.qjit
def broadcast_like(x, y):
    return np.broadcast_to(x, y.shape)


@kiln.qjit
def concatenate_rows(x, y):
    return np.concatenate([x, y], axis=0)


@kiln.qjit
def dot(x, y):
    return np.dot(x, y)


@kiln.qjit
def stack(x, y):
    return np.stack([x, y])


@kiln.qjit
def assign_all(x, v):
    x[:] = v


DIM_CASES = [
    (add, (np.ones(3), np.ones(4)), r"add: operands could not be broadcast together with shapes \(\?,\) \(\?,\) \(axis -1: sizes [34] and [34]\)"),
    (add, (np.ones((2, 3)), np.ones((5, 3))), r"add: .*\(axis -2: sizes [25] and [25]\)"),
    (matmul, (np.ones((2, 3)), np.ones((4, 2))), r"matmul: inner dimensions do not match \(3 vs 4\)"),
    (reshape_like, (np.ones(6), np.ones(4)), r"reshape: cannot reshape an array of size 6 into a shape of size 8"),
    (broadcast_like, (np.ones(3), np.ones((2, 4))), r"broadcast_to: could not broadcast shape \(\?,\) to \(\?,\?\) \(axis 0: size 3 vs 4\)"),
    (concatenate_rows, (np.ones((2, 3)), np.ones((2, 4))),
     r"concatenate: sizes along dimension 1 differ \([34] vs [34]\)"),
    (dot, (np.ones(3), np.ones(4)), r"dot: inner dimensions do not match \(3 vs 4\)"),
    (stack, (np.ones(3), np.ones(4)), r"stack: all input arrays must have the same shape \(axis 0: sizes [34] and [34]\)"),
    (assign_all, (np.ones(3), np.ones(4)),
     r"x\[idx\] = value: could not broadcast shape \(\?,\) to \(\?,\) \(axis 0: size 4 vs 3\)"),
]


@pytest.mark.parametrize("fn, args, message", DIM_CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(DIM_CASES)])
def test_dims_that_must_agree(fn, args, message):
    before = _frozen(*args)
    with pytest.raises(ValueError, match=message):
        fn(*args)
    _untouched(args, before)


def test_unit_dims_need_no_check():
    """Adding or dropping dims of size 1 keeps the element count: no check."""

    @kiln.qjit
    def outer_sum(x):
        return x[None, :] + np.expand_dims(x, 1)

    x = np.arange(3.0)
    np.testing.assert_array_equal(outer_sum(x), x[None, :] + x[:, None])
    assert "check[" not in str(outer_sum.jaxpr)
    dot(x, x)
    assert str(dot.jaxpr).count("check[") == 1


def test_agreeing_dims_still_run():
    x, y = np.arange(6.0), np.arange(3.0)
    np.testing.assert_array_equal(add(x, x), x + x)
    np.testing.assert_array_equal(matmul(x.reshape(2, 3), x.reshape(3, 2)), x.reshape(2, 3) @ x.reshape(3, 2))
    np.testing.assert_array_equal(reshape_like(x, y), x.reshape(3, 2))
    np.testing.assert_array_equal(broadcast_like(y, np.ones((2, 3))), np.broadcast_to(y, (2, 3)))
    np.testing.assert_array_equal(concatenate_rows(x.reshape(2, 3), y.reshape(1, 3)),
                                  np.concatenate([x.reshape(2, 3), y.reshape(1, 3)]))


# --------------------------------------------------------------------------
# Indices (IndexError)


@kiln.qjit
def element(x, i):
    return x[i]


@kiln.qjit
def window(x, i, j):
    return x[i:j]


@kiln.qjit
def gather(x, idx):
    return x[idx]


@kiln.qjit
def scatter(x, idx, v):
    x[idx] = v


@kiln.qjit
def set_element(x, i, v):
    x[i] = v


@pytest.mark.parametrize("i", [3, -4, 100])
def test_scalar_index_out_of_bounds(i):
    x = np.arange(3.0)
    with pytest.raises(IndexError, match=rf"index {i} is out of bounds for axis 0 with size 3"):
        element(x, i)
    assert element(x, -3) == 0.0 and element(x, 2) == 2.0


@pytest.mark.parametrize("i, j", [(-100, 100), (10, 20), (2, -1), (-2, 1), (0, 0)])
def test_traced_slices_clamp_as_numpy(i, j):
    x = np.arange(5.0)
    np.testing.assert_array_equal(window(x, i, j), x[i:j])


@pytest.mark.parametrize("idx", [[0, 5], [-6, 1], [2, 9, 1]])
def test_gather_out_of_bounds(idx):
    x = np.arange(5.0)
    before = _frozen(x)
    with pytest.raises(IndexError, match=r"x\[idx\]: an index array has an entry out of bounds for axis 0 "
                                         r"with size 5"):
        gather(x, np.array(idx))
    _untouched((x,), before)
    np.testing.assert_array_equal(gather(x, np.array([4, -5, 0])), x[[4, -5, 0]])


def test_scatter_out_of_bounds_leaves_the_array_alone():
    x = np.arange(5.0)
    before = _frozen(x)
    with pytest.raises(IndexError, match=r"x\[idx\] = value: an index array has an entry out of bounds "
                                         r"for axis 0 with size 5"):
        scatter(x, np.array([1, 7]), 9.0)
    _untouched((x,), before)
    scatter(x, np.array([1, -1]), 9.0)
    np.testing.assert_array_equal(x, [0.0, 9.0, 2.0, 3.0, 9.0])


def test_scalar_write_out_of_bounds_leaves_the_array_alone():
    x = np.arange(4.0)
    before = _frozen(x)
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for axis 0 with size 4"):
        set_element(x, 4, 1.0)
    _untouched((x,), before)


# --------------------------------------------------------------------------
# Loops


@kiln.qjit
def count(n, step):
    @kiln.for_loop(0, n, step)
    def loop(i, acc):
        return acc + 1

    return loop(0)


@kiln.qjit
def update_rows(x, rows):
    @kiln.for_loop(0, rows.shape[0], 1)
    def loop(i):
        x[rows[i]] = x[rows[i]] + i

    loop()


def test_for_loop_step_zero():
    with pytest.raises(ValueError, match=r"for_loop: step must not be zero"):
        count(5, 0)
    assert count(5, 2) == 3 and count(5, -1) == 0


def test_index_out_of_bounds_inside_a_loop():
    """Row 0 is written before row 3 fails: the caller still sees no write."""
    x = np.ones((3, 2))
    before = _frozen(x)
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 0 with size 3"):
        update_rows(x, np.array([0, 3]))
    _untouched((x,), before)
    update_rows(x, np.array([1, 1, -1]))
    np.testing.assert_array_equal(x, [[1, 1], [2, 2], [3, 3]])


# --------------------------------------------------------------------------
# qjit(runtime_checks=False)


@pytest.mark.compiled_only
def test_runtime_checks_off_emits_no_checks():
    unchecked_gather = kiln.qjit(gather.fn, runtime_checks=False)
    unchecked_loop = kiln.qjit(update_rows.fn, runtime_checks=False)
    x, idx = np.arange(5.0), np.array([4, -5, 0])
    np.testing.assert_array_equal(unchecked_gather(x, idx), x[idx])
    rows = np.zeros((3, 2))
    unchecked_loop(rows, np.array([1, 1, -1]))
    np.testing.assert_array_equal(rows, [[0, 0], [1, 1], [2, 2]])
    for f in (unchecked_gather, unchecked_loop):
        assert "check" not in str(f.jaxpr)
        assert "kiln.check" not in f.mlir and "kiln_check_failed" not in f.stage("linalg")
    gather(x, idx)
    assert "check" in str(gather.jaxpr) and "kiln.check" in gather.mlir


def test_runtime_checks_off_keeps_trace_time_errors():
    @kiln.qjit(runtime_checks=False)
    def add_fixed(x):
        return x.reshape(2, 2) + knp.ones((2, 3))

    with pytest.raises(ValueError, match=r"add: operands could not be broadcast together with shapes \(2,2\) "
                                         r"\(2,3\)"):
        add_fixed(np.ones(4))
