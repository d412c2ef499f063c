"""Errors that tell the truth (issue 14 item 9): NumPy's wording for in-place
broadcasting, the real name of a function reached through another library, the
unsupported keyword by name, and static_argnames for strings."""

import re

import numpy as np
import pytest
import scipy.special

import kiln
import kiln.numpy as knp
from kiln.errors import KilnTypeError, KilnValueError


def numpys_error(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return str(info.value)


def add_in_place(x, y):
    x += y
    return x


@pytest.mark.parametrize("x_shape, y_shape", [((3,), (2, 3)), ((3,), (1, 3))])
def test_in_place_broadcast_to_a_larger_shape_says_what_numpy_says(x_shape, y_shape):
    numpy_message = numpys_error(add_in_place, np.ones(x_shape), np.ones(y_shape))
    f = kiln.qjit(add_in_place)
    with pytest.raises(KilnValueError, match=r"non-broadcastable output operand with shape \(.*\) doesn't match "
                                             r"the broadcast shape \(.*\)"):
        f(np.ones(x_shape), np.ones(y_shape))
    assert numpy_message.startswith("non-broadcastable output operand")


def test_in_place_broadcast_names_the_static_shapes_as_numpy():
    def f(x, np=np):
        t = np.zeros(3)
        t += np.ones((2, 3))
        return x

    expected = numpys_error(f, 1.0)
    with pytest.raises(KilnValueError, match=re.escape(expected)):
        kiln.qjit(lambda x: f(x, knp))(1.0)


def test_ufunc_out_broadcast_to_a_larger_shape_is_refused():
    def f(x, y):
        np.multiply(x, y, out=x)
        return x

    with pytest.raises(KilnValueError, match=r"np\.multiply\(\.\.\., out=\.\.\.\): non-broadcastable output"):
        kiln.qjit(f)(np.ones(3), np.ones((4, 3)))


def test_in_place_broadcast_to_the_same_shape_still_works():
    x = np.ones((4, 3))
    kiln.qjit(add_in_place)(x, np.arange(3.0))
    np.testing.assert_array_equal(x, np.ones((4, 3)) + np.arange(3.0))


def test_a_scipy_ufunc_is_named_as_scipy_names_it():
    with pytest.raises(KilnTypeError, match=r"^scipy\.special\.expit is not supported by kiln on traced values"):
        kiln.qjit(lambda x: scipy.special.expit(x))(np.ones(3))


def test_a_numpy_function_reached_inside_scipy_names_the_scipy_caller():
    with pytest.raises(KilnTypeError, match=r"np\.\w+ \(called by scipy\.special\.logsumexp\) is not supported"):
        kiln.qjit(lambda x: scipy.special.logsumexp(x))(np.ones(3))


def test_an_unsupported_numpy_function_called_directly_names_no_caller():
    with pytest.raises(KilnTypeError, match=r"^np\.lexsort is not supported"):
        kiln.qjit(lambda x: np.lexsort((x,)))(np.ones(3))


@pytest.mark.parametrize("call, message", [
    (lambda x, m: np.sum(x, where=m), r"np\.sum: keyword argument 'where' is not supported by kiln on traced values "
                                      r"\(supported: axis, dtype, keepdims\)"),
    (lambda x, m: x.sum(where=m), r"x\.sum: keyword argument 'where' is not supported"),
    (lambda x, m: np.mean(x, where=m), r"np\.mean: keyword argument 'where' is not supported"),
    (lambda x, m: np.exp(x, where=m), r"np\.exp: keyword argument 'where' is not supported"),
    (lambda x, m: np.cumsum(x, axis=0, out=x), r"np\.cumsum: keyword argument 'out' is not supported"),
])
def test_unsupported_keywords_are_named(call, message):
    with pytest.raises(KilnTypeError, match=message):
        kiln.qjit(call)(np.ones(3), np.ones(3) > 0)


def test_a_keyword_numpy_does_not_have_either_is_pythons_error():
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'wehre'"):
        kiln.qjit(lambda x: x.sum(wehre=x > 0))(np.ones(3))


def test_a_string_argument_suggests_static_argnames():
    def f(x, mode):
        return x if mode == "same" else -x

    with pytest.raises(KilnTypeError, match=r"argument 'mode' is a str \('same'\).*static_argnames=\('mode',\)"):
        kiln.qjit(f)(np.ones(3), "same")
    g = kiln.qjit(f, static_argnames=("mode",))
    np.testing.assert_array_equal(g(np.ones(3), "same"), np.ones(3))
    np.testing.assert_array_equal(g(np.ones(3), "flip"), -np.ones(3))


def test_an_object_argument_suggests_static_argnames():
    class Settings:
        pass

    with pytest.raises(KilnTypeError, match=r"dtype object is not supported.*static_argnames"):
        kiln.qjit(lambda x, s: x)(np.ones(3), Settings())
