"""The NumPy list (issue 15): every function of Numba's "Supported NumPy
features" page and the issue's additions, each with cases run against NumPy.

In: the family modules `cases_<family>.py` of this package, each exposing
`CASES` (a list of `case.Case`), and `numba_page.py` (the names).
Out: `all_cases()`, every case of every family module, for
test/test_numpy_list.py (one test id per case) and
cmake-free-scripts/gen_numpy_table.py (the table of docs/numpy.md).

Case modules import `from test.numpy_list.case import Case`; the runner and
the generator load this package under that name (the standard library's own
`test` package would otherwise shadow it), see `gen_numpy_table.load_numpy_list`.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from .case import Case


def case_modules() -> list[str]:
    """The family modules, `cases_<family>`, sorted by name."""
    return sorted(path.stem for path in Path(__file__).parent.glob("cases_*.py"))


def all_cases() -> list[Case]:
    """Every case of every family module, in module order."""
    cases: list[Case] = []
    for stem in case_modules():
        module = importlib.import_module(f"{__name__}.{stem}")
        found = getattr(module, "CASES", None)
        if not isinstance(found, list) or not all(isinstance(c, Case) for c in found):
            raise TypeError(f"test/numpy_list/{stem}.py must define CASES, a list of Case objects")
        cases.extend(found)
    return cases
