"""Acoustics: an A-weighting filter curve on float32 frequencies, room reverberation time by
Schroeder backward integration, a DFT written as loops, and delay-and-sum beamforming."""

import numpy as np

from corpus import Program


def a_weighting(freqs):
    f2 = freqs * freqs
    num = np.float32(12194.0 ** 2) * f2 * f2
    den = (f2 + np.float32(20.6 ** 2)) * np.sqrt((f2 + np.float32(107.7 ** 2)) * (f2 + np.float32(737.9 ** 2))) \
        * (f2 + np.float32(12194.0 ** 2))
    ra = num / den
    db = np.float32(20.0) * np.log10(np.maximum(ra, np.float32(1e-12))) + np.float32(2.0)
    return db, db.max() if len(db) else np.float32(0.0)


def schroeder_t60(impulse, fs):
    energy = impulse ** 2
    edc = np.cumsum(energy[::-1])[::-1]
    if len(edc) == 0 or edc[0] <= 0:
        return edc, -1.0
    edc_db = 10.0 * np.log10(edc / edc[0] + 1e-300)
    i5 = -1
    i35 = -1
    for i in range(len(edc_db)):
        if i5 < 0 and edc_db[i] <= -5.0:
            i5 = i
        if edc_db[i] <= -35.0:
            i35 = i
            break
    if i5 < 0 or i35 <= i5:
        return edc_db, -1.0
    return edc_db, 2.0 * (i35 - i5) / fs


def dft_loops(x):
    n = len(x)
    re = np.zeros(n)
    im = np.zeros(n)
    for k in range(n):
        for t in range(n):
            ang = 2.0 * np.pi * k * t / n
            re[k] += x[t] * np.cos(ang)
            im[k] -= x[t] * np.sin(ang)
    mag = np.sqrt(re ** 2 + im ** 2)
    return re, im, mag


def delay_and_sum(signals, delays):
    n_mic, n_t = signals.shape
    out = np.zeros(n_t)
    for m in range(n_mic):
        d = delays[m]
        if d < n_t:
            out[d:] += signals[m, :n_t - d]
    out /= max(n_mic, 1)
    return out, np.sum(out ** 2)


PROGRAMS = [
    Program(a_weighting, lambda n, rng: (rng.uniform(20.0, 20000.0, n).astype(np.float32),), rtol=2e-5, atol=1e-4),
    Program(schroeder_t60, lambda n, rng: (rng.normal(size=40 * n) * np.exp(-np.arange(40 * n) / (6.0 * n + 1)), 1000.0),
            rtol=1e-9, atol=1e-9),
    Program(dft_loops, lambda n, rng: (rng.normal(size=n),), large=48, rtol=1e-9, atol=1e-9),
    Program(delay_and_sum, lambda n, rng: (rng.normal(size=(4, 3 * n)), rng.integers(0, 5, 4))),
]
