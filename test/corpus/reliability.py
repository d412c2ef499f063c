"""Reliability engineering: a Weibull fit by median-rank regression, MTBF from failure logs by
machine with np.unique, and a Markov availability model solved with np.linalg.solve."""

import numpy as np

from corpus import Program


def weibull_mrr(failure_times):
    n = len(failure_times)
    if n < 2:
        return np.nan, np.nan
    t = np.sort(failure_times)
    ranks = (np.arange(1, n + 1) - 0.3) / (n + 0.4)
    x = np.log(t)
    y = np.log(-np.log(1.0 - ranks))
    xm, ym = x.mean(), y.mean()
    beta = ((x - xm) * (y - ym)).sum() / ((x - xm) ** 2).sum()
    eta = np.exp(xm - ym / beta)
    return beta, eta


def mtbf_by_machine(machine, hours):
    ids, counts = np.unique(machine, return_counts=True)
    total = np.zeros(len(ids))
    for k, m in enumerate(ids):
        total[k] = hours[machine == m].sum()
    mtbf = total / counts
    worst = ids[np.argmin(mtbf)] if len(ids) else -1
    return ids, counts, mtbf, worst


def markov_availability(fail_rates, repair_rates):
    # k identical-ish units in series-parallel: birth-death chain on the number failed
    k = len(fail_rates)
    Q = np.zeros((k + 1, k + 1))
    for i in range(k):
        Q[i, i + 1] = fail_rates[i]
        Q[i + 1, i] = repair_rates[i]
    for i in range(k + 1):
        Q[i, i] = -Q[i].sum()
    A = Q.T.copy()
    A[-1, :] = 1.0
    b = np.zeros(k + 1)
    b[-1] = 1.0
    p = np.linalg.solve(A, b)
    return p, 1.0 - p[-1]


PROGRAMS = [
    Program(weibull_mrr, lambda n, rng: (rng.weibull(1.7, n) * 500.0,), rtol=1e-9),
    Program(mtbf_by_machine, lambda n, rng: (rng.integers(0, n + 1, 3 * n), rng.uniform(10, 200, 3 * n))),
    Program(markov_availability, lambda n, rng: (rng.uniform(0.001, 0.01, n), rng.uniform(0.1, 0.5, n)),
            rtol=1e-8, atol=1e-12),
]
