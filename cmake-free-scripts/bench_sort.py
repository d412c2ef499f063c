"""Sorting and selection, kiln against NumPy on 1e6 elements (a table, no assertions).

    python cmake-free-scripts/bench_sort.py [--n 1000000] [--repeat 7]

Per dtype (float64, int64, float32, int32) and operation (sort, sort
kind='stable', argsort, argsort kind='stable', partition, argpartition at
n // 2): the best of `--repeat` calls of NumPy and of the compiled kiln
function (after one warm-up call that compiles), in ms, and NumPy / kiln.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import kiln

OPERATIONS = {
    "sort": lambda a: np.sort(a),
    "sort stable": lambda a: np.sort(a, kind="stable"),
    "argsort": lambda a: np.argsort(a),
    "argsort stable": lambda a: np.argsort(a, kind="stable"),
    "partition": lambda a: np.partition(a, a.shape[0] // 2),
    "argpartition": lambda a: np.argpartition(a, a.shape[0] // 2),
}


def best_ms(fn, a, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(a)
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dtypes", default="float64,int64,float32,int32")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'dtype':8} {'operation':16} {'numpy ms':>9} {'kiln ms':>9} {'numpy/kiln':>10}")
    for dtype in args.dtypes.split(","):
        a = (rng.standard_normal(args.n) * 1e6).astype(dtype)
        for name, op in OPERATIONS.items():
            compiled = kiln.qjit(op)
            compiled(a)
            numpy_ms, kiln_ms = best_ms(op, a, args.repeat), best_ms(compiled, a, args.repeat)
            print(f"{dtype:8} {name:16} {numpy_ms:9.2f} {kiln_ms:9.2f} {numpy_ms / kiln_ms:10.2f}", flush=True)


if __name__ == "__main__":
    main()
