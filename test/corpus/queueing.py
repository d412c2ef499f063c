"""Queueing and traffic: a single-server FIFO queue by the Lindley recursion, a multi-server
bank simulation choosing the earliest free teller, and a cellular-automaton (Nagel-Schreckenberg
without randomness) ring road on integer arrays."""

import numpy as np

from corpus import Program


def lindley(interarrival, service):
    n = len(service)
    wait = np.zeros(n)
    for i in range(1, n):
        wait[i] = max(0.0, wait[i - 1] + service[i - 1] - interarrival[i])
    depart = np.cumsum(interarrival) + wait + service
    busy = service.sum() / depart[-1] if n > 0 else 0.0
    return wait, wait.mean() if n else 0.0, busy


def multi_server(arrivals, service, servers):
    free_at = np.zeros(servers)
    start = np.zeros(len(arrivals))
    who = np.zeros(len(arrivals), dtype=np.int64)
    for i in range(len(arrivals)):
        s = np.argmin(free_at)
        start[i] = max(arrivals[i], free_at[s])
        free_at[s] = start[i] + service[i]
        who[i] = s
    waits = start - arrivals
    per_server = np.zeros(servers, dtype=np.int64)
    for s in who:
        per_server[s] += 1
    return waits, who, per_server


def ring_road(positions, length, vmax, steps):
    pos = np.sort(positions)
    vel = np.zeros(len(pos), dtype=np.int64)
    moved = 0
    for _ in range(steps):
        n = len(pos)
        if n == 0:
            break
        gaps = (np.roll(pos, -1) - pos - 1) % length
        if n == 1:
            gaps = np.array([length - 1])
        vel = np.minimum(vel + 1, vmax)
        vel = np.minimum(vel, gaps)
        pos = (pos + vel) % length
        moved += vel.sum()
        order = np.argsort(pos)
        pos = pos[order]
        vel = vel[order]
    return pos, vel, moved


PROGRAMS = [
    Program(lindley, lambda n, rng: (rng.exponential(1.0, n), rng.exponential(0.8, n))),
    Program(multi_server, lambda n, rng: (np.cumsum(rng.exponential(0.5, n)), rng.exponential(1.2, n), 3)),
    Program(ring_road, lambda n, rng: (rng.choice(4 * n + 5, n, replace=False), 4 * n + 5, 5, 12)),
]
