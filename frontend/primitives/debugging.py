"""Stage "jaxpr": printing traced values when the compiled code runs.

`debug_print` takes any number of arrays (any rank, dtype and dims) and the
static `format`: Python `str.format` text whose fields are numbered, one
operand each (`"x = {0}, n = {1:d}"`; `kiln.debug_print` numbers them and
renders its untraced arguments into the text). Effectful: never removed,
merged or reordered, so prints come out in program order, once per
iteration inside loops.
"""

from __future__ import annotations

from kiln.core import Primitive

debug_print_p = Primitive("debug_print", multiple_results=True, effectful=True)


@debug_print_p.def_abstract_eval
def _debug_print_rule(*values, format):
    return []


PRIMITIVES = [debug_print_p]


# --------------------------------------------------------------------------
# Interpreter rule (kiln.interpreter): print the text compiled code prints.

from kiln.interpreter import interpret_rule  # noqa: E402
from kiln.runtime.debug_print import print_formatted  # noqa: E402


@interpret_rule(debug_print_p)
def _debug_print_value(*values, format):
    print_formatted(format, values)
    return []
