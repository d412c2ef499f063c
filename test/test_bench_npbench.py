"""The NPBench benchmark harness (cmake-free-scripts/bench_npbench.py) runs end to end:
one small kernel, --quick, in its worker subprocess; and a kernel over its time limit
costs its row, not the run. No timing is asserted, so the harness's empty kiln
cache builds the support code through conftest's `cached_cc` (the session's
compiler output for a source compiled before: not ~30 CPU s of `cc`)."""

import os
import subprocess
import sys

import pytest

from npbench_harness import find_npbench_dir

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cmake-free-scripts",
                      "bench_npbench.py")
needs_npbench = pytest.mark.skipif(find_npbench_dir() is None,
                                   reason="../shared/npbench (the NPBench kernels) is absent")


def _run(cc_env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **cc_env))
    assert done.returncode == 0, done.stderr
    return done.stdout


def _row(stdout: str, kernel: str) -> list[str]:
    rows = [line.split() for line in stdout.splitlines() if line.startswith(kernel + " ")]
    assert rows, stdout
    return rows[-1]


@needs_npbench
def test_quick_run_validates_and_times_kiln_against_numpy(cached_cc):
    stdout = _run(cached_cc, "--quick", "--only", "crc16", "--tools", "numpy,kiln", "--no-docs")
    row = _row(stdout, "crc16")
    numpy_ms, kiln_ms = float(row[1]), float(row[2])  # numbers, not "failed" or "wrong"
    assert numpy_ms > 0 and kiln_ms > 0
    assert "kiln / numpy: geomean" in stdout


@needs_npbench
def test_a_kernel_over_its_time_limit_is_reported_and_the_run_goes_on(cached_cc):
    stdout = _run(cached_cc, "--quick", "--only", "crc16", "--tools", "numpy,kiln", "--no-docs", "--timeout", "0.01")
    assert "time limit 0.01 s exceeded" in " ".join(_row(stdout, "crc16"))


def test_a_port_doing_less_work_is_named_in_its_row():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_npbench_for_test", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    tools = {t: {"status": "ok", "median_ms": ms, "first_ms": 100.0}
             for t, ms in (("numpy", 600.0), ("kiln", 55.0), ("numba", 350.0), ("jax.jit", 41.0))}
    lines = bench.format_rows([{"kernel": "channel_flow", "tools": tools},
                               {"kernel": "crc16", "tools": tools}], list(tools))
    channel_flow, crc16 = lines[2], lines[3]
    assert "1.34 jax.j" in channel_flow and "jax.jit skips the pressure solve" in channel_flow
    assert "skips" not in crc16
