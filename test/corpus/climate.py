"""Climate indices: monthly anomalies against a climatology, a standardized precipitation-like
index, heat-wave spells (runs above a threshold) collected by np.concatenate, and growing degree
days with a base and a cap."""

import numpy as np

from corpus import Program


def monthly_anomaly(temps):
    # temps: (years*12,) monthly series; climatology per calendar month
    n = len(temps)
    clim = np.zeros(12)
    count = np.zeros(12)
    for i in range(n):
        clim[i % 12] += temps[i]
        count[i % 12] += 1
    clim = np.where(count > 0, clim / np.maximum(count, 1), 0.0)
    anom = temps - clim[np.arange(n) % 12]
    return anom, clim


def standardized_index(precip, window):
    n = len(precip)
    acc = np.zeros(max(n - window + 1, 0))
    for i in range(len(acc)):
        acc[i] = precip[i:i + window].sum()
    if len(acc) < 2:
        return acc, 0
    z = (acc - acc.mean()) / acc.std()
    droughts = 0
    i = 0
    while i < len(z):
        if z[i] < -1.0:
            droughts += 1
            while i < len(z) and z[i] < 0:
                i += 1
        else:
            i += 1
    return z, droughts


def heat_waves(tmax, threshold, min_len):
    starts = np.zeros(0, dtype=np.int64)
    lengths = np.zeros(0, dtype=np.int64)
    run = 0
    for i in range(len(tmax) + 1):
        if i < len(tmax) and tmax[i] > threshold:
            run += 1
        else:
            if run >= min_len:
                starts = np.concatenate((starts, np.array([i - run])))
                lengths = np.concatenate((lengths, np.array([run])))
            run = 0
    return starts, lengths, lengths.sum()


def growing_degree_days(tmin, tmax, base, cap):
    tmx = tmax.copy()
    tmx[tmx > cap] = cap
    tmn = np.maximum(tmin, base)
    gdd = (tmx + tmn) / 2 - base
    gdd[gdd < 0] = 0
    total = np.cumsum(gdd)
    day = np.searchsorted(total, 100.0)
    return gdd, total, day


PROGRAMS = [
    Program(monthly_anomaly, lambda n, rng: (15 + 10 * np.sin(np.arange(3 * n) * np.pi / 6) + rng.normal(0, 1, 3 * n),)),
    Program(standardized_index, lambda n, rng: (rng.gamma(2.0, 30.0, 4 * n), 3)),
    Program(heat_waves, lambda n, rng: (30 + 5 * rng.normal(size=5 * n), 33.0, 2)),
    Program(growing_degree_days, lambda n, rng: (rng.uniform(0, 15, 4 * n), rng.uniform(10, 35, 4 * n), 10.0, 30.0)),
]
