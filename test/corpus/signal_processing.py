"""Signal processing: smoothing, filtering and spectra as DSP code writes them."""

import numpy as np

from corpus import Program


def moving_average(x, window):
    n = x.shape[0]
    out = np.zeros(n)
    acc = 0.0
    for i in range(n):
        acc += x[i]
        if i >= window:
            acc -= x[i - window]
        out[i] = acc / min(i + 1, window)
    return out


def fir_filter(x, h):
    n = len(x)
    m = len(h)
    y = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for k in range(m):
            if i - k < 0:
                break
            acc += h[k] * x[i - k]
        y[i] = acc
    return y


def ema_inplace(x, alpha):
    """Exponential smoothing of a recorded signal, overwriting the buffer."""
    for i in range(1, x.shape[0]):
        x[i] = alpha * x[i] + (1 - alpha) * x[i - 1]


def dft_power(x):
    n = x.shape[0]
    re = np.zeros(n)
    im = np.zeros(n)
    t = np.arange(n)
    for k in range(n):
        angle = 2 * np.pi * k * t / n
        re[k] = np.sum(x * np.cos(angle))
        im[k] = -np.sum(x * np.sin(angle))
    return re ** 2 + im ** 2


def zero_crossing_rate(x):
    count = 0
    for i in range(1, len(x)):
        if (x[i - 1] >= 0) != (x[i] >= 0):
            count += 1
    return count / max(len(x) - 1, 1)


def remove_dc_and_normalize(x):
    x -= x.mean() if x.size else 0.0
    peak = np.abs(x).max() if x.size else 0.0
    if peak > 0:
        x /= peak
    return peak


PROGRAMS = [
    Program(moving_average, lambda n, rng: (rng.standard_normal(n), 4)),
    Program(fir_filter, lambda n, rng: (rng.standard_normal(n), np.array([0.25, 0.5, 0.25, -0.1]))),
    Program(ema_inplace, lambda n, rng: (rng.standard_normal(n), 0.3)),
    Program(dft_power, lambda n, rng: (rng.standard_normal(n),), rtol=1e-7, atol=1e-9),
    Program(zero_crossing_rate, lambda n, rng: (rng.standard_normal(n),)),
    Program(remove_dc_and_normalize, lambda n, rng: (rng.standard_normal(n) + 3.0,)),
]
