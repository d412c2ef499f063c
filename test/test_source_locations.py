"""Source locations end to end: a failed run-time check names the user's
file and line (also from an exported library, which holds its messages
itself), the jaxpr prints each equation's line on request, and every op the
lowering emits for an equation carries the user's `file:line:col`.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import kiln
from kiln.compiler.lowering import lower_jaxpr_to_module
from kiln.compiler.mlir import ir, source_position
from kiln.dialects import new_context

HERE = os.path.basename(__file__)


def line_of(marker: str) -> int:
    """The line of this file that ends with the comment `# <marker>`."""
    with open(__file__) as f:
        for number, text in enumerate(f, start=1):
            if text.rstrip().endswith(f"# {marker}") and "line_of(" not in text:
                return number
    raise AssertionError(f"no line marked {marker!r}")


@kiln.qjit
def add_then_index(x, y, i):
    total = x + y  # shape-mismatch
    return total[i]  # index-out-of-bounds


def test_shape_mismatch_names_the_users_line():
    with pytest.raises(ValueError, match=re.escape(f"{HERE}:{line_of('shape-mismatch')})")) as info:
        add_then_index(np.ones(3), np.ones(4), 0)
    assert "operands could not be broadcast together with shapes (?,) (?,) (axis -1: sizes 3 and 4)" in str(info.value)


def test_out_of_bounds_index_names_the_users_line():
    with pytest.raises(IndexError, match=re.escape(f"{HERE}:{line_of('index-out-of-bounds')})")) as info:
        add_then_index(np.ones(3), np.ones(3), 5)
    assert "index 5 is out of bounds for axis 0 with size 3" in str(info.value)


def test_interpreter_names_the_same_line_as_compiled_code():
    """kiln.interpret raises the compiled call's error, message and location included."""
    messages = []
    for run in (add_then_index, kiln.interpret(add_then_index)):
        with pytest.raises(IndexError) as info:
            run(np.ones(3), np.ones(3), 5)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[1].endswith(f"{HERE}:{line_of('index-out-of-bounds')})")


def test_same_body_on_another_line_reports_its_own_line():
    """The compile cache keys on locations: an identical function defined
    elsewhere must not reuse a library whose messages name other lines."""

    @kiln.qjit
    def add_then_index(x, y, i):
        total = x + y  # shape-mismatch-again
        return total[i]

    with pytest.raises(ValueError, match=re.escape(f"{HERE}:{line_of('shape-mismatch-again')})")):
        add_then_index(np.ones(3), np.ones(4), 0)


VEC = kiln.ShapeDtype(("n",), "float64")


def pick(x: VEC, i: int):
    return x[i] * 2.0  # exported-index


def test_exported_library_carries_its_messages(tmp_path):
    kiln.export(pick, str(tmp_path))
    assert "checks" not in open(tmp_path / "pick.kiln.json").read()
    f = kiln.load(str(tmp_path))
    assert f(np.arange(3.0), 1) == 2.0
    with pytest.raises(IndexError, match=re.escape(f"index 7 is out of bounds for axis 0 with size 3 (at ") +
                       f".*{re.escape(HERE)}:{line_of('exported-index')}\\)"):
        f(np.arange(3.0), 7)


def test_jaxpr_prints_source_lines_on_request():
    add_then_index(np.ones(2), np.ones(2), 0)
    jaxpr = add_then_index.jaxpr
    assert HERE not in jaxpr.pretty()
    with_lines = jaxpr.pretty(source_info=True)
    assert re.search(rf"= add \w+ \w+  # {re.escape(HERE)}:{line_of('shape-mismatch')}$", with_lines, re.M)
    assert f"# {HERE}:{line_of('index-out-of-bounds')}" in with_lines


@kiln.qjit
def total_through_numpy(x):
    return np.sum(x)  # numpy-dispatch


def test_numpy_dispatch_frames_are_not_the_users_line():
    """`np.sum` runs NumPy's Python dispatch code before kiln's: the
    recorded line is still the caller's."""
    total_through_numpy(np.ones(3))
    (eqn,) = [e for e in total_through_numpy.jaxpr.eqns if e.primitive.name == "reduce_sum"]
    assert (eqn.source_info.filename, eqn.source_info.line) == (__file__, line_of("numpy-dispatch"))


def test_every_equation_op_carries_the_users_location():
    add_then_index(np.ones(2), np.ones(2), 0)
    lines = {line_of("shape-mismatch"), line_of("index-out-of-bounds")}
    # The stage text is printed without locations: lower the jaxpr again.
    ctx = new_context()
    module = lower_jaxpr_to_module(add_then_index.jaxpr, "f", ctx)
    positions = []

    def visit(op):
        if op.name not in ("builtin.module", "func.func", "func.return"):
            positions.append((op.name, source_position(op.location)))
        return ir.WalkResult.ADVANCE

    with ctx:
        module.operation.walk(visit)
    assert positions
    for name, position in positions:
        assert position is not None and position[0] == __file__ and position[1] in lines, (name, position)
        assert position[2] > 0, (name, position)
