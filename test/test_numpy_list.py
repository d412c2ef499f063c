"""The NumPy list (issue 15): every case of test/numpy_list/cases_*.py,
compiled by `kiln.qjit`, against NumPy.

One test id per case (`numpy.sort`, then `numpy.sort#2` for its second
case, ...). A supported case runs at each of its sizes on fresh arguments:
results and the arguments after the call (what the function mutated) must
equal NumPy's, dtypes included; a size at which NumPy raises must make kiln
raise the same exception class. Then `second_size` runs once more and must
not compile again. A refused case must raise a clear kiln error (a
`KilnError`, not an internal one). The last test checks that docs/numpy.md's
table is the one the cases give.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln.errors import KilnError, KilnInternalError

_SCRIPT = Path(__file__).resolve().parent.parent / "cmake-free-scripts" / "gen_numpy_table.py"
_spec = importlib.util.spec_from_file_location("gen_numpy_table", _SCRIPT)
generator = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generator)

CASES = generator.load_numpy_list().all_cases()
from test.numpy_list.compare import assert_same, numpy_answer  # noqa: E402 - the package is registered above


def _ids(cases) -> list[str]:
    seen: dict[str, int] = {}
    ids = []
    for case in cases:
        seen[case.name] = seen.get(case.name, 0) + 1
        ids.append(case.name if seen[case.name] == 1 else f"{case.name}#{seen[case.name]}")
    return ids


IDS = _ids(CASES)
def _run_size(case, compiled, n: int, rng: np.random.Generator) -> None:
    args = case.make_args(n, rng)
    assert isinstance(args, tuple), f"{case.name}: make_args must return a tuple"
    numpy_args, kiln_args = copy.deepcopy(args), copy.deepcopy(args)
    expected, error = numpy_answer(case, numpy_args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if error is not None:
            with pytest.raises(type(error)):
                compiled(*kiln_args)
            return
        result = compiled(*kiln_args)
    assert_same(result, expected, case.rtol, case.atol, f"{case.name} at size {n}: result")
    assert_same(kiln_args, numpy_args, case.rtol, case.atol, f"{case.name} at size {n}: arguments after the call")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case(case):
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    compiled = kiln.qjit(case.fn)
    if case.refused:
        args = case.make_args(case.sizes[-1], rng)
        with pytest.raises(KilnError) as caught:
            compiled(*args)
        assert not isinstance(caught.value, KilnInternalError), f"{case.name}: internal error {caught.value}"
        return
    for n in case.sizes:
        _run_size(case, compiled, n, rng)
    compiles = compiled.num_compiles
    _run_size(case, compiled, case.second_size, rng)
    assert compiled.num_compiles == compiles, (
        f"{case.name}: size {case.second_size} compiled again ({compiles} -> {compiled.num_compiles} compiles)")


def test_case_names_are_consistent():
    """A case says it is on Numba's page exactly when its name is there."""
    generator.load_numpy_list()
    page = set(importlib.import_module("test.numpy_list.numba_page").page_names())
    wrong = [c.name for c in CASES if c.on_numba_page != (c.name in page)]
    assert not wrong, f"on_numba_page disagrees with test/numpy_list/numba_page.py for: {sorted(set(wrong))}"


def test_numpy_md_table_is_generated_from_the_cases():
    written = generator.DOC.read_text()
    assert written == generator.render(written), (
        "docs/numpy.md's NumPy-list table is stale: run python cmake-free-scripts/gen_numpy_table.py")
