"""Bioinformatics on integer-coded sequences (A=0, C=1, G=2, T=3)."""

import numpy as np

from corpus import Program


def gc_skew(seq, window):
    n = len(seq)
    nwin = max(n - window + 1, 0)
    skew = np.zeros(nwin)
    for i in range(nwin):
        w = seq[i:i + window]
        g = np.sum(w == 2)
        c = np.sum(w == 1)
        skew[i] = (g - c) / (g + c) if g + c > 0 else 0.0
    return skew


def needleman_wunsch(a, b, match=1, mismatch=-1, gap=-2):
    n, m = len(a), len(b)
    F = np.zeros((n + 1, m + 1))
    F[:, 0] = gap * np.arange(n + 1)
    F[0, :] = gap * np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            s = match if a[i - 1] == b[j - 1] else mismatch
            F[i, j] = max(F[i - 1, j - 1] + s, F[i - 1, j] + gap, F[i, j - 1] + gap)
    return F[n, m], F


def kmer_counts(seq, k):
    counts = np.zeros(4 ** k, dtype=np.int64)
    for i in range(len(seq) - k + 1):
        code = 0
        for j in range(k):
            code = code * 4 + seq[i + j]
        counts[code] += 1
    return counts


def hamming_matrix(seqs):
    n = seqs.shape[0]
    D = np.zeros((n, n), dtype=np.int64)
    for i in range(n):
        for j in range(i + 1, n):
            d = np.count_nonzero(seqs[i] != seqs[j])
            D[i, j] = d
            D[j, i] = d
    return D


def reverse_complement(seq):
    out = np.empty_like(seq)
    n = len(seq)
    for i in range(n):
        out[n - 1 - i] = 3 - seq[i]
    return out


def smith_waterman_score(a, b, match=2, mismatch=-1, gap=-1):
    n, m = len(a), len(b)
    H = np.zeros((n + 1, m + 1))
    best = 0.0
    best_pos = (0, 0)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            diag = H[i - 1, j - 1] + (match if a[i - 1] == b[j - 1] else mismatch)
            H[i, j] = max(0.0, diag, H[i - 1, j] + gap, H[i, j - 1] + gap)
            if H[i, j] > best:
                best = H[i, j]
                best_pos = (i, j)
    return best, best_pos


PROGRAMS = [
    Program(gc_skew, lambda n, rng: (rng.integers(0, 4, n), 5)),
    Program(needleman_wunsch, lambda n, rng: (rng.integers(0, 4, n), rng.integers(0, 4, n + 1)), large=60),
    Program(kmer_counts, lambda n, rng: (rng.integers(0, 4, n), 3)),
    Program(hamming_matrix, lambda n, rng: (rng.integers(0, 4, (n, 12)),), large=40),
    Program(reverse_complement, lambda n, rng: (rng.integers(0, 4, n),)),
    Program(smith_waterman_score, lambda n, rng: (rng.integers(0, 4, n), rng.integers(0, 4, n + 2)), large=60),
]
