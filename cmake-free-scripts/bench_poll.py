"""What polling for interrupts costs (a benchmark, not a test).

Compiles loops of the kinds users write three times: with the default
pipeline (kiln-poll-interrupts polls counted loops once per block of
iterations), with the poll in every iteration (`block=1 heavy-block=1`, how
the pass worked before blocks), and without kiln-poll-interrupts at all;
checks all three give NumPy's answer and prints the mean CPU time per call
(process time, best of several samples taken in turn, so drift in the load
of the machine hits all three):

    python cmake-free-scripts/bench_poll.py [--repeats R] [--quick]
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


VARIANTS = [("blocks (default)", POLL), ("every iteration", POLL + "{block=1 heavy-block=1}"), ("no poll", None)]


def per_call_seconds(fns: list[Callable[[], Any]], calls: int, repeats: int) -> list[float]:
    best = [float("inf")] * len(fns)
    for fn in fns:
        fn()
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            start = time.process_time()
            for _ in range(calls):
                fn()
            best[k] = min(best[k], (time.process_time() - start) / calls)
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
    """(label, function, arguments, calls per sample)."""
    rng = np.random.default_rng(0)
    s = 10 if quick else 1
    return [
        ("y[i] = x[i] * 2 + 1, n = 5e6", elementwise_loop, (rng.random(5_000_000 // s),), 3),
        ("triangular a[i, j] -= a[j, i] * 0.5, 1500^2", triangular, (rng.random((1500 // s, 1500 // s)),), 3),
        ("acc = acc + x[i] * 0.5, 2e6 rows of 16", row_loop, (rng.random((2_000_000 // s, 16)),), 3),
        ("while i < n: total += i % 7, n = 2e7", scalar_while, (20_000_000 // s,), 3),
        ("for i: total += (i*3) ^ (i>>2), n = 2e7", scalar_for, (20_000_000 // s,), 3),
        ("crc16 bit loop, 1e5 bytes", bit_loop, (rng.integers(0, 256, 100_000 // s).astype(np.uint8),), 3),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("KILN_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-bench-poll-"))
    print(f"{'loop':44} " + " ".join(f"{name:>18}" for name, _ in VARIANTS) + "   blocks / none  every / none")
    for label, fn, fn_args, calls in cases(args.quick):
        compiled = [kiln.qjit(fn, autograph=True, pipelines=pipeline_with(spec)) for _, spec in VARIANTS]
        expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in fn_args])
        calls_of = []
        for c in compiled:
            got = c(*[a.copy() if isinstance(a, np.ndarray) else a for a in fn_args])
            np.testing.assert_allclose(got, expected, rtol=1e-12)
            # Timed on the same arguments: the triangular loop's writes change values, not its work.
            calls_of.append(lambda c=c: c(*fn_args))
        times = per_call_seconds(calls_of, calls, args.repeats)
        print(f"{label:44} " + " ".join(f"{t * 1e3:15.3f} ms" for t in times)
              + f"   {times[0] / times[2]:12.3f}  {times[1] / times[2]:12.3f}", flush=True)


if __name__ == "__main__":
    main()
