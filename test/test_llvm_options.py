"""The LLVM options kiln sets once per process (compiler/llvm_options.py):
`-disable-lsr` by default, `KILN_LLVM_OPTIONS` to replace them, the
options in the cache key, and results equal to NumPy's either way."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap

import pytest

from kiln.compiler import driver, llvm_options
from kiln.errors import KilnValueError

# A triangular stencil with a carried sum (the loop shape whose code LSR
# rewrites): the result and the written argument must be NumPy's under any
# LLVM options. Run in a subprocess: the options are process-wide.
PROGRAM = textwrap.dedent("""
    import glob, json, os, sys
    import numpy as np
    import kiln

    def smooth(a, b):
        n = a.shape[0]
        s = 0.0
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                a[i, j] = (a[i - 1, j] + a[i, j - 1] + a[i, j] + a[i + 1, j] + a[i, j + 1]) * 0.2 + b[j, i]
                s += a[i, j]
        return s

    compiled = kiln.qjit(smooth)
    report = {"cases": []}
    for n in (0, 1, 2, 7, 40):
        rng = np.random.default_rng(n)
        a, b = rng.random((n, n)), rng.random((n, n))
        expected_a = a.copy()
        expected = smooth(expected_a, b)
        got = compiled(a, b)
        report["cases"].append([n, bool(np.isclose(got, expected)), bool(np.allclose(a, expected_a))])
    from kiln.compiler import llvm_options
    report["applied"] = list(llvm_options.llvm_options())
    # In the order they were built (sizes 1 compile a version of their own: broadcasting).
    from kiln.runtime import deferred
    deferred.wait()  # (each first call's library is linked behind it)
    report["libraries"] = sorted(glob.glob(os.path.join(os.environ["KILN_CACHE_DIR"], "lib", "*.so")),
                                 key=os.path.getmtime)
    print("REPORT " + json.dumps(report))
""")


def _code(path: str) -> bytes:
    """The machine code of an ELF64 little-endian shared library: its
    `.text` and `.ltext` (LLVM puts kiln's functions there: large code model)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, path
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def section(k: int) -> tuple[int, int, int]:
        name, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + k * shentsize)
        return name, offset, size

    _, names_offset, _ = section(shstrndx)
    code = {}
    for k in range(shnum):
        name, offset, size = section(k)
        name = data[names_offset + name:data.index(b"\0", names_offset + name)]
        if name in (b".text", b".ltext"):
            code[name] = data[offset:offset + size]
    assert b".ltext" in code, f"{path}: no .ltext section"
    return code.get(b".text", b"") + code[b".ltext"]


def _run(tmp_path, options: str | None, tag: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != llvm_options.ENVIRONMENT_VARIABLE}
    if options is not None:
        env[llvm_options.ENVIRONMENT_VARIABLE] = options
    env["KILN_CACHE_DIR"] = str(tmp_path / tag)
    script = tmp_path / "program.py"  # a file: autograph reads the loop's source
    script.write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    return json.loads(line[len("REPORT "):])


def test_default_and_llvm_defaults_both_match_numpy_and_differ_in_code(tmp_path):
    default = _run(tmp_path, None, "default")
    llvm_own = _run(tmp_path, "", "llvm-own")
    assert default["applied"] == list(llvm_options.DEFAULT_LLVM_OPTIONS)
    assert llvm_own["applied"] == []
    for report in (default, llvm_own):
        assert [c[0] for c in report["cases"]] == [0, 1, 2, 7, 40]
        assert all(ok and written_ok for _, ok, written_ok in report["cases"]), report["cases"]
    # The same libraries; the options are in the cache key, and they reached LLVM: the code differs.
    assert len(default["libraries"]) == len(llvm_own["libraries"]) >= 1
    pairs = list(zip(default["libraries"], llvm_own["libraries"]))
    assert all(os.path.basename(ours) != os.path.basename(theirs) for ours, theirs in pairs)
    # The general version (built first, for n = 0) has the loops whose code LSR rewrites.
    ours, theirs = pairs[0]
    assert _code(ours) != _code(theirs)


def test_same_options_same_code(tmp_path):
    first = _run(tmp_path, " ".join(llvm_options.DEFAULT_LLVM_OPTIONS), "first")
    second = _run(tmp_path, None, "second")  # the defaults are the same options
    assert first["applied"] == second["applied"] == list(llvm_options.DEFAULT_LLVM_OPTIONS)
    assert [os.path.basename(p) for p in first["libraries"]] == [os.path.basename(p) for p in second["libraries"]]
    assert all(_code(a) == _code(b) for a, b in zip(first["libraries"], second["libraries"]))


@pytest.fixture
def fresh_options(monkeypatch):
    """llvm_options() and the fingerprint re-read the environment in the
    test, and are restored for the rest of the process after it."""
    llvm_options.llvm_options.cache_clear()
    driver.toolchain_fingerprint.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    llvm_options.llvm_options.cache_clear()
    driver.toolchain_fingerprint.cache_clear()


def test_environment_replaces_the_defaults(fresh_options):
    fresh_options.delenv(llvm_options.ENVIRONMENT_VARIABLE, raising=False)
    assert llvm_options.llvm_options() == ("-disable-lsr", "-x86-cmov-converter=false")
    default_print = driver.toolchain_fingerprint()
    llvm_options.llvm_options.cache_clear()
    driver.toolchain_fingerprint.cache_clear()
    fresh_options.setenv(llvm_options.ENVIRONMENT_VARIABLE, "  -unroll-threshold=100   -disable-lsr ")
    assert llvm_options.llvm_options() == ("-unroll-threshold=100", "-disable-lsr")
    assert driver.toolchain_fingerprint() != default_print
    llvm_options.llvm_options.cache_clear()
    fresh_options.setenv(llvm_options.ENVIRONMENT_VARIABLE, "")
    assert llvm_options.llvm_options() == ()


@pytest.mark.parametrize("text, culprit", [("disable-lsr", "'disable-lsr'"), ("-disable-lsr O3", "'O3'"),
                                           ("--", "'--'")])
def test_a_word_that_is_not_an_option_is_named(fresh_options, text, culprit):
    fresh_options.setenv(llvm_options.ENVIRONMENT_VARIABLE, text)
    with pytest.raises(KilnValueError) as info:
        llvm_options.llvm_options()
    message = str(info.value)
    assert "KILN_LLVM_OPTIONS" in message and culprit in message and "fix:" in message
