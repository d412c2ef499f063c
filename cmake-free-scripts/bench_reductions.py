"""Reductions and scans: kiln against NumPy, speed and accuracy (a
benchmark, not a test).

Times argmax / argmin, cumsum, np.maximum.accumulate and float sums on 1-D
arrays of 1e6 (and 1e7) elements and along each axis of 1000 x 1000 arrays
(min CPU time per call over several samples taken in turn), and measures the relative error of float32 and
float64 sums against an exact (float128 / math.fsum) reference, for kiln
and NumPy side by side:

    python cmake-free-scripts/bench_reductions.py [--repeats R] [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time

import numpy as np

import kiln


def best_seconds(fn, args, calls: int, repeats: int) -> float:
    fn(*args)
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.process_time() - start) / calls)
    return best


def argmax(x):
    return np.argmax(x)


def argmin(x):
    return np.argmin(x)


def cumsum(x):
    return np.cumsum(x)


def max_accumulate(x):
    return np.maximum.accumulate(x)


def total(x):
    return np.sum(x)


def row_sums(x):
    return np.sum(x, axis=1)


def argmax_rows(x):
    return np.argmax(x, axis=1)


def argmin_columns(x):
    return np.argmin(x, axis=0)


def column_sums(x):
    return np.sum(x, axis=0)


def cumsum_rows(x):
    return np.cumsum(x, axis=1)


def cumsum_columns(x):
    return np.cumsum(x, axis=0)


def exact_sum(x: np.ndarray) -> float:
    return math.fsum(x.astype(np.float64).tolist())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("KILN_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-bench-reductions-"))
    rng = np.random.default_rng(0)
    n = 100_000 if args.quick else 1_000_000
    cases = [
        ("argmax f64", argmax, rng.random(n)),
        ("argmax f32", argmax, rng.random(n).astype(np.float32)),
        ("argmax i64", argmax, rng.integers(0, 1 << 40, n)),
        ("argmin f64", argmin, rng.random(n)),
        ("argmin i32", argmin, rng.integers(-1000, 1000, n).astype(np.int32)),
        ("cumsum f64", cumsum, rng.random(n)),
        ("cumsum i64", cumsum, rng.integers(0, 100, n)),
        ("maximum.accumulate f64", max_accumulate, rng.random(n)),
        ("sum f64", total, rng.random(n)),
        ("sum f32", total, rng.random(n).astype(np.float32)),
        ("sum f32 rows (1000 x 1000)", row_sums, rng.random((1000, n // 1000)).astype(np.float32)),
        ("sum f64 axis=0 (1000 x 1000)", column_sums, rng.random((1000, n // 1000))),
        ("argmax f64 axis=1 (1000 x 1000)", argmax_rows, rng.random((1000, n // 1000))),
        ("argmin f64 axis=0 (1000 x 1000)", argmin_columns, rng.random((1000, n // 1000))),
        ("cumsum f64 axis=1 (1000 x 1000)", cumsum_rows, rng.random((1000, n // 1000))),
        ("cumsum f64 axis=0 (1000 x 1000)", cumsum_columns, rng.random((1000, n // 1000))),
    ]
    print(f"{'case, n = %d' % n:32} {'numpy ms':>10} {'kiln ms':>10} {'kiln/np':>8}")
    for label, fn, x in cases:
        compiled = kiln.qjit(fn)
        got, want = compiled(x), fn(x)
        if label.startswith(("sum", "cumsum f64")):
            np.testing.assert_allclose(got, want, rtol=1e-4)
        else:
            np.testing.assert_array_equal(got, want)
        calls = 5 if args.quick else 3
        t_np = best_seconds(fn, (x,), calls, args.repeats)
        t_kiln = best_seconds(compiled, (x,), calls, args.repeats)
        print(f"{label:32} {t_np * 1e3:10.3f} {t_kiln * 1e3:10.3f} {t_kiln / t_np:8.2f}", flush=True)
    print()
    print(f"{'sum accuracy':32} {'numpy rel. err':>15} {'kiln rel. err':>15}")
    compiled = kiln.qjit(total)
    for size in ([10**5] if args.quick else [10**6, 10**7]):
        for dtype in (np.float32, np.float64):
            x = rng.random(size).astype(dtype)
            exact = exact_sum(x)
            err_np = abs(float(np.sum(x)) - exact) / exact
            err_kiln = abs(float(compiled(x)) - exact) / exact
            print(f"{'sum %s, n = %.0e' % (np.dtype(dtype).name, size):32} {err_np:15.2e} {err_kiln:15.2e}", flush=True)


if __name__ == "__main__":
    main()
