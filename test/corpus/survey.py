"""Survey statistics and economics: a Gini coefficient from a sorted income vector, a
cross-tabulation with np.add.at, and raking (iterative proportional fitting) of a table to
two margins until it converges."""

import numpy as np

from corpus import Program


def gini(income):
    x = np.sort(income)
    n = len(x)
    if n == 0 or x.sum() == 0:
        return 0.0, np.zeros(0)
    cum = np.cumsum(x)
    lorenz = np.concatenate((np.zeros(1), cum / cum[-1]))
    g = (n + 1 - 2 * (cum.sum() / cum[-1])) / n
    return g, lorenz


def crosstab(a, b, na, nb):
    table = np.zeros((na, nb), dtype=np.int64)
    np.add.at(table, (a, b), 1)
    row = table.sum(axis=1)
    col = table.sum(axis=0)
    total = table.sum()
    expected = np.outer(row, col) / max(total, 1)
    mask = expected > 0
    chi2 = (((table - expected) ** 2)[mask] / expected[mask]).sum()
    return table, chi2


def rake(seed, row_target, col_target, tol, max_iter):
    T = seed.astype(np.float64)
    it = 0
    err = np.inf
    while err > tol and it < max_iter:
        rs = T.sum(axis=1)
        for i in range(T.shape[0]):
            if rs[i] > 0:
                T[i, :] *= row_target[i] / rs[i]
        cs = T.sum(axis=0)
        for j in range(T.shape[1]):
            if cs[j] > 0:
                T[:, j] *= col_target[j] / cs[j]
        err = abs(T.sum(axis=1) - row_target).max() if T.shape[0] else 0.0
        it += 1
    return T, it


def _rake_inputs(n, rng):
    seed = rng.integers(1, 20, (n, 4))
    col = rng.uniform(10, 50, 4)
    row = rng.uniform(1, 5, n)
    row = row / row.sum() * col.sum() if n else row
    return seed, row, col, 1e-10, 200


PROGRAMS = [
    Program(gini, lambda n, rng: (rng.lognormal(10, 0.7, n),)),
    Program(crosstab, lambda n, rng: (rng.integers(0, 3, 4 * n), rng.integers(0, 4, 4 * n), 3, 4)),
    Program(rake, _rake_inputs, rtol=1e-8, atol=1e-9),
]
