"""Dynamic programming: subsequences, knapsack, edit distance, coins, subarrays."""

import numpy as np

from corpus import Program


def lcs_length(a, b):
    n, m = len(a), len(b)
    dp = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if a[i - 1] == b[j - 1]:
                dp[i, j] = dp[i - 1, j - 1] + 1
            else:
                dp[i, j] = max(dp[i - 1, j], dp[i, j - 1])
    return dp[n, m]


def knapsack(weights, values, capacity):
    best = np.zeros(capacity + 1)
    for w, v in zip(weights, values):
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[capacity]


def levenshtein(s, t):
    prev = np.arange(len(t) + 1)
    for i in range(1, len(s) + 1):
        cur = np.zeros(len(t) + 1, dtype=prev.dtype)
        cur[0] = i
        for j in range(1, len(t) + 1):
            cost = 0 if s[i - 1] == t[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
        prev = cur
    return prev[-1]


def min_coins(coins, amount):
    INF = amount + 1
    dp = np.full(amount + 1, INF)
    dp[0] = 0
    for a in range(1, amount + 1):
        for c in coins:
            if c <= a and dp[a - c] + 1 < dp[a]:
                dp[a] = dp[a - c] + 1
    return dp[amount] if dp[amount] <= amount else -1


def max_subarray(x):
    best = -np.inf
    cur = 0.0
    start = 0
    best_l, best_r = 0, 0
    for i, v in enumerate(x):
        if cur <= 0:
            cur = v
            start = i
        else:
            cur += v
        if cur > best:
            best = cur
            best_l, best_r = start, i + 1
    return best, best_l, best_r


def longest_increasing_subsequence(x):
    n = len(x)
    length = np.ones(n, dtype=np.int64)
    for i in range(n):
        for j in range(i):
            if x[j] < x[i] and length[j] + 1 > length[i]:
                length[i] = length[j] + 1
    return length.max() if n > 0 else 0


PROGRAMS = [
    Program(lcs_length, lambda n, rng: (rng.integers(0, 4, n), rng.integers(0, 4, n + 3)), large=80),
    Program(knapsack, lambda n, rng: (rng.integers(1, 10, n), rng.random(n) * 10, 3 * n), large=60),
    Program(levenshtein, lambda n, rng: (rng.integers(0, 4, n), rng.integers(0, 4, n + 2)), large=80),
    Program(min_coins, lambda n, rng: (np.array([1, 5, 7, 11]) if n else np.array([3, 5]), 4 * n + 1), large=80),
    Program(max_subarray, lambda n, rng: (rng.standard_normal(n),)),
    Program(longest_increasing_subsequence, lambda n, rng: (rng.random(n),)),
]
