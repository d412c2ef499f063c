"""Operations research: a single-server queue simulated from given arrival and service
times (Lindley's recursion), and a greedy knapsack by value density."""

import numpy as np

from corpus import Program


def queue_waits(interarrival, service):
    n = len(interarrival)
    wait = np.zeros(n)
    busy_until = 0.0
    clock = 0.0
    longest = 0.0
    for i in range(n):
        clock += interarrival[i]
        start = max(clock, busy_until)
        wait[i] = start - clock
        busy_until = start + service[i]
        longest = max(longest, wait[i])
    served = (wait <= 1.0).sum()
    return wait, longest, served


def greedy_knapsack(values, weights, capacity):
    density = values / weights
    take = np.zeros(len(values), dtype=np.bool_)
    room = capacity
    total = 0.0
    for _ in range(len(values)):
        best = -1
        for idx in range(len(values)):
            if not take[idx] and weights[idx] <= room and (best < 0 or density[idx] > density[best]):
                best = idx
        if best < 0:
            break
        take[best] = True
        room -= weights[best]
        total += values[best]
    return take, total, room


PROGRAMS = [
    Program(queue_waits, lambda n, rng: (rng.exponential(1.0, n), rng.exponential(0.9, n)), rtol=1e-12),
    Program(greedy_knapsack, lambda n, rng: (rng.uniform(1, 10, n), rng.uniform(1, 5, n), 0.3 * n + 1.0),
            rtol=1e-12),
]
