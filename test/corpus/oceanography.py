"""Oceanography: seawater density by a simplified equation of state on float32 profiles, the
mixed-layer depth by a density threshold (first crossing), buoyancy frequency by np.gradient,
and tidal harmonic fit by least squares on cos/sin columns."""

import numpy as np

from corpus import Program


def density_eos(T, S):
    rho0 = np.float32(1027.0)
    a = np.float32(1.7e-4)
    b = np.float32(7.6e-4)
    rho = rho0 * (np.float32(1.0) - a * (T - np.float32(10.0)) + b * (S - np.float32(35.0)))
    return rho, rho.mean(axis=0)


def mixed_layer_depth(depth, rho, threshold):
    n_prof, n_z = rho.shape
    mld = np.full(n_prof, np.nan)
    for p in range(n_prof):
        ref = rho[p, 0]
        for k in range(1, n_z):
            if rho[p, k] - ref > threshold:
                mld[p] = depth[k]
                break
    return mld


def buoyancy_frequency(z, rho):
    if len(z) < 2:
        return np.zeros(len(z)), 0.0
    g = 9.81
    drho = np.gradient(rho, z)
    N2 = -g / 1025.0 * drho
    N2[N2 < 0] = 0.0
    return N2, np.sqrt(N2.max())


def tidal_fit(t_hours, eta, periods):
    n = len(t_hours)
    k = len(periods)
    X = np.ones((n, 2 * k + 1))
    for j in range(k):
        w = 2 * np.pi / periods[j]
        X[:, 1 + 2 * j] = np.cos(w * t_hours)
        X[:, 2 + 2 * j] = np.sin(w * t_hours)
    coef = np.linalg.solve(X.T @ X + 1e-9 * np.eye(2 * k + 1), X.T @ eta)
    amp = np.sqrt(coef[1::2] ** 2 + coef[2::2] ** 2)
    resid = eta - X @ coef
    return coef, amp, resid


def _profiles(n, rng):
    depth = np.linspace(0.0, 200.0, 25)
    base = 1025.0 + 0.01 * depth
    rho = base + rng.normal(0, 0.01, (n, 25)) + np.where(depth > rng.uniform(20, 120), 1.0, 0.0)
    return depth, rho, 0.125


PROGRAMS = [
    Program(density_eos, lambda n, rng: (rng.uniform(2, 25, (n, 6)).astype(np.float32),
                                         rng.uniform(33, 37, (n, 6)).astype(np.float32)), rtol=1e-5, atol=1e-3),
    Program(mixed_layer_depth, _profiles),
    Program(buoyancy_frequency, lambda n, rng: (np.sort(rng.uniform(0, 500, n)) + np.arange(n), 1025.0 + np.sort(rng.uniform(0, 2, n))),
            rtol=1e-9, atol=1e-12),
    Program(tidal_fit, lambda n, rng: (np.arange(30 * n) * 1.0, np.cos(2 * np.pi * np.arange(30 * n) / 12.42) + rng.normal(0, 0.1, 30 * n),
                                       np.array([12.42, 25.82])), rtol=1e-8, atol=1e-10),
]
