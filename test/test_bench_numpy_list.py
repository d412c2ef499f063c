"""The harness of cmake-free-scripts/bench_numpy_list.py (the NumPy list
under kiln, Numba and JAX) classifies a few known cases as it should:
ok, wrong (a value where NumPy raises), error (a refused feature), and
JAX's rule for arguments written in place. The whole list is the script's
job, never the test suite's.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("jax")

_SCRIPT = Path(__file__).resolve().parent.parent / "cmake-free-scripts" / "bench_numpy_list.py"
_spec = importlib.util.spec_from_file_location("bench_numpy_list", _SCRIPT)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
_CASES, _IDS = bench._load_cases()   # registers the package test.numpy_list

from test.numpy_list.case import Case  # noqa: E402 - registered just above

pytestmark = pytest.mark.peers


def _vec(n, rng):
    return (rng.uniform(-1, 1, n),)


def _cos_plus_one(a):
    return np.cos(a) + 1.0


def _add_in_place_and_return(a):
    a += 1.0
    return a


def _add_in_place_and_sum(a):
    a += 1.0
    return a.sum()


def _gather_out_of_bounds(a):
    return a[np.array([0, a.shape[0] + 1])]


def _stable_sort(a):
    return np.sort(a, kind="heapsort")


def _case(fn, sizes=(0, 3)):
    return Case(f"test.{fn.__name__}", fn, _vec, "test", False, sizes=sizes, second_size=4)


@pytest.mark.parametrize("tool", ["numba", "jax"])
def test_ok(tool):
    assert bench.run_case(_case(_cos_plus_one), tool) == ("ok", "")


def test_in_place_write_that_is_returned():
    assert bench.run_case(_case(_add_in_place_and_return), "numba") == ("ok", "")
    assert bench.run_case(_case(_add_in_place_and_return), "jax") == ("ok", "")


def test_in_place_write_not_returned_is_an_error_for_jax_only():
    assert bench.run_case(_case(_add_in_place_and_sum), "numba") == ("ok", "")
    verdict, detail = bench.run_case(_case(_add_in_place_and_sum), "jax")
    assert verdict == "error" and "writes into argument 0" in detail


@pytest.mark.parametrize("tool", ["numba", "jax"])
def test_value_where_numpy_raises_is_wrong(tool):
    verdict, detail = bench.run_case(_case(_gather_out_of_bounds, sizes=(2,)), tool)
    assert verdict == "wrong" and "where NumPy raises IndexError" in detail


@pytest.mark.parametrize("tool", ["numba", "jax"])
def test_refused_feature_is_an_error(tool):
    verdict, detail = bench.run_case(_case(_stable_sort), tool)
    assert verdict == "error" and detail.startswith("size 0: ")


def test_jax_version_swaps_numpy_in_globals_and_closures():
    import jax.numpy as jnp
    u = np.cos

    def captured(a):
        return u(a) + np.sin(a)

    rebuilt = bench.jax_version_of(captured)
    assert rebuilt.__globals__["np"] is jnp
    assert rebuilt.__closure__[0].cell_contents is jnp.cos
    assert captured.__globals__["np"] is np       # the original is untouched


def test_report_lists_wrong_results_and_cases_kiln_misses():
    first, second = _IDS[0], _IDS[1]
    results = {"kiln": {first: {"verdict": "error", "detail": "refused", "seconds": 1.0},
                        second: {"verdict": "ok", "detail": "", "seconds": 1.0}},
               "numba": {first: {"verdict": "ok", "detail": "", "seconds": 1.0},
                         second: {"verdict": "wrong", "detail": "size 0: result differs", "seconds": 1.0}}}
    block = bench.render_block(results)
    assert block.startswith(bench.BEGIN) and block.endswith(bench.END)
    assert f"| `{first}` | numba | error: refused |" in block
    assert f"| `{second}` | size 0: result differs |" in block
    assert "| **total** |" in block
