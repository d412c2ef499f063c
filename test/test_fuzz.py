"""Differential fuzzing, bounded: random kiln programs (test/fuzz/program_gen.py,
and user-shaped ones: test/fuzz/user_programs.py) run by kiln and by NumPy
must agree, or both raise (kiln with a ValueError, IndexError or TypeError).
Derandomized, a fixed number of examples; the long run is
cmake-free-scripts/fuzz_long.py."""

import os

from hypothesis import HealthCheck, given, note, settings

from fuzz.program_gen import program_cases, run_case
from fuzz.user_programs import user_program_cases

EXAMPLES = int(os.environ.get("KILN_FUZZ_EXAMPLES", "80"))
USER_EXAMPLES = int(os.environ.get("KILN_FUZZ_USER_EXAMPLES", "15"))


@settings(derandomize=True, max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=list(HealthCheck), print_blob=False)
@given(program_cases())
def test_kiln_agrees_with_numpy(case):
    program, inputs = case
    note(program.source)
    note(repr(inputs))
    outcome = run_case(program, inputs)
    assert outcome.status != "failure", f"\n{program.source}\n{outcome.detail}"


@settings(derandomize=True, max_examples=USER_EXAMPLES, deadline=None, database=None,
          suppress_health_check=list(HealthCheck), print_blob=False)
@given(user_program_cases())
def test_user_shaped_programs_agree_with_numpy(case):
    """Programs written as users write them (loops over range, while with
    break, helpers, views made before a loop): NumPy, the interpreter and
    compiled code agree."""
    program, inputs = case
    note(program.source)
    note(repr(inputs))
    outcome = run_case(program, inputs)
    assert outcome.status != "failure", f"\n{program.source}\n{outcome.detail}"
