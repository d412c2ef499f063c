"""`np.lib.stride_tricks.as_strided` on traced arrays (kiln/numpy/array_attributes.py):
NumPy's values for windows, reversed and broadcast strides at several sizes
without recompiling; clear errors where kiln cannot follow NumPy (writes
through the result, offsets outside the array, non-contiguous input,
strides that split an element). The NumPy list has its cases too
(test/numpy_list/cases_misc.py)."""

from __future__ import annotations

import numpy as np
import pytest

import kiln
from kiln.errors import KilnError

as_strided = np.lib.stride_tricks.as_strided


def windows(a):
    (step,) = a.strides
    return as_strided(a, shape=(a.shape[0] - 2, 3), strides=(step, step))


def repeated_rows(a):
    return as_strided(a, shape=(4, a.shape[0]), strides=(0, a.strides[0]))


def backwards(a):
    return as_strided(a[-1:], shape=(a.shape[0],), strides=(-a.itemsize,))


def int_columns(a):
    return as_strided(a, shape=(a.shape[1], a.shape[0]), strides=(a.strides[1], a.strides[0]), writeable=False)


@pytest.mark.parametrize("fn, make", [
    (windows, lambda n: np.random.default_rng(n).random(n + 2)),
    (repeated_rows, lambda n: np.random.default_rng(n).random(n)),
    (int_columns, lambda n: np.arange(3 * n, dtype=np.int32).reshape(n, 3)),
])
def test_values_at_every_size_without_recompiling(fn, make):
    compiled = kiln.qjit(fn)
    for n in (0, 1, 7):
        a = make(n)
        expected = fn(a.copy())
        result = compiled(a)
        assert result.dtype == expected.dtype and result.shape == expected.shape
        np.testing.assert_array_equal(result, expected)
    compiles = compiled.num_compiles
    np.testing.assert_array_equal(compiled(make(40)), fn(make(40)))
    assert compiled.num_compiles == compiles


def test_negative_stride_from_the_last_element_reaches_before_the_view():
    # NumPy reads the base array before the one-element view; kiln refuses the offsets outside x.
    with pytest.raises(ValueError, match="reach outside x"):
        kiln.qjit(backwards)(np.arange(4.0))


def test_offsets_past_the_end_raise_a_value_error():
    def past_end(a):
        return as_strided(a, shape=(a.shape[0], 2), strides=(8, 8))

    with pytest.raises(ValueError, match="reach outside x .*keep every offset inside x"):
        kiln.qjit(past_end)(np.ones(4))


def test_negative_size_raises_as_numpy_does():
    def shrink(a):
        return as_strided(a, shape=(a.shape[0] - 1, 2), strides=(8, 8))

    with pytest.raises(ValueError, match="negative dimensions"):
        shrink(np.ones(0))
    with pytest.raises(ValueError, match="negative dimensions"):
        kiln.qjit(shrink)(np.ones(0))


def test_write_through_the_result_is_refused():
    def write(a):
        view = as_strided(a, shape=(2,), strides=(8,))
        view[0] = 1.0
        return a

    with pytest.raises(KilnError, match="as_strided.*copy where NumPy gives a view.*write to x itself"):
        kiln.qjit(write)(np.zeros(4))


def test_non_contiguous_input_and_split_elements_are_refused():
    def every_other(a):
        return as_strided(a[::2], shape=(2,), strides=(8,))

    def half_element(a):
        return as_strided(a, shape=(2,), strides=(4,))

    with pytest.raises(ValueError, match="C-contiguous arrays only.*np.ascontiguousarray"):
        kiln.qjit(every_other)(np.zeros(6))
    with pytest.raises(ValueError, match="not a multiple of the itemsize"):
        kiln.qjit(half_element)(np.zeros(6))
