"""The user-program corpus (issue 14, acceptance 2): NumPy programs from many fields, written
the way practitioners write them, each with an input builder per size.

In: the field modules of this package (each a `PROGRAMS` list). Out: `PROGRAMS`, every program
with its name, and `run_both`, which runs one under NumPy and under a compiled version and
compares results and every argument the program mutates (test/test_user_corpus.py).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

# The sizes every program runs at: empty, one element, an odd size, and a large one
# (`Program.large` overrides the last where the NumPy reference would be slow).
SIZES = {"0": 0, "1": 1, "odd": 7, "large": 96}


@dataclass(frozen=True)
class Program:
    """A function as a user wrote it and `inputs(n, rng)`, its arguments at size n."""

    function: Callable
    inputs: Callable[[int, np.random.Generator], tuple]
    large: int = SIZES["large"]
    rtol: float = 1e-9
    atol: float = 1e-12

    @property
    def name(self) -> str:
        return f"{self.function.__module__.rpartition('.')[2]}.{self.function.__name__}"

    def size(self, label: str) -> int:
        return self.large if label == "large" else SIZES[label]

    def arguments(self, label: str) -> tuple:
        seed = sum(map(ord, self.name + label))
        return self.inputs(self.size(label), np.random.default_rng(seed))


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def _outcome(function: Callable, arguments: tuple) -> tuple[Any, BaseException | None]:
    try:
        return function(*arguments), None
    except Exception as error:  # the program's own error is part of its behaviour
        return None, error


def run_numpy(program: Program, arguments: tuple) -> tuple[Any, BaseException | None]:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _outcome(program.function, arguments)


def assert_same_value(got: Any, expected: Any, program: Program, where: str) -> None:
    """`got` (kiln) equals `expected` (NumPy): same structure, shape and dtype kind, values
    within the program's tolerance (NaN equals NaN)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), \
            f"{where}: kiln returned {type(got).__name__} {got!r}, NumPy {expected!r}"
        for k, (g, e) in enumerate(zip(got, expected)):
            assert_same_value(g, e, program, f"{where}[{k}]")
        return
    if expected is None:
        assert got is None, f"{where}: kiln returned {got!r}, NumPy None"
        return
    expected_array, got_array = np.asarray(expected), np.asarray(got)
    assert got_array.shape == expected_array.shape, \
        f"{where}: kiln shape {got_array.shape}, NumPy {expected_array.shape}"
    if isinstance(expected, (np.ndarray, np.generic)):
        assert got_array.dtype == expected_array.dtype, \
            f"{where}: kiln dtype {got_array.dtype}, NumPy {expected_array.dtype}"
    else:  # a Python number: kiln gives the NumPy scalar of its kind
        assert _kind(got_array.dtype) == _kind(expected_array.dtype), \
            f"{where}: kiln dtype {got_array.dtype}, NumPy {type(expected).__name__}"
    np.testing.assert_allclose(got_array, expected_array, rtol=program.rtol, atol=program.atol,
                               equal_nan=True, err_msg=where)


def _kind(dtype: np.dtype) -> str:
    return "i" if dtype.kind in "iu" else dtype.kind


def run_both(program: Program, compiled: Callable, label: str) -> None:
    """Run `program` at size `label` under NumPy and `compiled`; compare results, mutated
    arguments, or the exception NumPy raises (kiln must raise the same kind)."""
    arguments = program.arguments(label)
    numpy_arguments = tuple(map(_copy, arguments))
    kiln_arguments = tuple(map(_copy, arguments))
    expected, numpy_error = run_numpy(program, numpy_arguments)
    if numpy_error is not None:
        try:
            compiled(*kiln_arguments)
        except type(numpy_error):
            return
        raise AssertionError(f"NumPy raises {type(numpy_error).__name__}: {numpy_error}; kiln does not")
    got = compiled(*kiln_arguments)
    assert_same_value(got, expected, program, "result")
    for k, (g, e) in enumerate(zip(kiln_arguments, numpy_arguments)):
        if isinstance(e, np.ndarray):
            assert_same_value(g, e, program, f"argument {k}")


def _collect() -> list[Program]:
    from corpus import (astronomy, audio, bioinformatics, chemistry, control, dynamic_programming, ecology,
                        epidemiology, finance, geometry, geoscience, graphics, graphs, image,
                        machine_learning, operations_research, optimization, physics, quality_control,
                        signal_processing, simulation, statistics)
    from corpus import (genomics, hydrology, neuroscience, pharmacokinetics, power_systems, queueing,
                        robotics, sports)
    from corpus import acoustics, climate, linguistics, materials, portfolio, seismology, traffic
    from corpus import agriculture, coding_theory, logistics, oceanography, reliability, sports_physiology, survey
    fields = (signal_processing, image, statistics, simulation, graphs, optimization,
              dynamic_programming, bioinformatics, geoscience, audio, graphics, finance, physics,
              machine_learning, control, epidemiology, astronomy, chemistry, operations_research, geometry,
              ecology, quality_control, robotics, pharmacokinetics, power_systems, neuroscience, genomics,
              sports, hydrology, queueing, portfolio, acoustics, climate, materials, linguistics,
              traffic, seismology, reliability, coding_theory, oceanography,
              logistics, survey, agriculture, sports_physiology)
    return [program for field in fields for program in field.PROGRAMS]


PROGRAMS = _collect()
