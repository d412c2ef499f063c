"""Robotics: forward kinematics of a planar arm, a damped-least-squares IK loop, and occupancy
grid ray marking, written the way a robotics student writes them."""

import numpy as np

from corpus import Program


def fk_planar(lengths, angles):
    # positions of every joint of a planar serial arm for each pose (row of angles)
    n_pose, n_link = angles.shape
    xs = np.zeros((n_pose, n_link + 1))
    ys = np.zeros((n_pose, n_link + 1))
    for p in range(n_pose):
        theta = 0.0
        for j in range(n_link):
            theta += angles[p, j]
            xs[p, j + 1] = xs[p, j] + lengths[j] * np.cos(theta)
            ys[p, j + 1] = ys[p, j] + lengths[j] * np.sin(theta)
    reach = np.sqrt(xs[:, -1] ** 2 + ys[:, -1] ** 2)
    return xs, ys, reach


def _jacobian(lengths, q):
    n = len(q)
    J = np.zeros((2, n))
    cum = np.cumsum(q)
    for j in range(n):
        for k in range(j, n):
            J[0, j] -= lengths[k] * np.sin(cum[k])
            J[1, j] += lengths[k] * np.cos(cum[k])
    return J


def _end(lengths, q):
    cum = np.cumsum(q)
    return np.array([np.sum(lengths * np.cos(cum)), np.sum(lengths * np.sin(cum))])


def ik_dls(lengths, q0, target, damping, max_iter):
    q = q0.copy()
    n = len(q)
    it = 0
    err = target - _end(lengths, q)
    while np.linalg.norm(err) > 1e-8 and it < max_iter:
        J = _jacobian(lengths, q)
        A = J @ J.T + damping ** 2 * np.eye(2)
        dq = J.T @ np.linalg.solve(A, err)
        q += dq
        err = target - _end(lengths, q)
        it += 1
    return q, it, np.linalg.norm(err)


def wheel_odometry(left, right, base, dt):
    # differential drive dead reckoning, pose grows with np.append
    x, y, th = 0.0, 0.0, 0.0
    path = np.zeros((1, 3))
    for i in range(len(left)):
        v = 0.5 * (left[i] + right[i])
        w = (right[i] - left[i]) / base
        x += v * np.cos(th) * dt
        y += v * np.sin(th) * dt
        th += w * dt
        path = np.append(path, np.array([[x, y, th]]), axis=0)
    return path


PROGRAMS = [
    Program(fk_planar, lambda n, rng: (rng.uniform(0.5, 1.5, 4), rng.uniform(-np.pi, np.pi, (n, 4)))),
    Program(ik_dls, lambda n, rng: (rng.uniform(0.5, 1.0, n + 2), rng.uniform(-0.3, 0.3, n + 2),
                                    np.array([0.4, 0.3 + 0.01 * n]), 0.1, 50), rtol=1e-7, atol=1e-9),
    Program(wheel_odometry, lambda n, rng: (rng.uniform(0.9, 1.1, n), rng.uniform(0.9, 1.2, n), 0.5, 0.1)),
]
