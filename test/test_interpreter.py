"""`kiln.interpret` called directly: the call surfaces of a qjit function
(annotations, static arguments, plain functions) reach the reference
interpreter with the same signatures a compiled call gets."""

import numpy as np
import pytest

import kiln

VEC = kiln.ShapeDtype(("n",), "float64")


def scale_first(x: VEC, k: int):
    x[0] = x[0] * k
    return x.sum()


def test_annotated_function_runs_and_writes_back():
    compiled, interpreted = np.arange(4.0), np.arange(4.0)
    expected = kiln.qjit(scale_first)(compiled, 3)
    assert kiln.interpret(kiln.qjit(scale_first))(interpreted, 3) == expected
    np.testing.assert_array_equal(interpreted, compiled)


def test_annotated_function_refuses_what_the_annotation_refuses():
    with pytest.raises(TypeError):
        kiln.interpret(kiln.qjit(scale_first))(np.arange(4, dtype=np.int32), 3)


def test_static_arguments_and_plain_functions():
    def power(x, p):
        return x ** p

    f = kiln.interpret(kiln.qjit(power, static_argnames="p"))
    np.testing.assert_allclose(f(np.arange(5.0), 3), np.arange(5.0) ** 3)
    g = kiln.interpret(power)
    np.testing.assert_allclose(g(np.arange(5.0), 2.0), np.arange(5.0) ** 2.0)


def test_one_trace_serves_every_size():
    f = kiln.interpret(kiln.qjit(lambda x: np.cumsum(x * 2.0)))
    for n in (0, 7, 1000):
        np.testing.assert_allclose(f(np.arange(float(n))), np.cumsum(np.arange(float(n)) * 2.0))
    assert len(f.traces) == 1
