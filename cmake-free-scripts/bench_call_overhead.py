"""Per-call overhead of a compiled kiln function (a benchmark, not a test).

Measures `f(x, y) = x + y` on two 1-D float64 arrays returning a new array,
against NumPy's own `x + y` and a bare ctypes call of a no-op C function,
for several sizes, plus the common variants (scalar argument, several
results, non-contiguous input, pytree argument). Prints a table of the
median over repeats of the mean CPU time per call (process time, so that
other load on the machine does not count).

    python cmake-free-scripts/bench_call_overhead.py [--calls N] [--repeats R]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
import time

import numpy as np


def per_call_seconds(fn, calls: int, repeats: int) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(calls):
            fn()
        samples.append((time.process_time() - start) / calls)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    os.environ.setdefault("KILN_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-bench-cache-"))

    import kiln

    @kiln.qjit
    def add(x, y):
        return x + y

    @kiln.qjit
    def scale(x, s):
        return x * s

    @kiln.qjit
    def two_results(x, y):
        return x + y, x - y

    @kiln.qjit
    def tree_arg(pair):
        return pair[0] + pair[1]

    libc = ctypes.CDLL(None)
    noop = libc.labs  # a C call that does no work: ctypes' own floor
    noop.argtypes = [ctypes.c_long]
    noop.restype = ctypes.c_long

    rows = []
    for n in (1, 1_000, 100_000):
        x, y = np.random.rand(n), np.random.rand(n)
        calls = options.calls if n <= 1_000 else max(options.calls // 20, 100)
        kiln_s = per_call_seconds(lambda: add(x, y), calls, options.repeats)
        numpy_s = per_call_seconds(lambda: x + y, calls, options.repeats)
        rows.append((f"add(x, y), n={n}", kiln_s, numpy_s))

    x, y = np.random.rand(1_000), np.random.rand(1_000)
    xs = np.random.rand(2_000)[::2]
    variants = [
        ("scale(x, 2.0) (Python scalar)", lambda: scale(x, 2.0), lambda: x * 2.0),
        ("two_results(x, y)", lambda: two_results(x, y), lambda: (x + y, x - y)),
        ("add(x[::2], y) (copied input)", lambda: add(xs, y), lambda: xs + y),
        ("tree_arg((x, y)) (pytree argument)", lambda: tree_arg((x, y)), lambda: x + y),
        ("add(x=x, y=y) (keywords)", lambda: add(x=x, y=y), lambda: x + y),
    ]
    for name, kiln_fn, numpy_fn in variants:
        rows.append((name, per_call_seconds(kiln_fn, options.calls, options.repeats),
                     per_call_seconds(numpy_fn, options.calls, options.repeats)))
    from kiln.runtime.executable import Executable, fastcall_module

    if fastcall_module() is not None:
        x, y = np.random.rand(1_000), np.random.rand(1_000)
        c_call = Executable.__call__
        Executable.__call__ = Executable.call_python
        try:
            rows.append(("add(x, y), n=1000, Python hot path", per_call_seconds(lambda: add(x, y), options.calls,
                                                                                options.repeats),
                         per_call_seconds(lambda: x + y, options.calls, options.repeats)))
        finally:
            Executable.__call__ = c_call
    floor = per_call_seconds(lambda: noop(1), options.calls, options.repeats)

    width = max(len(r[0]) for r in rows) + 2
    hot_path = "C" if fastcall_module() is not None else "Python"
    print(f"per-call CPU time, median of {options.repeats} x mean over up to {options.calls} calls "
          f"(python {sys.version.split()[0]}, numpy {np.__version__}, {hot_path} hot path)")
    print(f"{'call':<{width}}{'kiln us':>10}{'numpy us':>10}{'kiln - numpy':>14}")
    for name, kiln_s, numpy_s in rows:
        print(f"{name:<{width}}{kiln_s * 1e6:>10.2f}{numpy_s * 1e6:>10.2f}{(kiln_s - numpy_s) * 1e6:>14.2f}")
    print(f"{'bare ctypes call (floor)':<{width}}{floor * 1e6:>10.2f}")


if __name__ == "__main__":
    main()
