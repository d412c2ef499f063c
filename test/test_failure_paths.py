"""Failure paths of compiled calls: a run-time check that fails, an
allocation that fails, frees every buffer the call had allocated (resident
memory stays flat over 100,000 failing calls), and leaves the caller's
arrays untouched; through the C hot path and the Python one."""

import gc
import os

import numpy as np
import pytest

import kiln


@pytest.fixture(params=["c", "python"])
def call_path(request, monkeypatch):
    """Run the test through the C hot path and through the Python one."""
    from kiln.runtime.executable import Executable, fastcall_module

    if request.param == "c" and fastcall_module() is None:
        pytest.skip("the C hot path could not be built here (no C compiler or no Python headers)")
    if request.param == "python":
        monkeypatch.setattr(Executable, "__call__", Executable.call_python)
    return request.param


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _rss_growth_over(calls: int, call) -> int:
    for _ in range(200):  # warm up the allocator
        call()
    gc.collect()
    before = _rss_bytes()
    for _ in range(calls):
        call()
    gc.collect()
    return _rss_bytes() - before


@kiln.qjit
def _fails_after_allocating(x, i):
    y = np.exp(x) + 1.0  # a fresh 8 KB buffer, alive when the check below fails
    x[0] = y[i]
    return y * 2.0


@kiln.qjit
def _fails_in_a_loop(x, n):
    acc = np.zeros_like(x)
    for k in range(n):
        acc = acc + np.sqrt(x) * k  # a buffer per iteration; the last ones are alive at the failure
        acc[k] = 1.0  # fails once k reaches x.shape[0]
    return acc


def test_failed_checks_free_what_the_call_allocated(call_path):
    """100,000 calls fail a bounds check after allocating 8 KB: resident
    memory stays flat (it grew ~8 KB per failing call before), and the
    caller's array is untouched."""
    x = np.random.default_rng(0).random(1000)
    original = x.copy()
    np.testing.assert_allclose(_fails_after_allocating(x.copy(), 3), (np.exp(x) + 1.0) * 2.0)

    def fail():
        try:
            _fails_after_allocating(x, 5000)
        except IndexError:
            return
        raise AssertionError("the bounds check did not fail")

    growth = _rss_growth_over(100_000, fail)
    assert growth < 20 * 2**20, f"resident memory grew by {growth / 2**20:.1f} MB over 100,000 failing calls"
    np.testing.assert_array_equal(x, original)


def test_a_check_failing_inside_a_loop_frees_the_loop_buffers(call_path):
    x = np.random.default_rng(1).random(500)
    original = x.copy()
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 500"):
        _fails_in_a_loop(x, 501)

    def fail():
        try:
            _fails_in_a_loop(x, 502)
        except IndexError:
            return
        raise AssertionError("the bounds check did not fail")

    growth = _rss_growth_over(20_000, fail)
    assert growth < 20 * 2**20, f"resident memory grew by {growth / 2**20:.1f} MB over 20,000 failing calls"
    np.testing.assert_array_equal(x, original)
    want = np.zeros_like(x[:3])
    for k in range(3):
        want = want + np.sqrt(x[:3]) * k
        want[k] = 1.0
    np.testing.assert_allclose(_fails_in_a_loop(x[:3].copy(), 3), want)


def test_a_failed_allocation_frees_the_earlier_buffers(call_path):
    """An allocation that fails (a huge traced size) unwinds like a failed
    check and frees the buffers allocated before it."""
    @kiln.qjit
    def f(x, n):
        y = np.exp(x)
        return y, np.zeros((n, n))

    x = np.ones(1000)

    def fail():
        try:
            f(x, 2**40)
        except MemoryError:
            return
        raise AssertionError("the allocation did not fail")

    growth = _rss_growth_over(20_000, fail)
    assert growth < 20 * 2**20, f"resident memory grew by {growth / 2**20:.1f} MB over 20,000 failing calls"
    y, z = f(x, 2)
    np.testing.assert_allclose(y, np.exp(x))
    assert z.shape == (2, 2)
