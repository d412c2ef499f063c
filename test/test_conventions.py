"""The conventions JAX and Catalyst users expect: static_argnums/argnames,
abstracted_axes as tuples, methods and partials, pytrees (namedtuples,
dataclasses, registered classes), f.lower(), the version, the `kiln` logger
and KILN_LOG's names."""

import collections
import dataclasses
import functools
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import kiln


# --------------------------------------------------------------------------
# static_argnums / static_argnames


def _scale(x, n, shift=0.0):
    return x * n + shift


@pytest.mark.parametrize("options", [
    {"static_argnums": 1}, {"static_argnums": (1,)}, {"static_argnums": [1, 2]}, {"static_argnums": -2},
    {"static_argnames": "n"}, {"static_argnames": ("n", "shift")}, {"static_argnums": 1, "static_argnames": "shift"},
], ids=["int", "tuple", "list", "negative", "str", "names", "both"])
def test_static_arguments_take_an_int_a_str_or_sequences(options):
    f = kiln.qjit(_scale, **options)
    x = np.arange(4.0)
    np.testing.assert_allclose(f(x, 3, 1.0), x * 3 + 1)
    np.testing.assert_allclose(f(x, 2, 1.0), x * 2 + 1)
    assert 1 in f.static_argnums
    # A static argument is baked in: a new value compiles again.
    assert f.num_compiles == 2


@pytest.mark.parametrize("options, message", [
    ({"static_argnums": 3}, r"static_argnums: _scale has no parameter at position 3 \(its parameters: x, n, "
                            r"shift\); use a position in range\(3\)"),
    ({"static_argnums": -4}, r"no parameter at position -4"),
    ({"static_argnames": "nn"}, r"static_argnames: _scale has no parameter 'nn' \(its parameters: x, n, shift\); "
                                r"did you mean 'n'\?"),
    ({"static_argnames": ("n", "shfit")}, r"no parameter 'shfit'.*did you mean 'shift'"),
])
def test_unknown_static_positions_and_names_are_rejected(options, message):
    with pytest.raises(ValueError, match=message):
        kiln.qjit(_scale, **options)


@pytest.mark.parametrize("options, message", [
    ({"static_argnums": "1"}, r"static_argnums: expected ints, got '1'"),
    ({"static_argnums": 1.0}, r"static_argnums: expected a int or a sequence of them, got float"),
    ({"static_argnames": [1]}, r"static_argnames: expected strs, got 1"),
])
def test_static_options_of_the_wrong_type_are_rejected(options, message):
    with pytest.raises(TypeError, match=message):
        kiln.qjit(_scale, **options)


# --------------------------------------------------------------------------
# abstracted_axes in Catalyst's tuple form


def test_abstracted_axes_as_tuples_of_names_share_a_dim():
    f = kiln.qjit(lambda x, y: x + y, abstracted_axes=(("n",), ("n",)))
    x = np.arange(5.0)
    np.testing.assert_allclose(f(x, x), 2 * x)
    assert f.jaxpr.pretty().splitlines()[0].count("i64[]") == 1  # one shared dim variable
    with pytest.raises(ValueError, match=r"abstracted_axes: axis 'n' has size 3 in argument 1"):
        f(x, np.arange(3.0))


def test_abstracted_axes_tuple_with_unnamed_axes_and_a_dict_entry():
    f = kiln.qjit(lambda a, b: a @ b, abstracted_axes=((None, "k"), {0: "k"}))
    a, b = np.ones((2, 3)), np.ones((3, 4))
    np.testing.assert_allclose(f(a, b), a @ b)


@pytest.mark.parametrize("axes, error, message", [
    ((("n",), ("n",), ("n",)), ValueError, r"abstracted_axes has 3 entries but the function takes 2 non-static"),
    (("n", "n"), TypeError, r"abstracted_axes: the entry for argument 0 is 'n'; give a dict"),
    (5, TypeError, r"abstracted_axes: expected a dict or a tuple with one entry per argument, got int"),
])
def test_bad_abstracted_axes_are_rejected(axes, error, message):
    f = kiln.qjit(lambda x, y: x + y, abstracted_axes=axes)
    with pytest.raises(error, match=message):
        f(np.ones(2), np.ones(2))


# --------------------------------------------------------------------------
# methods and functools.partial


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    @kiln.qjit
    def apply(self, x):
        return x * self.factor


@dataclasses.dataclass
class Affine:
    weight: np.ndarray
    bias: np.ndarray

    @kiln.qjit
    def __call__(self, x):
        return x * self.weight + self.bias


def test_qjit_on_a_method_of_a_plain_object_treats_self_as_static():
    x = np.arange(3.0)
    np.testing.assert_allclose(Scaler(2.0).apply(x), 2 * x)
    np.testing.assert_allclose(Scaler(5.0).apply(x), 5 * x)
    bound = Scaler(1.0).apply
    assert bound.num_compiles == 2 and "mul" in bound.jaxpr.pretty()
    assert Scaler.__dict__["apply"].__get__(None, Scaler) is Scaler.__dict__["apply"]


def test_qjit_on_a_method_of_a_dataclass_traces_self():
    x = np.arange(3.0)
    first = Affine(np.full(3, 2.0), np.ones(3))
    np.testing.assert_allclose(first(x), 2 * x + 1)
    np.testing.assert_allclose(Affine(np.full(5, 3.0), np.zeros(5))(np.ones(5)), np.full(5, 3.0))
    assert first.__call__.num_compiles == 1  # the fields are traced, not baked in


def test_qjit_on_functools_partial():
    def axpy(a, x, y):
        return a * x + y

    f = kiln.qjit(functools.partial(axpy, 3.0))
    x = np.arange(4.0)
    np.testing.assert_allclose(f(x, x), 4 * x)
    assert f.__name__ == "axpy"
    g = kiln.qjit(functools.partial(axpy, y=np.ones(4)), autograph=True)
    np.testing.assert_allclose(g(2.0, x), 2 * x + 1)


# --------------------------------------------------------------------------
# pytrees


Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass(frozen=True)
class Particle:
    position: np.ndarray
    velocity: np.ndarray
    label: str = dataclasses.field(default="p", metadata={"static": True})


class Interval:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


kiln.register_pytree_node(Interval, lambda iv: ((iv.lo, iv.hi), None), lambda aux, children: Interval(*children))


@kiln.register_pytree_class
class Scaled:
    def __init__(self, value, factor):
        self.value, self.factor = value, factor

    def tree_flatten(self):
        return (self.value,), self.factor

    @classmethod
    def tree_unflatten(cls, factor, children):
        return cls(children[0], factor)


def test_namedtuple_arguments_and_results_keep_their_fields():
    f = kiln.qjit(lambda p: Point(p.x + p.y, p.x * p.y))
    out = f(Point(np.arange(3.0), np.full(3, 2.0)))
    assert isinstance(out, Point)
    np.testing.assert_allclose(out.x, [2.0, 3.0, 4.0])
    np.testing.assert_allclose(out.y, [0.0, 2.0, 4.0])
    # Fields of different shapes are separate leaves, not one stacked array.
    out = f(Point(np.ones((2, 2)), np.ones(2)))
    assert out.x.shape == (2, 2)


def test_dataclass_arguments_with_a_static_field():
    step = kiln.qjit(lambda p, dt: Particle(p.position + dt * p.velocity, p.velocity, p.label + "'"))
    out = step(Particle(np.zeros(2), np.ones(2), "a"), 0.5)
    assert isinstance(out, Particle) and out.label == "a'"
    np.testing.assert_allclose(out.position, [0.5, 0.5])
    step(Particle(np.zeros(4), np.ones(4), "a"), 0.5)
    assert step.num_compiles == 1
    step(Particle(np.zeros(2), np.ones(2), "b"), 0.5)
    assert step.num_compiles == 2  # a static field is part of the signature


def test_registered_classes_are_pytrees():
    width = kiln.qjit(lambda iv: Interval(iv.lo, iv.hi - iv.lo))
    out = width(Interval(np.zeros(3), np.arange(3.0)))
    assert isinstance(out, Interval)
    np.testing.assert_allclose(out.hi, [0.0, 1.0, 2.0])
    grow = kiln.qjit(lambda s: Scaled(s.value * s.factor, s.factor))
    out = grow(Scaled(np.ones(2), 3.0))
    assert isinstance(out, Scaled) and out.factor == 3.0
    np.testing.assert_allclose(out.value, [3.0, 3.0])


def test_registering_a_builtin_container_is_refused():
    with pytest.raises(TypeError, match=r"register_pytree_node: tuple is already a pytree node"):
        kiln.register_pytree_node(tuple, lambda t: (t, None), lambda aux, c: tuple(c))


# --------------------------------------------------------------------------
# f.lower(*args)


def test_lower_traces_then_compiles_on_demand():
    f = kiln.qjit(lambda x, y: np.exp(x) + y)
    x = np.arange(3.0)
    lowered = f.lower(x, x)
    assert f.num_compiles == 0 and "exp" in lowered.as_text("jaxpr") and lowered.jaxpr is not None
    assert "stablehlo" in lowered.as_text("stablehlo")
    compiled = lowered.compile()
    assert f.num_compiles == 1 and "llvm.func" in compiled.as_text("llvm")
    np.testing.assert_allclose(compiled(np.ones(5), np.ones(5)), np.e + 1)
    f(x, x)
    assert f.num_compiles == 1  # the call reuses what lower().compile() built
    with pytest.raises(TypeError, match=r"this compiled version takes \(f64\[d0\], f64\[d1\]\), got \(i64\[d0\]"):
        compiled(np.ones(2, dtype=np.int64), np.ones(2))


def test_lower_of_an_annotated_function_is_its_ahead_of_time_compile():
    @kiln.qjit
    def f(x: kiln.ShapeDtype(("n",), "float64")):
        return x + 1.0

    lowered = f.lower(np.ones(2))
    np.testing.assert_allclose(lowered.compile()(np.ones(2)), [2.0, 2.0])
    assert "add" in lowered.as_text("jaxpr")


# --------------------------------------------------------------------------
# version


def test_version_in_python_and_on_the_command_line():
    assert kiln.__version__.count(".") >= 2
    proc = subprocess.run([sys.executable, "-c", "import sys; from kiln.cli import main; sys.exit(main())",
                           "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == f"kiln {kiln.__version__}"


# --------------------------------------------------------------------------
# logging and KILN_LOG


def test_each_compile_is_logged(caplog, monkeypatch):
    from kiln import compile_log

    monkeypatch.setattr(compile_log, "SLOW_COMPILE_SECONDS", 1e9)  # a loaded machine must not make it a warning
    # One source line for both: the cache keys on source lines (check messages name them).
    def make():
        return kiln.qjit(lambda x, n: x * n)

    f = make()
    with caplog.at_level(logging.INFO, logger="kiln"):
        f(np.ones(3), 2)
        f(np.ones(4), 3)  # same signature: no compile, no record
        make()(np.ones(3), 2)
    records = [r for r in caplog.records if r.name == "kiln"]
    assert len(records) == 2 and all(r.levelno == logging.INFO for r in records)
    assert "compiled test_each_compile_is_logged.<locals>.make.<locals>.<lambda>(f64[d0], int) in" in records[0].getMessage()
    assert "cache miss" in records[0].getMessage() or "cache hit" in records[0].getMessage()
    assert "cache hit" in records[1].getMessage() and "jaxpr" in records[1].getMessage()


def test_a_slow_compile_is_a_warning(caplog, monkeypatch):
    from kiln import compile_log

    monkeypatch.setattr(compile_log, "SLOW_COMPILE_SECONDS", 0.0)
    with caplog.at_level(logging.WARNING, logger="kiln"):
        kiln.qjit(lambda x: x - 1.0)(np.ones(2))
    [record] = [r for r in caplog.records if r.name == "kiln"]
    assert record.levelno == logging.WARNING and "f.print_stage_times()" in record.getMessage()


@pytest.mark.parametrize("seconds, stage, words", [
    ({"jaxpr": 3.0, "linalg": 0.2, "llvmir": 0.5}, "jaxpr", "a long Python loop unrolls at trace time"),
    ({"jaxpr": 0.1, "linalg": 0.2, "llvmir": 4.0}, "llvmir", "LLVM's optimizer and code generator"),
    ({"jaxpr": 0.1, "bufferized": 2.5, "llvmir": 0.4}, "bufferized", "KILN_LOG=bufferized prints"),
])
def test_a_slow_compile_names_the_stage_that_took_the_time(caplog, seconds, stage, words):
    from kiln import compile_log

    with caplog.at_level(logging.WARNING, logger="kiln"):
        compile_log.log_compile("f", (), seconds, False)
    [record] = [r for r in caplog.records if r.name == "kiln"]
    message = record.getMessage()
    assert record.levelno == logging.WARNING
    assert f"most of it in stage {stage!r}" in message and words in message
    assert "f.print_stage_times()" in message
    # A compile that traced quickly is not told about Python loops.
    assert ("unrolls at trace time" in message) == (stage == "jaxpr")


def test_a_compile_that_built_the_runtime_says_so(caplog):
    """Seconds spent building kiln's runtime code (support code, a dtype's
    sorting routines) are named in the record and do not make the compile
    "slow": the program did not cost them."""
    from kiln import compile_log

    seconds = {"jaxpr": 0.01, "linalg": 0.05, "llvmir": 6.0}
    with caplog.at_level(logging.INFO, logger="kiln"):
        compile_log.log_compile("f", (), seconds, False, toolchain_seconds=5.8)
        compile_log.log_compile("g", (), seconds, False, toolchain_seconds=0.0)
    built, slow = [r for r in caplog.records if r.name == "kiln"]
    assert built.levelno == logging.INFO
    assert "5.8 s of it built kiln's runtime code into the cache directory" in built.getMessage()
    assert slow.levelno == logging.WARNING and "runtime code" not in slow.getMessage()


def test_building_the_runtime_is_counted(monkeypatch, tmp_path):
    """A compile into an empty cache directory builds the support code, and
    `cache.toolchain_build_seconds` counts it (once: nested builds are not
    counted twice)."""
    from kiln.runtime import cache, toolchain

    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path))
    before = cache.toolchain_build_seconds()
    toolchain.support_library()  # builds the support and LAPACK objects inside
    spent = cache.toolchain_build_seconds() - before
    assert spent > 0
    again = cache.toolchain_build_seconds()
    toolchain.support_library()
    assert cache.toolchain_build_seconds() == again  # verified, not rebuilt


@pytest.mark.parametrize("wanted, message", [
    ("1", r"KILN_LOG='1': unknown name '1'; KILN_LOG takes a comma-separated list of: all; stages jaxpr, mlir"),
    ("mlir,stablhlo", r"unknown name 'stablhlo' \(did you mean 'stablehlo'\?\).*kiln passes .*kiln-lower-checks"),
])
def test_unknown_kiln_log_names_are_rejected(wanted, message, monkeypatch):
    monkeypatch.setenv("KILN_LOG", wanted)
    with pytest.raises(ValueError, match=message):
        kiln.qjit(lambda x: x + 2.0)(np.ones(2))


def test_kiln_log_accepts_stages_kiln_passes_and_default_pipeline_passes(monkeypatch, capfd):
    monkeypatch.setenv("KILN_LOG", "llvm, kiln-lower-checks,cse")
    kiln.qjit(lambda x: x + 3.0)(np.ones(2))
    err = capfd.readouterr().err
    assert "stage llvm" in err and "IR after kiln-lower-checks" in err and "IR after cse" in err
    assert os.environ["KILN_LOG"]
