"""Simulation: cellular automata, epidemics, diffusion and particles."""

import numpy as np

from corpus import Program


def game_of_life(grid, steps):
    g = grid.copy()
    for _ in range(steps):
        p = np.zeros((g.shape[0] + 2, g.shape[1] + 2), dtype=g.dtype)
        p[1:-1, 1:-1] = g
        nb = (p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:]
              + p[1:-1, :-2] + p[1:-1, 2:]
              + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:])
        g = ((nb == 3) | ((g == 1) & (nb == 2))).astype(g.dtype)
    return g


def sir_model(beta, gamma, s0, i0, days, dt):
    steps = int(days / dt)
    S = np.zeros(steps + 1)
    I = np.zeros(steps + 1)
    R = np.zeros(steps + 1)
    S[0], I[0] = s0, i0
    for t in range(steps):
        new_inf = beta * S[t] * I[t] * dt
        new_rec = gamma * I[t] * dt
        S[t + 1] = S[t] - new_inf
        I[t + 1] = I[t] + new_inf - new_rec
        R[t + 1] = R[t] + new_rec
    return S, I, R


def first_passage(steps, barrier):
    """Random walk with increments drawn beforehand: when does it leave [-barrier, barrier]?"""
    pos = 0.0
    hit = -1
    for t, s in enumerate(steps):
        pos += s
        if abs(pos) >= barrier:
            hit = t + 1
            break
    return hit, pos


def heat_explicit(u, alpha, steps):
    n = u.shape[0]
    for _ in range(steps):
        lap = np.zeros(n)
        lap[1:-1] = u[:-2] - 2 * u[1:-1] + u[2:]
        u += alpha * lap
    return u


def bounce(pos, vel, dt, steps, box):
    for _ in range(steps):
        pos += vel * dt
        for i in range(pos.shape[0]):
            if pos[i] < 0:
                pos[i] = -pos[i]
                vel[i] = -vel[i]
            elif pos[i] > box:
                pos[i] = 2 * box - pos[i]
                vel[i] = -vel[i]


def predator_prey(x0, y0, a, b, c, d, dt, steps):
    traj = []
    x, y = x0, y0
    for _ in range(4):
        for _ in range(steps):
            dx = a * x - b * x * y
            dy = d * x * y - c * y
            x, y = x + dt * dx, y + dt * dy
        traj.append((x, y))
    return np.array(traj)


PROGRAMS = [
    Program(game_of_life, lambda n, rng: (rng.integers(0, 2, (n, n + 1)), 5), large=50),
    Program(sir_model, lambda n, rng: (0.3, 0.1, 0.99, 0.01, float(n), 0.5), rtol=1e-8),
    Program(first_passage, lambda n, rng: (rng.standard_normal(n), 3.0)),
    Program(heat_explicit, lambda n, rng: (rng.random(n), 0.2, 30), rtol=1e-8),
    Program(bounce, lambda n, rng: (rng.random(n) * 10, rng.standard_normal(n) * 3, 0.1, 40, 10.0), rtol=1e-8),
    Program(predator_prey, lambda n, rng: (10.0, 5.0, 1.1, 0.4, 0.4, 0.1, 0.01, n), rtol=1e-8),
]
