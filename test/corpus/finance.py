"""Finance: option pricing, drawdowns, volatility, Monte Carlo with given draws."""

import math

import numpy as np

from corpus import Program


def norm_cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def black_scholes_calls(S, K, r, sigma, T):
    prices = np.zeros(len(S))
    for i in range(len(S)):
        d1 = (math.log(S[i] / K[i]) + (r + 0.5 * sigma ** 2) * T) / (sigma * math.sqrt(T))
        d2 = d1 - sigma * math.sqrt(T)
        prices[i] = S[i] * norm_cdf(d1) - K[i] * math.exp(-r * T) * norm_cdf(d2)
    return prices


def crr_american_put(S0, K, r, sigma, T, steps):
    dt = T / steps
    u = math.exp(sigma * math.sqrt(dt))
    d = 1 / u
    p = (math.exp(r * dt) - d) / (u - d)
    disc = math.exp(-r * dt)
    prices = S0 * u ** np.arange(steps, -1, -1) * d ** np.arange(0, steps + 1)
    values = np.maximum(K - prices, 0.0)
    for i in range(steps - 1, -1, -1):
        prices = prices[:-1] * d
        values = disc * (p * values[:-1] + (1 - p) * values[1:])
        values = np.maximum(values, K - prices)
    return values[0]


def max_drawdown(prices):
    peak = prices[0]
    mdd = 0.0
    for p in prices:
        if p > peak:
            peak = p
        dd = (peak - p) / peak
        mdd = max(mdd, dd)
    return mdd


def ewma_volatility(returns, lam=0.94):
    var = np.empty_like(returns)
    if returns.size == 0:
        return var
    var[0] = returns[0] ** 2
    for t in range(1, len(returns)):
        var[t] = lam * var[t - 1] + (1 - lam) * returns[t - 1] ** 2
    return np.sqrt(var)


def asian_call_mc(S0, K, r, sigma, T, Z):
    n_paths, n_steps = Z.shape
    dt = T / n_steps
    S = np.full(n_paths, S0)
    running = np.zeros(n_paths)
    for t in range(n_steps):
        S *= np.exp((r - 0.5 * sigma ** 2) * dt + sigma * math.sqrt(dt) * Z[:, t])
        running += S
    payoff = np.maximum(running / n_steps - K, 0)
    return math.exp(-r * T) * payoff.mean(), payoff.std() / math.sqrt(max(n_paths, 1))


def loan_schedule(principal, annual_rate, months):
    rate = annual_rate / 12
    payment = principal * rate / (1 - (1 + rate) ** -months)
    balance = np.zeros(months + 1)
    interest = np.zeros(months)
    balance[0] = principal
    for m in range(months):
        interest[m] = balance[m] * rate
        balance[m + 1] = balance[m] + interest[m] - payment
    return payment, balance, interest.sum()


PROGRAMS = [
    Program(black_scholes_calls, lambda n, rng: (rng.uniform(50, 150, n), rng.uniform(80, 120, n), 0.03, 0.25, 1.5),
            rtol=1e-8),
    Program(crr_american_put, lambda n, rng: (100.0, 105.0, 0.02, 0.3, 1.0, n + 1), large=200, rtol=1e-8),
    Program(max_drawdown, lambda n, rng: (100 * np.exp(np.cumsum(0.02 * rng.standard_normal(n))),), rtol=1e-10),
    Program(ewma_volatility, lambda n, rng: (0.01 * rng.standard_normal(n),), rtol=1e-10),
    Program(asian_call_mc, lambda n, rng: (100.0, 100.0, 0.01, 0.2, 1.0, rng.standard_normal((n, 12))), rtol=1e-8),
    Program(loan_schedule, lambda n, rng: (250000.0, 0.045, n + 1), rtol=1e-9, atol=1e-6),
]
