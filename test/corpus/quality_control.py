"""Quality control: a two-sided CUSUM chart that stops at the first alarm, with the z-test
p-value of the run so far from the normal CDF (math.erf)."""

import math

import numpy as np

from corpus import Program


def normal_sf(z):
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def cusum_alarm(x, target, sigma, k, h):
    hi = 0.0
    lo = 0.0
    path = np.zeros((len(x), 2))
    for t in range(len(x)):
        z = (x[t] - target) / sigma
        hi = max(0.0, hi + z - k)
        lo = max(0.0, lo - z - k)
        path[t, 0], path[t, 1] = hi, lo
        if hi > h or lo > h:
            zbar = (x[:t + 1].mean() - target) / (sigma / math.sqrt(t + 1))
            return t, 2 * normal_sf(abs(zbar)), path[:t + 1]
    return -1, 1.0, path


PROGRAMS = [
    Program(cusum_alarm, lambda n, rng: (10 + rng.normal(0, 1, n) + 0.8 * (np.arange(n) > n // 2), 10.0, 1.0,
                                         0.5, 4.0), rtol=1e-10),
]
