"""Coding theory on integer arrays: Hamming(7,4) encode with single-error correction, a CRC-8
bit loop, and a Luhn checksum over digit rows."""

import numpy as np

from corpus import Program


G = np.array([[1, 1, 0, 1], [1, 0, 1, 1], [1, 0, 0, 0], [0, 1, 1, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
H = np.array([[1, 0, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]])


def hamming74(data, flip):
    n = data.shape[0]
    code = (data @ G.T) % 2
    received = code.copy()
    for i in range(n):
        if flip[i] >= 0:
            received[i, flip[i]] ^= 1
    syndrome = (received @ H.T) % 2
    pos = syndrome[:, 0] + 2 * syndrome[:, 1] + 4 * syndrome[:, 2]
    fixed = received.copy()
    for i in range(n):
        if pos[i] > 0:
            fixed[i, pos[i] - 1] ^= 1
    decoded = fixed[:, [2, 4, 5, 6]]
    return code, pos, np.all(decoded == data, axis=1)


def crc8(message, poly):
    crc = 0
    for byte in message:
        crc ^= int(byte)
        for _ in range(8):
            if crc & 0x80:
                crc = ((crc << 1) ^ poly) & 0xFF
            else:
                crc = (crc << 1) & 0xFF
    return crc


def luhn_valid(digits):
    # one card number per row, rightmost digit is the check digit
    n, m = digits.shape
    ok = np.zeros(n, dtype=bool)
    for r in range(n):
        total = 0
        for k in range(m):
            d = digits[r, m - 1 - k]
            if k % 2 == 1:
                d *= 2
                if d > 9:
                    d -= 9
            total += d
        ok[r] = total % 10 == 0
    return ok, ok.sum()


PROGRAMS = [
    Program(hamming74, lambda n, rng: (rng.integers(0, 2, (n, 4)), rng.integers(-1, 7, n))),
    Program(crc8, lambda n, rng: (rng.integers(0, 256, 5 * n), 0x07)),
    Program(luhn_valid, lambda n, rng: (rng.integers(0, 10, (4 * n, 16)),)),
]
