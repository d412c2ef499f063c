"""Exercise physiology: training load (acute:chronic workload ratio by exponentially weighted
averages), heart-rate zones from float32 samples, and lap splits found by a while loop over
cumulative distance."""

import numpy as np

from corpus import Program


def acwr(load, acute_days, chronic_days):
    a_acute = 2.0 / (acute_days + 1)
    a_chronic = 2.0 / (chronic_days + 1)
    acute = 0.0
    chronic = 0.0
    ratio = np.zeros(len(load))
    for i, x in enumerate(load):
        acute = a_acute * x + (1 - a_acute) * acute
        chronic = a_chronic * x + (1 - a_chronic) * chronic
        ratio[i] = acute / chronic if chronic > 0 else 0.0
    danger = np.flatnonzero(ratio > 1.5)
    return ratio, danger


def hr_zones(hr, hr_max):
    edges = np.array([0.5, 0.6, 0.7, 0.8, 0.9], dtype=np.float32) * hr_max
    zone = np.searchsorted(edges, hr, side="right")
    seconds = np.zeros(6, dtype=np.int64)
    for z in zone:
        seconds[z] += 1
    trimp = (hr / hr_max * np.exp(np.float32(1.92) * hr / hr_max)).sum()
    return zone, seconds, trimp


def lap_splits(distance_step, time_step, lap):
    dist = np.cumsum(distance_step)
    t = np.cumsum(time_step)
    splits = np.zeros(0)
    target = lap
    i = 0
    last_t = 0.0
    while i < len(dist):
        if dist[i] >= target:
            splits = np.append(splits, t[i] - last_t)
            last_t = t[i]
            target += lap
        else:
            i += 1
    return splits


PROGRAMS = [
    Program(acwr, lambda n, rng: (rng.gamma(2.0, 200.0, 8 * n) * (rng.uniform(size=8 * n) > 0.2), 7, 28)),
    Program(hr_zones, lambda n, rng: (rng.uniform(80, 195, 20 * n).astype(np.float32), np.float32(195.0)), rtol=1e-5, atol=1e-4),
    Program(lap_splits, lambda n, rng: (rng.uniform(2.5, 4.5, 30 * n), np.ones(30 * n), 100.0)),
]
