"""Geoscience: great-circle distances, gridding, terrain, seismology, hydrology."""

import math

import numpy as np

from corpus import Program

R_EARTH_KM = 6371.0


def haversine(lat1, lon1, lat2, lon2):
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dlat = p2 - p1
    dlon = np.radians(lon2 - lon1)
    a = np.sin(dlat / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dlon / 2) ** 2
    return 2 * R_EARTH_KM * np.arcsin(np.sqrt(a))


def nearest_station(lats, lons, qlat, qlon):
    d = haversine(lats, lons, qlat, qlon)
    k = np.argmin(d)
    return k, d[k]


def idw_grid(xs, ys, vals, nx, ny, power=2.0):
    gx = np.linspace(0, 1, nx)
    gy = np.linspace(0, 1, ny)
    out = np.zeros((ny, nx))
    for i in range(ny):
        for j in range(nx):
            d2 = (xs - gx[j]) ** 2 + (ys - gy[i]) ** 2
            w = 1.0 / (d2 ** (power / 2) + 1e-12)
            out[i, j] = np.sum(w * vals) / np.sum(w)
    return out


def slope_aspect(dem, cell):
    dzdx = np.zeros_like(dem)
    dzdy = np.zeros_like(dem)
    dzdx[:, 1:-1] = (dem[:, 2:] - dem[:, :-2]) / (2 * cell)
    dzdy[1:-1, :] = (dem[2:, :] - dem[:-2, :]) / (2 * cell)
    slope = np.degrees(np.arctan(np.hypot(dzdx, dzdy)))
    aspect = np.degrees(np.arctan2(-dzdx, dzdy)) % 360
    return slope, aspect


def b_value(mags, mc):
    """Aki's maximum-likelihood Gutenberg-Richter b-value above completeness mc."""
    total = 0.0
    count = 0
    for m in mags:
        if m >= mc:
            total += m
            count += 1
    if count == 0:
        return np.nan
    return math.log10(math.e) / (total / count - (mc - 0.05))


def bucket_runoff(precip, capacity, k):
    """A one-bucket hydrological model: daily storage and runoff."""
    storage = 0.0
    runoff = np.zeros(len(precip))
    for t, p in enumerate(precip):
        storage += p
        if storage > capacity:
            runoff[t] = storage - capacity
            storage = capacity
        outflow = k * storage
        storage -= outflow
        runoff[t] += outflow
    return runoff, storage


PROGRAMS = [
    Program(nearest_station, lambda n, rng: (rng.uniform(-60, 60, n), rng.uniform(-180, 180, n), 48.1, 11.6),
            rtol=1e-8),
    Program(idw_grid, lambda n, rng: (rng.random(n), rng.random(n), rng.random(n), 9, 6), rtol=1e-8),
    Program(slope_aspect, lambda n, rng: (rng.random((n, n + 2)) * 100, 30.0), rtol=1e-8, atol=1e-9),
    Program(b_value, lambda n, rng: (rng.exponential(0.5, n) + 2.0, 2.5), rtol=1e-8),
    Program(bucket_runoff, lambda n, rng: (rng.exponential(3.0, n), 20.0, 0.05), rtol=1e-8),
]
