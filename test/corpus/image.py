"""Image processing: blurs, edges, histograms and resampling on 2-D arrays."""

import math

import numpy as np

from corpus import Program


def box_blur(img):
    h, w = img.shape
    out = np.empty_like(img)
    for i in range(h):
        for j in range(w):
            total = 0.0
            count = 0
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    ii = i + di
                    jj = j + dj
                    if 0 <= ii < h and 0 <= jj < w:
                        total += img[ii, jj]
                        count += 1
            out[i, j] = total / count
    return out


def sobel_magnitude(img):
    gx = np.zeros_like(img)
    gy = np.zeros_like(img)
    gx[1:-1, 1:-1] = ((img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:])
                      - (img[:-2, :-2] + 2 * img[1:-1, :-2] + img[2:, :-2]))
    gy[1:-1, 1:-1] = ((img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:])
                      - (img[:-2, :-2] + 2 * img[:-2, 1:-1] + img[:-2, 2:]))
    return np.sqrt(gx ** 2 + gy ** 2)


def equalize_histogram(img, levels):
    hist = np.zeros(levels, dtype=np.int64)
    for v in img.ravel():
        hist[v] += 1
    cdf = np.cumsum(hist)
    lo = cdf.min()
    lut = np.round((cdf - lo) * (levels - 1) / max(cdf[-1] - lo, 1))
    return lut[img].astype(img.dtype)


def resize_bilinear(img, out_h, out_w):
    h, w = img.shape
    out = np.zeros((out_h, out_w))
    sy = (h - 1) / max(out_h - 1, 1)
    sx = (w - 1) / max(out_w - 1, 1)
    for i in range(out_h):
        y = i * sy
        y0 = int(math.floor(y))
        y1 = min(y0 + 1, h - 1)
        fy = y - y0
        for j in range(out_w):
            x = j * sx
            x0 = int(x)
            x1 = min(x0 + 1, w - 1)
            fx = x - x0
            top = img[y0, x0] * (1 - fx) + img[y0, x1] * fx
            bottom = img[y1, x0] * (1 - fx) + img[y1, x1] * fx
            out[i, j] = top * (1 - fy) + bottom * fy
    return out


def box_sums(img, r):
    h, w = img.shape
    sat = np.zeros((h + 1, w + 1))
    sat[1:, 1:] = img.cumsum(axis=0).cumsum(axis=1)
    out = np.empty((h, w))
    for i in range(h):
        i0, i1 = max(i - r, 0), min(i + r + 1, h)
        for j in range(w):
            j0, j1 = max(j - r, 0), min(j + r + 1, w)
            out[i, j] = sat[i1, j1] - sat[i0, j1] - sat[i1, j0] + sat[i0, j0]
    return out


def threshold_otsu(img):
    """Otsu's threshold of an 8-bit image (256 bins)."""
    hist = np.zeros(256)
    for row in img:
        for v in row:
            hist[v] += 1
    total = img.size
    sum_all = np.dot(np.arange(256), hist)
    w_b = 0.0
    sum_b = 0.0
    best, threshold = 0.0, 0
    for t in range(256):
        w_b += hist[t]
        if w_b == 0:
            continue
        w_f = total - w_b
        if w_f == 0:
            break
        sum_b += t * hist[t]
        m_b = sum_b / w_b
        m_f = (sum_all - sum_b) / w_f
        between = w_b * w_f * (m_b - m_f) ** 2
        if between > best:
            best = between
            threshold = t
    return threshold


PROGRAMS = [
    Program(box_blur, lambda n, rng: (rng.random((n, n + 2)),), large=40),
    Program(sobel_magnitude, lambda n, rng: (rng.random((n, n + 3)),)),
    Program(equalize_histogram, lambda n, rng: (rng.integers(0, 16, (n, n + 1)), 16)),
    Program(resize_bilinear, lambda n, rng: (rng.random((n, n + 2)), 2 * n, n + 1), large=40),
    Program(box_sums, lambda n, rng: (rng.random((n, n + 1)), 2), large=50, rtol=1e-8, atol=1e-9),
    Program(threshold_otsu, lambda n, rng: (rng.integers(0, 256, (n, n + 1)),), large=60),
]
