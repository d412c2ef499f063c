"""Traffic engineering: loop-detector speed/flow aggregation with np.interp gap filling, a
Greenshields fit by np.polyfit, signal-timing delay (Webster) per approach, and travel-time
percentiles from probe vehicles binned by hour."""

import numpy as np

from corpus import Program


def detector_fill(t, speed, valid):
    # fill invalid samples by interpolation between the valid ones
    good = valid.astype(bool)
    out = speed.copy()
    if good.sum() >= 1:
        out[~good] = np.interp(t[~good], t[good], speed[good])
    smooth = np.zeros(len(out))
    for i in range(len(out)):
        lo = max(0, i - 2)
        hi = min(len(out), i + 3)
        smooth[i] = out[lo:hi].mean()
    return out, smooth


def greenshields(density, speed):
    if len(density) < 2:
        return 0.0, 0.0, 0.0
    slope, intercept = np.polyfit(density, speed, 1)
    vf = intercept
    kj = -intercept / slope
    capacity = vf * kj / 4.0
    return vf, kj, capacity


def webster_delay(volumes, saturation, cycle, lost):
    y = volumes / saturation
    Y = y.sum()
    green = np.zeros(len(volumes))
    if Y > 0:
        green = (cycle - lost) * y / Y
    lam = green / cycle
    x = np.where(lam > 0, y / np.where(lam > 0, lam, 1.0), 0.0)
    d = np.zeros(len(volumes))
    for i in range(len(volumes)):
        if x[i] >= 1.0 or lam[i] == 0:
            d[i] = np.inf
            continue
        d[i] = 0.5 * cycle * (1 - lam[i]) ** 2 / (1 - lam[i] * x[i])
        d[i] += x[i] ** 2 / (2 * volumes[i] / 3600.0 * (1 - x[i]))
    total = np.sum(d[np.isfinite(d)] * volumes[np.isfinite(d)])
    return green, d, total


def hourly_percentiles(hour, travel_time):
    p50 = np.zeros(24)
    p85 = np.zeros(24)
    counts = np.zeros(24, dtype=np.int64)
    for h in range(24):
        sel = travel_time[hour == h]
        counts[h] = len(sel)
        if len(sel) > 0:
            p50[h] = np.median(sel)
            p85[h] = np.percentile(sel, 85)
    return p50, p85, counts


PROGRAMS = [
    Program(detector_fill, lambda n, rng: (np.arange(n) * 30.0, rng.uniform(20, 70, n), (rng.uniform(size=n) > 0.3).astype(np.int64))),
    Program(greenshields, lambda n, rng: (np.linspace(5, 100, n), 90 - 0.8 * np.linspace(5, 100, n) + rng.normal(0, 2, n)),
            rtol=1e-7, atol=1e-9),
    Program(webster_delay, lambda n, rng: (rng.uniform(100, 600, n), np.full(n, 1800.0), 90.0, 12.0)),
    Program(hourly_percentiles, lambda n, rng: (rng.integers(0, 24, 10 * n), rng.gamma(4.0, 3.0, 10 * n))),
]
