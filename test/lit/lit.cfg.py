"""lit configuration of kiln's IR tests.

In: `test/lit/**/*.mlir` (RUN: kiln-opt ... | filecheck %s) and
`test/lit/frontend/*.py` (RUN: %PYTHON %s | filecheck %s).
Substitutions: %PYTHON, kiln-opt, filecheck, all from the Python running lit.
"""

import os
import shlex
import shutil
import sys
import tempfile

import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs", "__pycache__"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
# Keep lit's Output/ folders out of the source tree.
config.test_exec_root = os.environ.get("KILN_LIT_OUTPUT") or os.path.join(
    tempfile.gettempdir(), f"kiln-lit-{os.getuid()}")

bin_dir = os.path.dirname(sys.executable)


def _tool(name: str) -> str | None:
    """`name` installed next to this Python (same venv), else on PATH."""
    beside = os.path.join(bin_dir, name)
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which(name)


python = shlex.quote(sys.executable)
kiln_opt = _tool("kiln-opt")
kiln_opt = shlex.quote(kiln_opt) if kiln_opt else f"{python} -m kiln.compiler.opt"
filecheck = _tool("filecheck")
if filecheck is None:
    lit_config.fatal("the `filecheck` command is missing: pip install filecheck")

# Tool names are whole words: never rewrite them inside paths or pass names
# (`%s` is already expanded when these run).
_WORD = r"(?<![\w/.%-]){}(?![\w.-])"
config.substitutions.append(("%PYTHON", python))
config.substitutions.append((_WORD.format("kiln-opt"), kiln_opt))
config.substitutions.append((_WORD.format("filecheck"), shlex.quote(filecheck)))

# Frontend tests compile functions: give them a compile cache of their own,
# emptied at the start of every run. KILN_LIT_TOOLCHAIN (set by
# test/test_lit.py) names a folder of verified toolchain files (support
# code, fastcall extension) to start it with, instead of every script that
# links before the first build is done building the support code again.
cache_dir = os.path.join(config.test_exec_root, "kiln-cache")
shutil.rmtree(cache_dir, ignore_errors=True)
os.makedirs(cache_dir)
toolchain_dir = os.environ.get("KILN_LIT_TOOLCHAIN")
if toolchain_dir:
    shutil.copytree(toolchain_dir, cache_dir, dirs_exist_ok=True)
config.environment["KILN_CACHE_DIR"] = cache_dir
for name in ("HOME", "TMPDIR", "KILN_LOG"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
