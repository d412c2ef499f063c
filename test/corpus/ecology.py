"""Ecology: a Lotka-Volterra predator-prey model stepped until one population collapses, and
species richness and Shannon diversity per site from a count matrix."""

import numpy as np

from corpus import Program


def lotka_volterra(prey0, pred0, alpha, beta, delta, gamma, dt, steps):
    prey = np.zeros(steps + 1)
    pred = np.zeros(steps + 1)
    prey[0], pred[0] = prey0, pred0
    for t in range(steps):
        x, y = prey[t], pred[t]
        prey[t + 1] = x + dt * (alpha * x - beta * x * y)
        pred[t + 1] = y + dt * (delta * x * y - gamma * y)
        if min(prey[t + 1], pred[t + 1]) < 1e-3:
            return prey[:t + 2], pred[:t + 2], t + 1
    return prey, pred, steps


def diversity(counts):
    n_sites = counts.shape[0]
    richness = np.zeros(n_sites, dtype=np.int64)
    shannon = np.zeros(n_sites)
    for s in range(n_sites):
        row = counts[s]
        present = row > 0
        richness[s] = present.sum()
        total = row.sum()
        if total == 0:
            continue
        p = row[present] / total
        shannon[s] = -(p * np.log(p)).sum()
    return richness, shannon, shannon.mean() if n_sites else 0.0


PROGRAMS = [
    Program(lotka_volterra, lambda n, rng: (10.0, 5.0, 1.1, 0.4, 0.1, 0.4 + 0.05 * n, 0.05, 3 * n), rtol=1e-9),
    Program(diversity, lambda n, rng: (rng.poisson(1.5, (n, 6)) * (rng.uniform(size=(n, 6)) > 0.3),),
            rtol=1e-12),
]
