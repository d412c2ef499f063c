"""Compiled functions pickle: by reference when importable, by value
otherwise (optionally with their libraries), with pickle, cloudpickle and
multiprocessing under fork, spawn and forkserver; `kiln.load`ed functions
travel as their library bytes."""

import multiprocessing
import pickle

import cloudpickle
import numpy as np
import pytest

import kiln
from kiln import pickling


@kiln.qjit
def importable_saxpy(a, x, y):
    return a * x + y


def _local_function(pickle_libraries=False):
    @kiln.qjit(pickle_libraries=pickle_libraries)
    def local_softplus(x):
        return np.log(1.0 + np.exp(x))

    return local_softplus


def _call_and_count(f, x):
    """Runs in the worker: the result and how often the worker compiled."""
    return f(x), f.num_compiles


def _softplus(x):
    return np.log(1.0 + np.exp(x))


def test_an_importable_function_pickles_by_reference_even_before_its_first_call():
    data = pickle.dumps(importable_saxpy)
    assert b"importable_saxpy" in data and len(data) < 200
    assert pickle.loads(data) is importable_saxpy
    assert cloudpickle.loads(cloudpickle.dumps(importable_saxpy)) is importable_saxpy


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_a_local_function_pickles_by_value(dumps):
    f = _local_function()
    x = np.linspace(-2.0, 2.0, 7)
    copy = pickle.loads(dumps(f))
    assert copy is not f and copy.num_compiles == 0
    np.testing.assert_allclose(copy(x), _softplus(x))
    assert copy.num_compiles == 1
    # Copies of one function in one process are one function.
    assert pickle.loads(dumps(f)) is copy


def test_libraries_travel_with_the_function_when_asked():
    f = _local_function(pickle_libraries=True)
    x = np.linspace(-1.0, 1.0, 5)
    f(x)
    f(x.astype(np.float32))
    copy = pickle.loads(pickle.dumps(f))
    np.testing.assert_allclose(copy(np.arange(9.0)), _softplus(np.arange(9.0)))
    np.testing.assert_allclose(copy(x.astype(np.float32)), _softplus(x.astype(np.float32)), rtol=1e-6)
    assert copy.num_compiles == 0 and len(copy.cache) == 2
    assert "log" in copy.stage("jaxpr")
    with pytest.raises(ValueError, match=r"came with the pickled function.*f.stage\('jaxpr'\) has its text"):
        copy.jaxpr


def test_options_travel_with_the_function():
    f = kiln.qjit(lambda x, n: x * n, static_argnames="n", runtime_checks=False)
    copy = pickle.loads(pickle.dumps(f))
    assert copy.static_argnums == {1} and copy.runtime_checks is False
    np.testing.assert_allclose(copy(np.ones(2), 4), [4.0, 4.0])


def test_without_cloudpickle_a_local_function_cannot_travel(monkeypatch):
    monkeypatch.setattr(pickling, "_cloudpickle", lambda: None)
    with pytest.raises(pickle.PicklingError, match=r"kiln.qjit .*local_softplus: cannot pickle the Python function "
                                                   r"by value .*install cloudpickle, or define the function at "
                                                   r"the top level"):
        pickle.dumps(_local_function())


def test_a_loaded_function_pickles_as_its_library(tmp_path):
    @kiln.qjit
    def saxpy(a: float, x: kiln.ShapeDtype(("n",), "float64"), y: kiln.ShapeDtype(("n",), "float64")):
        return a * x + y

    kiln.export(saxpy, str(tmp_path / "out"))
    loaded = kiln.load(str(tmp_path / "out"))
    copy = pickle.loads(pickle.dumps(loaded))
    assert copy.directory != loaded.directory
    np.testing.assert_allclose(copy(2.0, np.ones(3), np.arange(3.0)), [2.0, 3.0, 4.0])


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_multiprocessing_pool(method):
    context = multiprocessing.get_context(method)
    x = np.linspace(-3.0, 3.0, 11)
    traveling = _local_function(pickle_libraries=True)
    traveling(x)
    by_value = _local_function()
    with context.Pool(1) as pool:
        by_reference = pool.starmap(importable_saxpy, [(2.0, x, x), (1.0, x[:3], x[:3])])
        results = pool.starmap(_call_and_count, [(traveling, x), (by_value, x)])
    (out_traveling, compiles_traveling), (out_by_value, compiles_by_value) = results
    np.testing.assert_allclose(out_traveling, _softplus(x))
    np.testing.assert_allclose(out_by_value, _softplus(x))
    assert compiles_traveling == 0  # it brought its library
    assert compiles_by_value == 1
    np.testing.assert_allclose(by_reference[0], 3 * x)
    np.testing.assert_allclose(by_reference[1], 2 * x[:3])
