"""Epidemiology: an SIR model stepped with Euler until the outbreak dies out, and the
attack rate per age group from contact counts."""

import numpy as np

from corpus import Program


def sir_until_extinct(beta, gamma, population, days):
    S = np.zeros(days + 1)
    I = np.zeros(days + 1)
    R = np.zeros(days + 1)
    S[0], I[0] = population - 1.0, 1.0
    for t in range(days):
        new_inf = beta * S[t] * I[t] / population
        new_rec = gamma * I[t]
        S[t + 1] = S[t] - new_inf
        I[t + 1] = I[t] + new_inf - new_rec
        R[t + 1] = R[t] + new_rec
        if I[t + 1] < 0.5:
            return t + 1, R[t + 1] / population, I[:t + 2].max()
    return days, R[days] / population, I.max()


def attack_rates(ages, infected, edges):
    groups = np.zeros(len(edges) - 1)
    sizes = np.zeros(len(edges) - 1)
    for g in range(len(edges) - 1):
        in_group = (ages >= edges[g]) & (ages < edges[g + 1])
        sizes[g] = in_group.sum()
        groups[g] = infected[in_group].sum()
    rates = np.where(sizes > 0, groups / np.maximum(sizes, 1), 0.0)
    return rates, rates.argmax() if rates.size else -1


PROGRAMS = [
    Program(sir_until_extinct, lambda n, rng: (0.3, 0.1, 1000.0 + n, 2 * n), rtol=1e-9),
    Program(attack_rates, lambda n, rng: (rng.uniform(0, 90, n), (rng.uniform(size=n) < 0.3).astype(np.float64),
                                          np.array([0.0, 18.0, 40.0, 65.0, 120.0])), rtol=1e-12),
]
