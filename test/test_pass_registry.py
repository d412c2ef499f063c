"""The pass registry against the files: every pass module registers one pass
named after it, with a lit test, documented typed options, and a docstring
whose stage and position match DEFAULT_PIPELINE."""

from __future__ import annotations

import importlib.util
import pkgutil
import re
import sys
from pathlib import Path

import pytest

import kiln.compiler.passes as passes_package
from kiln.compiler.passes import load_all, parse_pass_spec, pass_options
from kiln.compiler.pipeline import DEFAULT_PIPELINE

LIT_PASSES = Path(__file__).parent / "lit" / "passes"
PASS_MODULES = sorted(m.name for m in pkgutil.iter_modules(passes_package.__path__) if not m.name.startswith("_"))
PASSES = load_all()
# `(stage "bufferized", after kiln-expand-exp)` on a pass module's first line.
_POSITION = re.compile(r'\(stage "(?P<stage>[\w-]+)"(?:, (?P<where>[^;)]*))?')


def _pass_names(specs: list[str]) -> list[str]:
    return [spec.partition("{")[0] for spec in specs]


@pytest.mark.parametrize("module", PASS_MODULES)
def test_each_pass_module_registers_one_pass_named_after_it(module):
    registered = [name for name, cls in PASSES.items() if cls.__module__.rsplit(".", 1)[-1] == module]
    assert registered == [module.replace("_", "-")], (
        f"compiler/passes/{module}.py must register exactly one pass, "
        f"`{module.replace('_', '-')}` (with @register_pass); it registers {registered}")


@pytest.mark.parametrize("name", sorted(PASSES))
def test_each_pass_has_a_lit_test(name):
    assert (LIT_PASSES / f"{name}.mlir").is_file(), f"pass {name} has no lit test test/lit/passes/{name}.mlir"


@pytest.mark.parametrize("stage, spec", [(stage, spec) for stage, specs in DEFAULT_PIPELINE for spec in specs
                                         if spec.startswith("kiln-")])
def test_default_pipeline_kiln_passes_exist_and_parse(stage, spec):
    parsed = parse_pass_spec(spec)
    assert parsed.kiln_pass is not None, f"stage {stage!r} names {spec!r}, which is not a registered kiln pass"


@pytest.mark.parametrize("name", sorted(PASSES))
def test_options_have_docs_and_typed_defaults(name):
    cls = PASSES[name]
    assert cls.__doc__ and cls.__doc__.strip(), f"pass {name} has no description (class docstring)"
    for opt in pass_options(cls).values():
        assert opt.doc.strip(), f"pass {name} option {opt.spelling} has no doc"
        assert type(opt.default) is opt.type, (
            f"pass {name} option {opt.spelling}: default {opt.default!r} is not a {opt.type.__name__}")
        # The default, spelled out, parses back to itself.
        configured = parse_pass_spec(f"{name}{{{opt.spelling}={opt.default_text}}}").kiln_pass
        assert getattr(configured, opt.field_name) == opt.default


@pytest.mark.parametrize("name", sorted(PASSES))
def test_docstring_stage_and_position_hold(name):
    module_doc = sys.modules[PASSES[name].__module__].__doc__
    first_line = module_doc.strip().splitlines()[0]
    claim = _POSITION.search(first_line)
    assert claim, f"{name}: the module docstring opens without `(stage \"...\")`: {first_line!r}"
    stage = claim.group("stage")
    stages = {s: _pass_names(specs) for s, specs in DEFAULT_PIPELINE}
    if name not in [n for names in stages.values() for n in names]:
        return  # not in the default pipeline: the stage says where it fits
    assert name in stages.get(stage, []), f"{name}: docstring says stage {stage!r}, the pipeline runs it elsewhere"
    order = stages[stage]
    where = (claim.group("where") or "").strip()
    if where == "first":
        assert order[0] == name, f"{name}: docstring says first in {stage!r}, the stage starts with {order[0]}"
    elif where == "last":
        assert order[-1] == name, f"{name}: docstring says last in {stage!r}, the stage ends with {order[-1]}"
    elif where.split(" ", 1)[0] in ("before", "after") and where.split(" ", 1)[1] in order:
        word, other = where.split(" ", 1)
        mine, theirs = order.index(name), order.index(other)
        assert (mine < theirs) if word == "before" else (mine > theirs), (
            f"{name}: docstring says {where!r}, but the {stage!r} stage runs {' '.join(order)}")


def test_passes_md_is_generated_from_the_registry():
    script = Path(__file__).parent.parent / "cmake-free-scripts" / "gen_pass_docs.py"
    spec = importlib.util.spec_from_file_location("gen_pass_docs", script)
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    written = (Path(__file__).parent.parent / "docs" / "passes.md").read_text()
    assert written == generator.render(), "docs/passes.md is stale: run python cmake-free-scripts/gen_pass_docs.py"
