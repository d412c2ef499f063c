"""qjit options: ahead-of-time compilation from annotations, static arguments, abstracted_axes."""

import numpy as np
import pytest

import kiln
from kiln import numpy as knp


def test_annotated_function_compiles_at_decoration():
    @kiln.qjit
    def f(sz: int):
        a = knp.ones(sz)
        return a + a * sz

    assert f.num_compiles == 1  # before any call
    assert "f64[a]" in str(f.jaxpr)
    for n in (0, 3, 10):
        np.testing.assert_array_equal(f(n), np.full(n, n + 1.0))
    assert f.num_compiles == 1


def test_shape_dtype_annotations_name_shared_dims():
    @kiln.qjit
    def g(x: kiln.ShapeDtype(("n", 3), "float64"), y: kiln.ShapeDtype(("n", 3), "float64")):
        return x * 2.0 + y

    text = str(g.jaxpr)
    assert "b:f64[a,3] c:f64[a,3]" in text
    x, y = np.random.rand(5, 3), np.random.rand(5, 3)
    np.testing.assert_allclose(g(x, y), x * 2 + y)
    with pytest.raises(ValueError, match="axis 1 must have size 3"):
        g(np.ones((4, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="dim of the same name has size 4"):
        g(np.ones((4, 3)), np.ones((5, 3)))
    with pytest.raises(TypeError, match="expected a float64 array of rank 2"):
        g(np.ones((4, 3), np.float32), np.ones((4, 3)))
    assert g.num_compiles == 1


def test_unannotated_functions_stay_just_in_time():
    @kiln.qjit
    def h(x, n: int):
        return x * n

    assert h.num_compiles == 0
    np.testing.assert_array_equal(h(np.arange(3.0), 2), np.arange(3.0) * 2)


def test_static_argnums_recompile_per_value():
    @kiln.qjit(static_argnums=(1,))
    def power(x, k):
        out = x
        for _ in range(k - 1):
            out = out * x
        return out

    x = np.arange(4.0)
    np.testing.assert_array_equal(power(x, 3), x ** 3)
    np.testing.assert_array_equal(power(np.arange(7.0), 3), np.arange(7.0) ** 3)
    assert power.num_compiles == 1
    np.testing.assert_array_equal(power(x, 2), x ** 2)
    assert power.num_compiles == 2


def test_abstracted_axes_share_one_dim_and_check_sizes():
    @kiln.qjit(abstracted_axes=({0: "n"}, {0: "n"}))
    def add(x, y):
        return x + y

    np.testing.assert_array_equal(add(np.ones(4), np.ones(4)), np.full(4, 2.0))
    assert "check" not in str(add.jaxpr)
    with pytest.raises(ValueError, match="axis 'n' has size 5 in argument 1"):
        add(np.ones(4), np.ones(5))


def test_share_equal_dims_option():
    @kiln.qjit(share_equal_dims=True)
    def add(x, y):
        return x + y

    add(np.ones(3), np.ones(3))
    assert "check" not in str(add.jaxpr)
    add(np.ones(3), np.ones(4)[:3])
    assert add.num_compiles == 1


def test_keyword_only_and_variadic_parameters():
    @kiln.qjit
    def scaled(x, *, scale=2.0):
        return x * scale

    np.testing.assert_array_equal(scaled(np.ones(3)), np.full(3, 2.0))
    np.testing.assert_array_equal(scaled(np.ones(3), scale=3.0), np.full(3, 3.0))

    @kiln.qjit
    def total(*xs):
        return xs[0] + xs[1]

    np.testing.assert_array_equal(total(np.ones(2), np.ones(2)), np.full(2, 2.0))
