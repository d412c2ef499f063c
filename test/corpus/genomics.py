"""Genomics: k-mer counting on integer-coded DNA (A=0, C=1, G=2, T=3), GC content in sliding
windows, and reverse complement with a lookup table by fancy indexing."""

import numpy as np

from corpus import Program


def kmer_counts(seq, k):
    counts = np.zeros(4 ** k, dtype=np.int64)
    for i in range(len(seq) - k + 1):
        code = 0
        for j in range(k):
            code = code * 4 + seq[i + j]
        counts[code] += 1
    most = np.argmax(counts)
    return counts, most, np.count_nonzero(counts)


def gc_windows(seq, w):
    is_gc = ((seq == 1) | (seq == 2)).astype(np.int64)
    c = np.concatenate((np.zeros(1, dtype=np.int64), np.cumsum(is_gc)))
    n_win = max(len(seq) - w + 1, 0)
    gc = np.zeros(n_win)
    for i in range(n_win):
        gc[i] = (c[i + w] - c[i]) / w
    islands = np.where(gc > 0.6)[0]
    return gc, islands


def revcomp_hamming(seq, other):
    comp = np.array([3, 2, 1, 0])
    rc = comp[seq][::-1]
    mism = rc != other
    return rc, int(mism.sum()), np.flatnonzero(mism)


PROGRAMS = [
    Program(kmer_counts, lambda n, rng: (rng.integers(0, 4, 5 * n), 3)),
    Program(gc_windows, lambda n, rng: (rng.integers(0, 4, 3 * n), 4)),
    Program(revcomp_hamming, lambda n, rng: (rng.integers(0, 4, n), rng.integers(0, 4, n))),
]
