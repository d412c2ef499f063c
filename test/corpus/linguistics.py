"""Text statistics on token-id arrays: a word-frequency table with Zipf slope by least squares,
type-token ratio in moving windows, bigram counts into a matrix, and Levenshtein distance
between two integer-coded words."""

import numpy as np

from corpus import Program


def zipf_fit(tokens, vocab):
    freq = np.bincount(tokens, minlength=vocab)
    ranked = np.sort(freq)[::-1]
    ranked = ranked[ranked > 0]
    if len(ranked) < 2:
        return ranked, 0.0
    x = np.log(np.arange(1, len(ranked) + 1))
    y = np.log(ranked)
    X = np.stack([np.ones(len(x)), x], axis=1)
    beta = np.linalg.solve(X.T @ X, X.T @ y)
    return ranked, beta[1]


def moving_ttr(tokens, window, vocab):
    n_win = max(len(tokens) - window + 1, 0)
    ttr = np.zeros(n_win)
    for i in range(n_win):
        seen = np.zeros(vocab, dtype=np.bool_)
        seen[tokens[i:i + window]] = True
        ttr[i] = seen.sum() / window
    return ttr


def bigram_matrix(tokens, vocab):
    M = np.zeros((vocab, vocab), dtype=np.int64)
    for a, b in zip(tokens[:-1], tokens[1:]):
        M[a, b] += 1
    rows = M.sum(axis=1)
    P = M / np.maximum(rows, 1)[:, None]
    return M, P


def levenshtein(s, t):
    m, n = len(s), len(t)
    prev = np.arange(n + 1)
    for i in range(1, m + 1):
        cur = np.zeros(n + 1, dtype=np.int64)
        cur[0] = i
        for j in range(1, n + 1):
            cost = 0 if s[i - 1] == t[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
        prev = cur
    return prev[n]


PROGRAMS = [
    Program(zipf_fit, lambda n, rng: (np.minimum(rng.zipf(1.6, 8 * n), 50) - 1, 50), rtol=1e-8, atol=1e-10),
    Program(moving_ttr, lambda n, rng: (rng.integers(0, 12, 3 * n), 5, 12)),
    Program(bigram_matrix, lambda n, rng: (rng.integers(0, 6, 4 * n), 6)),
    Program(levenshtein, lambda n, rng: (rng.integers(0, 4, n), rng.integers(0, 4, n + 2))),
]
