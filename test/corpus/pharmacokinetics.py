"""Pharmacokinetics: a one-compartment model with repeated oral doses, noncompartmental AUC
by the linear-up/log-down trapezoid rule, and a population dose table in float32."""

import numpy as np

from corpus import Program


def repeated_oral_dose(dose_times, dose, ka, ke, V, t):
    conc = np.zeros(len(t))
    for td in dose_times:
        after = t >= td
        dt = t[after] - td
        conc[after] += dose * ka / (V * (ka - ke)) * (np.exp(-ke * dt) - np.exp(-ka * dt))
    cmax = conc.max() if len(conc) > 0 else 0.0
    tmax = t[np.argmax(conc)] if len(conc) > 0 else 0.0
    return conc, cmax, tmax


def nca_auc(t, c):
    auc = 0.0
    aumc = 0.0
    for i in range(1, len(t)):
        dt = t[i] - t[i - 1]
        if c[i] < c[i - 1] and c[i] > 0:
            k = np.log(c[i - 1] / c[i]) / dt
            seg = (c[i - 1] - c[i]) / k
        else:
            seg = 0.5 * (c[i] + c[i - 1]) * dt
        auc += seg
        aumc += 0.5 * (t[i] * c[i] + t[i - 1] * c[i - 1]) * dt
    mrt = aumc / auc if auc > 0 else 0.0
    return auc, aumc, mrt


def weight_based_doses(weights, mg_per_kg, vial):
    doses = weights * mg_per_kg
    doses = np.minimum(doses, np.float32(1000.0))
    vials = np.ceil(doses / vial).astype(np.int64)
    waste = vials * vial - doses
    heavy = weights > np.float32(90.0)
    doses[heavy] *= np.float32(0.9)
    return doses, vials, waste, vials.sum()


PROGRAMS = [
    Program(repeated_oral_dose, lambda n, rng: (np.arange(0.0, 24.0 * (n % 4 + 1), 12.0), 500.0, 1.2, 0.15, 40.0,
                                                np.linspace(0.0, 48.0, n))),
    Program(nca_auc, lambda n, rng: (np.cumsum(rng.uniform(0.2, 1.0, n)),
                                     np.abs(rng.normal(5.0, 2.0, n)) * (rng.uniform(size=n) > 0.1))),
    Program(weight_based_doses, lambda n, rng: (rng.uniform(40, 120, n).astype(np.float32), np.float32(7.5),
                                                np.float32(100.0)), rtol=1e-6, atol=1e-5),
]
