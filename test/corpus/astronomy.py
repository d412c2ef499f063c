"""Astronomy: Kepler's equation solved by Newton's method per orbit (a helper that returns
as soon as it converges), and positions from orbital elements."""

import math

import numpy as np

from corpus import Program


def solve_kepler(M, e, tol=1e-12):
    E = M if e < 0.8 else math.pi
    for _ in range(50):
        f = E - e * math.sin(E) - M
        if abs(f) < tol:
            return E
        E = E - f / (1 - e * math.cos(E))
    return E


def orbit_positions(a, e, M):
    n = len(M)
    x = np.zeros(n)
    y = np.zeros(n)
    for i in range(n):
        E = solve_kepler(M[i], e[i])
        x[i] = a[i] * (math.cos(E) - e[i])
        y[i] = a[i] * math.sqrt(1 - e[i] ** 2) * math.sin(E)
    r = np.hypot(x, y)
    return x, y, r.max() if n else 0.0


PROGRAMS = [
    Program(orbit_positions, lambda n, rng: (rng.uniform(0.5, 30, n), rng.uniform(0, 0.95, n),
                                             rng.uniform(0, 2 * np.pi, n)), rtol=1e-9, atol=1e-9),
]
