"""Observability: the `kiln` logger reports every compile of a qjit function.

In: a compile's function name, signature, per-stage seconds and whether the
library came from the cache. Out: one INFO record per compile on
`logging.getLogger("kiln")`, or a WARNING when it took longer than
`SLOW_COMPILE_SECONDS` (Python shows warnings even with logging unconfigured).
"""

from __future__ import annotations

import logging

import numpy as np

logger = logging.getLogger("kiln")

SLOW_COMPILE_SECONDS = 2.0


def describe_signature(signature: tuple) -> str:
    """`f64[d0,3], i64` for a signature of ArgSigs (`d<k>` is dynamic dim k,
    a number a static size; a weak Python scalar is `float` / `int` / `bool`)."""
    parts = []
    for sig in signature:
        if sig.kind == "scalar" and sig.weak:
            parts.append({"float64": "float", "int64": "int", "bool": "bool"}[np.dtype(sig.dtype).name])
            continue
        dtype = np.dtype(sig.dtype)
        short = f"{dtype.kind}{dtype.itemsize * 8}" if dtype.kind in "iufc" else dtype.name
        dims = ",".join(f"d{value}" if kind == "dim" else str(value) for kind, value in sig.dims)
        parts.append(f"{short}[{dims}]" if sig.kind == "array" else short)
    return ", ".join(parts)


def log_compile(name: str, signature: tuple, seconds: dict, cache_hit: bool, toolchain_seconds: float = 0.0) -> None:
    """Log one compile of `name` for `signature` (INFO, or WARNING if slow).
    `toolchain_seconds`: the part of it spent building kiln's runtime code
    for the cache directory (once per directory, not the program's doing)."""
    total = sum(seconds.values())
    toolchain_seconds = min(max(toolchain_seconds, 0.0), total)
    slow = total - toolchain_seconds > SLOW_COMPILE_SECONDS
    level = logging.WARNING if slow else logging.INFO
    if not logger.isEnabledFor(level):
        return
    stages = ", ".join(f"{stage} {sec:.3f}" for stage, sec in seconds.items())
    source = "cache hit" if cache_hit else "cache miss"
    message = f"compiled {name}({describe_signature(signature)}) in {total:.3f} s ({source}; seconds per stage: {stages})"
    if toolchain_seconds >= 0.05:
        message += (f"; {toolchain_seconds:.1f} s of it built kiln's runtime code into the cache directory "
                    "(once per directory and dtype: later compiles reuse it)")
    if slow:
        message += f"; over {SLOW_COMPILE_SECONDS:g} s: {slow_compile_hint(seconds)}"
    logger.log(level, message)


# What usually makes a stage slow, and what the user can do about it.
_STAGE_HINTS = {
    "jaxpr": ("tracing (a long Python loop unrolls at trace time; kiln.for_loop or autograph=True keeps it a loop, "
              "one compile for any trip count)"),
    "llvmir": ("LLVM's optimizer and code generator on the program's compiled code (it grows with the number of "
               "array statements; the library is cached on disk, so later processes load it instead)"),
}


def slow_compile_hint(seconds: dict) -> str:
    """Where a slow compile's time went: the largest stage, what usually
    makes that stage slow, and how to see more."""
    stage = max(seconds, key=seconds.get) if seconds else None
    where = _STAGE_HINTS.get(stage, f"kiln's passes (KILN_LOG={stage} prints the IR they made)")
    return (f"most of it in stage {stage!r}: {where}; f.print_stage_times() shows where the time went"
            if stage else "f.print_stage_times() shows where the time went")
