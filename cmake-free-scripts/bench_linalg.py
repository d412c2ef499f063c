"""Benchmark: np.linalg through kiln's LAPACK kernels against NumPy. Prints
a table of milliseconds (best of a few calls, compile excluded) and the
largest difference from NumPy's result relative to its largest element.
(The loop decompositions kiln had before, measured with this script in
its first version, lost everywhere: see docs/numpy.md.)

    python cmake-free-scripts/bench_linalg.py [--sizes 200,1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import kiln


def best(fn, *args, repeat: int) -> float:
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,1000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'function':<12}{'n':>6}{'numpy ms':>11}{'kiln ms':>11}{'rel. difference':>17}")
    for n in [int(s) for s in args.sizes.split(",")]:
        a = rng.standard_normal((n, n))
        spd = a @ a.T + n * np.eye(n)
        b = rng.standard_normal((n, 4))
        cases = [
            ("solve", lambda x, y: np.linalg.solve(x, y), (a, b)),
            ("inv", lambda x: np.linalg.inv(x), (a,)),
            ("cholesky", lambda x: np.linalg.cholesky(x), (spd,)),
            ("slogdet", lambda x: np.linalg.slogdet(x)[1], (a,)),
            ("qr", lambda x: np.linalg.qr(x)[1], (a,)),
            ("eigh", lambda x: np.linalg.eigh(x)[0], (spd,)),
            ("svd", lambda x: np.linalg.svd(x)[1], (a,)),
            ("eig", lambda x: np.linalg.eigvals(x), (spd,)),
            ("lstsq", lambda x, y: np.linalg.lstsq(x, y)[0], (a, b)),
            ("pinv", lambda x: np.linalg.pinv(x), (a,)),
            ("norm 2", lambda x: np.linalg.norm(x, 2), (a,)),
        ]
        for name, fn, inputs in cases:
            if name in ("eig", "pinv", "svd", "lstsq") and n > 500:
                continue  # a few seconds each on a shared machine
            expected = fn(*inputs)
            compiled = kiln.qjit(fn)
            err = float(np.max(np.abs(compiled(*inputs) - expected)) / max(np.max(np.abs(expected)), 1e-300))
            print(f"{name:<12}{n:>6}{best(fn, *inputs, repeat=args.repeat):>11.2f}"
                  f"{best(compiled, *inputs, repeat=args.repeat):>11.2f}{err:>17.1e}", flush=True)


if __name__ == "__main__":
    main()
