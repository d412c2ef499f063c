"""Audio: envelopes, dynamics, effects, pitch and band energies."""

import math

import numpy as np

from corpus import Program


def rms_frames(x, frame, hop):
    if len(x) < frame:
        return np.zeros(0)
    n_frames = 1 + (len(x) - frame) // hop
    out = np.empty(n_frames)
    for f in range(n_frames):
        seg = x[f * hop:f * hop + frame]
        out[f] = math.sqrt(np.mean(seg ** 2))
    return out


def compressor(x, threshold_db, ratio, attack, release):
    gain = np.ones_like(x)
    env = 0.0
    for i in range(x.shape[0]):
        level = abs(x[i])
        coeff = attack if level > env else release
        env = coeff * env + (1 - coeff) * level
        level_db = 20 * math.log10(max(env, 1e-9))
        if level_db > threshold_db:
            gain_db = threshold_db + (level_db - threshold_db) / ratio - level_db
            gain[i] = 10 ** (gain_db / 20)
    return x * gain


def echo(x, delay, feedback):
    y = x.copy()
    for i in range(delay, len(y)):
        y[i] += feedback * y[i - delay]
    return y


def autocorr_pitch(x, sr, fmin, fmax):
    n = len(x)
    lag_min = int(sr / fmax)
    lag_max = min(int(sr / fmin), n - 1)
    best_lag = 0
    best = -np.inf
    for lag in range(lag_min, lag_max + 1):
        r = np.dot(x[:n - lag], x[lag:])
        if r > best:
            best = r
            best_lag = lag
    return sr / best_lag if best_lag > 0 else 0.0


def band_energies(x, sr):
    bands = [(0, 300), (300, 2000), (2000, 8000)]
    energies = []
    n = len(x)
    for lo, hi in bands:
        total = 0.0
        for k in range(n // 2 + 1):
            f = k * sr / max(n, 1)
            if lo <= f < hi:
                re = np.sum(x * np.cos(2 * np.pi * k * np.arange(n) / n))
                im = np.sum(x * np.sin(2 * np.pi * k * np.arange(n) / n))
                total += re * re + im * im
        energies.append(total)
    return np.array(energies)


def soft_clip_inplace(x, drive):
    np.tanh(drive * x, out=x)
    x /= math.tanh(drive)


def _tone(n, rng, f0=220.0, sr=8000.0):
    t = np.arange(n) / sr
    return np.sin(2 * np.pi * f0 * t) + 0.1 * rng.standard_normal(n)


PROGRAMS = [
    Program(rms_frames, lambda n, rng: (rng.standard_normal(4 * n), 8, 4)),
    Program(compressor, lambda n, rng: (rng.standard_normal(n) * 0.5, -12.0, 4.0, 0.9, 0.99), rtol=1e-8),
    Program(echo, lambda n, rng: (rng.standard_normal(n), 3, 0.5), rtol=1e-8),
    Program(autocorr_pitch, lambda n, rng: (_tone(4 * n, rng), 8000.0, 80.0, 1000.0), large=120, rtol=1e-8),
    Program(band_energies, lambda n, rng: (_tone(n, rng), 8000.0), rtol=1e-7, atol=1e-9),
    Program(soft_clip_inplace, lambda n, rng: (rng.standard_normal(n), 2.0), rtol=1e-12),
]
