"""What polling for interrupts costs (a benchmark, not a test).

Compiles loops of the kinds users write four times: with the default
pipeline (kiln-poll-interrupts polls counted loops of plain instructions
once per block of 16384 iterations, loops that run loops every iteration),
with the latter in blocks of 16 too (`heavy-block=16`), with the poll in
every iteration (`block=1 heavy-block=1`, how the pass worked
before blocks), and without kiln-poll-interrupts at all; checks all give
NumPy's answer and prints the fastest call of each (the variants take
turns, so drift in the load of the machine hits all of them alike):

    python cmake-free-scripts/bench_poll.py [--repeats R] [--quick] [--only row_loop,...]
        [--npbench crc16,seidel_2d,lu,trisolv] [--workloads row_update_loop,catalyst_loop,while_converge]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any, Callable

import numpy as np

import kiln
from kiln.compiler.pipeline import DEFAULT_PIPELINE

POLL = "kiln-poll-interrupts"


def pipeline_with(poll_spec: str | None) -> list:
    """DEFAULT_PIPELINE with the poll pass replaced by `poll_spec` (None: dropped)."""
    out = []
    for stage, specs in DEFAULT_PIPELINE:
        specs = [s for s in specs if s != POLL] + ([poll_spec] if poll_spec and POLL in specs else [])
        out.append((stage, specs))
    return out


VARIANTS = [("default", POLL), ("heavy in blocks", POLL + "{heavy-block=16}"),
            ("every iteration", POLL + "{block=1 heavy-block=1}"), ("no poll", None)]


def per_call_seconds(fns: list[Callable[[], Any]], calls: int, repeats: int) -> list[float]:
    """The fastest single call of each variant, over rounds in which the
    variants take turns (at least `repeats` rounds, more while under ~2 s
    per variant). On a loaded machine the fastest call is one that ran
    uninterrupted: a time slice holds many calls of a short kernel."""
    best = [float("inf")] * len(fns)
    for fn in fns:
        fn()
    spent = 0.0
    rounds = 0
    while rounds < repeats * calls or (spent < 2.0 * len(fns) and rounds < 5000):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            took = time.perf_counter() - start
            spent += took
            best[k] = min(best[k], took)
        rounds += 1
    return best


def elementwise_loop(x):
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        y[i] = x[i] * 2.0 + 1.0
    return y


def triangular(a):
    for i in range(a.shape[0]):
        for j in range(i):
            a[i, j] = a[i, j] - a[j, i] * 0.5
    return a


def row_loop(x):
    acc = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        acc = acc + x[i] * 0.5
    return acc


def scalar_while(n: int):
    total = 0
    i = 0
    while i < n:
        total += i % 7
        i += 1
    return total


def scalar_for(n: int):
    total = 0
    for i in range(n):
        total += (i * 3) ^ (i >> 2)
    return total


def bit_loop(data):
    crc = 0xFFFF
    for k in range(data.shape[0]):
        cur = data[k] & 0xFF
        for _ in range(8):
            if (crc & 1) ^ (cur & 1):
                crc = (crc >> 1) ^ 0x8408
            else:
                crc = crc >> 1
            cur = cur >> 1
    return crc


def cases(quick: bool):
    """(label, function, arguments, calls per sample, copy the arguments per call)."""
    rng = np.random.default_rng(0)
    s = 10 if quick else 1
    return [
        ("y[i] = x[i] * 2 + 1, n = 5e5", elementwise_loop, (rng.random(500_000 // s),), 3, False),
        ("triangular a[i, j] -= a[j, i] * 0.5, 500^2", triangular, (rng.random((500 // s, 500 // s)),), 3, False),
        ("acc = acc + x[i] * 0.5, 2e5 rows of 16", row_loop, (rng.random((200_000 // s, 16)),), 3, False),
        ("while i < n: total += i % 7, n = 2e6", scalar_while, (2_000_000 // s,), 3, False),
        ("for i: total += (i*3) ^ (i>>2), n = 2e6", scalar_for, (2_000_000 // s,), 3, False),
        ("crc16 bit loop, 1e5 bytes", bit_loop, (rng.integers(0, 256, 100_000 // s).astype(np.uint8),), 3, False),
    ]


def outputs(fn, fn_args) -> list:
    """What a call returns and the arrays it writes, on fresh copies of the arguments."""
    fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in fn_args]
    result = fn(*fresh)
    returned = [] if result is None else list(result) if isinstance(result, tuple) else [result]
    return returned + [a for a in fresh if isinstance(a, np.ndarray)]


def npbench_cases(names: list[str]) -> list:
    """NPBench kernels at preset S, through the test harness's loader; each
    call gets fresh copies of the array arguments (the copies cost the same
    in every variant)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
    from npbench_harness import find_npbench_dir, load_kernels

    kernels = load_kernels(find_npbench_dir())
    out = []
    for name in names:
        kernel = kernels[name]
        data = kernel.data(kernel.parameters("S"))
        out.append((f"npbench {name} (S)", kernel.numpy_kernel(), tuple(kernel.arguments(data)), 10, True))
    return out


def workload_cases(names: list[str]) -> list:
    """bench.py's workloads at their first size, compiled by their own kiln
    makers with each variant's pipeline (through bench.KILN_OPTIONS); NumPy's
    function is the reference."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench

    rng = np.random.default_rng(0)
    out = []
    for w in bench.WORKLOADS:
        if w.name not in names:
            continue

        def build(pipeline, w=w, bench=bench):
            bench.KILN_OPTIONS["pipelines"] = pipeline
            try:
                return w.makers["kiln"]()
            finally:
                bench.KILN_OPTIONS.pop("pipelines")

        out.append((f"bench.py {w.name} {w.sizes[0]}", w.makers["numpy"](), w.inputs(w.sizes[0], rng), 3, False,
                    build))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated function names (elementwise_loop, ...)")
    parser.add_argument("--npbench", default="", help="comma-separated NPBench kernels (preset S) to time too")
    parser.add_argument("--workloads", default="", help="comma-separated bench.py workloads to time too")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    selected = [c for c in cases(args.quick) if not only or c[1].__name__ in only]
    if args.npbench:
        selected += npbench_cases(args.npbench.split(","))
    if args.workloads:
        selected += workload_cases(args.workloads.split(","))
    os.environ.setdefault("KILN_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-bench-poll-"))
    print(f"{'loop':44} " + " ".join(f"{name:>18}" for name, _ in VARIANTS) + "  ratios to no poll")
    for label, fn, fn_args, calls, copy, *maker in selected:
        build = maker[0] if maker else (lambda pipeline, fn=fn: kiln.qjit(fn, autograph=True, pipelines=pipeline))
        compiled = [build(pipeline_with(spec)) for _, spec in VARIANTS]
        expected = outputs(fn, fn_args)
        calls_of = []
        for c in compiled:
            for got, want in zip(outputs(c, fn_args), expected):
                np.testing.assert_allclose(got, want, rtol=1e-9)
            # The loops above time on the same arguments (the triangular loop's writes change
            # values, not its work); NPBench kernels on fresh copies.
            calls_of.append((lambda c=c: c(*[a.copy() if isinstance(a, np.ndarray) else a for a in fn_args]))
                            if copy else (lambda c=c: c(*fn_args)))
        times = per_call_seconds(calls_of, calls, args.repeats)
        print(f"{label:44} " + " ".join(f"{t * 1e3:15.3f} ms" for t in times)
              + "  " + " ".join(f"{t / times[-1]:6.3f}" for t in times[:-1]), flush=True)


if __name__ == "__main__":
    main()
