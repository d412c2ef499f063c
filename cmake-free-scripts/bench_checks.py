"""What kiln's run-time checks cost (a benchmark, not a test).

Compiles a few representative functions twice, with `runtime_checks=True`
(the default) and `runtime_checks=False`, checks both give NumPy's result,
and prints a table of the mean CPU time per call (process time, so that
other load on the machine counts less), the best of several samples taken
alternately with checks on and off (so that drift in the load hits both):

- elementwise `x * y + x` on two arrays with their own dims: one size check
  per call;
- a row-update `kiln.for_loop` writing `y[rows[i]]` with a traced index: one
  bounds check per iteration;
- a gather `x[idx]` with an index array, from a large and from a
  cache-resident `x`: one pass over `idx` checking every entry.

    python cmake-free-scripts/bench_checks.py [--repeats R] [--quick]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any, Callable

import numpy as np

import kiln


def per_call_seconds(fns: list[Callable[[], Any]], calls: int, repeats: int) -> list[float]:
    """For each function, the best over `repeats` samples of the mean CPU
    time of `calls` calls; the functions take turns sample by sample."""
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


def elementwise(x, y):
    return x * y + x


def row_update(x, rows):
    y = x.copy()

    @kiln.for_loop(0, rows.shape[0], 1)
    def loop(i):
        y[rows[i]] = y[rows[i]] * 0.5 + 1.0

    loop()
    return y


def row_update_reference(x, rows):
    y = x.copy()
    for r in rows:
        y[r] = y[r] * 0.5 + 1.0
    return y


def gather(x, idx):
    return x[idx]


def cases(quick: bool) -> list[tuple[str, Callable, Callable, tuple, int]]:
    """(label, function, NumPy reference, arguments, calls per sample)."""
    rng = np.random.default_rng(0)
    scale = 10 if quick else 1
    big = 1_000_000 // scale
    rows = rng.integers(-1000, 1000, 100_000 // scale)
    return [
        ("x * y + x, n = 1000", elementwise, elementwise, (rng.random(1000), rng.random(1000)), 20_000 // scale),
        (f"x * y + x, n = {big}", elementwise, elementwise, (rng.random(big), rng.random(big)), 200 // scale),
        (f"for_loop y[rows[i]] = ..., {rows.size} rows of f64[1000, 8]", row_update, row_update_reference,
         (rng.random((1000, 8)), rows), 200 // scale),
        (f"x[idx], n = {big}, idx: {big} entries", gather, gather,
         (rng.random(big), rng.integers(-big, big, big)), 200 // scale),
        (f"x[idx], n = 1000, idx: {big} entries", gather, gather,
         (rng.random(1000), rng.integers(-1000, 1000, big)), 200 // scale),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="sizes and call counts / 10")
    options = parser.parse_args()
    os.environ.setdefault("KILN_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-bench-cache-"))
    header = f"{'function':<52} {'checks on':>11} {'checks off':>11} {'overhead':>9}"
    print(header)
    print("-" * len(header))
    for label, fn, reference, args, calls in cases(options.quick):
        checked = kiln.qjit(fn)
        unchecked = kiln.qjit(fn, runtime_checks=False)
        want = reference(*args)
        for compiled in (checked, unchecked):
            np.testing.assert_allclose(compiled(*args), want)
        count = str(checked.jaxpr).count("check[")
        assert count and "check[" not in str(unchecked.jaxpr), "expected checks only with runtime_checks=True"
        on, off = per_call_seconds([lambda: checked(*args), lambda: unchecked(*args)], calls, options.repeats)
        print(f"{label:<52} {_us(on):>11} {_us(off):>11} {100 * (on - off) / off:>8.1f}%")


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
