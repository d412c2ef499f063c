"""Stage "jaxpr": run-time checks.

`check` takes a bool scalar (true when all is well) and up to two i64 scalars
to report; when the predicate is false at run time the compiled function sets
its status and the runtime raises `kind` (ValueError, IndexError,
OverflowError, UnboundLocalError, LinAlgError, ZeroDivisionError or TypeError:
`kiln.errors.CHECK_ERRORS`) with
`message.format(*values)`; a warning kind (`CHECK_WARNINGS`: RuntimeWarning)
warns instead, once per call, and the call goes on.
"""

from __future__ import annotations

import warnings

import numpy as np

from kiln.core import KilnInternalError, Primitive
from kiln.errors import CHECK_ERRORS, CHECK_WARNINGS

check_p = Primitive("check", multiple_results=True, effectful=True)

CHECK_KINDS = tuple(CHECK_ERRORS) + tuple(CHECK_WARNINGS)


@check_p.def_abstract_eval
def _check_rule(pred, *values, kind, message):
    if pred.aval.shape != () or pred.aval.dtype != np.bool_:
        raise KilnInternalError(f"check: predicate must be a bool scalar, got {pred.aval}")
    if kind not in CHECK_KINDS or len(values) > 2:
        raise KilnInternalError(f"check: bad kind {kind!r} or too many values")
    return []


PRIMITIVES = [check_p]


# --------------------------------------------------------------------------
# Interpreter rule (kiln.interpreter): raise what the compiled check raises.

from kiln.interpreter import check_failure, interpret_rule  # noqa: E402


@interpret_rule(check_p)
def _check_value(pred, *values, kind, message):
    if not pred:
        if kind in CHECK_WARNINGS:
            warnings.warn(message.format(*values), CHECK_WARNINGS[kind], stacklevel=2)
            return []
        raise check_failure(kind, message, values)
    return []
