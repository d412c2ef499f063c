"""Does a change to the functionalization passes keep their output? Compare
the `functionalized` stage of many programs between two kiln trees.

In: programs at the `mlir` stage, collected once (the `mlir` stage does not
depend on the passes compared): every module the given pytest files
compile, and `bench_compile_time.py`'s generated shapes at several sizes.
Out: per program, the module after the `functionalized` stage's passes,
made by each tree's interpreter, and the programs whose text differs.

    python cmake-free-scripts/compare_functionalized.py collect /tmp/corpus \\
        --tests test/test_mutation.py,test/test_user_corpus.py --sizes 8,24,48
    python cmake-free-scripts/compare_functionalized.py compare /tmp/corpus \\
        --python before=MAIN_TREE_PYTHON,after=.venv/bin/python
    python cmake-free-scripts/compare_functionalized.py replay /tmp/corpus /tmp/out   # one tree

`compare` runs `replay` with each interpreter (each imports its own kiln)
and prints the programs whose `functionalized` text differs, with the
first lines of the difference; it exits with 1 if any does.
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent


def collect(folder: Path, tests: list[str], sizes: list[int]) -> int:
    """Write the `mlir` stage of every module the tests compile, and of each
    generated shape at each size, into `folder` (one file each)."""
    import numpy as np

    import kiln
    from kiln.compiler import driver
    from kiln.compiler.lowering import lower_jaxpr_to_module
    from kiln.dialects import new_context

    folder.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(SCRIPTS))
    import bench_compile_time as bench

    for shape in bench.SHAPES:
        for n in sizes:
            function = kiln.qjit(bench.make_program(shape, n))
            args = [np.copy(a) if isinstance(a, np.ndarray) else a for a in bench.SHAPES[shape][1]()]
            jaxpr = function.lower(*args).jaxpr
            module = lower_jaxpr_to_module(jaxpr, "program", new_context())
            (folder / f"shape_{shape}_{n}.mlir").write_text(str(module))
    if not tests:
        return 0
    original = driver.compile_module
    count = [len(list(folder.glob("test_*.mlir")))]  # a second collect adds to the first

    def saving(module, *args, **kwargs):
        count[0] += 1
        (folder / f"test_{count[0]:05d}.mlir").write_text(str(module))
        return original(module, *args, **kwargs)

    driver.compile_module = saving
    import pytest

    status = pytest.main(["-q", "-n", "0", "-p", "no:cacheprovider", *tests])
    print(f"{count[0]} modules from tests in {folder} (pytest status {status})")
    return 0


def replay(folder: Path, out: Path) -> int:
    """Run the `functionalized` stage's passes on each collected module and
    write its text (or the error) to `out`; print the seconds per pass."""
    from kiln.compiler.mlir import ir
    from kiln.compiler.pipeline import DEFAULT_PIPELINE, run_passes
    from kiln.dialects import new_context

    specs = dict(DEFAULT_PIPELINE)["functionalized"]
    seconds = {spec: 0.0 for spec in specs}
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(folder.glob("*.mlir")):
        with new_context() as ctx:
            module = ir.Module.parse(path.read_text(), ctx)
            try:
                for spec in specs:
                    start = time.perf_counter()
                    run_passes(module, [spec], "functionalized")
                    seconds[spec] += time.perf_counter() - start
                text = str(module)
            except Exception as error:  # the error is the output to compare
                text = f"ERROR {type(error).__name__}: {error}\n"
        (out / path.name).write_text(text)
    import kiln

    print(f"kiln {Path(kiln.__file__).parent}: " + " ".join(f"{spec} {value:.3f}s" for spec, value in seconds.items()))
    return 0


def compare(folder: Path, pythons: dict[str, str]) -> int:
    outs = {}
    for label, python in pythons.items():
        outs[label] = Path(tempfile.mkdtemp(prefix=f"kiln-functionalized-{label}-"))
        result = subprocess.run([python, str(Path(__file__).resolve()), "replay", str(folder), str(outs[label])],
                                capture_output=True, text=True, cwd=tempfile.gettempdir())
        if result.returncode:
            print(result.stdout + result.stderr)
            return 2
        print(f"{label}: {result.stdout.strip()}")
    (first, first_out), *rest = outs.items()
    names = sorted(p.name for p in first_out.glob("*.mlir"))
    differ = 0
    errors = sum((first_out / name).read_text().startswith("ERROR") for name in names)
    for label, other_out in rest:
        for name in names:
            a, b = (first_out / name).read_text(), (other_out / name).read_text()
            if a != b:
                differ += 1
                diff = difflib.unified_diff(a.splitlines(), b.splitlines(), first, label, lineterm="", n=1)
                print(f"--- {name} differs:\n" + "\n".join(list(diff)[:20]))
    print(f"{len(names)} programs, {differ} differ, {errors} end in an error in {first}")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("collect")
    p.add_argument("folder", type=Path)
    p.add_argument("--tests", default="", help="comma-separated pytest files (or node ids)")
    p.add_argument("--sizes", default="8,24,48", help="statement counts of the generated shapes")
    p = commands.add_parser("replay")
    p.add_argument("folder", type=Path)
    p.add_argument("out", type=Path)
    p = commands.add_parser("compare")
    p.add_argument("folder", type=Path)
    p.add_argument("--python", required=True, help="label=interpreter,label=interpreter")
    opts = parser.parse_args()
    if opts.command == "collect":
        return collect(opts.folder, [t for t in opts.tests.split(",") if t],
                       [int(n) for n in opts.sizes.split(",") if n])
    if opts.command == "replay":
        return replay(opts.folder, opts.out)
    pythons = dict(item.split("=", 1) for item in opts.python.split(","))
    return compare(opts.folder, {label: os.path.abspath(p) if os.sep in p else p for label, p in pythons.items()})


if __name__ == "__main__":
    sys.exit(main())
