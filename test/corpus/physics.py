"""Physics: N-body, Ising, ODE integration, Poisson, waves, heat in a rod (double buffered)."""

import math

import numpy as np

from corpus import Program


def accelerations(pos, mass, G, soft):
    n = pos.shape[0]
    acc = np.zeros_like(pos)
    for i in range(n):
        d = pos - pos[i]
        r2 = (d ** 2).sum(axis=1) + soft ** 2
        inv = mass / r2 ** 1.5
        acc[i] = G * (d * inv[:, None]).sum(axis=0)
    return acc


def leapfrog(pos, vel, mass, dt, steps):
    acc = accelerations(pos, mass, 1.0, 0.1)
    for _ in range(steps):
        vel += 0.5 * dt * acc
        pos += dt * vel
        acc = accelerations(pos, mass, 1.0, 0.1)
        vel += 0.5 * dt * acc
    return pos, vel


def ising_metropolis(spins, beta, rand, sites):
    L = spins.shape[0]
    energy_change = 0.0
    for k in range(sites.shape[0]):
        i = sites[k, 0]
        j = sites[k, 1]
        s = spins[i, j]
        nb = spins[(i + 1) % L, j] + spins[(i - 1) % L, j] + spins[i, (j + 1) % L] + spins[i, (j - 1) % L]
        dE = 2 * s * nb
        if dE <= 0 or rand[k] < math.exp(-beta * dE):
            spins[i, j] = -s
            energy_change += dE
    return energy_change


def pendulum_deriv(theta, omega, g_over_l, damping):
    return omega, -g_over_l * math.sin(theta) - damping * omega


def rk4_pendulum(theta0, omega0, dt, steps, g_over_l=9.81, damping=0.1):
    traj = np.zeros((steps + 1, 2))
    theta, omega = theta0, omega0
    traj[0] = theta, omega
    for k in range(steps):
        k1t, k1w = pendulum_deriv(theta, omega, g_over_l, damping)
        k2t, k2w = pendulum_deriv(theta + 0.5 * dt * k1t, omega + 0.5 * dt * k1w, g_over_l, damping)
        k3t, k3w = pendulum_deriv(theta + 0.5 * dt * k2t, omega + 0.5 * dt * k2w, g_over_l, damping)
        k4t, k4w = pendulum_deriv(theta + dt * k3t, omega + dt * k3w, g_over_l, damping)
        theta += dt / 6 * (k1t + 2 * k2t + 2 * k3t + k4t)
        omega += dt / 6 * (k1w + 2 * k2w + 2 * k3w + k4w)
        traj[k + 1] = theta, omega
    return traj


def jacobi_poisson(f, h, tol, max_iter):
    u = np.zeros_like(f)
    for it in range(max_iter):
        u_new = u.copy()
        u_new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                    - h * h * f[1:-1, 1:-1])
        diff = np.abs(u_new - u).max()
        u = u_new
        if diff < tol:
            break
    return u, it + 1


def wave_1d(u0, c, dx, dt, steps):
    r2 = (c * dt / dx) ** 2
    u_prev = u0.copy()
    u = u0.copy()
    u[1:-1] = u0[1:-1] + 0.5 * r2 * (u0[2:] - 2 * u0[1:-1] + u0[:-2])
    for _ in range(steps):
        u_next = np.zeros_like(u)
        u_next[1:-1] = 2 * u[1:-1] - u_prev[1:-1] + r2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_prev, u = u, u_next
    return u


def heat_rod_double_buffer(T0, alpha, steps, tol):
    T = T0.copy()
    T_new = np.empty_like(T)
    for step in range(steps):
        T_new[0], T_new[-1] = T[0], T[-1]
        T_new[1:-1] = T[1:-1] + alpha * (T[2:] - 2 * T[1:-1] + T[:-2])
        change = np.abs(T_new - T).max()
        T, T_new = T_new, T
        if change < tol:
            return T, step + 1
    return T, steps


def kinetic_energy(masses, velocities):
    total = np.float64(0.0)
    for m, v in zip(masses, velocities):
        total += 0.5 * m * np.dot(v, v)
    return total


def _ising_inputs(n, rng):
    spins = rng.choice(np.array([-1, 1]), (n, n))
    count = 3 * n * n
    return spins, 0.4, rng.random(count), rng.integers(0, max(n, 1), (count, 2))


PROGRAMS = [
    Program(leapfrog, lambda n, rng: (rng.standard_normal((n, 3)), rng.standard_normal((n, 3)) * 0.1,
                                      rng.random(n) + 0.5, 0.01, 10), large=40, rtol=1e-8, atol=1e-10),
    Program(ising_metropolis, _ising_inputs, large=20),
    Program(rk4_pendulum, lambda n, rng: (1.0, 0.0, 0.01, 3 * n), rtol=1e-9),
    Program(jacobi_poisson, lambda n, rng: (rng.random((n, n)), 0.1, 1e-6, 200), large=30, rtol=1e-8, atol=1e-10),
    Program(wave_1d, lambda n, rng: (np.sin(np.linspace(0, np.pi, n)), 1.0, 0.1, 0.05, 20), rtol=1e-8, atol=1e-12),
    Program(kinetic_energy, lambda n, rng: (rng.random(n), rng.standard_normal((n, 3))), rtol=1e-10),
    Program(heat_rod_double_buffer, lambda n, rng: (np.where(np.arange(n + 2) < (n + 2) // 2, 100.0, 0.0), 0.25,
                                                    4 * n + 3, 1e-2), rtol=1e-10),
]
