"""Materials: stress-strain post-processing (yield by 0.2% offset, toughness), a 1-D bar FEM
with a stiffness matrix assembled in a loop, laminate stiffness by loop matrix products, and a
Voigt/Reuss bound of a composite."""

import numpy as np

from corpus import Program


def offset_yield(strain, stress, modulus):
    n = len(strain)
    if n < 2:
        return -1.0, 0.0
    toughness = 0.0
    for i in range(1, n):
        toughness += 0.5 * (stress[i] + stress[i - 1]) * (strain[i] - strain[i - 1])
    line = modulus * (strain - 0.002)
    above = stress - line
    for i in range(1, n):
        if above[i - 1] > 0 and above[i] <= 0:
            return stress[i], toughness
    return -1.0, toughness


def bar_fem(E, A, L, load):
    ne = len(E)
    K = np.zeros((ne + 1, ne + 1))
    for e in range(ne):
        k = E[e] * A[e] / L[e]
        K[e:e + 2, e:e + 2] += k * np.array([[1.0, -1.0], [-1.0, 1.0]])
    f = np.zeros(ne + 1)
    f[-1] = load
    u = np.zeros(ne + 1)
    u[1:] = np.linalg.solve(K[1:, 1:], f[1:])
    strain = np.diff(u) / L
    stress = E * strain
    return u, stress


def transform_stack(T, Q):
    # stiffness of each ply rotated: Qbar_k = T_k^-1 Q T_k^-T written as row loops
    n = T.shape[0]
    out = np.zeros((n, 3, 3))
    for k in range(n):
        Ti = np.linalg.inv(T[k])
        tmp = np.zeros((3, 3))
        for i in range(3):
            tmp[i, :] = Ti[i, :] @ Q
        for i in range(3):
            out[k, i, :] = tmp[i, :] @ Ti.T
    A = out.sum(axis=0) if n else np.zeros((3, 3))
    return out, A


def voigt_reuss(fractions, moduli):
    f = fractions / fractions.sum(axis=1, keepdims=True)
    voigt = (f * moduli).sum(axis=1)
    reuss = 1.0 / (f / moduli).sum(axis=1)
    hill = 0.5 * (voigt + reuss)
    return voigt, reuss, hill


def _plies(n, rng):
    th = rng.uniform(0, np.pi, n)
    c, s = np.cos(th), np.sin(th)
    T = np.zeros((n, 3, 3))
    T[:, 0, 0] = c * c; T[:, 0, 1] = s * s; T[:, 0, 2] = 2 * c * s
    T[:, 1, 0] = s * s; T[:, 1, 1] = c * c; T[:, 1, 2] = -2 * c * s
    T[:, 2, 0] = -c * s; T[:, 2, 1] = c * s; T[:, 2, 2] = c * c - s * s
    Q = np.array([[140.0, 3.0, 0.0], [3.0, 10.0, 0.0], [0.0, 0.0, 5.0]])
    return T, Q


def _stress_strain(n, rng):
    strain = np.linspace(0, 0.02, 3 * n)
    stress = np.where(strain < 0.004, 200e3 * strain, 800.0 + 5e3 * (strain - 0.004))
    return strain, stress + rng.normal(0, 1.0, 3 * n), 200e3


PROGRAMS = [
    Program(offset_yield, _stress_strain),
    Program(bar_fem, lambda n, rng: (rng.uniform(1e5, 2e5, n), rng.uniform(1.0, 2.0, n), rng.uniform(0.5, 1.0, n), 1000.0),
            rtol=1e-8, atol=1e-12),
    Program(transform_stack, _plies, rtol=1e-9, atol=1e-9),
    Program(voigt_reuss, lambda n, rng: (rng.uniform(0.1, 1.0, (n, 3)), np.array([70.0, 200.0, 3.0]))),
]
