"""Random numbers drawn by compiled code against NumPy's (a benchmark, not a test).

For each draw, compiles a function taking a Generator (or using the legacy
global state), checks that it gives NumPy's numbers bit for bit from the same
seed, and prints the best over several samples of the CPU time per call
(process time) for kiln and for NumPy, at one size (default 10**6 values),
and a small size where the per-call costs dominate.

    python cmake-free-scripts/bench_random.py [--n N] [--repeats R]
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np

import kiln


def best_seconds(fn: Callable[[], Any], calls: int, repeats: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - start) / calls)
    return best


DRAWS: list[tuple[str, Callable]] = [
    ("rng.random(n)", lambda rng, n: rng.random(n)),
    ("rng.random(n, float32)", lambda rng, n: rng.random(n, dtype=np.float32)),
    ("rng.integers(0, 1000, n)", lambda rng, n: rng.integers(0, 1000, size=n)),
    ("rng.integers(0, 100, n, int8)", lambda rng, n: rng.integers(0, 100, size=n, dtype=np.int8)),
    ("rng.normal(0, 2, n)", lambda rng, n: rng.normal(0.0, 2.0, size=n)),
    ("rng.standard_normal(n)", lambda rng, n: rng.standard_normal(n)),
    ("rng.exponential(2, n)", lambda rng, n: rng.exponential(2.0, size=n)),
    ("rng.uniform(-1, 1, n)", lambda rng, n: rng.uniform(-1.0, 1.0, size=n)),
    ("rng.gamma(2, 1, n)", lambda rng, n: rng.gamma(2.0, 1.0, size=n)),
    ("rng.poisson(4, n)", lambda rng, n: rng.poisson(4.0, size=n)),
    ("rng.permutation(n)", lambda rng, n: rng.permutation(n)),
]
LEGACY: list[tuple[str, Callable]] = [
    ("np.random.rand(n)", lambda n: np.random.rand(n)),
    ("np.random.randn(n)", lambda n: np.random.randn(n)),
    ("np.random.randint(0, 1000, n)", lambda n: np.random.randint(0, 1000, size=n)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'draw':34} {'n':>9} {'kiln ms':>9} {'NumPy ms':>9} {'kiln/NumPy':>10}  same numbers")
    for n in (args.n, args.small):
        calls = max(1, 2_000_000 // max(n, 1) // 20)
        for label, draw in DRAWS:
            f = kiln.qjit(draw)
            mine, ref = np.random.default_rng(1), np.random.default_rng(1)
            same = np.array_equal(f(mine, n), draw(ref, n)) and mine.bit_generator.state == ref.bit_generator.state
            rng = np.random.default_rng(2)
            k = best_seconds(lambda: f(rng, n), calls, args.repeats)
            p = best_seconds(lambda: draw(rng, n), calls, args.repeats)
            print(f"{label:34} {n:9d} {k * 1e3:9.3f} {p * 1e3:9.3f} {k / p:10.2f}  {same}")
        for label, draw in LEGACY:
            f = kiln.qjit(draw)
            np.random.seed(1)
            got = f(n)
            np.random.seed(1)
            same = np.array_equal(got, draw(n))
            k = best_seconds(lambda: f(n), calls, args.repeats)
            p = best_seconds(lambda: draw(n), calls, args.repeats)
            print(f"{label:34} {n:9d} {k * 1e3:9.3f} {p * 1e3:9.3f} {k / p:10.2f}  {same}")


if __name__ == "__main__":
    main()
