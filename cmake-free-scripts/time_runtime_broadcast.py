"""Timing script (not a test): elementwise workloads whose dims may be 1 at
run time, compiled by kiln, best of several calls. Used to measure the cost
of run-time size-1 broadcasting (docs/numpy.md, "Broadcasting dims that
are 1 at run time"); run it against two checkouts to compare. It measures
the CPU time of one thread (KILN_NUM_THREADS=1), which a loaded, shared
machine disturbs far less than wall time.

    python cmake-free-scripts/time_runtime_broadcast.py [--small]

--small: 20,000 elements (150 x 150), 300 calls per sample, in cache: the
steadiest comparison of the all-equal path.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("KILN_NUM_THREADS", "1")

import numpy as np

import kiln


def best_of(fn, args, repeats: int, calls: int) -> float:
    """Seconds per call: the best of `repeats` samples of `calls` calls."""
    fn(*args)
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(calls):
            fn(*args)
        times.append((time.process_time() - start) / calls)
    return min(times)


def stencil(a):
    return 0.2 * (a[1:-1] + a[:-2] + a[2:])


def diff(x):
    return x[1:] - x[:-1]


def neighbours_2d(d):
    return d[:, 1:] * d[:, :-1] + 1.0


def assign_shifted(x, y):
    x[1:] = y * 2.0


def add_args(x, y):
    return x * 2.0 + y


def outer_sum(col, row):
    return col * 2.0 + row


def column_plus_row(d, k):
    return d[:, k:k + 1] + d[k:k + 1, :]


def workloads(n: int, side: int) -> list:
    rng = np.random.default_rng(0)
    vec, mat = rng.random(n), rng.random((side, side))
    return [
        ("stencil 0.2*(a[1:-1]+a[:-2]+a[2:])", stencil, (vec,), {}),
        ("diff x[1:]-x[:-1]", diff, (vec,), {}),
        ("2-D d[:,1:]*d[:,:-1]+1", neighbours_2d, (mat,), {}),
        ("assign x[1:] = y*2 (y argument)", assign_shifted, (vec.copy(), vec[1:].copy()), {}),
        ("args x*2+y", add_args, (vec, vec.copy()), {}),
        ("args x*2+y, specialize_unit_dims=False", add_args, (vec, vec.copy()),
         {"specialize_unit_dims": False}),
        ("size-1 path d[:,k:k+1]+d[k:k+1,:]", column_plus_row, (mat, 3), {}),
        ("args (n,1)*2+(1,n), specialized", outer_sum, (mat[:, :1].copy(), mat[:1].copy()), {}),
        ("args (n,1)*2+(1,n), specialize_unit_dims=False", outer_sum, (mat[:, :1].copy(), mat[:1].copy()),
         {"specialize_unit_dims": False}),
        ("args (1,)*2+(n,), specialized", outer_sum, (vec[:1].copy(), vec), {}),
        ("args (1,)*2+(n,), specialize_unit_dims=False", outer_sum, (vec[:1].copy(), vec),
         {"specialize_unit_dims": False}),
    ]


def main() -> None:
    small = "--small" in sys.argv
    n, side, repeats, calls = (20_000, 150, 30, 300) if small else (2_000_000, 1000, 15, 1)
    print(f"kiln from {kiln.__file__}; n={n}, side={side}, CPU time of one thread, best of {repeats}")
    unit, scale = ("us", 1e6) if small else ("ms", 1e3)
    print(f"{'workload':48} {'kiln ' + unit:>9} {'numpy ' + unit:>9}")
    for name, fn, args, options in workloads(n, side):
        try:
            compiled = kiln.qjit(fn, **options)
            kiln_ms = f"{best_of(compiled, args, repeats, calls) * scale:9.3f}"
        except ValueError as e:
            kiln_ms = f"{'error':>9}"
            print(f"  ({name}: {str(e)[:70]})")
        numpy_ms = best_of(fn, args, repeats, calls) * scale
        print(f"{name:48} {kiln_ms} {numpy_ms:9.3f}")


if __name__ == "__main__":
    main()
