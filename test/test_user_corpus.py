"""The user-program corpus (issue 14, acceptance 2): every program of test/corpus, unchanged,
under plain `kiln.qjit`, against NumPy at sizes 0, 1, odd and large (results and every
mutated argument). One test id per program and size; one `qjit` object per program serves
all its sizes."""

import functools

import pytest

import kiln
from corpus import PROGRAMS, SIZES, Program, run_both


@functools.cache
def _compiled(name: str):
    return kiln.qjit(_BY_NAME[name].function)


_BY_NAME = {program.name: program for program in PROGRAMS}


def _cases():
    for program in PROGRAMS:
        for label in SIZES:
            yield pytest.param(program, label, id=f"{program.name}-{label}")


def test_corpus_is_large_and_broad():
    assert len(PROGRAMS) >= 40
    assert len({program.name.partition(".")[0] for program in PROGRAMS}) >= 10
    assert len(_BY_NAME) == len(PROGRAMS)


@pytest.mark.parametrize("program, label", list(_cases()))
def test_user_program(program: Program, label: str):
    run_both(program, _compiled(program.name), label)
