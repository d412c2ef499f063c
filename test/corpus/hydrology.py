"""Hydrology: a linear-reservoir rainfall-runoff model, SCS curve-number runoff, a recession
baseflow filter, and flow-duration exceedance from a daily record."""

import numpy as np

from corpus import Program


def linear_reservoir(rain, k, storage0):
    S = storage0
    q = np.zeros(len(rain))
    for t in range(len(rain)):
        S += rain[t]
        q[t] = S / k
        S -= q[t]
    return q, S, q.sum() + S - storage0 - rain.sum()


def scs_runoff(precip, cn):
    S = 25400.0 / cn - 254.0
    Ia = 0.2 * S
    Q = np.where(precip > Ia, (precip - Ia) ** 2 / (precip - Ia + S), 0.0)
    return Q, Q.sum(), (Q > 0).sum()


def baseflow_filter(flow, alpha):
    # Lyne-Hollick one-pass digital filter
    n = len(flow)
    quick = np.zeros(n)
    base = flow.copy()
    for i in range(1, n):
        quick[i] = alpha * quick[i - 1] + 0.5 * (1 + alpha) * (flow[i] - flow[i - 1])
        if quick[i] < 0:
            quick[i] = 0.0
        base[i] = flow[i] - quick[i]
        if base[i] > flow[i]:
            base[i] = flow[i]
    bfi = base.sum() / flow.sum() if n > 0 else 0.0
    return base, bfi


def flow_duration(flow, probs):
    q_sorted = np.sort(flow)[::-1]
    n = len(flow)
    ranks = np.arange(1, n + 1)
    exceed = ranks / (n + 1.0)
    out = np.zeros(len(probs))
    for j, p in enumerate(probs):
        idx = 0
        while idx < n - 1 and exceed[idx] < p:
            idx += 1
        out[j] = q_sorted[idx] if n > 0 else 0.0
    return q_sorted, exceed, out


PROGRAMS = [
    Program(linear_reservoir, lambda n, rng: (rng.exponential(2.0, n) * (rng.uniform(size=n) > 0.5), 4.0, 10.0),
            atol=1e-9),
    Program(scs_runoff, lambda n, rng: (rng.gamma(2.0, 20.0, n), 75.0)),
    Program(baseflow_filter, lambda n, rng: (rng.uniform(1.0, 10.0, n), 0.925)),
    Program(flow_duration, lambda n, rng: (rng.lognormal(1.0, 0.8, n), np.array([0.05, 0.5, 0.95]))),
]
