"""Optimization: gradient methods, line search, Newton, coordinate descent."""

import math

import numpy as np

from corpus import Program


def lstsq_gradient_descent(A, b, lr, max_iter):
    x = np.zeros(A.shape[1])
    for it in range(max_iter):
        r = A @ x - b
        g = A.T @ r
        if np.linalg.norm(g) < 1e-8:
            break
        x -= lr * g
    return x


def polyval(coeffs, x):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def golden_section(coeffs, a, b, tol):
    gr = (math.sqrt(5) - 1) / 2
    c = b - gr * (b - a)
    d = a + gr * (b - a)
    while abs(b - a) > tol:
        if polyval(coeffs, c) < polyval(coeffs, d):
            b = d
        else:
            a = c
        c = b - gr * (b - a)
        d = a + gr * (b - a)
    return (a + b) / 2


def newton_cbrt(a, tol=1e-12, max_iter=50):
    x = np.where(a > 1, a / 3, 1.0)
    it = 0
    while it < max_iter:
        step = (x ** 3 - a) / (3 * x ** 2)
        x = x - step
        it += 1
        if np.all(np.abs(step) < tol):
            break
    return x, it


def soft_threshold(z, t):
    if z > t:
        return z - t
    elif z < -t:
        return z + t
    return 0.0


def lasso_coordinate_descent(X, y, lam, sweeps):
    n, p = X.shape
    w = np.zeros(p)
    col_sq = (X ** 2).sum(axis=0)
    r = y - X @ w
    for _ in range(sweeps):
        for j in range(p):
            if col_sq[j] == 0:
                continue
            r += X[:, j] * w[j]
            rho = X[:, j] @ r
            w[j] = soft_threshold(rho, lam) / col_sq[j]
            r -= X[:, j] * w[j]
    return w


def rosenbrock_grad(x):
    g = np.zeros_like(x)
    g[:-1] = -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return g


def adam(x, steps, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    for t in range(1, steps + 1):
        g = rosenbrock_grad(x)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        v_hat = v / (1 - b2 ** t)
        x -= lr * m_hat / (np.sqrt(v_hat) + eps)
    return x


PROGRAMS = [
    Program(lstsq_gradient_descent, lambda n, rng: (rng.standard_normal((n, 3)), rng.standard_normal(n), 0.01, 200),
            rtol=1e-7, atol=1e-10),
    Program(golden_section, lambda n, rng: (np.r_[1.0, np.zeros(2 * (n // 2)), -3.0, 1.0], -1.0, 2.0, 1e-9),
            rtol=1e-7),
    Program(newton_cbrt, lambda n, rng: (rng.random(n) * 100 + 0.5,)),
    Program(lasso_coordinate_descent, lambda n, rng: (rng.standard_normal((n, 5)), rng.standard_normal(n), 0.5, 10),
            rtol=1e-7, atol=1e-10),
    Program(adam, lambda n, rng: (rng.random(n), 50), rtol=1e-7),
]
