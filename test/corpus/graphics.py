"""Graphics: rasterization, line drawing, fractals, shading, transforms."""

import numpy as np

from corpus import Program


def edge(ax, ay, bx, by, px, py):
    return (bx - ax) * (py - ay) - (by - ay) * (px - ax)


def fill_triangle(buf, tri, color):
    h, w = buf.shape
    (x0, y0), (x1, y1), (x2, y2) = tri
    area = edge(x0, y0, x1, y1, x2, y2)
    if area == 0:
        return 0
    count = 0
    for y in range(h):
        for x in range(w):
            px, py = x + 0.5, y + 0.5
            w0 = edge(x1, y1, x2, y2, px, py)
            w1 = edge(x2, y2, x0, y0, px, py)
            w2 = edge(x0, y0, x1, y1, px, py)
            if (w0 >= 0 and w1 >= 0 and w2 >= 0) or (w0 <= 0 and w1 <= 0 and w2 <= 0):
                buf[y, x] = color
                count += 1
    return count


def draw_line(img, x0, y0, x1, y1):
    dx = abs(x1 - x0)
    dy = -abs(y1 - y0)
    sx = 1 if x0 < x1 else -1
    sy = 1 if y0 < y1 else -1
    err = dx + dy
    while True:
        img[y0, x0] = 1
        if x0 == x1 and y0 == y1:
            break
        e2 = 2 * err
        if e2 >= dy:
            err += dy
            x0 += sx
        if e2 <= dx:
            err += dx
            y0 += sy


def mandelbrot(xmin, xmax, ymin, ymax, w, h, max_iter):
    out = np.zeros((h, w), dtype=np.int32)
    for i in range(h):
        cy = ymin + (ymax - ymin) * i / max(h - 1, 1)
        for j in range(w):
            cx = xmin + (xmax - xmin) * j / max(w - 1, 1)
            zx = zy = 0.0
            k = 0
            while k < max_iter and zx * zx + zy * zy <= 4.0:
                zx, zy = zx * zx - zy * zy + cx, 2 * zx * zy + cy
                k += 1
            out[i, j] = k
    return out


def normalize(v):
    norm = np.sqrt((v * v).sum(axis=-1, keepdims=True))
    return v / np.maximum(norm, 1e-12)


def blinn_phong(normals, light, view, shininess):
    n = normalize(normals)
    l = light / np.linalg.norm(light)
    v = view / np.linalg.norm(view)
    diffuse = np.clip(n @ l, 0, None)
    h = l + v
    h = h / np.linalg.norm(h)
    specular = np.clip(n @ h, 0, None) ** shininess
    return 0.1 + 0.7 * diffuse + 0.2 * specular


def transform_points(points, angle, scale, tx, ty):
    c, s = np.cos(angle), np.sin(angle)
    M = np.array([[scale * c, -scale * s, tx],
                  [scale * s, scale * c, ty],
                  [0.0, 0.0, 1.0]])
    homo = np.ones((points.shape[0], 3))
    homo[:, :2] = points
    out = homo @ M.T
    return out[:, :2] / out[:, 2:]


def _line_inputs(n, rng):
    img = np.zeros((n, n), dtype=np.uint8)
    if n == 0:
        return img, 0, 0, 0, 0
    return img, 0, n - 1, n - 1, n // 3


PROGRAMS = [
    Program(fill_triangle, lambda n, rng: (np.zeros((n, n + 1)), rng.random((3, 2)) * n, 0.5), large=40),
    Program(draw_line, _line_inputs),
    Program(mandelbrot, lambda n, rng: (-2.0, 1.0, -1.2, 1.2, n + 1, n, 30), large=40),
    Program(blinn_phong, lambda n, rng: (rng.standard_normal((n, 3)), np.array([1.0, 2.0, 3.0]),
                                         np.array([0.0, 0.0, 1.0]), 16.0), rtol=1e-8, atol=1e-12),
    Program(transform_points, lambda n, rng: (rng.random((n, 2)), 0.3, 2.0, 1.0, -1.0), rtol=1e-10),
]
