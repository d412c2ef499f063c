"""Chemistry: Lennard-Jones energy and forces with a cutoff (a mask per atom), and a
titration curve's equivalence point found by scanning for the steepest step."""

import numpy as np

from corpus import Program


def lennard_jones(pos, eps, sigma, cutoff):
    n = pos.shape[0]
    forces = np.zeros_like(pos)
    energy = 0.0
    for i in range(n - 1):
        d = pos[i + 1:] - pos[i]
        r2 = (d ** 2).sum(axis=1)
        near = r2 < cutoff ** 2
        inv6 = (sigma ** 2 / r2[near]) ** 3
        energy += (4 * eps * (inv6 ** 2 - inv6)).sum()
        f = (24 * eps * (2 * inv6 ** 2 - inv6) / r2[near])[:, None] * d[near]
        forces[i] -= f.sum(axis=0)
        forces[i + 1:][near] += f
    return energy, forces


def equivalence_point(volume, ph):
    best = 0.0
    at = -1
    for k in range(1, len(ph)):
        slope = (ph[k] - ph[k - 1]) / (volume[k] - volume[k - 1])
        if slope > best:
            best = slope
            at = k
    if at < 0:
        return -1.0, 0.0
    return 0.5 * (volume[at] + volume[at - 1]), best


PROGRAMS = [
    Program(lennard_jones, lambda n, rng: (np.cumsum(rng.uniform(0.9, 1.3, (n, 3)), axis=0), 1.0, 1.0, 2.5),
            rtol=1e-9, atol=1e-9),
    Program(equivalence_point, lambda n, rng: (np.arange(n) * 0.5 + 1.0, 3 + 8 / (1 + np.exp(-(np.arange(n) - n / 2)))),
            rtol=1e-12),
]
