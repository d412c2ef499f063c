"""Stage "jaxpr": copies and writes with NumPy's reference semantics.

In: targets (traced arrays or views of them) and values.
Out: `copy` equations now; view-tracking writes (`x[i] = v`, `x += y`,
`out=`) are recorded as effectful equations once the tensorssa lowering
is in (see docs/mutation.md); until then they raise a clear TypeError.
"""

from __future__ import annotations

from typing import Any

from kiln.core import KilnTypeError
from kiln.numpy._base import operand
from kiln.primitives import mutation
from kiln.tracing import Tracer, bind


def copy(x: Any) -> Tracer:
    """`np.copy`: a fresh array that aliases nothing."""
    from kiln.numpy._base import broadcast_to

    x = operand(x)
    if not isinstance(x, Tracer):
        x = broadcast_to(x, ())
    return bind(mutation.copy_p, x)


def _unsupported_write(what: str) -> KilnTypeError:
    return KilnTypeError(
        f"{what}: in-place writes to traced arrays are not supported by this build of kiln; "
        "write the result to a new name instead (y = x + 1)."
    )


def write_out(fn: str, result: Any, out: Any) -> Any:
    raise _unsupported_write(f"{fn}(..., out=...)")


def setitem(x: Any, idx: Any, value: Any) -> None:
    raise _unsupported_write("x[idx] = value")


def inplace(name: str, x: Any, other: Any) -> Any:
    raise _unsupported_write(f"augmented assignment ({name})")
