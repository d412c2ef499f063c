"""Graph algorithms on dense adjacency matrices and edge lists."""

import numpy as np

from corpus import Program


def bfs_distances(adj, source):
    n = adj.shape[0]
    dist = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return dist
    queue = np.zeros(n, dtype=np.int64)
    head = 0
    tail = 0
    dist[source] = 0
    queue[tail] = source
    tail += 1
    while head < tail:
        u = queue[head]
        head += 1
        for v in range(n):
            if adj[u, v] and dist[v] < 0:
                dist[v] = dist[u] + 1
                queue[tail] = v
                tail += 1
    return dist


def dijkstra(w, src):
    n = w.shape[0]
    dist = np.full(n, np.inf)
    if n == 0:
        return dist
    visited = np.zeros(n, dtype=bool)
    dist[src] = 0.0
    for _ in range(n):
        u = -1
        best = np.inf
        for i in range(n):
            if not visited[i] and dist[i] < best:
                best = dist[i]
                u = i
        if u == -1:
            break
        visited[u] = True
        for v in range(n):
            nd = dist[u] + w[u, v]
            if nd < dist[v]:
                dist[v] = nd
    return dist


def pagerank(adj, damping=0.85, tol=1e-10, max_iter=100):
    n = adj.shape[0]
    out_deg = adj.sum(axis=1)
    out_deg = np.where(out_deg == 0, 1.0, out_deg)
    M = (adj / out_deg[:, None]).T
    r = np.ones(n) / max(n, 1)
    for it in range(max_iter):
        r_new = (1 - damping) / max(n, 1) + damping * (M @ r)
        if np.abs(r_new - r).sum() < tol:
            r = r_new
            break
        r = r_new
    return r, it


def find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def count_components(n, edges):
    parent = np.arange(n)
    for k in range(edges.shape[0]):
        a = find(parent, edges[k, 0])
        b = find(parent, edges[k, 1])
        if a != b:
            parent[a] = b
    roots = 0
    for i in range(n):
        if find(parent, i) == i:
            roots += 1
    return roots


def floyd_warshall(dist):
    n = dist.shape[0]
    for k in range(n):
        np.minimum(dist, dist[:, k][:, np.newaxis] + dist[k, :][np.newaxis, :], out=dist)
    return dist


def degree_stats(adj):
    deg = adj.sum(axis=0) + adj.sum(axis=1)
    isolated = 0
    hub, hub_deg = -1, -1
    for i, d in enumerate(deg):
        if d == 0:
            isolated += 1
        if d > hub_deg:
            hub, hub_deg = i, d
    return isolated, hub, hub_deg


def _weights(n, rng):
    w = np.where(rng.random((n, n)) < 0.4, rng.random((n, n)) * 10, np.inf)
    np.fill_diagonal(w, 0.0)
    return w


PROGRAMS = [
    Program(bfs_distances, lambda n, rng: (rng.random((n, n)) < 0.15, 0), large=60),
    Program(dijkstra, lambda n, rng: (_weights(n, rng), 0), large=50),
    Program(pagerank, lambda n, rng: ((rng.random((n, n)) < 0.2).astype(float),), rtol=1e-8),
    Program(count_components, lambda n, rng: (n, rng.integers(0, max(n, 1), (n // 2, 2))), large=200),
    Program(floyd_warshall, lambda n, rng: (_weights(n, rng),), large=60),
    Program(degree_stats, lambda n, rng: (rng.integers(0, 2, (n, n)) * (rng.random((n, n)) < 0.1),)),
]
