"""Writes to arguments: kiln against NumPy (a benchmark, not a test).

Each case writes part of a float64 argument (n x n, n = 1000 by default):
`X.T[0] = -1` (a column through a transpose), `X[-1] += 1` (the last row),
a loop writing one row per iteration, and a case whose write must keep the
old value (`y = X.copy(); X[0] = 1`). Before argument writes were in place
every case copied the whole argument (twice); now only the touched elements
move. Prints the median wall time per call over repeats (the argument is
written in place at every call, as NumPy's would be).

    python cmake-free-scripts/bench_argument_writes.py [--n N] [--calls C] [--repeats R]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import kiln


def column_through_transpose(X):
    X.T[0] = -1.0


def last_row_increment(X):
    X[-1] += 1.0


def rows_in_a_loop(X, k):
    for i in range(k):
        X[i] = 2.0


def keep_old_value(X):
    y = X.copy()
    X[0] = 1.0
    return y[0, 0]


CASES = [
    ("X.T[0] = -1", column_through_transpose, lambda X: (X,)),
    ("X[-1] += 1", last_row_increment, lambda X: (X,)),
    ("for i in range(8): X[i] = 2", rows_in_a_loop, lambda X: (X, 8)),
    ("y = X.copy(); X[0] = 1", keep_old_value, lambda X: (X,)),
]


def per_call(fn, args, calls: int, repeats: int) -> float:
    fn(*args)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    opts = parser.parse_args()
    print(f"kiln from {kiln.__file__}; X: float64[{opts.n}, {opts.n}]")
    print(f"{'case':<32} {'kiln':>10} {'NumPy':>10} {'kiln/NumPy':>11}")
    for label, fn, make_args in CASES:
        compiled = kiln.qjit(fn)
        X = np.random.default_rng(0).random((opts.n, opts.n))
        Y = X.copy()
        compiled(*make_args(X))
        fn(*make_args(Y))
        assert np.array_equal(X, Y), label
        k = per_call(compiled, make_args(X), opts.calls, opts.repeats)
        p = per_call(fn, make_args(Y), opts.calls, opts.repeats)
        print(f"{label:<32} {k * 1e6:8.1f}us {p * 1e6:8.1f}us {k / p:10.1f}x")


if __name__ == "__main__":
    main()
