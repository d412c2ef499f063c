"""Time kiln on loop kernels: the slice stencils of NPBench (jacobi_1d,
jacobi_2d, heat_3d) and catalyst_loop, at chosen sizes.

In: a kernel name, its trip count and sizes. Out: one line per size, the
median and min of 1 s of calls on fresh copies of the arguments. Run it
under different environments to compare dispatch settings, e.g.

    KILN_NUM_THREADS=1 python cmake-free-scripts/bench_loops.py jacobi_2d 80 250,350
    KILN_PARALLEL_MIN_WORK=0 python cmake-free-scripts/bench_loops.py jacobi_1d 2000 100

(numbers in docs/benchmarks.md, "Loops without repeated work").
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import kiln


def jacobi_1d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_2d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def heat_3d(TSTEPS, A, B):
    for _ in range(1, TSTEPS):
        B[1:-1, 1:-1, 1:-1] = (
            0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
            + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
            + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, 0:-2])
            + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (
            0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
            + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
            + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, 0:-2])
            + B[1:-1, 1:-1, 1:-1])


def catalyst_loop(trips, a0):
    a = a0
    for _ in range(10):   # a static range: kiln-unroll-elementwise-loops fuses it
        a = a * trips
    return a0 + a


KERNELS = {"jacobi_1d": (jacobi_1d, 1), "jacobi_2d": (jacobi_2d, 2), "heat_3d": (heat_3d, 3),
           "catalyst_loop": (catalyst_loop, 1)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel", choices=sorted(KERNELS))
    parser.add_argument("steps", type=int, help="the kernel's first argument (time steps, or the factor)")
    parser.add_argument("sizes", help="comma-separated N (arrays are N, N x N or N x N x N)")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of timed calls per size")
    opts = parser.parse_args(argv)
    fn, ndim = KERNELS[opts.kernel]
    compiled = kiln.qjit(fn)
    for n in (int(s) for s in opts.sizes.split(",")):
        a0 = np.random.default_rng(0).standard_normal((n,) * ndim)
        args = (a0,) if opts.kernel == "catalyst_loop" else (a0, a0.copy())
        compiled(opts.steps, *(a.copy() for a in args))
        times: list[float] = []
        end = time.perf_counter() + opts.budget
        while time.perf_counter() < end or len(times) < 5:
            fresh = [a.copy() for a in args]
            start = time.perf_counter()
            compiled(opts.steps, *fresh)
            times.append(time.perf_counter() - start)
        print(f"{opts.kernel} steps={opts.steps} N={n}: median {statistics.median(times) * 1e3:.3f} ms "
              f"min {min(times) * 1e3:.3f} ms ({len(times)} calls)", flush=True)


if __name__ == "__main__":
    main()
