"""The compilation pipeline as data: an ordered list of (stage, [pass specs]).

In: the `mlir` stage module (from the Jaxpr lowering).
Out: one printable module per stage, then an object file and a shared
library (`compiler/codegen.py`).

A pass spec is an upstream/StableHLO pipeline element (`canonicalize`,
`func.func(stablehlo-legalize-to-linalg)`, `one-shot-bufferize{...}`) or the
name of a kiln pass (with `{key=value}` options, parsed and checked by
`kiln.compiler.passes.parse_pass_spec`). Consecutive upstream
specs run in one PassManager; kiln passes run as Python functions.
`qjit(pipelines=...)` replaces the whole list for one function
(`validate_pipeline` checks it first). `KILN_LOG` prints IR as it goes.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from kiln.compiler.mlir import ir, passmanager
from kiln.compiler.passes import PassSpecError, load_all, parse_pass_spec, split_spec
from kiln.errors import KilnValueError

Pipeline = list[tuple[str, list[str]]]

STAGES = ("jaxpr", "mlir", "functionalized", "stablehlo", "linalg", "bufferized", "llvm", "llvmir")
# Stages made outside the pipeline: before it (tracing, lowering) and after it (translation).
FIXED_STAGES = ("jaxpr", "mlir", "llvmir")
# The stage contract: the dialects whose ops each MLIR stage's module may hold
# (docs/architecture.md explains each row; test/test_stage_contract.py checks
# it over a corpus). No stage uses `stablehlo.custom_call`: what kiln needs
# beyond StableHLO is an op of the `kiln` dialect.
STAGE_DIALECTS = {
    # mlir: `immut.assign` too, the copy that no later write reaches.
    "mlir": frozenset({"builtin", "func", "stablehlo", "kiln", "tensorssa", "immut"}),
    "functionalized": frozenset({"builtin", "func", "stablehlo", "kiln", "immut"}),
    "stablehlo": frozenset({"builtin", "func", "stablehlo", "kiln"}),
    # llvm: the check messages and print formats (`llvm.mlir.global`, `llvm.mlir.addressof`);
    # bufferization and memref: the buffers of LAPACK calls (`kiln-lower-lapack`).
    "linalg": frozenset({"builtin", "func", "arith", "math", "complex", "tensor", "linalg", "scf", "llvm",
                         "bufferization", "memref"}),
    # builtin here includes the unrealized casts one-shot-bufferize leaves.
    "bufferized": frozenset({"builtin", "func", "arith", "math", "complex", "memref", "scf", "llvm", "affine"}),
    "llvm": frozenset({"builtin", "llvm"}),
}

DEFAULT_PIPELINE: Pipeline = [
    ("functionalized", [
        "tensorssa-rewrite-mutation",
        "tensorssa-block-propagation",
        "tensorssa-rename",
        "tensorssa-remove-update",
    ]),
    # cse first: two broadcasts of one value to equal shapes (computed twice
    # by the frontend) become one, which kiln-broadcast-operands can move.
    ("stablehlo", ["immut-to-stablehlo", "kiln-prune-carried-values", "cse", "kiln-broadcast-operands",
                   "kiln-scale-vector-operand"]),
    ("linalg", [
        "kiln-dims-from-shapes",
        "kiln-lower-checks",
        "kiln-lower-prints",
        "kiln-lower-random",
        "kiln-lower-lapack",
        "kiln-lower-sorts",
        "kiln-legalize-writes",
        # Equal slices become one value first, so that kiln-legalize-dynamic
        # versions a broadcast of it once (its size-1 copy is a call, which
        # cse after it cannot merge).
        "cse",
        "kiln-legalize-dynamic",
        "kiln-block-arg-reductions",
        "kiln-legalize-control-flow",
        "func.func(stablehlo-legalize-to-linalg)",
        "stablehlo-convert-to-signless",
        "canonicalize",
        "cse",
        "kiln-simplify-shapes{reshapes=false}",
        # The reader of a broadcast versioned for size-1 dims goes into both
        # versions, so that fusion reaches the broadcast in the common one
        # (canonicalize then drops the broadcast's result from the scf.if).
        "kiln-sink-into-broadcast-versions",
        "canonicalize",
        "cse",
        "kiln-unroll-elementwise-loops",
        "func.func(linalg-fuse-elementwise-ops)",
        # Reshapes that only add or drop unit dims become views (after fusion: see the pass).
        "kiln-simplify-shapes",
        # Column slices and writes (`a[:, j]`) as rank-reducing slices: views, not copies.
        "kiln-rank-reducing-slices",
        "canonicalize",
        "kiln-inline-splats",
        "kiln-scalarize-rank0",
        "kiln-element-access",
        "kiln-fuse-into-element-loops",
        "kiln-fuse-sibling-loops",
        "kiln-merge-sibling-reductions",
        # A loop of matrix-vector products (`data[:, i] @ data[:, i:]`,
        # `A[i, :] @ B`, nested `A[i, :] @ B[:, j]`) reads its part of one
        # matrix product computed before the loop (before the dots of
        # vectors become scalar loops).
        "kiln-lift-matvec-loops",
        "kiln-scalarize-dots",
        # The dot loops kiln-scalarize-dots made read gathered vectors
        # (`vals @ x[cols]`): the gather moves into the loop.
        "kiln-fuse-into-element-loops",
        "canonicalize",
        "cse",
        "canonicalize",
        "kiln-collapse-batch-matmul",
        "kiln-pair-matvecs",
        "kiln-fold-into-gemm",
        "kiln-reassociate-reductions",
        "kiln-block-sums",
        "kiln-interchange-reductions",
        "kiln-fuse-insert-slices",
        "canonicalize",
        "cse",
        "kiln-compute-into-destination",
        "kiln-elementwise-in-place",
        "kiln-chain-overwrites",
    ]),
    ("bufferized", [
        # Long chains of updates of one tensor are cut where no earlier
        # version is read again: one-shot-bufferize's analysis is cubic in
        # the length of a chain (the bufferized function does not change).
        "kiln-split-write-chains",
        "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
        "function-boundary-type-conversion=identity-layout-map}",
        # Before buffer-deallocation-pipeline: a call's memref result is taken
        # there for a fresh buffer the caller owns, but a runtime routine's
        # result is its output argument; freeing both was a double free as
        # soon as that argument was not allocated in the call's block (e.g.
        # hoisted out of a loop: np.unique(a, axis=0) freed its argsort
        # output once per column).
        "kiln-forward-loop-buffers",
        "kiln-runtime-call-results",
        "kiln-store-written-arguments",
        # A loop body's temporaries whose sizes do not change from one
        # iteration to the next are allocated once, before the loop: canonicalize
        # folds `memref.dim` of a view of the loop's buffer into the view's size,
        # LICM moves the size computations out, buffer-loop-hoisting the
        # allocations. Buffers that an iteration yields stay where they are, as
        # do those of scf.parallel bodies. (Before buffer-deallocation-pipeline:
        # buffer-loop-hoisting would leave a `memref.dealloc` in the loop.)
        "canonicalize",
        # A hoisted alloc also runs when its loop runs zero times: its size
        # checks stay in the loop and its sizes become 0 where they fail.
        "kiln-check-alloc-sizes{loops=true}",
        "func.func(loop-invariant-code-motion)",
        "func.func(buffer-loop-hoisting)",
        "buffer-deallocation-pipeline",
        "convert-bufferization-to-memref",
        "kiln-linalg-to-blas",
        "kiln-flatten-copies",
        "memref-copy-to-linalg",
        "func.func(convert-linalg-to-parallel-loops)",
        "kiln-expand-exp",
        "kiln-expand-pow",
        "kiln-check-alloc-sizes",
        "kiln-refine-if-layouts",
        "canonicalize",
        "cse",
        "kiln-dedup-checks",
        "kiln-hoist-loop-checks",
        "kiln-version-small-dims",
        "kiln-block-rows",
        "kiln-flatten-parallel-nests",
        "kiln-divide-by-reciprocal",
        "kiln-parallelize",
        "kiln-hoist-loop-checks",
        "kiln-version-small-dims{bodies=true}",
        "kiln-poll-interrupts",
        "kiln-branchless-bit-selects",
        "kiln-outline-serial-loops",
        "kiln-dedup-parallel-bodies",
        "kiln-wide-vectors",
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
        # Loads and stores of buffers kiln knows apart get LLVM alias scopes:
        # no run-time overlap checks in vectorized loops.
        "kiln-alias-scopes",
    ]),
]


class PipelineError(RuntimeError):
    """An MLIR pass failed; the message names the stage and pass and carries
    MLIR's diagnostics."""


def is_kiln_pass(spec: str) -> bool:
    return split_spec(spec)[0] in load_all()


def validate_pipeline(pipeline: Any, context: ir.Context) -> None:
    """Reject a pipeline override before any of it runs: it must be a list
    of `(stage, [pass specs])` with distinct stage names other than
    jaxpr/mlir/llvmir, and every spec must name a kiln pass (with options
    it declares) or parse as an upstream MLIR pass pipeline element."""
    shape_hint = ('expected a list of (stage name, [pass specs]) pairs, e.g. '
                  '[("linalg", ["func.func(stablehlo-legalize-to-linalg)", "canonicalize"]), ...]; '
                  "start from a copy of kiln.compiler.pipeline.DEFAULT_PIPELINE")
    if not isinstance(pipeline, (list, tuple)):
        raise KilnValueError(f"pipelines: {shape_hint}, got a {type(pipeline).__name__}")
    seen: set[str] = set()
    for position, entry in enumerate(pipeline):
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], (list, tuple)) and all(isinstance(spec, str) for spec in entry[1])):
            raise KilnValueError(f"pipelines: entry {position} is {entry!r}; {shape_hint}")
        stage, specs = entry
        if stage in FIXED_STAGES or stage in seen:
            why = "is made outside the pipeline" if stage in FIXED_STAGES else "appears twice"
            raise KilnValueError(f"pipelines: stage {stage!r} {why}; give each pipeline stage its own name "
                                 f"(not {', '.join(FIXED_STAGES)})")
        seen.add(stage)
        for spec in specs:
            try:
                if parse_pass_spec(spec).kiln_pass is not None:
                    continue
            except PassSpecError as e:
                raise KilnValueError(f"pipelines: stage {stage!r}: kiln {e}") from None
            try:
                passmanager.PassManager.parse(f"builtin.module({spec})", context=context)
            except ValueError as e:
                detail = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
                raise KilnValueError(
                    f"pipelines: stage {stage!r}: {spec!r} is not a kiln pass nor a valid MLIR pass spec: "
                    f"{detail} (`kiln-opt --list-passes` lists kiln's passes)") from None
    # The runtime's calling convention: a written argument's final value is
    # in its buffer, not a result (docs/mutation.md, "Writes to arguments").
    specs = [spec for _, stage_specs in pipeline for spec in stage_specs]
    bufferize = [i for i, spec in enumerate(specs) if spec.startswith("one-shot-bufferize")]
    if bufferize and "kiln-store-written-arguments" not in specs[bufferize[0] + 1:]:
        raise KilnValueError("pipelines: one-shot-bufferize must be followed by kiln-store-written-arguments "
                             "(before buffer-deallocation-pipeline): the runtime expects written arguments "
                             "in their buffers, not as results; keep it as DEFAULT_PIPELINE has it")


def _log_enabled(name: str) -> bool:
    """KILN_LOG=stage1,pass2,... prints IR after those stages and passes;
    `all` after every stage and every pass. An unknown name raises (see
    `log_names`)."""
    wanted = os.environ.get("KILN_LOG", "")
    if not wanted:
        return False
    names = log_names(wanted)
    return "all" in names or name in names


@functools.lru_cache(maxsize=8)
def log_names(wanted: str) -> frozenset:
    """The names of `KILN_LOG=wanted`, each checked: a stage, a kiln pass, a
    pass of the default pipeline or `all`. A typo raises KilnValueError
    listing the valid names, rather than printing nothing."""
    names = frozenset(w.strip() for w in wanted.split(",") if w.strip())
    passes = set(load_all())
    upstream = {n for _, specs in DEFAULT_PIPELINE for spec in specs
                for n in re.findall(r"[\w.-]+", split_spec(spec)[0])} - passes - {"func.func"}
    valid = {"all", *STAGES, *passes, *upstream}
    unknown = sorted(names - valid)
    if unknown:
        close = difflib.get_close_matches(unknown[0], valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise KilnValueError(
            f"KILN_LOG={wanted!r}: unknown name {', '.join(map(repr, unknown))}{hint}; KILN_LOG takes a "
            f"comma-separated list of: all; stages {', '.join(STAGES)}; kiln passes {', '.join(sorted(passes))}; "
            f"upstream passes of the default pipeline {', '.join(sorted(upstream))}")
    return names


def _pass_logged(spec: str) -> bool:
    """Whether KILN_LOG names the pass of `spec`, or one nested in it
    (`linalg-fuse-elementwise-ops` in `func.func(linalg-fuse-elementwise-ops)`)."""
    return any(_log_enabled(name) for name in re.findall(r"[\w.-]+", split_spec(spec)[0]))


def log_stage(stage: str, text: Any) -> None:
    """Print a stage's IR to stderr when KILN_LOG names it (or is `all`)."""
    if _log_enabled(stage):
        print(f"// -----// stage {stage} //----- //\n{text}", file=sys.stderr)


def verify_each_pass() -> bool:
    """KILN_VERIFY_EACH_PASS=1 verifies the module after every pass, kiln's
    and upstream's (the test suite sets it; kiln-opt runs each kiln pass
    alone anyway). Otherwise the module is verified once before each
    upstream batch and once at the end of `run_passes`, and a failure names
    the passes, kiln's and upstream batches', that ran since the last
    verified module: verifying channel_flow's module after each of its 60
    kiln passes cost 0.9 s of CPU at load ~3, and MLIR's PassManager
    verifying after each upstream pass was ~40 % of the upstream passes' CPU
    on small kernels (docs/benchmarks.md, wt/fixed8)."""
    return os.environ.get("KILN_VERIFY_EACH_PASS", "") not in ("", "0")


def run_passes(module: ir.Module, specs: Sequence[str], stage: str = "kiln-opt",
               verify_each: bool | None = None) -> None:
    """Run pass specs on `module` in place; raise PipelineError on failure
    (a kiln pass spec with a bad option raises PassSpecError before any pass runs).
    The result of kiln passes is verified before an upstream batch runs, an
    upstream batch's result before the next batch and at the end (each batch
    runs with MLIR's verifier off), or the module after each pass with
    `verify_each` (default: `verify_each_pass()`)."""
    parsed = [parse_pass_spec(spec) for spec in specs]
    if verify_each is None:
        verify_each = verify_each_pass()
    upstream: list[str] = []
    unverified: list[str] = []  # passes run since the module last verified

    def verify():
        if not unverified:
            return
        culprit = (f"pass {unverified[0]}" if len(unverified) == 1 else
                   f"one of the passes {', '.join(unverified)}")
        hint = "" if len(unverified) == 1 else " (KILN_VERIFY_EACH_PASS=1 verifies after each and names the pass)"
        failed = f"stage {stage!r}, {culprit}: the result does not verify{hint}"
        try:
            valid = module.operation.verify()
        except ir.MLIRError as e:  # chained: kiln-opt prints MLIR's diagnostics with their locations
            raise PipelineError(f"{failed}: {e}") from e
        if not valid:
            raise PipelineError(failed)
        unverified.clear()

    def flush():
        if not upstream:
            return
        verify()
        text = "builtin.module(" + ",".join(upstream) + ")"
        try:
            pm = passmanager.PassManager.parse(text, context=module.context)
        except ValueError as e:
            raise PipelineError(f"stage {stage!r}: bad pass pipeline {text!r}: {e}") from None
        # Without `verify_each`, the batch's result is verified with the kiln
        # passes after it (before the next batch, at the latest at the end),
        # not by the PassManager after each of its passes.
        pm.enable_verifier(verify_each)
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            raise PipelineError(f"stage {stage!r}, passes {', '.join(upstream)}: {e}") from None
        if not verify_each:
            unverified.extend(upstream)
        upstream.clear()

    for spec in parsed:
        if spec.kiln_pass is not None:
            flush()
            try:
                with module.context, ir.Location.unknown():
                    spec.kiln_pass.apply(module)
            except ir.MLIRError as e:
                raise PipelineError(f"stage {stage!r}, pass {spec.name}: {e}") from None
            unverified.append(spec.name)
            if verify_each:
                verify()
        else:
            upstream.append(spec.text)
        if _pass_logged(spec.text):
            flush()  # the IR after this pass, not after the rest of its upstream batch
            verify()
            print(f"// -----// IR after {spec.text} (stage {stage}) //----- //\n{module}", file=sys.stderr)
    flush()
    verify()  # `stage_text` relies on it: after any pass, the module verified here or in flush


@dataclass
class StageRecord:
    """What compiling one function produced: each stage's text and time."""

    texts: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def run_pipeline(module: ir.Module, pipeline: Pipeline, record: StageRecord,
                 keep_text: bool = True) -> None:
    """Run every stage of `pipeline`, recording each stage's module text and time."""
    for stage, specs in pipeline:
        start = time.perf_counter()
        run_passes(module, specs, stage)
        record.seconds[stage] = time.perf_counter() - start
        if keep_text:
            record.texts[stage] = stage_text(module, verified=bool(specs))
        log_stage(stage, module)


def stage_text(module: ir.Module, verified: bool) -> str:
    """The module's text. `str(module)` verifies the module before printing
    it (a third to half of the printing time); `run_passes` has just
    verified the module when it ran any pass, so that print skips it (the
    same text: the printer falls back to the generic form only for a module
    that does not verify)."""
    return module.operation.get_asm(assume_verified=True) if verified else str(module)
