"""Neuroscience: a leaky integrate-and-fire neuron whose spike times grow by np.append,
binned firing rates and a spike-triggered average, and inter-spike-interval statistics."""

import numpy as np

from corpus import Program


def lif_neuron(current, dt, tau, v_rest, v_th, v_reset, refractory):
    v = v_rest
    spikes = np.zeros(0)
    trace = np.zeros(len(current))
    hold = 0
    for i, I in enumerate(current):
        if hold > 0:
            hold -= 1
            v = v_reset
        else:
            v += dt / tau * (v_rest - v + I)
            if v >= v_th:
                spikes = np.append(spikes, i * dt)
                v = v_reset
                hold = refractory
        trace[i] = v
    return trace, spikes, len(spikes)


def spike_triggered_average(stimulus, spike_counts, window):
    n = len(stimulus)
    sta = np.zeros(window)
    total = 0
    for t in range(window, n):
        if spike_counts[t] > 0:
            sta += spike_counts[t] * stimulus[t - window:t]
            total += spike_counts[t]
    if total > 0:
        sta /= total
    return sta, total


def isi_stats(spike_times):
    if len(spike_times) < 2:
        return 0.0, 0.0, 0
    isi = np.diff(np.sort(spike_times))
    mean = isi.mean()
    cv = isi.std() / mean if mean > 0 else 0.0
    bursts = 0
    for d in isi:
        if d < 0.25 * mean:
            bursts += 1
    return mean, cv, bursts


PROGRAMS = [
    Program(lif_neuron, lambda n, rng: (rng.uniform(10.0, 30.0, 3 * n), 0.5, 10.0, 0.0, 15.0, 0.0, 3)),
    Program(spike_triggered_average, lambda n, rng: (rng.normal(size=4 * n), rng.poisson(0.3, 4 * n), 5)),
    Program(isi_stats, lambda n, rng: (rng.permutation(rng.exponential(1.0, n).cumsum()),)),
]
