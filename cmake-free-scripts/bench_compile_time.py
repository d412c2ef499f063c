"""Compile-time benchmark: does kiln's compile time grow linearly with the program?

In: generated NumPy programs of several shapes, each at N and 2N statements
(straight-line arithmetic, slice writes to one array, writes inside one loop,
sequential loops, sequential branches); or, with `--npbench`, the NPBench kernels.
Out: per shape, each stage's seconds at N and 2N and their ratio (linear is 2.0;
the target is <= 2.3); with `--passes`, the same per pass (where a ratio comes
from); with `--npbench`, each kernel's first call (compile and run, fresh cache)
split by stage, one subprocess per kernel with a time limit.

    python cmake-free-scripts/bench_compile_time.py                       # every shape, N = 24
    python cmake-free-scripts/bench_compile_time.py --shapes writes --n 40 --passes
    python cmake-free-scripts/bench_compile_time.py --npbench --only channel_flow,adi
    python cmake-free-scripts/bench_compile_time.py --npbench --python before=/old/venv/bin/python,after=python
    python cmake-free-scripts/bench_compile_time.py --npbench --cpu --warm-toolchain  # CPU seconds (a loaded machine)
    python cmake-free-scripts/bench_compile_time.py --breakdown --warm-toolchain --jax --only gemm,lu

`--npbench` prints per kernel the process until the kernel is compiled
(Python's start-up, imports, tracing, compile, link, load; not the making of
NPBench's data) and then the first run alone; workers run with one OpenBLAS
thread and with Python's bytecode cached (`PYTHONPYCACHEPREFIX`), as an
installed kiln has it. `--cpu` counts the process and its children (the `cc`
that links), not the support code: with `--warm-toolchain` each kernel's fresh cache starts with
the toolchain files (support.c, the fastcall and op-walker extensions) built once before the
run, as a user's cache has them after the first function; without it every
kernel also pays for building them (seconds of `cc`). `--breakdown` prints,
per kernel, where its first call goes (imports, tracing, each kiln pass,
upstream pass batches, LLVM, linking, loading, the first run), then its
compile alone in a process that has every import done, and with `--jax` the
`jax.jit(f).lower(...).compile()` of NPBench's `_jax` version in the same process.

Times are wall-clock seconds (`f.stage_times`), the smallest of `--repeat`
compiles, so that load from other processes inflates them as little as it can.
A stage's constant part (LLVM's setup, `cc -shared`) makes its ratio smaller than
its per-statement part's: read the ratios at sizes where a stage takes more than
a few tens of milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

SCRIPTS = Path(__file__).resolve().parent
REPO = SCRIPTS.parent
RESULT_PREFIX = "COMPILE-TIME-RESULT "
STAGE_ORDER = ("jaxpr", "mlir", "functionalized", "stablehlo", "linalg", "bufferized", "llvm", "llvmir")


# --------------------------------------------------------------------------
# Program shapes: each makes the source of a function with `n` statements of
# its kind, and the arguments to call it with.

def _statements(n: int) -> str:
    """Straight-line elementwise arithmetic, each statement reading the last two."""
    lines = ["def program(x, y):", "    a = x", "    b = y"]
    for i in range(n):
        lines.append(f"    a, b = b, a * {1 + i / 1000:.4f} + np.sin(b) - {i % 7}.0")
    lines.append("    return a + b")
    return "\n".join(lines)


def _writes(n: int) -> str:
    """Slice writes to one array (rows, a stencil, a column), each reading the array."""
    kinds = ["    a[{r}, :] = a[{s}, :] * 0.5 + x",
             "    a[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.1 * (a[:-2, 1:-1] - a[2:, 1:-1])",
             "    a[:, {r}] += a[:, {s}] - 1.0"]
    lines = ["def program(a, x):"]
    lines += [kinds[i % 3].format(r=i % 4, s=(i + 1) % 4) for i in range(n)]
    lines.append("    return a.sum()")
    return "\n".join(lines)


def _loop_body(n: int) -> str:
    """One time loop whose body writes two arrays n times (channel_flow's shape)."""
    lines = ["def program(a, b, x, steps):", "    for t in range(steps):"]
    for i in range(n):
        target, other = ("a", "b") if i % 2 == 0 else ("b", "a")
        lines.append(f"        {target}[1:-1, {i % 3}] = {other}[1:-1, {(i + 1) % 3}] * 0.5 + {target}[2:, {i % 3}]")
    lines.append("    return a.sum() + b.sum()")
    return "\n".join(lines)


def _loops(n: int) -> str:
    """Sequential loops with a traced trip count, each writing rows of one array."""
    lines = ["def program(a, x):"]
    for i in range(n):
        lines += [f"    for j in range(a.shape[0] - {i % 3}):",
                  f"        a[j] = a[j] * {1 + i / 100:.3f} + x"]
    lines.append("    return a.sum()")
    return "\n".join(lines)


def _branches(n: int) -> str:
    """Sequential branches on a traced scalar, each writing a row of one array."""
    lines = ["def program(a, x, s):"]
    for i in range(n):
        lines += [f"    if s > {i % 5}:",
                  f"        a[{i % 4}] = a[{(i + 1) % 4}] + x * {i % 3}.0"]
    lines.append("    return a.sum()")
    return "\n".join(lines)


SHAPES: dict[str, tuple[Callable[[int], str], Callable[[], tuple]]] = {
    "statements": (_statements, lambda: (np.linspace(0, 1, 101), np.linspace(1, 2, 101))),
    "writes": (_writes, lambda: (np.ones((7, 9)), np.linspace(0, 1, 9))),
    "loop_body": (_loop_body, lambda: (np.ones((9, 5)), np.ones((9, 5)), np.linspace(0, 1, 5), 3)),
    "loops": (_loops, lambda: (np.ones((7, 9)), np.linspace(0, 1, 9))),
    "branches": (_branches, lambda: (np.ones((7, 9)), np.linspace(0, 1, 9), 2.5)),
}


def make_program(shape: str, n: int) -> Callable:
    """The generated function (a real module-level function: kiln reads its source)."""
    source = SHAPES[shape][0](n)
    folder = Path(tempfile.mkdtemp(prefix="kiln-compile-time-"))
    path = folder / f"program_{shape}_{n}.py"
    path.write_text("import numpy as np\n\n\n" + source + "\n")
    namespace: dict[str, Any] = {"__name__": f"program_{shape}_{n}"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["program"]


# --------------------------------------------------------------------------
# Measuring one program.

def compile_once(shape: str, n: int) -> tuple[dict[str, float], str]:
    """Stage seconds of one fresh compile of `shape` at `n`, and its `mlir` text."""
    import kiln

    _fresh_cache()
    function = kiln.qjit(make_program(shape, n))
    args = SHAPES[shape][1]()
    function(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    return dict(function.stage_times), function.stage("mlir")


def pass_seconds(mlir_text: str) -> dict[str, float]:
    """Seconds of each pass of the default pipeline on a module at the `mlir` stage, run one at a time."""
    from kiln.compiler.pipeline import DEFAULT_PIPELINE, run_passes
    from kiln.dialects import new_context
    from kiln.compiler.mlir import ir

    seconds: dict[str, float] = {}
    with new_context() as ctx:
        module = ir.Module.parse(mlir_text, ctx)
        for stage, specs in DEFAULT_PIPELINE:
            for position, spec in enumerate(specs):
                start = time.perf_counter()
                run_passes(module, [spec], stage)
                seconds[f"{stage}/{position:02d} {spec.split('{')[0][:48]}"] = time.perf_counter() - start
    return seconds


def measure(shape: str, n: int, repeat: int, passes: bool) -> dict[str, Any]:
    best: dict[str, float] = {}
    mlir_text = ""
    for _ in range(repeat):
        seconds, mlir_text = compile_once(shape, n)
        for stage, value in seconds.items():
            best[stage] = min(value, best.get(stage, value))
    result = {"stages": best, "total": sum(best.values())}
    if passes:
        per_pass: dict[str, float] = {}
        for _ in range(repeat):
            for name, value in pass_seconds(mlir_text).items():
                per_pass[name] = min(value, per_pass.get(name, value))
        result["passes"] = per_pass
    return result


def _ratio(small: float, large: float) -> str:
    return f"{large / small:6.2f}" if small > 0 else "     -"


def doubling_table(shape: str, n: int, small: dict, large: dict) -> list[str]:
    lines = [f"{shape}: N = {n} -> {2 * n}", f"  {'stage':<16} {'N (ms)':>10} {'2N (ms)':>10} {'ratio':>7}"]
    for stage in [s for s in STAGE_ORDER if s in small["stages"]]:
        a, b = small["stages"][stage], large["stages"][stage]
        lines.append(f"  {stage:<16} {a * 1e3:10.1f} {b * 1e3:10.1f} {_ratio(a, b)}")
    lines.append(f"  {'total':<16} {small['total'] * 1e3:10.1f} {large['total'] * 1e3:10.1f} "
                 f"{_ratio(small['total'], large['total'])}")
    if "passes" in small:
        ranked = sorted(large["passes"], key=lambda p: -large["passes"][p])
        lines.append(f"  passes (largest at 2N first, above 5 ms):")
        for name in ranked:
            a, b = small["passes"][name], large["passes"][name]
            if b < 0.005:
                break
            lines.append(f"    {name:<58} {a * 1e3:9.1f} {b * 1e3:9.1f} {_ratio(a, b)}")
    return lines


def run_shapes(opts: argparse.Namespace) -> int:
    # Every compile gets a fresh cache holding the toolchain files (support
    # code) built once here: building them (~11 s of `cc`) is a once-per-
    # cache cost that would otherwise swamp the program's own compile time
    # and make every size ratio about 1.
    if not os.environ.get(TOOLCHAIN_ENV):
        os.environ[TOOLCHAIN_ENV] = warm_toolchain([sys.executable])
    shapes = [s for s in opts.shapes.split(",") if s] or list(SHAPES)
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        print(f"unknown shape(s) {', '.join(unknown)}; shapes: {', '.join(SHAPES)}", file=sys.stderr)
        return 2
    summary = []
    for shape in shapes:
        small = measure(shape, opts.n, opts.repeat, opts.passes)
        large = measure(shape, 2 * opts.n, opts.repeat, opts.passes)
        print("\n".join(doubling_table(shape, opts.n, small, large)), flush=True)
        worst = max(((large["stages"][s] / small["stages"][s], s) for s in small["stages"]
                     if s in large["stages"] and small["stages"][s] > 0.02), default=(0.0, "-"))
        summary.append(f"{shape:<12} {small['total']:8.2f} {large['total']:8.2f} "
                       f"{_ratio(small['total'], large['total'])}   {worst[1]} {worst[0]:.2f}")
    print(f"\nsummary (N = {opts.n}, seconds; worst stage over 20 ms)\n"
          f"{'shape':<12} {'N':>8} {'2N':>8} {'ratio':>6}   worst stage")
    print("\n".join(summary))
    return 0


# --------------------------------------------------------------------------
# NPBench first calls: one subprocess per kernel and interpreter.

TOOLCHAIN_ENV = "KILN_COMPILE_TIME_TOOLCHAIN"


def _fresh_cache() -> None:
    """A new, empty KILN_CACHE_DIR for this process; with `--warm-toolchain`
    it holds copies of the toolchain files (support code, the fastcall and
    op-walker extensions) the parent built once, as a user's cache does after the
    first function: the time is the function's, not the toolchain's."""
    folder = tempfile.mkdtemp(prefix="kiln-compile-time-cache-")
    warm = os.environ.get(TOOLCHAIN_ENV)
    if warm:
        import shutil

        for name in os.listdir(warm):
            path = os.path.join(warm, name)
            if os.path.isdir(path) and name.startswith(("kiln_fastcall", "kiln_opwalk")):
                shutil.copytree(path, os.path.join(folder, name))
            elif os.path.isfile(path):
                shutil.copy2(path, os.path.join(folder, name))
    os.environ["KILN_CACHE_DIR"] = folder


BYTECODE_FOLDER = os.path.join(tempfile.gettempdir(), "kiln-compile-time-pycache")


def _worker_env() -> dict[str, str]:
    """The environment of a worker whose CPU time is compile time: no
    OpenBLAS thread left spinning after NumPy made the kernel's data counts
    as the compile's, and Python's bytecode is cached (in a folder of its
    own) as in an installed kiln: under PYTHONDONTWRITEBYTECODE=1 every
    process compiled kiln's sources again (~0.25 s of CPU)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPYCACHEPREFIX": BYTECODE_FOLDER}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def warm_toolchain(pythons: list[str]) -> str:
    """Build the toolchain files once per interpreter into one folder (they
    are named by the hash of their sources) and return it."""
    folder = tempfile.mkdtemp(prefix="kiln-compile-time-toolchain-")
    code = ("import numpy as np, kiln\n"
            "kiln.qjit(lambda x: x + 1)(np.ones(3))\n")
    for python in pythons:
        subprocess.run([python, "-c", code], env={**_worker_env(), "KILN_CACHE_DIR": folder}, check=True,
                       capture_output=True)
    return folder


def npbench_worker(name: str) -> int:
    sys.path.insert(0, str(REPO / "test"))
    from npbench_harness import find_npbench_dir, load_kernels

    _fresh_cache()
    kernel = load_kernels(find_npbench_dir())[name]
    before_data, _ = _clock()
    args = kernel.arguments(kernel.data(kernel.parameters("S")))
    after_data, start = _clock()
    # Making the kernel's data is NPBench's cost, not the first call's
    # (atax's `initialize`: 2.6 s of CPU); Python's start-up stays in.
    data_cpu = after_data - before_data
    import kiln

    function = kiln.qjit(kernel.numpy_kernel())
    # Compiled first, then run: the run (BLAS kernels, kiln's thread pool)
    # is not compile time.
    function.lower(*args).compile()
    compiled_cpu, compiled = _clock()
    function(*args)
    first = time.perf_counter() - start
    cpu, _ = _clock()
    print(RESULT_PREFIX + json.dumps({"first": first, "cpu": cpu, "compile": compiled - start, "data_cpu": data_cpu,
                                      "compile_cpu": compiled_cpu - data_cpu, "run_cpu": cpu - compiled_cpu,
                                      "run": first - (compiled - start),
                                      "stages": function.stage_times}), flush=True)
    return 0


class _Timers:
    """CPU and wall seconds spent in named functions, patched in place
    (`wrap(module, "name", label)`); nested timed calls are counted in
    both (read the labels as a tree, not a sum)."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def wrap(self, owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def timed(*args: Any, **kwargs: Any) -> Any:
            c, w = time.process_time(), time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.cpu[label] = self.cpu.get(label, 0.0) + time.process_time() - c
                self.wall[label] = self.wall.get(label, 0.0) + time.perf_counter() - w
                self.calls[label] = self.calls.get(label, 0) + 1

        setattr(owner, attr, timed)


def _patch_compiler(timers: _Timers) -> None:
    """Time the pieces of a compile: every kiln pass, every batch of
    upstream passes, printing stage texts, verification, LLVM, linking,
    loading (imports the compiler, so call it after measuring imports)."""
    from kiln.compiler import codegen, driver, pipeline
    from kiln.compiler.mlir import passmanager
    from kiln.compiler.passes import load_all
    from kiln.runtime import cache, executable, toolchain
    import kiln.compiler.lowering as lowering
    import kiln.dialects as dialects

    for cls in load_all().values():
        timers.wrap(cls, "apply", f"pass {cls.name}")
    timers.wrap(passmanager.PassManager, "parse", "upstream: PassManager.parse")
    original_run_passes = pipeline.run_passes

    def run_passes(module: Any, specs: Any, stage: str = "kiln-opt") -> None:
        # Upstream batches are timed by their parse and their run.
        original_run = passmanager.PassManager.run

        def run(self: Any, op: Any, *a: Any, **k: Any) -> Any:
            c, w = time.process_time(), time.perf_counter()
            try:
                return original_run(self, op, *a, **k)
            finally:
                label = f"upstream passes ({stage})"
                timers.cpu[label] = timers.cpu.get(label, 0.0) + time.process_time() - c
                timers.wall[label] = timers.wall.get(label, 0.0) + time.perf_counter() - w
                timers.calls[label] = timers.calls.get(label, 0) + 1

        passmanager.PassManager.run = run
        try:
            original_run_passes(module, specs, stage)
        finally:
            passmanager.PassManager.run = original_run

    pipeline.run_passes = run_passes
    timers.wrap(dialects, "new_context", "new_context (dialects)")
    timers.wrap(lowering, "lower_jaxpr_to_module", "lowering (mlir stage)")
    timers.wrap(driver, "cache_key", "cache key (mlir text + hash)")
    timers.wrap(driver, "toolchain_fingerprint", "toolchain fingerprint")
    timers.wrap(codegen, "emit_object", "LLVM: ExecutionEngine (optimize + codegen)")
    timers.wrap(codegen, "internalize_functions", "LLVM: internalize")
    timers.wrap(codegen, "external_libraries", "LLVM: scan for BLAS/LAPACK")
    timers.wrap(codegen, "uses_random", "LLVM: scan for random")
    timers.wrap(codegen, "llvm_ir", "llvmir text (translate)")
    timers.wrap(toolchain, "link_shared_library", "link (cc -shared)")
    timers.wrap(cache, "store", "cache store")
    timers.wrap(executable.Executable, "__init__", "dlopen + entry setup")


def npbench_breakdown_worker(name: str) -> int:
    """Where one kernel's first call goes, CPU seconds: imports, tracing,
    each stage and pass, LLVM, linking, loading, the first run."""
    start_cpu = time.process_time()
    sys.path.insert(0, str(REPO / "test"))
    from npbench_harness import find_npbench_dir, load_kernels

    _fresh_cache()
    kernel = load_kernels(find_npbench_dir())[name]
    args = kernel.arguments(kernel.data(kernel.parameters("S")))
    rows: list[tuple[str, float]] = [("python, numpy, the kernel's data", time.process_time() - start_cpu)]
    lap = [time.process_time()]

    def mark(label: str) -> None:
        now = time.process_time()
        rows.append((label, now - lap[0]))
        lap[0] = now

    import kiln
    mark("import kiln")
    kiln.qjit
    import kiln.numpy  # noqa: F401
    mark("import the tracer and kiln.numpy (first qjit)")
    from kiln.compiler import driver  # noqa: F401
    import kiln.dialects  # noqa: F401
    mark("import the MLIR bindings and kiln.dialects")
    from kiln.compiler.passes import load_all
    import kiln.compiler.lowering  # noqa: F401
    import kiln.compiler.codegen  # noqa: F401
    load_all()
    mark("import the lowering, passes, codegen")
    timers = _Timers()
    _patch_compiler(timers)
    mark("(patching timers)")
    function = kiln.qjit(kernel.numpy_kernel())
    lowered = function.lower(*args)
    mark("trace (jaxpr stage)")
    lowered.compile()
    mark("compile (every stage)")
    function(*args)
    mark("first run (fast path setup + run)")
    children = os.times()
    result = {"rows": rows, "stages": function.stage_times, "cpu": dict(timers.cpu), "wall": dict(timers.wall),
              "calls": dict(timers.calls), "children": children.children_user + children.children_system}
    result["compile_only"] = _kiln_compile_only(kernel, args)
    if os.environ.get("KILN_COMPILE_TIME_JAX"):
        result["jax"] = _jax_compile_only(kernel, args)
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


def _clock() -> tuple[float, float]:
    """(CPU seconds of the process and its children, wall seconds)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system, time.perf_counter()


def _kiln_compile_only(kernel: Any, args: list) -> dict[str, float]:
    """kiln's trace and compile of the kernel in a process that has already
    compiled it once (every import done), into a fresh cache: (CPU, wall) s."""
    import kiln

    _fresh_cache()
    best = {"cpu": float("inf"), "wall": float("inf")}
    for _ in range(2):
        _fresh_cache()
        cpu, wall = _clock()
        kiln.qjit(kernel.numpy_kernel()).lower(*args).compile()
        cpu2, wall2 = _clock()
        best = {"cpu": min(best["cpu"], cpu2 - cpu), "wall": min(best["wall"], wall2 - wall)}
    return best


def _jax_compile_only(kernel: Any, args: list) -> dict[str, float]:
    """JAX's `jax.jit(f).lower(*args).compile()` of NPBench's `_jax` version
    of the kernel, after JAX has compiled another function (its imports and
    backend set up): (CPU, wall) s; plus the import of jax."""
    cpu, wall = _clock()
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    jax.jit(lambda x: jnp.sin(x) * 2.0).lower(jnp.ones(3)).compile()
    cpu1, wall1 = _clock()
    function = getattr(kernel.implementation("_jax"), kernel.info["func_name"])
    jargs = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    try:
        function.lower(*jargs).compile()
    except Exception as e:  # a kernel whose JAX version needs static arguments NPBench passes otherwise
        return {"error": f"{type(e).__name__}: {str(e)[:120]}"}
    cpu2, wall2 = _clock()
    return {"import": cpu1 - cpu, "cpu": cpu2 - cpu1, "wall": wall2 - wall1}


def run_breakdown(opts: argparse.Namespace) -> int:
    """`--breakdown`: one table per kernel of where its first call goes."""
    names = [n for n in opts.only.split(",") if n] or ["gemm"]
    python = opts.python.split(",")[-1].split("=")[-1]
    if opts.warm_toolchain:
        os.environ[TOOLCHAIN_ENV] = warm_toolchain([python])
    if opts.jax:
        os.environ["KILN_COMPILE_TIME_JAX"] = "1"
    for name in names:
        proc = subprocess.run([python, __file__, "--breakdown-worker", name],
                              capture_output=True, text=True, timeout=opts.timeout, env=_worker_env())
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_PREFIX)]
        if not line:
            print(f"{name}: failed\n{proc.stderr[-2000:]}")
            continue
        row = json.loads(line[-1][len(RESULT_PREFIX):])
        print(f"\n{name}: first call, CPU seconds of the process (children: {row['children']:.2f} s)")
        for label, seconds in row["rows"]:
            print(f"  {label:<58} {seconds:7.3f}")
        print("  stages (wall, f.stage_times): " + ", ".join(f"{s} {t:.3f}" for s, t in row["stages"].items()))
        print("  inside the compile (CPU s, wall s, calls), largest first:")
        grouped = sorted(row["cpu"].items(), key=lambda kv: -kv[1])
        passes_cpu = sum(v for k, v in row["cpu"].items() if k.startswith("pass "))
        for label, cpu in grouped:
            if label.startswith("pass ") and cpu < 0.004:
                continue
            print(f"    {label:<56} {cpu:7.3f} {row['wall'][label]:7.3f} {row['calls'][label]:5d}")
        print(f"    {'all kiln passes':<56} {passes_cpu:7.3f}")
        only = row["compile_only"]
        line = f"  compile only (trace + compile, imports done): kiln {only['cpu']:.3f} s CPU, {only['wall']:.3f} s wall"
        if "jax" in row:
            jax = row["jax"]
            line += (f"; JAX lower + compile: {jax['cpu']:.3f} s CPU, {jax['wall']:.3f} s wall (import jax "
                     f"{jax['import']:.2f} s CPU)" if "cpu" in jax else f"; JAX: {jax['error']}")
        print(line)
    return 0


def run_npbench(opts: argparse.Namespace) -> int:
    sys.path.insert(0, str(REPO / "test"))
    from npbench_harness import find_npbench_dir, load_kernels

    folder = Path(opts.npbench) if opts.npbench else find_npbench_dir()
    names = [n for n in opts.only.split(",") if n] or list(load_kernels(folder))
    pythons = [tuple(p.split("=", 1)) if "=" in p else ("kiln", p) for p in opts.python.split(",")]
    clock = "CPU seconds of the process and its children (cc)" if opts.cpu else "seconds"
    if opts.warm_toolchain:
        os.environ[TOOLCHAIN_ENV] = warm_toolchain([python for _, python in pythons])
        clock += ", toolchain files already built"
    print(f"first call of each NPBench kernel at preset S (fresh cache, {clock}; time limit {opts.timeout:g} s):\n"
          f"per version, the process until the kernel is compiled (Python start-up, imports, tracing, "
          f"compile, link, load; not NPBench's making of the data), then the first run alone")
    header = f"{'kernel':<22} " + " ".join(f"{label:>9} {'run':>6}" for label, _ in pythons)
    print(header + "   " + pythons[-1][0] + ": largest stages")
    firsts: dict[str, list[float]] = {label: [] for label, _ in pythons}
    for name in names:
        cells, stages = [], {}
        for label, python in pythons:
            row, status = None, "failed"
            try:
                proc = subprocess.run([python, __file__, "--npbench-worker", name], capture_output=True, text=True,
                                      timeout=opts.timeout, env=_worker_env())
                line = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_PREFIX)]
                row = json.loads(line[-1][len(RESULT_PREFIX):]) if line else None
            except subprocess.TimeoutExpired:
                status = f">{opts.timeout:g}"
            if row is None:
                cells.append(f"{status:>9} {'':>6}")
                continue
            seconds = row["compile_cpu"] if opts.cpu else row["compile"]
            run = row["run_cpu"] if opts.cpu else row["run"]
            firsts[label].append(seconds)
            cells.append(f"{seconds:9.2f} {run:6.2f}")
            stages = row["stages"]
        top = sorted(stages.items(), key=lambda kv: -kv[1])[:3]
        print(f"{name:<22} " + " ".join(cells) + "   " + ", ".join(f"{s} {t:.2f}" for s, t in top), flush=True)
    for label, values in firsts.items():
        if values:
            print(f"{label}: median {statistics.median(values):.2f} s, max {max(values):.2f} s "
                  f"over {len(values)} kernels")
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=textwrap.dedent("shapes: " + ", ".join(SHAPES)))
    parser.add_argument("--shapes", default="", help="comma-separated program shapes (default: all)")
    parser.add_argument("--n", type=int, default=24, help="statements of the smaller program (default 24)")
    parser.add_argument("--repeat", type=int, default=2, help="compiles per size; the fastest counts (default 2)")
    parser.add_argument("--passes", action="store_true", help="also time each pass of the pipeline")
    parser.add_argument("--npbench", nargs="?", const="", default=None, metavar="DIR",
                        help="time the NPBench kernels' first calls instead (an NPBench checkout, "
                             "default shared/npbench beside the repo)")
    parser.add_argument("--only", default="", help="with --npbench: comma-separated kernel names")
    parser.add_argument("--python", default=sys.executable,
                        help="with --npbench: interpreters to compare, `label=path,...` (a venv per kiln version)")
    parser.add_argument("--cpu", action="store_true",
                        help="with --npbench: report the process's CPU seconds (imports included) instead of "
                             "wall-clock, comparable on a loaded machine")
    parser.add_argument("--timeout", type=float, default=300.0, help="with --npbench: seconds per kernel")
    parser.add_argument("--warm-toolchain", action="store_true",
                        help="with --npbench or --breakdown: build kiln's support code once, before the "
                             "kernels, instead of in each kernel's fresh cache")
    parser.add_argument("--jax", action="store_true",
                        help="with --breakdown: also time JAX's lower + compile of NPBench's `_jax` version")
    parser.add_argument("--breakdown", action="store_true",
                        help="with --only: where each kernel's first call goes (imports, tracing, passes, "
                             "LLVM, linking, loading), CPU seconds")
    parser.add_argument("--npbench-worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--breakdown-worker", default=None, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    if opts.npbench_worker:
        return npbench_worker(opts.npbench_worker)
    if opts.breakdown_worker:
        return npbench_breakdown_worker(opts.breakdown_worker)
    if opts.breakdown:
        return run_breakdown(opts)
    if opts.npbench is not None:
        return run_npbench(opts)
    return run_shapes(opts)


if __name__ == "__main__":
    sys.exit(main())
