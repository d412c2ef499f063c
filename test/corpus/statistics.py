"""Statistics: online moments, correlation, bootstrap, regression and density estimates."""

import math

import numpy as np

from corpus import Program


def welford(x):
    mean = 0.0
    m2 = 0.0
    n = 0
    for v in x:
        n += 1
        delta = v - mean
        mean += delta / n
        m2 += delta * (v - mean)
    if n < 2:
        return mean, 0.0
    return mean, m2 / (n - 1)


def correlation_matrix(data):
    n, p = data.shape
    mu = data.mean(axis=0)
    centered = data - mu
    cov = centered.T @ centered / (n - 1)
    std = np.sqrt(np.diag(cov))
    return cov / np.outer(std, std)


def bootstrap_means(x, idx):
    """Means of resamples drawn beforehand (idx: one row of indices per resample)."""
    B = idx.shape[0]
    means = np.empty(B)
    for b in range(B):
        means[b] = x[idx[b]].mean()
    return means, np.std(means)


def simple_ols(x, y):
    xm = x.mean()
    ym = y.mean()
    sxy = np.sum((x - xm) * (y - ym))
    sxx = np.sum((x - xm) ** 2)
    slope = sxy / sxx
    intercept = ym - slope * xm
    resid = y - (intercept + slope * x)
    ss_tot = np.sum((y - ym) ** 2)
    r2 = 1 - np.sum(resid ** 2) / ss_tot
    return slope, intercept, r2


def gaussian_kde(samples, grid, bandwidth):
    dens = np.zeros_like(grid)
    if len(samples) == 0:
        return dens
    norm = 1.0 / (len(samples) * bandwidth * math.sqrt(2 * math.pi))
    for s in samples:
        u = (grid - s) / bandwidth
        dens += np.exp(-0.5 * u * u)
    return dens * norm


def rolling_zscore(x, w):
    n = len(x)
    z = np.zeros(n)
    for i in range(w, n):
        seg = x[i - w:i]
        mu = seg.mean()
        sd = seg.std()
        if sd > 0:
            z[i] = (x[i] - mu) / sd
    return z


PROGRAMS = [
    Program(welford, lambda n, rng: (rng.standard_normal(n) * 3 + 1,), rtol=1e-8),
    Program(correlation_matrix, lambda n, rng: (rng.standard_normal((n, 4)),), rtol=1e-8),
    Program(bootstrap_means, lambda n, rng: (rng.standard_normal(n), rng.integers(0, max(n, 1), (20, n))),
            rtol=1e-8),
    Program(simple_ols, lambda n, rng: ((x := rng.random(n)), 2 * x + 0.1 * rng.standard_normal(n)), rtol=1e-7),
    Program(gaussian_kde, lambda n, rng: (rng.standard_normal(n), np.linspace(-3, 3, 25), 0.4), rtol=1e-8),
    Program(rolling_zscore, lambda n, rng: (rng.standard_normal(n), 3), rtol=1e-7, atol=1e-9),
]
