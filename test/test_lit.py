"""Run the lit suite (test/lit) from pytest; a failure shows lit's full output.

`lit` has no `__main__` module, so it runs as `python -c` on `lit.main`
with this interpreter: its substitutions then use this venv's kiln-opt,
filecheck and Python. The suite's fresh compile cache starts with this
session's support code (`seed_toolchain`, KILN_LIT_TOOLCHAIN in lit.cfg.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LIT_DIR = Path(__file__).parent / "lit"


def test_lit_suite(tmp_path, seed_toolchain):
    proc = subprocess.run(
        [sys.executable, "-c", "import lit.main; lit.main.main()", "-v", str(LIT_DIR)],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "KILN_LIT_OUTPUT": str(tmp_path / "output"),
             "KILN_LIT_TOOLCHAIN": str(seed_toolchain(tmp_path / "toolchain"))},
    )
    assert proc.returncode == 0, f"lit failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
