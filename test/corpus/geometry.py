"""Computational geometry: point-in-polygon by ray casting, the shoelace area, and the
closest pair of points by brute force."""

import numpy as np

from corpus import Program


def inside(px, py, poly):
    n = poly.shape[0]
    hit = False
    j = n - 1
    for i in range(n):
        xi, yi = poly[i]
        xj, yj = poly[j]
        if (yi > py) != (yj > py):
            x_cross = (xj - xi) * (py - yi) / (yj - yi) + xi
            if px < x_cross:
                hit = not hit
        j = i
    return hit


def points_in_polygon(points, poly):
    flags = np.zeros(points.shape[0], dtype=np.bool_)
    for k in range(points.shape[0]):
        flags[k] = inside(points[k, 0], points[k, 1], poly)
    x, y = poly[:, 0], poly[:, 1]
    area = 0.5 * abs(np.dot(x[:-1], y[1:]) - np.dot(x[1:], y[:-1]) + x[-1] * y[0] - x[0] * y[-1])
    return flags, flags.sum(), area


def closest_pair(points):
    n = points.shape[0]
    best = np.inf
    pair = (-1, -1)
    for i in range(n):
        for j in range(i + 1, n):
            d = np.sqrt(((points[i] - points[j]) ** 2).sum())
            if d < best:
                best = d
                pair = (i, j)
    return best, pair


def _star(m):
    angles = np.linspace(0, 2 * np.pi, 2 * m, endpoint=False)
    radii = np.where(np.arange(2 * m) % 2 == 0, 2.0, 0.8)
    return np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1)


PROGRAMS = [
    Program(points_in_polygon, lambda n, rng: (rng.uniform(-2, 2, (n, 2)), _star(5)), rtol=1e-12),
    Program(closest_pair, lambda n, rng: (rng.uniform(0, 10, (n, 2)),), large=60, rtol=1e-12),
]
