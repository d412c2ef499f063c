"""kiln's own MLIR passes, one file each, registered by name.

A pass is a function `run(module: ir.Module, options: dict[str, str])`
registered with `@register_pass("name")`; `kiln-opt -p name{opt=v}` and the
pipelines find it in `PASSES` next to upstream and StableHLO passes.
"""

from __future__ import annotations

import importlib
from typing import Callable

PASSES: dict[str, Callable] = {}
PASS_DOCS: dict[str, str] = {}

_PASS_MODULES = (
    "tensorssa_rewrite_mutation",
    "tensorssa_block_propagation",
    "tensorssa_rename",
    "tensorssa_remove_update",
    "immut_to_stablehlo",
    "kiln_legalize_writes",
    "kiln_legalize_control_flow",
    "kiln_scalarize_rank0",
    "kiln_legalize_dynamic",
    "kiln_linalg_to_blas",
    "kiln_expand_exp",
    "kiln_reassociate_reductions",
    "kiln_elementwise_in_place",
    "kiln_flatten_copies",
    "kiln_lower_checks",
    "memref_copy_to_linalg",
    "kiln_check_alloc_sizes",
    "kiln_parallelize",
    "kiln_dims_from_shapes",
    "kiln_simplify_shapes",
    "kiln_fuse_insert_slices",
    "kiln_version_small_dims",
)


def register_pass(name: str) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        PASSES[name] = fn
        PASS_DOCS[name] = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
        return fn

    return register


def load_all() -> dict[str, Callable]:
    for mod in _PASS_MODULES:
        importlib.import_module(f"kiln.compiler.passes.{mod}")
    return PASSES
