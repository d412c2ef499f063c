"""Portfolio optimization: sample covariance accumulated from np.outer in a loop, minimum-
variance and tangency weights by np.linalg.solve, a long-only projected-gradient loop, and a
drawdown scan with an early return at the first breach."""

import numpy as np

from corpus import Program


def sample_cov(returns):
    T, n = returns.shape
    mu = np.zeros(n)
    for t in range(T):
        mu += returns[t]
    mu /= max(T, 1)
    cov = np.zeros((n, n))
    for t in range(T):
        d = returns[t] - mu
        cov += np.outer(d, d)
    cov /= max(T - 1, 1)
    return mu, cov


def min_variance(returns, rf, ridge):
    mu, cov = sample_cov(returns)
    n = len(mu)
    cov = cov + ridge * np.eye(n)
    ones = np.ones(n)
    w = np.linalg.solve(cov, ones)
    w /= w.sum()
    t = np.linalg.solve(cov, mu - rf)
    s = t.sum()
    if abs(s) > 1e-12:
        t = t / s
    vol = np.sqrt(w @ cov @ w)
    return w, t, vol


def long_only(cov, mu, risk_aversion, steps, lr):
    n = len(mu)
    w = np.full(n, 1.0 / n) if n else np.zeros(0)
    for _ in range(steps):
        grad = np.zeros(n)
        for i in range(n):
            grad[i] = risk_aversion * (cov[i, :] @ w) - mu[i]
        w -= lr * grad
        w[w < 0] = 0.0
        total = w.sum()
        if total > 0:
            w /= total
    return w, w @ mu - 0.5 * risk_aversion * w @ cov @ w


def first_breach(prices, limit):
    peak = -np.inf
    for i, p in enumerate(prices):
        peak = max(peak, p)
        if (peak - p) / peak > limit:
            return i, (peak - p) / peak
    return -1, 0.0


def _cov_inputs(n, rng):
    A = rng.normal(size=(n, n))
    return A @ A.T / max(n, 1) + 0.1 * np.eye(n), rng.normal(0.05, 0.02, n), 3.0, 40, 0.05


PROGRAMS = [
    Program(sample_cov, lambda n, rng: (rng.normal(0.001, 0.02, (2 * n + 1, 5)),), atol=1e-14),
    Program(min_variance, lambda n, rng: (rng.normal(0.001, 0.02, (3 * n + 2, 4)), 0.0002, 1e-4),
            rtol=1e-7, atol=1e-10),
    Program(long_only, _cov_inputs, rtol=1e-8, atol=1e-10),
    Program(first_breach, lambda n, rng: (100.0 * np.exp(np.cumsum(rng.normal(0, 0.03, n))), 0.08)),
]
