"""Power systems: DC power flow on a ring network, economic dispatch by lambda iteration, and
load-duration statistics from an hourly load profile."""

import numpy as np

from corpus import Program


def dc_power_flow(x_line, injections):
    # ring network: line k joins bus k and bus k+1 (mod n); bus 0 is the slack
    n = len(injections)
    B = np.zeros((n, n))
    for k in range(n):
        i, j = k, (k + 1) % n
        b = 1.0 / x_line[k]
        B[i, i] += b
        B[j, j] += b
        B[i, j] -= b
        B[j, i] -= b
    theta = np.zeros(n)
    if n > 1:
        theta[1:] = np.linalg.solve(B[1:, 1:], injections[1:])
    flows = np.zeros(n)
    for k in range(n):
        flows[k] = (theta[k] - theta[(k + 1) % n]) / x_line[k]
    return theta, flows, np.abs(flows).max() if n else 0.0


def economic_dispatch(a, b, pmin, pmax, demand):
    # quadratic costs a*P^2 + b*P; bisection on the system lambda
    lo, hi = 0.0, 1000.0
    P = np.zeros(len(a))
    iters = 0
    while hi - lo > 1e-9:
        lam = 0.5 * (lo + hi)
        P = np.clip((lam - b) / (2 * a), pmin, pmax)
        if P.sum() < demand:
            lo = lam
        else:
            hi = lam
        iters += 1
    cost = np.sum(a * P * P + b * P)
    return P, cost, iters


def load_duration(load, capacity):
    curve = np.sort(load)[::-1]
    hours_over = 0
    energy_unserved = 0.0
    for h in range(len(load)):
        if load[h] > capacity:
            hours_over += 1
            energy_unserved += load[h] - capacity
    peak = max(load) if len(load) else 0.0
    lf = load.mean() / peak if peak > 0 else 0.0
    return curve, hours_over, energy_unserved, lf


PROGRAMS = [
    Program(dc_power_flow, lambda n, rng: (rng.uniform(0.05, 0.3, n), np.concatenate([[0.0], rng.normal(0, 1, max(n - 1, 0))])[:n]),
            rtol=1e-8, atol=1e-10),
    Program(economic_dispatch, lambda n, rng: (rng.uniform(0.01, 0.05, n), rng.uniform(10, 30, n),
                                               np.zeros(n), rng.uniform(50, 200, n), 60.0 * n), rtol=1e-7, atol=1e-6),
    Program(load_duration, lambda n, rng: (rng.uniform(300, 900, n), 750.0)),
]
