"""Run the lit suite (test/lit) from pytest, in shards; a failure shows lit's
full output.

`lit` has no `__main__` module, so it runs as `python -c` on `lit.main`
with this interpreter: its substitutions then use this venv's kiln-opt,
filecheck and Python. The suite's fresh compile cache starts with this
session's support code (`seed_toolchain`, KILN_LIT_TOOLCHAIN in lit.cfg.py).

The whole suite is ~110 CPU s: as one test it kept one pytest-xdist worker
busy alone at the end of the run. Shard k of SHARDS runs lit's tests
k, k + SHARDS, ... (lit's `--num-shards/--run-shard`, over its sorted test
list), so the shards together run every lit test once, and xdist spreads
them. Under xdist each shard runs its tests one at a time (`-j 1`): the
worker is one of the machine's cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LIT_DIR = Path(__file__).parent / "lit"
SHARDS = 8


@pytest.mark.parametrize("shard", range(1, SHARDS + 1))
def test_lit_suite(tmp_path, seed_toolchain, shard):
    jobs = ["-j", "1"] if os.environ.get("PYTEST_XDIST_WORKER") else []
    proc = subprocess.run(
        [sys.executable, "-c", "import lit.main; lit.main.main()", "-v", *jobs,
         "--num-shards", str(SHARDS), "--run-shard", str(shard), str(LIT_DIR)],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "KILN_LIT_OUTPUT": str(tmp_path / "output"),
             "KILN_LIT_TOOLCHAIN": str(seed_toolchain(tmp_path / "toolchain"))},
    )
    assert proc.returncode == 0, f"lit failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    # Every shard has tests (an empty one would mean SHARDS outgrew the suite).
    assert "Selecting shard" in proc.stderr + proc.stdout and " Passed" in proc.stdout, proc.stdout + proc.stderr
