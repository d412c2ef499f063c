"""One entry of the NumPy list (issue 15): a function as a user writes it,
the arguments it runs on at each size, and kiln's status for it.

In: nothing but NumPy. Out: `Case`, the type every `cases_<family>.py`
module of this package builds its `CASES` list from; test/test_numpy_list.py
runs each case compiled against NumPy, and cmake-free-scripts/gen_numpy_table.py
turns the statuses into the table of docs/numpy.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

SUPPORTED = "supported"
REFUSED = "refused: "


@dataclass(frozen=True)
class Case:
    """`fn(*make_args(n, rng))` compiled by `kiln.qjit` agrees with NumPy.

    - `name`: the entry as the table shows it ("numpy.sort", "ndarray.argsort",
      "numpy.linalg.qr", "numpy.random.Generator.normal"); several cases may
      share a name (forms, dtypes), the table has one row per name.
    - `fn`: a plain function, as a user writes it; NumPy's answer is `fn` run
      on NumPy arrays, kiln's is `kiln.qjit(fn)` on copies of the same arguments.
    - `make_args(n, rng)`: the arguments at size `n` (a tuple); fresh arrays
      each call, since `fn` may write into them.
    - `sizes`: every size is compared (results, mutated arguments, dtypes);
      then `second_size` runs once more and must not compile again.
    - `rtol` / `atol`: for float and complex results (float32 and complex64
      results get at least float32's rtol, 1e-5).
    - `status`: "supported", or "refused: <reason>" when kiln raises a clear
      error instead (the runner checks that it does).
    - `note`: a short remark for the table (a limit, a form not covered).
    - `reference`: when set, NumPy's answer is `reference` run on the NumPy
      arguments instead of `fn`: for a form whose NumPy result is wrong on
      this machine (a NumPy bug), the computation NumPy documents for it.

    >>> Case("numpy.sort", lambda a: np.sort(a), lambda n, rng: (rng.random(n),), "sorting", True)
    """

    name: str
    fn: Callable[..., Any]
    make_args: Callable[[int, np.random.Generator], tuple]
    family: str
    on_numba_page: bool
    sizes: tuple[int, ...] = (0, 1, 5, 17)
    second_size: int = 33
    rtol: float = 1e-12
    atol: float = 0.0
    status: str = SUPPORTED
    note: str = ""
    reference: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        if self.status != SUPPORTED and not (self.status.startswith(REFUSED) and self.status[len(REFUSED):].strip()):
            raise ValueError(f"Case {self.name!r}: status must be 'supported' or 'refused: <reason>', "
                             f"not {self.status!r}")
        if not self.sizes:
            raise ValueError(f"Case {self.name!r}: sizes is empty; give at least one size")

    @property
    def refused(self) -> bool:
        return self.status.startswith(REFUSED)

    @property
    def reason(self) -> str:
        """Why kiln refuses it ('' when supported)."""
        return self.status[len(REFUSED):].strip() if self.refused else ""
