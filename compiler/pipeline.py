"""The compilation pipeline as data: an ordered list of (stage, [pass specs]).

In: the `mlir` stage module (from the Jaxpr lowering).
Out: one printable module per stage, then an object file and a shared
library (`compiler/codegen.py`).

A pass spec is an upstream/StableHLO pipeline element (`canonicalize`,
`func.func(stablehlo-legalize-to-linalg)`, `one-shot-bufferize{...}`) or the
name of a kiln pass (with `{key=value}` options). Consecutive upstream
specs run in one PassManager; kiln passes run as Python functions.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Sequence

from kiln.compiler.mlir import ir, passmanager
from kiln.compiler.passes import load_all

Pipeline = list[tuple[str, list[str]]]

STAGES = ("jaxpr", "mlir", "functionalized", "stablehlo", "linalg", "bufferized", "llvm", "llvmir")

DEFAULT_PIPELINE: Pipeline = [
    ("functionalized", [
        "tensorssa-rewrite-mutation",
        "tensorssa-block-propagation",
        "tensorssa-rename",
        "tensorssa-remove-update",
    ]),
    ("stablehlo", ["immut-to-stablehlo"]),
    ("linalg", [
        "kiln-lower-checks",
        "kiln-legalize-writes",
        "kiln-legalize-dynamic",
        "kiln-legalize-control-flow",
        "func.func(stablehlo-legalize-to-linalg)",
        "stablehlo-convert-to-signless",
        "canonicalize",
        "func.func(linalg-fuse-elementwise-ops)",
        "canonicalize",
        "cse",
        "kiln-reassociate-reductions",
        "kiln-elementwise-in-place",
    ]),
    ("bufferized", [
        "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
        "function-boundary-type-conversion=identity-layout-map}",
        "buffer-deallocation-pipeline",
        "convert-bufferization-to-memref",
        "kiln-linalg-to-blas",
        "memref-copy-to-linalg",
        "func.func(convert-linalg-to-loops)",
        "kiln-expand-exp",
        "kiln-check-alloc-sizes",
        "canonicalize",
    ]),
    ("llvm", [
        "convert-complex-to-standard",
        "lower-affine",
        "convert-scf-to-cf",
        "expand-strided-metadata",
        "lower-affine",
        # Allocations go through support.c, which turns a failed malloc into MemoryError.
        "finalize-memref-to-llvm{use-generic-functions=true}",
        "convert-complex-to-llvm",
        "convert-math-to-llvm",
        "convert-math-to-libm",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-func-to-llvm",
        "convert-cf-to-llvm",
        "reconcile-unrealized-casts",
    ]),
]


class PipelineError(RuntimeError):
    """An MLIR pass failed; the message names the stage and pass and carries
    MLIR's diagnostics."""


def split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """`name{a=1 b}` -> ("name", {"a": "1", "b": ""})."""
    if "{" not in spec:
        return spec.strip(), {}
    name, _, rest = spec.partition("{")
    options = {}
    for item in rest.rstrip("}").split():
        key, _, value = item.partition("=")
        options[key] = value
    return name.strip(), options


def is_kiln_pass(spec: str) -> bool:
    return split_spec(spec)[0] in load_all()


def _log_enabled(stage: str, spec: str | None = None) -> bool:
    """KILN_LOG=stage1,pass2,... (or `all`) prints IR after those stages/passes."""
    wanted = os.environ.get("KILN_LOG", "")
    if not wanted:
        return False
    names = {w.strip() for w in wanted.split(",")}
    return "all" in names or stage in names or (spec is not None and split_spec(spec)[0] in names)


def run_passes(module: ir.Module, specs: Sequence[str], stage: str = "kiln-opt") -> None:
    """Run pass specs on `module` in place; raise PipelineError on failure."""
    passes = load_all()
    upstream: list[str] = []

    def flush():
        if not upstream:
            return
        text = "builtin.module(" + ",".join(upstream) + ")"
        try:
            pm = passmanager.PassManager.parse(text, context=module.context)
        except ValueError as e:
            raise PipelineError(f"stage {stage!r}: bad pass pipeline {text!r}: {e}") from None
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            raise PipelineError(f"stage {stage!r}, passes {', '.join(upstream)}: {e}") from None
        for spec in upstream:
            if _log_enabled(stage, spec):
                print(f"// -----// IR after {spec} (stage {stage}) //----- //\n{module}", file=sys.stderr)
        upstream.clear()

    for spec in specs:
        name, options = split_spec(spec)
        if name in passes:
            flush()
            try:
                with module.context, ir.Location.unknown():
                    passes[name](module, options)
            except ir.MLIRError as e:
                raise PipelineError(f"stage {stage!r}, pass {name}: {e}") from None
            if not module.operation.verify():
                raise PipelineError(f"stage {stage!r}, pass {name}: the result does not verify")
            if _log_enabled(stage, spec):
                print(f"// -----// IR after {name} (stage {stage}) //----- //\n{module}", file=sys.stderr)
        else:
            upstream.append(spec)
    flush()


@dataclass
class StageRecord:
    """What compiling one function produced: each stage's text and time."""

    texts: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def report(self) -> str:
        width = max((len(s) for s in self.seconds), default=5)
        lines = [f"{'stage':<{width}}  ms"]
        for stage, sec in self.seconds.items():
            lines.append(f"{stage:<{width}}  {sec * 1e3:8.2f}")
        lines.append(f"{'total':<{width}}  {sum(self.seconds.values()) * 1e3:8.2f}")
        return "\n".join(lines)


def run_pipeline(module: ir.Module, pipeline: Pipeline, record: StageRecord,
                 keep_text: bool = True) -> None:
    """Run every stage of `pipeline`, recording each stage's module text and time."""
    for stage, specs in pipeline:
        start = time.perf_counter()
        run_passes(module, specs, stage)
        record.seconds[stage] = time.perf_counter() - start
        if keep_text:
            record.texts[stage] = str(module)
        if _log_enabled(stage):
            print(f"// -----// stage {stage} //----- //\n{module}", file=sys.stderr)
