"""Seismology: STA/LTA event triggering with an np.append-grown pick list, Gutenberg-Richter
b-value by maximum likelihood, a float32 trace's envelope by moving RMS, and magnitude-binned
counts with integer arithmetic."""

import numpy as np

from corpus import Program


def sta_lta(trace, ns, nl, on, off):
    e = trace ** 2
    c = np.cumsum(np.concatenate(([0.0], e)))
    picks = np.array([], dtype=np.int64)
    active = False
    ratio = np.zeros(len(trace))
    for i in range(nl, len(trace)):
        sta = (c[i + 1] - c[i + 1 - ns]) / ns
        lta = (c[i + 1] - c[i + 1 - nl]) / nl
        ratio[i] = sta / lta if lta > 0 else 0.0
        if not active and ratio[i] > on:
            picks = np.append(picks, i)
            active = True
        elif active and ratio[i] < off:
            active = False
    return ratio, picks


def b_value(mags, mc, dm):
    m = mags[mags >= mc - dm / 2]
    if len(m) == 0:
        return np.nan, 0
    b = np.log10(np.e) / (m.mean() - (mc - dm / 2))
    return b, len(m)


def moving_rms(trace, w):
    n = len(trace)
    out = np.zeros(n, dtype=np.float32)
    sq = trace * trace
    for i in range(n):
        lo = max(0, i - w + 1)
        out[i] = np.sqrt(sq[lo:i + 1].mean())
    return out


def magnitude_bins(mags_tenths):
    # magnitudes stored as integer tenths; bins of half a unit
    bins = mags_tenths // 5
    lo = bins.min() if len(bins) else 0
    hist = np.zeros(int(bins.max() - lo + 1) if len(bins) else 0, dtype=np.int64)
    for b in bins:
        hist[b - lo] += 1
    cum = np.cumsum(hist[::-1])[::-1]
    return lo * 5, hist, cum


PROGRAMS = [
    Program(sta_lta, lambda n, rng: (np.concatenate((rng.normal(0, 1, 8 * n), rng.normal(0, 6, 2 * n), rng.normal(0, 1, 4 * n))),
                                     3, 20, 2.5, 1.2), rtol=1e-8, atol=1e-10),
    Program(b_value, lambda n, rng: (2.0 + rng.exponential(0.43, 5 * n).round(1), 2.5, 0.1)),
    Program(moving_rms, lambda n, rng: (rng.normal(size=6 * n).astype(np.float32), 5), rtol=1e-5, atol=1e-6),
    Program(magnitude_bins, lambda n, rng: (rng.integers(-10, 70, 3 * n),)),
]
