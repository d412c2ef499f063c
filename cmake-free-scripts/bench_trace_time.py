"""Trace-time benchmark: what a cache hit's `jaxpr` stage costs, per NPBench kernel.

In: NPBench kernel names (preset S). Out: CPU seconds of `f.lower(*args)`
(autograph, tracing, typecheck) and of `driver.compile_jaxpr` on an index
hit (printing and hashing the jaxpr; the cache reads are stubbed, nothing
compiles), and the index key with the toolchain fingerprint fixed, so two
kiln versions can be compared: equal keys mean the same traced program.

    python cmake-free-scripts/bench_trace_time.py channel_flow vadv hdiff resnet softmax
    /old/venv/bin/python cmake-free-scripts/bench_trace_time.py channel_flow   # interleave A/B runs

Imports and one small trace happen before timing, so the numbers are the
trace of the kernel itself (the first trace of a real process also pays
for importing kiln.numpy).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernels", nargs="+", help="NPBench kernel names")
    opts = parser.parse_args(argv)

    sys.path.insert(0, str(REPO / "test"))
    from npbench_harness import find_npbench_dir, load_kernels

    import kiln
    import kiln.numpy  # noqa: F401
    from kiln.compiler import driver
    from kiln.runtime import cache

    # A stand-in hit: the key is computed in full, no library is read.
    driver.toolchain_fingerprint = lambda: "fixed"
    cache.lookup_index = lambda key: ("symbol", key)
    driver._load_from_cache = lambda *args, **kwargs: object()

    @kiln.qjit
    def warm(x):
        return x + 1

    warm.lower(np.ones(3))
    kernels = load_kernels(find_npbench_dir())
    print(f"{'kernel':14s} {'eqns':>5s} {'trace s':>8s} {'key s':>8s} {'total s':>8s}  index key (fixed fingerprint)")
    for name in opts.kernels:
        kernel = kernels[name]
        args = kernel.arguments(kernel.data(kernel.parameters("S")))
        start = time.process_time()
        lowered = kiln.qjit(kernel.numpy_kernel()).lower(*args)
        traced = time.process_time()
        driver.compile_jaxpr(lowered.jaxpr, name)
        keyed = time.process_time()
        key = driver.jaxpr_key(lowered.jaxpr, driver._symbol_name(name), None)
        print(f"{name:14s} {len(lowered.jaxpr.eqns):5d} {traced - start:8.3f} {keyed - traced:8.3f} "
              f"{keyed - start:8.3f}  {key}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
