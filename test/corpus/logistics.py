"""Logistics: a nearest-neighbour delivery tour with a visited mask, an (s, S) inventory
policy simulated day by day, a 0/1 knapsack by dynamic programming on integer arrays, and
truck loading by first-fit decreasing."""

import numpy as np

from corpus import Program


def _dist(a, b):
    return np.sqrt(((a - b) ** 2).sum())


def nearest_neighbour_tour(xy):
    n = xy.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0.0
    visited = np.zeros(n, dtype=bool)
    tour = np.zeros(n, dtype=np.int64)
    visited[0] = True
    length = 0.0
    cur = 0
    for step in range(1, n):
        best = -1
        best_d = np.inf
        for j in range(n):
            if not visited[j]:
                d = _dist(xy[cur], xy[j])
                if d < best_d:
                    best_d = d
                    best = j
        tour[step] = best
        visited[best] = True
        length += best_d
        cur = best
    length += _dist(xy[cur], xy[0])
    return tour, length


def inventory_sS(demand, s, S, lead, hold_cost, short_cost):
    stock = S
    pipeline = np.zeros(lead + 1)
    cost = 0.0
    orders = 0
    levels = np.zeros(len(demand))
    for day, d in enumerate(demand):
        stock += pipeline[0]
        pipeline[:-1] = pipeline[1:]
        pipeline[-1] = 0.0
        sold = min(stock, d)
        cost += short_cost * (d - sold)
        stock -= sold
        if stock + pipeline.sum() <= s:
            pipeline[lead] += S - stock - pipeline.sum()
            orders += 1
        cost += hold_cost * stock
        levels[day] = stock
    return levels, cost, orders


def knapsack(weights, values, capacity):
    best = np.zeros(capacity + 1, dtype=np.int64)
    for i in range(len(weights)):
        w = weights[i]
        for c in range(capacity, w - 1, -1):
            cand = best[c - w] + values[i]
            if cand > best[c]:
                best[c] = cand
    return best[capacity], best


def first_fit_decreasing(sizes, capacity):
    order = np.argsort(-sizes, kind="stable")
    loads = np.zeros(len(sizes))
    assign = np.full(len(sizes), -1, dtype=np.int64)
    used = 0
    for k in order:
        placed = False
        for b in range(used):
            if loads[b] + sizes[k] <= capacity:
                loads[b] += sizes[k]
                assign[k] = b
                placed = True
                break
        if not placed:
            loads[used] = sizes[k]
            assign[k] = used
            used += 1
    return used, assign, loads[:used]


PROGRAMS = [
    Program(nearest_neighbour_tour, lambda n, rng: (rng.uniform(0, 100, (n, 2)),)),
    Program(inventory_sS, lambda n, rng: (rng.poisson(4.0, 6 * n).astype(np.float64), 10.0, 30.0, 2, 0.1, 2.0)),
    Program(knapsack, lambda n, rng: (rng.integers(1, 15, n), rng.integers(1, 40, n), 5 * n + 3)),
    Program(first_fit_decreasing, lambda n, rng: (rng.uniform(0.05, 0.7, 2 * n), 1.0)),
]
