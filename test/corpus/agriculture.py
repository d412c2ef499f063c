"""Agriculture and remote sensing: NDVI and a vegetation mask from float32 bands, a daily
soil-water bucket model with irrigation triggers, and a Mitscherlich yield response fitted by a
Gauss-Newton loop with np.linalg.solve."""

import numpy as np

from corpus import Program


def ndvi_stats(red, nir, threshold):
    denom = nir + red
    ndvi = np.where(denom > 0, (nir - red) / np.where(denom > 0, denom, np.float32(1)), np.float32(0))
    veg = ndvi > threshold
    frac = veg.mean() if veg.size else 0.0
    ndvi[~veg] = np.float32(0)
    return ndvi, frac


def soil_bucket(rain, et, capacity, trigger, amount):
    w = capacity
    water = np.zeros(len(rain))
    irrigation_days = np.zeros(0, dtype=np.int64)
    drainage = 0.0
    for d in range(len(rain)):
        w = w + rain[d] - et[d]
        if w > capacity:
            drainage += w - capacity
            w = capacity
        if w < trigger * capacity:
            w += amount
            irrigation_days = np.append(irrigation_days, d)
        w = max(w, 0.0)
        water[d] = w
    return water, irrigation_days, drainage


def mitscherlich_fit(N, yld, iters):
    # y = A * (1 - exp(-c * (N + b))), parameters p = [A, c, b]
    p = np.array([yld.max() if len(yld) else 1.0, 0.02, 10.0])
    for _ in range(iters):
        e = np.exp(-p[1] * (N + p[2]))
        pred = p[0] * (1 - e)
        r = yld - pred
        J = np.zeros((len(N), 3))
        J[:, 0] = 1 - e
        J[:, 1] = p[0] * (N + p[2]) * e
        J[:, 2] = p[0] * p[1] * e
        step = np.linalg.solve(J.T @ J + 1e-6 * np.eye(3), J.T @ r)
        p += step
    return p


def _yield_inputs(n, rng):
    N = np.linspace(0, 200, 4 * n)
    return N, 9.0 * (1 - np.exp(-0.018 * (N + 15.0))) + rng.normal(0, 0.05, 4 * n), 8


PROGRAMS = [
    Program(ndvi_stats, lambda n, rng: (rng.uniform(0, 0.3, (n, 5)).astype(np.float32),
                                        rng.uniform(0, 0.6, (n, 5)).astype(np.float32), np.float32(0.3)), rtol=1e-6, atol=1e-7),
    Program(soil_bucket, lambda n, rng: (rng.exponential(2.0, 5 * n) * (rng.uniform(size=5 * n) > 0.6), rng.uniform(2, 6, 5 * n),
                                         100.0, 0.5, 25.0)),
    Program(mitscherlich_fit, _yield_inputs, rtol=1e-6, atol=1e-8),
]
