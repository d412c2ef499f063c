"""Run the lit suite (test/lit) from pytest; a failure shows lit's full output.

`lit` has no `__main__` module, so it runs as `python -c` on `lit.main`
with this interpreter: its substitutions then use this venv's kiln-opt,
filecheck and Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LIT_DIR = Path(__file__).parent / "lit"


def test_lit_suite(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", "import lit.main; lit.main.main()", "-v", str(LIT_DIR)],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "KILN_LIT_OUTPUT": str(tmp_path)},
    )
    assert proc.returncode == 0, f"lit failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
