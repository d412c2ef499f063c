"""Sorting and selection, kiln against NumPy on 1e6 elements (a table, no assertions).

    python cmake-free-scripts/bench_sort.py [--n 1000000] [--repeat 7] [--patterns random,sorted,...]
                                            [--ops sort,partition,...] [--cpu-time] [--rows R [--axis 0]]

Per dtype (float64, int64, float32, int32), input pattern (random: normal
values times 1e6; sorted; reversed; few: 16 distinct values; organ: up then
down) and operation (sort, sort kind='stable', argsort, argsort
kind='stable', partition, argpartition at n // 2): the best of `--repeat`
calls of NumPy and of the compiled kiln function (after one warm-up call
that compiles; one compile per dtype and operation), in ms, and NumPy /
kiln. NumPy and kiln calls alternate, so both see the same machine load.
--cpu-time times the process's CPU time (every thread's) instead of the
wall clock: on a shared, loaded machine it shows the work each side does,
not what kiln's threads save (long rows are sorted on kiln's thread pool,
docs/numpy.md "How sorting is compiled"; NumPy sorts on one thread), so
the wall clock is the number to read for those.
--rows R makes each input an (R, n // R) array, sorted along --axis (-1 by
default; the partition's kth is the middle of that axis).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import kiln

def operations(axis: int) -> dict:
    """The benchmarked operations along `axis`."""
    return {
        "sort": lambda a: np.sort(a, axis=axis),
        "sort stable": lambda a: np.sort(a, axis=axis, kind="stable"),
        "argsort": lambda a: np.argsort(a, axis=axis),
        "argsort stable": lambda a: np.argsort(a, axis=axis, kind="stable"),
        "partition": lambda a: np.partition(a, a.shape[axis] // 2, axis=axis),
        "argpartition": lambda a: np.argpartition(a, a.shape[axis] // 2, axis=axis),
    }


OPERATIONS = operations(-1)


PATTERNS = {
    "random": lambda rng, n: rng.standard_normal(n) * 1e6,
    "sorted": lambda rng, n: np.arange(n) - n // 2,
    "reversed": lambda rng, n: (np.arange(n) - n // 2)[::-1].copy(),
    "few": lambda rng, n: rng.integers(0, 16, n),
    "organ": lambda rng, n: np.concatenate([np.arange(n // 2), np.arange(n - n // 2)[::-1]]),
}


def best_ms(fns, a, repeat: int, clock) -> list[float]:
    """The best time of each function over `repeat` rounds, calls alternating."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for t, fn in zip(times, fns):
            start = clock()
            fn(a)
            t.append(clock() - start)
    return [1e3 * min(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dtypes", default="float64,int64,float32,int32")
    parser.add_argument("--patterns", default="random")
    parser.add_argument("--ops", default=",".join(OPERATIONS))
    parser.add_argument("--cpu-time", action="store_true")
    parser.add_argument("--rows", type=int, default=0)
    parser.add_argument("--axis", type=int, default=-1)
    args = parser.parse_args()
    ops = operations(args.axis)
    clock = time.process_time if args.cpu_time else time.perf_counter
    rng = np.random.default_rng(0)
    print(f"{'dtype':8} {'pattern':8} {'operation':16} {'numpy ms':>9} {'kiln ms':>9} {'numpy/kiln':>10}")
    for dtype in args.dtypes.split(","):
        for name in args.ops.split(","):
            op = ops[name]
            compiled = kiln.qjit(op)
            for pattern in args.patterns.split(","):
                a = PATTERNS[pattern](rng, args.n).astype(dtype)
                if args.rows:
                    a = a[: args.n // args.rows * args.rows].reshape(args.rows, -1)
                compiled(a)
                numpy_ms, kiln_ms = best_ms([op, compiled], a, args.repeat, clock)
                print(f"{dtype:8} {pattern:8} {name:16} {numpy_ms:9.2f} {kiln_ms:9.2f} {numpy_ms / kiln_ms:10.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
