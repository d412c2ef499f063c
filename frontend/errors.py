"""Every error class kiln raises on purpose, in one leaf module.

In: nothing (imports no other kiln module, so every layer may import it;
NumPy only for `numpy.linalg.LinAlgError`).
Out: `KilnError` and its subclasses; each also subclasses the natural Python
exception (a shape error is a `ValueError`, an index error an `IndexError`).
"""

from __future__ import annotations

from numpy.linalg import LinAlgError


class KilnError(Exception):
    """Base class of every error kiln raises on purpose."""


class KilnInternalError(KilnError, AssertionError):
    """A broken internal invariant: this is a bug in kiln, please report it."""

    def __init__(self, message: str):
        super().__init__(f"internal error (this is a bug in kiln): {message}")


class KilnTypeError(KilnError, TypeError):
    """A Python construct or value kiln cannot trace."""


class KilnValueError(KilnError, ValueError):
    """Shapes, sizes or values that break a rule."""


class KilnAttributeError(KilnError, AttributeError):
    """An attribute NumPy arrays have that kiln's traced arrays do not."""


class KilnIndexError(KilnError, IndexError):
    """An index out of bounds."""


class KilnOverflowError(KilnError, OverflowError):
    """A Python int that does not fit the integer dtype it must take."""


class KilnUnboundLocalError(KilnError, UnboundLocalError):
    """A variable read where Python would have no value for it (the target
    of a loop that ran zero times)."""


class KilnLinAlgError(KilnError, LinAlgError):
    """A linear-algebra failure NumPy reports as `numpy.linalg.LinAlgError`
    (a `ValueError`): a matrix that is not positive definite."""


class KilnZeroDivisionError(KilnError, ZeroDivisionError):
    """A division NumPy refuses with ZeroDivisionError (np.average's weights summing to zero)."""


class ToolchainError(KilnError, RuntimeError):
    """The system C compiler is missing or failed."""


# The errors a run-time check raises, by the `kind` the `check` primitive and
# the `kiln.check` op name them with; a kind's position + 1 is its code in
# the failure record of runtime/support.c.
CHECK_ERRORS = {"ValueError": KilnValueError, "IndexError": KilnIndexError, "OverflowError": KilnOverflowError,
                "UnboundLocalError": KilnUnboundLocalError, "LinAlgError": KilnLinAlgError,
                "ZeroDivisionError": KilnZeroDivisionError, "TypeError": KilnTypeError}
# The warnings a run-time check emits instead (the call goes on; the runtime
# warns once per call and message after it returns, as a NumPy ufunc does).
CHECK_WARNINGS = {"RuntimeWarning": RuntimeWarning}
