"""Counted loops poll for interrupts once per block of iterations
(kiln-poll-interrupts strip-mines them; docs/runtime.md "Interrupts"): the
blocked loops give Python's and NumPy's answers for every start, stop and
step, at trip counts around the block size, counting down, at the edges of
int64 (where the strip-mined form would overflow and the loop runs as it
was), with element writes, nested, and with the counter used after the
loop; a second size never recompiles."""

import numpy as np
import pytest

import kiln

rng = np.random.default_rng(17)


def strided_sum(start, stop):
    total = 0
    count = 0
    for i in range(start, stop, 3):
        total += i * 7 ^ (i >> 1)
        count += 1
    return total, count


def down_sum(start, stop):
    total = 0
    for i in range(start, stop, -2):
        total += i % 5
    return total


def last_counter(n):
    i = 0
    total = 0
    while i < n:
        total += i
        i += 4
    return i, total


def element_writes(x):
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        y[i] = x[i] * 2.0 + 1.0
    return y


def reverse_writes(x):
    for i in range(x.shape[0] - 1, 0, -1):
        x[i] = x[i] - x[i - 1]
    return x


def triangular(a):
    for i in range(a.shape[0]):
        for j in range(i):
            a[i, j] = a[i, j] - a[j, i] * 0.5
    return a


# Blocks are 16384 iterations: 49152 values of a counter stepping by 3.
BOUNDS = [(0, 0), (0, 1), (5, 2), (0, 49151), (0, 49152), (0, 49153), (-60000, 60000), (17, 100_000)]


def test_strided_loops_match_python():
    f = kiln.qjit(strided_sum, autograph=True)
    for start, stop in BOUNDS:
        assert tuple(int(v) for v in f(start, stop)) == strided_sum(start, stop), (start, stop)
    assert f.num_compiles == 1


def test_loops_counting_down_match_python():
    f = kiln.qjit(down_sum, autograph=True)
    for stop, start in BOUNDS:
        assert int(f(start, stop)) == down_sum(start, stop), (start, stop)
        assert int(f(stop, start)) == down_sum(stop, start), (stop, start)


@pytest.mark.parametrize("n", [0, 1, 3, 4, 65535, 65536, 65537, 100_001])
def test_the_counter_after_a_blocked_loop_is_pythons(n):
    got = kiln.qjit(last_counter, autograph=True)(n)
    assert tuple(int(v) for v in got) == last_counter(n)


@pytest.mark.parametrize("start, stop, step", [
    (2**63 - 20000, 2**63 - 1, 1),      # the last block ends at the bound, near int64's top
    (-2**63, -2**63 + 20000, 1),        # and starts at its bottom
    (-2**63, 2**63 - 2**59 - 1, 2**59),  # more than 2**63 values of the counter: runs unblocked
    (2**63 - 1, -2**63 + 2**59, -2**59),
    (-2**62, 2**62, 2**56),             # exactly 2**63 values
])
def test_loops_at_the_edges_of_int64(start, stop, step):
    """(The last step stays within int64: kiln's counter, unlike Python's
    int, would wrap past the top.)"""

    def edge(a, b):
        count = 0
        mixed = 0
        for i in range(a, b, step):
            count += 1
            mixed = mixed ^ i
        return count, mixed

    got = kiln.qjit(edge, autograph=True)(start, stop)
    assert tuple(int(v) for v in got) == edge(start, stop)


@pytest.mark.parametrize("n", [0, 1, 7, 16383, 16385, 40000])
def test_element_writes_match_numpy(n):
    x = rng.standard_normal(n)
    f = kiln.qjit(element_writes, autograph=True)
    np.testing.assert_array_equal(f(x), element_writes(x))
    expected, got = x.copy(), x.copy()
    kiln.qjit(reverse_writes, autograph=True)(got)
    np.testing.assert_array_equal(got, reverse_writes(expected))


def test_element_writes_second_size_does_not_recompile():
    f = kiln.qjit(element_writes, autograph=True)
    for n in (20000, 17):
        x = rng.standard_normal(n)
        np.testing.assert_array_equal(f(x), element_writes(x))
    assert f.num_compiles == 1


@pytest.mark.parametrize("n", [0, 1, 5, 40])
def test_nested_blocked_loops_match_numpy(n):
    a = rng.standard_normal((n, n))
    expected, got = a.copy(), a.copy()
    kiln.qjit(triangular, autograph=True)(got)
    np.testing.assert_array_equal(got, triangular(expected))
