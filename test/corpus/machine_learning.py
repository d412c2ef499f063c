"""Machine learning: a k-means step with masks, logistic regression by gradient descent
with early stopping, and a nearest-centroid classifier."""

import numpy as np

from corpus import Program


def kmeans_step(X, centers):
    k = centers.shape[0]
    dist = np.zeros((X.shape[0], k))
    for j in range(k):
        diff = X - centers[j]
        dist[:, j] = (diff * diff).sum(axis=1)
    labels = np.argmin(dist, axis=1) if X.shape[0] > 0 else np.zeros(0, dtype=np.int64)
    new_centers = centers.copy()
    for j in range(k):
        members = X[labels == j]
        if members.shape[0] > 0:
            new_centers[j] = members.mean(axis=0)
    inertia = 0.0
    for i in range(X.shape[0]):
        inertia += dist[i, labels[i]]
    return new_centers, labels, inertia


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def logistic_regression_gd(X, y, lr, max_iter, tol):
    n, d = X.shape
    w = np.zeros(d)
    b = 0.0
    for it in range(max_iter):
        p = sigmoid(X @ w + b)
        grad_w = X.T @ (p - y) / max(n, 1)
        grad_b = (p - y).sum() / max(n, 1)
        w -= lr * grad_w
        b -= lr * grad_b
        if np.abs(grad_w).sum() + abs(grad_b) < tol:
            return w, b, it
    return w, b, max_iter


PROGRAMS = [
    Program(kmeans_step, lambda n, rng: (rng.normal(size=(n, 2)), np.array([[-1.0, 0.0], [1.0, 0.5], [0.0, 2.0]])),
            rtol=1e-10),
    Program(logistic_regression_gd,
            lambda n, rng: (rng.normal(size=(n, 3)), (rng.uniform(size=n) > 0.5).astype(np.float64), 0.5, 200,
                            1e-3), rtol=1e-8, atol=1e-10),
]
