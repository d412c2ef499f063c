"""The stage contract (`kiln.compiler.pipeline.STAGE_DIALECTS`): over a
corpus of programs with run-time checks, scans, prints, erf, loops, branches and writes,
every stage's module holds ops of its allowed dialects only; the `stablehlo`
stage holds func, StableHLO and `kiln` ops and no `custom_call`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special

import kiln
from kiln.compiler.mlir import ir
from kiln.dialects import new_context
from kiln.compiler.pipeline import STAGE_DIALECTS


def checks_and_gathers(x, y, i, j):
    z = (x + y).reshape(-1, 2)
    return z[i, j], x[i:j].sum(), np.take(x, np.array([1, 0]))


def scans(x, u):
    return (np.cumsum(x, axis=0), np.cumprod(x, axis=1), np.cumsum(u), np.maximum.accumulate(u),
            np.minimum.accumulate(x[::-1], axis=1))


def loops_and_branches(x, n):
    total = 0.0
    for i in range(n):
        if x[i] > 0:
            total += x[i]
        else:
            total -= 1.0
    while total > 10.0:
        total = total / 2
    return total


def writes(b, v):
    for i in range(b.shape[0]):
        b[i] = b[i] + 1
    b[:, 1:] = v
    b[::-1, 0] += 2.0
    c = b.T
    c[0] = 5.0
    b[np.array([0, 1])] = 3.0
    return b


def nested_writes_with_checks(a, k):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] = a[i, j] * 2 + a[k, 0]
    return a.reshape(-1)


def linear_algebra(a, b):
    return a @ b, np.argmax(a, axis=0), np.concatenate([a, a]), np.where(a > 0, a, -a)


def prints_in_loops(b, n):
    for i in range(n):
        b[i % b.shape[0]] += 1.0
        print("b =", b, i)
    kiln.debug_print("{} {}", b.astype(np.complex64), b > 1)
    return b


def boolean_masks(x, z):
    z[z > 0] = z[z > 0] * 2.0
    return x[x > 0].sum(), np.nonzero(x)


def random_numbers(rng, n):
    x = rng.normal(size=n)
    rng.shuffle(x)
    return x + np.random.rand(n)


def error_functions(x, z):
    # erf in a function that writes: kiln.elementwise passes through functionalization.
    z[0] = math.erf(z[1])
    return scipy.special.erf(x), scipy.special.erfc(x.astype(np.float32))


CORPUS = [
    (checks_and_gathers, (np.ones(8), np.ones(8), 1, 1)),
    (scans, (np.ones((3, 4)), np.arange(5, dtype=np.uint32))),
    (loops_and_branches, (np.arange(5.0) - 2, 5)),
    (writes, (np.ones((4, 3)), np.zeros((4, 2)))),
    (nested_writes_with_checks, (np.ones((3, 2)), 1)),
    (linear_algebra, (np.ones((3, 3)), np.ones((3, 2)))),
    (prints_in_loops, (np.ones((3, 2)), 4)),
    (boolean_masks, (np.ones((3, 2)), np.arange(4.0) - 1)),
    (random_numbers, (np.random.default_rng(0), 5)),
    (error_functions, (np.ones((3, 2)), np.arange(4.0) - 1)),
]


def _op_names(text: str) -> set[str]:
    names = set()

    def visit(op):
        names.add(op.name)
        return ir.WalkResult.ADVANCE

    with new_context():
        ir.Module.parse(text).operation.walk(visit)
    return names


@pytest.fixture(scope="module")
def stages():
    compiled = {}
    for fn, args in CORPUS:
        f = kiln.qjit(fn, autograph=True)
        f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        compiled[fn.__name__] = {stage: _op_names(f.stage(stage)) for stage in STAGE_DIALECTS}
    return compiled


@pytest.mark.parametrize("stage", list(STAGE_DIALECTS))
def test_stage_holds_only_its_dialects(stages, stage):
    for name, by_stage in stages.items():
        stray = {op for op in by_stage[stage] if op.split(".")[0] not in STAGE_DIALECTS[stage]}
        assert not stray, f"stage {stage!r} of {name} holds ops outside its contract: {sorted(stray)}"


def test_stablehlo_stage_has_no_string_protocols_or_reference_ops(stages):
    for name, by_stage in stages.items():
        ops = by_stage["stablehlo"]
        assert "stablehlo.custom_call" not in ops, name
        assert not {op for op in ops if op.startswith(("tensorssa.", "immut."))}, name


def test_corpus_covers_the_kiln_dialect_and_views(stages):
    """The corpus exercises what the contract is about: kiln ops in the
    `stablehlo` stage and reference-semantics ops before it."""
    seen = {stage: set().union(*(s[stage] for s in stages.values())) for stage in ("mlir", "functionalized", "stablehlo")}
    assert {"kiln.check", "kiln.scan", "kiln.print", "kiln.flatnonzero", "kiln.random", "kiln.elementwise"} <= seen["stablehlo"]
    assert {"tensorssa.slice", "tensorssa.copy", "tensorssa.scatter"} <= seen["mlir"]
    assert {"immut.slice", "immut.slice_rev"} <= seen["functionalized"]
    assert {"stablehlo.while", "stablehlo.case"} & seen["stablehlo"]


def test_stage_texts_made_on_demand_are_the_compiled_ones(tmp_path, monkeypatch, seed_toolchain):
    """A compile keeps no stage texts unless asked (`keep_intermediate`);
    the first stage asked for makes them all again from the jaxpr, and they
    are the texts of a compile that kept them, stage by stage."""
    import shutil

    monkeypatch.setenv("KILN_CACHE_DIR", str(seed_toolchain(tmp_path / "cache")))
    for fn, args in CORPUS:
        lazy = kiln.qjit(fn, autograph=True)
        kept = kiln.qjit(fn, autograph=True, keep_intermediate=True)
        for g in (lazy, kept):
            g(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        assert set(lazy.last.stages) == {"jaxpr"}, fn.__name__
        for stage in ("jaxpr", "mlir", *STAGE_DIALECTS, "llvmir"):
            assert lazy.stage(stage) == kept.stage(stage), (fn.__name__, stage)
        shutil.rmtree(kept.workspace, ignore_errors=True)
    with pytest.raises(kiln.KilnValueError, match="no stage named 'linalgg'.*stages: jaxpr, mlir, .*llvmir"):
        lazy.stage("linalgg")
