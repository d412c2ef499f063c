"""NPBench harness: run the NPBench kernels of ../shared/npbench under a compiler and check them.

In: the NPBench folder (bench_info/<name>.json, benchmarks/<path>/<module>.py and
<module>_numpy.py, read in place, never copied) and a compile function (`kiln.qjit`).
Out: per kernel, whether it compiled, validated as NPBench validates at preset S and at
a smaller second size, and compiled only once; `python test/npbench_harness.py` prints a table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
# The tolerances NPBench uses when a bench_info file names none.
DEFAULT_RTOL, DEFAULT_ATOL, DEFAULT_NORM_ERROR = 1e-5, 1e-8, 1e-5


def find_npbench_dir() -> Path | None:
    """The `shared/npbench` folder beside the repository (or beside one of its
    ancestors: a worktree lives deeper than the clone CI makes)."""
    for folder in REPO_ROOT.parents:
        candidate = folder / "shared" / "npbench"
        if (candidate / "bench_info").is_dir():
            return candidate
    return None


def _load_module(path: Path, name: str) -> Any:
    """Import the file at `path` under `name` without copying it or touching sys.path."""
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(path):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Kernel:
    """One NPBench kernel: its bench_info and the files that define it."""

    name: str
    info: dict
    folder: Path

    @property
    def rtol(self) -> float:
        return self.info.get("rtol", DEFAULT_RTOL)

    @property
    def atol(self) -> float:
        return self.info.get("atol", DEFAULT_ATOL)

    @property
    def norm_error(self) -> float:
        return self.info.get("norm_error", DEFAULT_NORM_ERROR)

    def implementation(self, suffix: str = "") -> Any:
        """The kernel's module for one framework: `_numpy`, `_numba_n`, `_jax`,
        or "" for the module that holds `initialize`."""
        module = self.info["module_name"] + suffix
        path = self.folder / "benchmarks" / self.info["relative_path"] / f"{module}.py"
        return _load_module(path, f"npbench_{self.name}_{module}")

    def numpy_kernel(self) -> Callable:
        return getattr(self.implementation("_numpy"), self.info["func_name"])

    def parameters(self, preset: str = "S") -> dict:
        return dict(self.info["parameters"][preset])

    def data(self, parameters: dict) -> dict:
        """The preset's parameters and what `initialize` makes from them, by name."""
        data = dict(parameters)
        init = self.info.get("init")
        if not init:
            return data
        initialize = getattr(self.implementation(""), init["func_name"])
        made = initialize(*[parameters[a] for a in init["input_args"]])
        if len(init["output_args"]) == 1:
            made = (made,)
        data.update(zip(init["output_args"], made))
        return data

    def arguments(self, data: dict) -> list:
        """The kernel's arguments in order, array arguments copied (NPBench
        gives every framework fresh copies)."""
        arrays = set(self.info["array_args"])
        return [np.copy(data[a]) if a in arrays else data[a] for a in self.info["input_args"]]

    def outputs(self, result: Any, arguments: list) -> list:
        """What NPBench compares: the returned values, then the output arguments."""
        returned = [] if result is None else list(result) if isinstance(result, (tuple, list)) else [result]
        written = [arguments[self.info["input_args"].index(a)] for a in self.info["output_args"]]
        return returned + written


def smaller_parameters(parameters: dict) -> dict:
    """A second size below preset S: every integer parameter above 2 scaled by
    3/4 (never below 2, so no dim becomes 1); floats unchanged."""
    return {k: max(2, (3 * v) // 4) if isinstance(v, int) and v > 2 else v for k, v in parameters.items()}


def load_kernels(folder: Path) -> dict[str, Kernel]:
    """Every kernel of the folder, by its bench_info file name (`adi`, `gemm`, ...)."""
    kernels = {}
    for path in sorted((folder / "bench_info").glob("*.json")):
        kernels[path.stem] = Kernel(path.stem, json.loads(path.read_text())["benchmark"], folder)
    return kernels


def mismatches(kernel: Kernel, reference: list, got: list) -> list[str]:
    """NPBench's check: np.allclose(ref, got, rtol, atol), or failing that a
    relative norm error below norm_error. Returns one line per failure."""
    if len(reference) != len(got):
        return [f"{len(got)} outputs, NumPy gives {len(reference)}"]
    problems = []
    for position, (ref, value) in enumerate(zip(reference, got)):
        ref, value = np.asarray(ref), np.asarray(value)
        if ref.shape != value.shape:
            problems.append(f"output {position}: shape {value.shape}, NumPy {ref.shape}")
            continue
        if np.allclose(ref, value, rtol=kernel.rtol, atol=kernel.atol):
            continue
        norm = np.linalg.norm(ref)
        error = np.linalg.norm(ref - value) / norm if norm else np.linalg.norm(value)
        if not error < kernel.norm_error:
            problems.append(f"output {position}: relative norm error {error:.3g} > {kernel.norm_error}")
    return problems


@dataclass
class Outcome:
    """What happened to one kernel: `stage` is the first step that failed
    ("compile", "validate", "second size", "recompiled") or "ok"."""

    name: str
    stage: str = "ok"
    error: str = ""
    compiles: int = 0
    seconds: float = 0.0
    details: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.stage == "ok"


def _first_line(e: BaseException, folder: Path) -> str:
    """The error's type and first line, and the kernel's innermost line on its way."""
    text = str(e).strip().splitlines()
    inside = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.startswith(str(folder))]
    where = f" [at {Path(inside[-1].filename).name}:{inside[-1].lineno}]" if inside else ""
    return f"{where.strip()} {type(e).__name__}: {text[0] if text else ''}".strip()


def run_kernel(kernel: Kernel, compile_fn: Callable[[Callable], Any]) -> Outcome:
    """Compile the kernel with `compile_fn`, validate it against NumPy at
    preset S, then at `smaller_parameters(S)` with no new compile."""
    outcome = Outcome(kernel.name)
    start = time.perf_counter()
    numpy_kernel = kernel.numpy_kernel()
    compiled = compile_fn(numpy_kernel)
    for label, parameters in (("S", kernel.parameters("S")), ("second size", smaller_parameters(kernel.parameters("S")))):
        data = kernel.data(parameters)
        ref_args = kernel.arguments(data)
        reference = kernel.outputs(numpy_kernel(*ref_args), ref_args)
        args = kernel.arguments(data)
        try:
            got = kernel.outputs(compiled(*args), args)
        except Exception as e:  # the harness reports any failure of the compiled kernel
            outcome.stage = "compile" if label == "S" else "second size"
            outcome.error = _first_line(e, kernel.folder)
            outcome.details.append(e)
            break
        problems = mismatches(kernel, reference, got)
        if problems:
            outcome.stage = "validate" if label == "S" else "second size"
            outcome.error = f"at {label}: " + "; ".join(problems)
            break
    outcome.compiles = getattr(compiled, "num_compiles", 0)
    if outcome.ok and outcome.compiles != 1:
        outcome.stage = "recompiled"
        outcome.error = f"compiled {outcome.compiles} times for two sizes"
    outcome.seconds = time.perf_counter() - start
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the NPBench kernels under kiln.qjit and check them.")
    parser.add_argument("--autograph", action="store_true", help="compile with qjit(autograph=True)")
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    args = parser.parse_args(argv)
    import kiln

    folder = find_npbench_dir()
    if folder is None:
        print("no shared/npbench folder beside the repository", file=sys.stderr)
        return 2
    kernels = load_kernels(folder)
    names = [n for n in args.only.split(",") if n] or list(kernels)
    options = {"autograph": True} if args.autograph else {}
    passed = 0
    for name in names:
        outcome = run_kernel(kernels[name], lambda fn: kiln.qjit(fn, **options))
        passed += outcome.ok
        print(f"{name:26s} {outcome.stage:12s} {outcome.seconds:6.1f}s  {outcome.error[:160]}", flush=True)
    print(f"{passed} of {len(names)} kernels compile, validate at two sizes and compile once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
