"""Control: a discrete PID loop driving a first-order plant, with actuator saturation and
an early exit once the output settles."""

import numpy as np

from corpus import Program


def clamp(v, lo, hi):
    return max(lo, min(v, hi))


def pid_settle(setpoints, kp, ki, kd, dt, tau):
    n = len(setpoints)
    y = np.zeros(n)
    u = np.zeros(n)
    integral = 0.0
    prev_err = 0.0
    out = 0.0
    for t in range(n):
        err = setpoints[t] - out
        integral += err * dt
        deriv = (err - prev_err) / dt if t > 0 else 0.0
        u[t] = clamp(kp * err + ki * integral + kd * deriv, -5.0, 5.0)
        out += dt / tau * (u[t] - out)
        y[t] = out
        prev_err = err
        if t > 10 and abs(err) < 1e-6:
            return y[:t + 1], u[:t + 1], t
    return y, u, n


PROGRAMS = [
    Program(pid_settle, lambda n, rng: (np.ones(n) + 0.1 * (np.arange(n) > n // 2), 2.0, 0.5, 0.05, 0.1, 0.4),
            rtol=1e-9, atol=1e-12),
]
