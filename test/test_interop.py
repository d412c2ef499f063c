"""Arrays from other libraries as arguments: memmaps, jax arrays, objects
with only `__dlpack__`; each takes the fast path (one signature, no
re-keying) and gives the ndarray result."""

import numpy as np
import pytest

import kiln


@kiln.qjit
def add_scaled(x, y):
    return x + 2.0 * y


class DLPackOnly:
    """An array from a library NumPy does not know: DLPack and nothing else."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, **kwargs):
        return self._arr.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def _jax_array(arr):
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # keep float64 (jax's default would make float32)
    try:
        return jax.numpy.asarray(arr)
    finally:
        jax.config.update("jax_enable_x64", previous)


def _memmap(arr, tmp_path):
    mm = np.memmap(tmp_path / f"{id(arr)}-{len(list(tmp_path.iterdir()))}.bin", dtype=arr.dtype, mode="w+", shape=arr.shape)
    mm[:] = arr
    return mm


@pytest.mark.parametrize("kind", ["memmap", "jax", "dlpack"])
def test_foreign_arrays_match_the_ndarray_result_on_the_fast_path(kind, tmp_path):
    x = np.arange(12.0).reshape(3, 4)
    y = np.linspace(0.0, 1.0, 12).reshape(3, 4)
    wrap = {"memmap": lambda a: _memmap(a, tmp_path), "jax": _jax_array, "dlpack": DLPackOnly}[kind]
    expected = x + 2.0 * y
    np.testing.assert_allclose(add_scaled(wrap(x), wrap(y)), expected)
    compiles = add_scaled.num_compiles
    np.testing.assert_allclose(add_scaled(wrap(x), wrap(y)), expected)
    np.testing.assert_allclose(add_scaled(x, y), expected)
    assert add_scaled.num_compiles == compiles
    assert add_scaled._fast_key((wrap(x), wrap(y)))[0] == add_scaled._fast_key((x, y))[0]


def test_foreign_arrays_inside_pytrees_take_the_fast_path():
    @kiln.qjit
    def total(pair):
        return pair[0] + pair[1]

    x = np.ones(5)
    key, leaves = total._fast_key(((DLPackOnly(x), x),))
    assert key is not None and all(type(leaf) is np.ndarray for leaf in leaves)
    np.testing.assert_allclose(total((DLPackOnly(x), x)), 2 * x)


class OffTheCPU(DLPackOnly):
    """A DLPack array NumPy cannot view (as a GPU tensor is)."""

    def __dlpack__(self, **kwargs):
        raise BufferError("the array lives on device cuda:0")


def test_a_dlpack_array_numpy_cannot_view_is_refused_with_the_fix():
    with pytest.raises(kiln.KilnTypeError, match="cannot view the OffTheCPU through DLPack.*cuda:0.*CPU memory"):
        add_scaled(OffTheCPU(np.ones(3)), np.ones(3))


def test_a_function_writing_its_argument_writes_through_a_memmap(tmp_path):
    @kiln.qjit
    def bump(x):
        x[0] = 7.0

    mm = _memmap(np.zeros(4), tmp_path)
    bump(mm)
    assert mm[0] == 7.0
