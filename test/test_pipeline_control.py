"""Pipeline control: per-function pipelines, the intermediate workspace, the
stage properties, per-stage compile times and KILN_LOG.

`kiln-opt --stage NAME` and `--pipeline` are covered by
test/test_kiln_opt.py (test_stage_runs_default_pipeline_prefix).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kiln
from kiln.compiler.pipeline import DEFAULT_PIPELINE, STAGES


def scaled_exp(x, y):
    return np.exp(x) * 2.0 + y


def _with_pass(stage: str, spec: str) -> list:
    """DEFAULT_PIPELINE with `spec` appended to `stage`."""
    return [(name, list(specs) + ([spec] if name == stage else [])) for name, specs in DEFAULT_PIPELINE]


def _args(n: int = 5) -> tuple[np.ndarray, np.ndarray]:
    return np.linspace(0.0, 1.0, n), np.arange(float(n))


# --------------------------------------------------------------------------
# qjit(pipelines=...)


def test_pipeline_with_an_extra_pass(capfd, monkeypatch):
    monkeypatch.setenv("KILN_LOG", "canonicalize")
    default = kiln.qjit(scaled_exp)
    extra = kiln.qjit(scaled_exp, pipelines=_with_pass("stablehlo", "canonicalize"))
    x, y = _args()
    np.testing.assert_allclose(extra(x, y), scaled_exp(x, y))
    err = capfd.readouterr().err
    assert "IR after canonicalize (stage stablehlo)" in err
    default(x, y)
    assert "IR after canonicalize (stage stablehlo)" not in capfd.readouterr().err
    # canonicalize hoists the constants of the stablehlo stage to the top.
    assert extra.stage("stablehlo") != default.stage("stablehlo")
    assert extra.stage("mlir") == default.stage("mlir")


def test_pipeline_with_renamed_last_stage():
    pipeline = [(name if name != "llvm" else "to-llvm", specs) for name, specs in DEFAULT_PIPELINE]
    f = kiln.qjit(scaled_exp, pipelines=pipeline)
    x, y = _args()
    np.testing.assert_allclose(f(x, y), scaled_exp(x, y))
    assert f.mlir_opt == f.stage("to-llvm") and "llvm.func" in f.mlir_opt
    with pytest.raises(ValueError, match=r"no stage named 'llvm' for scaled_exp; stages: .*to-llvm"):
        f.stage("llvm")


@pytest.mark.parametrize("pipeline, message", [
    (_with_pass("bufferized", "canonicalise"),
     r"pipelines: stage 'bufferized': 'canonicalise' is not a kiln pass nor a valid MLIR pass spec: "
     r".*'canonicalise' does not refer to a registered pass.* \(`kiln-opt --list-passes`"),
    (_with_pass("linalg", "func.func(no-such-pass)"),
     r"pipelines: stage 'linalg': 'func.func\(no-such-pass\)' is not a kiln pass"),
    (_with_pass("llvm", "canonicalize{max-iterations=x}"),
     r"pipelines: stage 'llvm': 'canonicalize\{max-iterations=x\}' is not a kiln pass nor a valid MLIR pass "
     r"spec: failed to add `canonicalize` with options `max-iterations=x`"),
    (_with_pass("linalg", "kiln-lower-checks{fast=1}"),
     r"pipelines: stage 'linalg': kiln pass 'kiln-lower-checks' has no option 'fast' \(accepted options: none\)"),
    (_with_pass("bufferized", "kiln-parallelize{min-work=abc}"),
     r"pipelines: stage 'bufferized': kiln pass 'kiln-parallelize' option 'min-work' expects an integer >= 0, "
     r"got 'abc'"),
    (_with_pass("bufferized", "kiln-version-small-dims{bodies=maybe}"),
     r"pipelines: stage 'bufferized': kiln pass 'kiln-version-small-dims' option 'bodies' expects true or false"),
    ([("linalg", "canonicalize")], r"pipelines: entry 0 is \('linalg', 'canonicalize'\); expected a list of "
                                   r"\(stage name, \[pass specs\]\) pairs"),
    ("canonicalize", r"pipelines: expected a list .* got a str"),
    ([("mlir", ["canonicalize"])] + DEFAULT_PIPELINE, r"pipelines: stage 'mlir' is made outside the pipeline"),
    (DEFAULT_PIPELINE + [("llvm", [])], r"pipelines: stage 'llvm' appears twice"),
], ids=["unknown-pass", "unknown-nested-pass", "bad-upstream-option", "unknown-option", "bad-int-option",
        "bad-bool-option", "specs-not-a-list", "not-a-list",
        "reserved-stage", "duplicate-stage"])
def test_bad_pipeline_is_refused_before_it_runs(pipeline, message, capfd, monkeypatch):
    monkeypatch.setenv("KILN_LOG", "all")
    f = kiln.qjit(scaled_exp, pipelines=pipeline)
    with pytest.raises(kiln.KilnValueError, match=message):
        f(*_args())
    assert "// -----// stage functionalized" not in capfd.readouterr().err


# --------------------------------------------------------------------------
# keep_intermediate, the stage properties, stage times


def test_keep_intermediate_writes_every_stage(tmp_path, monkeypatch):
    from kiln.compiler.mlir import ir
    from kiln.dialects import new_context

    monkeypatch.setenv("KILN_WORKSPACE_DIR", str(tmp_path))
    f = kiln.qjit(scaled_exp, keep_intermediate=True)
    x, y = _args()
    np.testing.assert_allclose(f(x, y), scaled_exp(x, y))
    assert f.workspace is not None and os.path.dirname(f.workspace) == str(tmp_path)
    stages = [name for name in STAGES if name in f.last.stages]
    assert stages == ["jaxpr", "mlir", *[name for name, _ in DEFAULT_PIPELINE], "llvmir"]
    # (the build's own files: objects, the library, a linker version script when LLVM compiled parts)
    files = sorted(name for name in os.listdir(f.workspace)
                   if ".o" not in name and ".so" not in name and not name.endswith(".map"))
    ext = {"jaxpr": "txt", "llvmir": "ll"}
    assert files == sorted(f"{i}_scaled_exp.{s}.{ext.get(s, 'mlir')}" for i, s in enumerate(stages))
    texts = {name.split(".")[1]: open(os.path.join(f.workspace, name)).read() for name in files}
    assert texts == {s: f.stage(s) for s in stages}
    for stage in stages[1:-1]:
        ir.Module.parse(texts[stage], context=new_context())
    assert _llvm_ir_parse_error(texts["llvmir"]) is None
    assert "define" in texts["llvmir"]


def _llvm_ir_parse_error(text: str) -> str | None:
    """Parse LLVM IR with the LLVM linked into the MLIR provider (a system
    llvm-as may be older than the IR it prints); None when it parses."""
    from kiln.compiler.mlir import _capi_library

    lib = _capi_library()
    void_p = ctypes.c_void_p
    lib.LLVMContextCreate.restype = void_p
    lib.LLVMContextDispose.argtypes = [void_p]
    lib.LLVMCreateMemoryBufferWithMemoryRangeCopy.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
    lib.LLVMCreateMemoryBufferWithMemoryRangeCopy.restype = void_p
    lib.LLVMParseIRInContext.argtypes = [void_p, void_p, ctypes.POINTER(void_p), ctypes.POINTER(void_p)]
    lib.LLVMDisposeModule.argtypes = [void_p]
    data = text.encode()
    context = lib.LLVMContextCreate()
    try:
        buffer = lib.LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len(data), b"llvmir")
        module, message = void_p(), void_p()
        if lib.LLVMParseIRInContext(context, buffer, ctypes.byref(module), ctypes.byref(message)):
            error = ctypes.string_at(message.value).decode()
            lib.LLVMDisposeMessage(message)
            return error
        lib.LLVMDisposeModule(module)
        return None
    finally:
        lib.LLVMContextDispose(context)


def test_keep_intermediate_compiles_again_instead_of_reading_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KILN_WORKSPACE_DIR", str(tmp_path))
    kiln.qjit(scaled_exp)(*_args())
    f = kiln.qjit(scaled_exp, keep_intermediate=True)
    f(*_args())
    assert not f.last.cache_hit and len(os.listdir(f.workspace)) > len(STAGES)


def test_stage_properties():
    f = kiln.qjit(scaled_exp)
    f(*_args())
    assert "exp" in str(f.jaxpr) and f.jaxpr is f.last.jaxpr
    assert "stablehlo.exponential" in f.mlir and f.mlir == kiln.get_compilation_stage(f, "mlir")
    assert "llvm.func @scaled_exp" in f.mlir_opt and f.mlir_opt == f.stage("llvm")
    assert "define" in f.llvmir and "@scaled_exp" in f.llvmir



def test_entry_implementation_is_not_inlined_into_the_entry():
    """The function the C entry calls (the implementation) is `noinline`
    in the LLVM IR, so LLVM optimizes it once (codegen.internalize_functions);
    the entry still computes what NumPy does."""
    import re

    f = kiln.qjit(scaled_exp)
    for n in (0, 1, 7, 1001):
        x, y = _args(n)
        np.testing.assert_allclose(f(x, y), scaled_exp(x, y))
    text = f.llvmir
    group = re.search(r"^define internal .*@scaled_exp\(.*\) #(\d+) \{", text, re.M)
    assert group, text[:2000]
    attributes = re.search(rf"^attributes #{group.group(1)} = \{{(.*)\}}", text, re.M).group(1)
    assert "noinline" in attributes.split()
    assert re.search(r"^define void @_mlir_ciface_scaled_exp\(", text, re.M)

def test_stage_times_are_recorded_and_printable(capsys):
    def sine_gap(x):  # compiled by this test only: no cache hit, every stage timed
        return np.sin(x) - x

    f = kiln.qjit(sine_gap)
    with pytest.raises(ValueError, match="has not been compiled yet"):
        f.stage_times
    f(np.arange(3.0))
    times = f.stage_times
    assert list(times) == [s for s in STAGES if s in times] and set(times) == set(STAGES)
    assert all(isinstance(t, float) and t >= 0 for t in times.values())
    f.print_stage_times()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "sine_gap: compile times" and out[1].split() == ["stage", "ms", "%"]
    assert [line.split()[0] for line in out[2:]] == [*times, "total"]
    assert float(out[-1].split()[1]) == pytest.approx(sum(times.values()) * 1e3, abs=0.01)


def test_stage_times_of_a_cache_hit():
    kiln.qjit(scaled_exp)(*_args())
    f = kiln.qjit(scaled_exp)
    f(*_args())
    assert f.last.cache_hit and set(f.stage_times) == {"jaxpr", "cache"}


# --------------------------------------------------------------------------
# KILN_LOG


def test_kiln_log_prints_named_stages_and_passes(capfd, monkeypatch):
    monkeypatch.setenv("KILN_LOG", "mlir, linalg,convert-scf-to-cf")
    kiln.qjit(scaled_exp)(*_args())
    err = capfd.readouterr().err
    assert "// -----// stage mlir //----- //" in err and "// -----// stage linalg //----- //" in err
    assert "// -----// IR after convert-scf-to-cf (stage llvm) //----- //" in err
    assert "stage jaxpr" not in err and "stage bufferized" not in err and "IR after canonicalize" not in err
    linalg = err.split("// -----// stage linalg //----- //")[1]
    assert "linalg.generic" in linalg.split("// -----//")[0]


_LOG_SCRIPT = textwrap.dedent("""
    import numpy as np
    import kiln

    @kiln.qjit
    def shift(x):
        return x[1:] + 1.0

    print(shift(np.arange(4.0)))
""")


@pytest.mark.parametrize("wanted, printed, absent", [
    ("all", ["stage jaxpr", "stage mlir", "IR after kiln-lower-checks (stage linalg)", "stage llvmir"], []),
    ("jaxpr,kiln-lower-checks", ["stage jaxpr", "IR after kiln-lower-checks (stage linalg)"],
     ["// -----// stage mlir ", "// -----// stage linalg ", "IR after canonicalize"]),
    ("", [], ["// -----//"]),
])
def test_kiln_log_in_a_new_process(tmp_path, wanted, printed, absent, seed_toolchain):
    env = dict(os.environ, KILN_LOG=wanted, KILN_CACHE_DIR=str(seed_toolchain(tmp_path)))
    proc = subprocess.run([sys.executable, "-c", _LOG_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[2. 3. 4.]"
    for text in printed:
        assert f"// -----// {text} //----- //" in proc.stderr
    for text in absent:
        assert text not in proc.stderr


# --------------------------------------------------------------------------
# Code generation: what the library exports (compile time, issue 16).

def _defined_symbols(library: str) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_library_exports_only_the_entry_wrappers(tmp_path):
    """Parallel bodies and helpers are internal: no `_mlir_<body>` wrapper is
    written for them (each was a second optimized copy of the body)."""
    from kiln.compiler import codegen
    from kiln.compiler.mlir import ir
    from kiln.compiler.pipeline import run_pipeline, StageRecord
    from kiln.dialects import new_context

    def scale(x):
        return x * 2.0 + 1.0

    f = kiln.qjit(scale)
    x = np.arange(100000.0)
    np.testing.assert_allclose(f(x), x * 2.0 + 1.0)
    assert "_parallel0" in f.stage("llvm")  # the nest runs on the thread pool, as an outlined body
    with new_context() as ctx:
        module = ir.Module.parse(f.stage("mlir"), ctx)
        run_pipeline(module, DEFAULT_PIPELINE, StageRecord(), keep_text=False)
        library, _ = codegen.emit_shared_library(module, str(tmp_path), "scale")
    exported = {s for s in _defined_symbols(library) if "scale" in s}
    assert exported == {"_mlir_ciface_scale", "_mlir__mlir_ciface_scale"}


def test_unresolved_symbol_is_a_pipeline_error(tmp_path):
    """A module calling a function nothing defines fails in codegen with a
    PipelineError, not later when the library is loaded."""
    from kiln.compiler import codegen
    from kiln.compiler.mlir import ir
    from kiln.compiler.pipeline import PipelineError
    from kiln.dialects import new_context

    text = textwrap.dedent("""
        llvm.func @kiln_test_symbol_nobody_defines(i64) -> i64
        llvm.func @g(%a: i64) -> i64 {
          %r = llvm.call @kiln_test_symbol_nobody_defines(%a) : (i64) -> i64
          llvm.return %r : i64
        }
        llvm.func @_mlir_ciface_g(%a: i64) -> i64 attributes {llvm.emit_c_interface} {
          %r = llvm.call @g(%a) : (i64) -> i64
          llvm.return %r : i64
        }
    """)
    with new_context() as ctx:
        module = ir.Module.parse(text, ctx)
        with pytest.raises(PipelineError, match="could not link"):
            codegen.emit_object(module, str(tmp_path / "g.o"))
    assert not (tmp_path / "g.o").exists()


def test_dialects_without_python_modules_are_found_once():
    """Wrapping an op of StableHLO or of kiln's dialects finds a Python module
    (kiln.dialects.<namespace>) instead of retrying a failing import each time."""
    from kiln.compiler.mlir import ir
    from kiln.dialects import new_context

    with new_context() as ctx, ir.Location.unknown():
        module = ir.Module.parse(textwrap.dedent("""
            func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
              %y = stablehlo.add %x, %x : tensor<3xf64>
              return %y : tensor<3xf64>
            }"""), ctx)
        add = module.body.operations[0].regions[0].blocks[0].operations[0]
        assert add.operation.name == "stablehlo.add"
    from kiln.compiler.mlir import _mlir_globals

    assert "kiln.dialects" in _mlir_globals.dialect_search_modules
    assert "kiln.dialects.stablehlo" in sys.modules  # imported by the bindings when they wrapped the add


def _stencil_steps(a, b, steps):
    for _ in range(steps):
        b[1:-1] = 0.5 * (a[2:] + a[:-2]) - np.sin(a[1:-1])
        a[1:-1] = np.cos(b[1:-1]) * 0.25 + b[2:]
        b[:] = b * 1.5 - a
    return a.sum() + b.sum(), a * b


def test_large_module_compiles_in_parts_on_threads(tmp_path, monkeypatch, seed_toolchain):
    """A module with outlined parallel bodies is cut into parts that LLVM
    compiles at the same time (KILN_COMPILE_THREADS, split_codegen.py): the
    library computes what NumPy does, mutated arguments included, and
    exports only the entry wrappers (the functions linking the parts stay
    local)."""
    from kiln.compiler import split_codegen

    monkeypatch.setenv("KILN_CACHE_DIR", str(seed_toolchain(tmp_path / "cache")))
    monkeypatch.setenv("KILN_COMPILE_THREADS", "3")
    monkeypatch.setattr(split_codegen, "MIN_SPLIT_LINES", 0)
    counts = []
    compile_parts = split_codegen.compile_parts
    monkeypatch.setattr(split_codegen, "compile_parts",
                        lambda parts, *a, **k: counts.append(len(parts)) or compile_parts(parts, *a, **k))
    f = kiln.qjit(_stencil_steps)
    for n in (0, 1, 7, 20000):
        a, b = np.linspace(-1.0, 1.0, n), np.linspace(2.0, 3.0, n)
        a2, b2 = a.copy(), b.copy()
        total, product = f(a, b, 3)
        want_total, want_product = _stencil_steps(a2, b2, 3)
        np.testing.assert_allclose(total, want_total)
        np.testing.assert_allclose(product, want_product)
        np.testing.assert_allclose(a, a2)
        np.testing.assert_allclose(b, b2)
    assert f.num_compiles == 2  # size 1 is its own signature
    assert counts and min(counts) >= 2, counts
    library = f.last.executable.library
    exported = {s for s in _defined_symbols(library) if "_stencil_steps" in s}
    assert exported == {"_mlir_ciface__stencil_steps", "_mlir__mlir_ciface__stencil_steps"}


def test_unresolved_symbol_in_a_part_is_a_pipeline_error(tmp_path, monkeypatch):
    """A body compiled in a part of its own that calls a function nothing
    defines fails as the whole module does (PipelineError, no object)."""
    from kiln.compiler import codegen, split_codegen
    from kiln.compiler.mlir import ir
    from kiln.compiler.pipeline import PipelineError
    from kiln.dialects import new_context

    monkeypatch.setenv("KILN_COMPILE_THREADS", "2")
    monkeypatch.setattr(split_codegen, "MIN_SPLIT_LINES", 0)
    text = textwrap.dedent("""
        llvm.func @kiln_test_symbol_nobody_defines(i64) -> i64
        llvm.func @kiln_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
        llvm.func @g_parallel0(%ctx: !llvm.ptr, %lo: i64, %hi: i64) {
          %r = llvm.call @kiln_test_symbol_nobody_defines(%lo) : (i64) -> i64
          llvm.return
        }
        llvm.func @g(%a: i64) -> i64 {
          %body = llvm.mlir.addressof @g_parallel0 : !llvm.ptr
          %null = llvm.mlir.zero : !llvm.ptr
          llvm.call @kiln_parallel_for(%body, %null, %a, %a, %a) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
          llvm.return %a : i64
        }
        llvm.func @_mlir_ciface_g(%a: i64) -> i64 attributes {llvm.emit_c_interface} {
          %r = llvm.call @g(%a) : (i64) -> i64
          llvm.return %r : i64
        }
    """)
    parts = []
    compile_parts = split_codegen.compile_parts
    monkeypatch.setattr(split_codegen, "compile_parts",
                        lambda p, *a, **k: parts.append(len(p)) or compile_parts(p, *a, **k))
    with new_context() as ctx:
        module = ir.Module.parse(text, ctx)
        with pytest.raises(PipelineError, match="could not link"):
            codegen.emit_objects(module, str(tmp_path), "g")
    assert parts == [2]
    assert not (tmp_path / "part1.o").exists()


def _stencil_arrays(a, b, steps):
    for _ in range(steps):
        b[1:-1] = 0.5 * (a[2:] + a[:-2]) - np.sin(a[1:-1])
        a[1:-1] = np.cos(b[1:-1]) * 0.25 + b[2:]
    return a * b


def _record_parts(monkeypatch, threads: str, min_split_lines: int) -> list:
    """Compile on `threads` threads with split_codegen's MIN_SPLIT_LINES at
    `min_split_lines` and any glue worth a part (COLD_MIN_LINES and
    COLD_MIN_LINES_ONE_THREAD 0); returns
    the list that collects the parts of each module cut."""
    from kiln.compiler import split_codegen

    monkeypatch.setenv("KILN_COMPILE_THREADS", threads)
    monkeypatch.setattr(split_codegen, "MIN_SPLIT_LINES", min_split_lines)
    monkeypatch.setattr(split_codegen, "COLD_MIN_LINES", 0)
    monkeypatch.setattr(split_codegen, "COLD_MIN_LINES_ONE_THREAD", 0)
    seen = []
    compile_parts = split_codegen.compile_parts
    monkeypatch.setattr(split_codegen, "compile_parts",
                        lambda parts, *a, **k: seen.append(parts) or compile_parts(parts, *a, **k))
    return seen


def _checked_stencil_arrays(sizes) -> kiln.QJIT:
    """`_stencil_arrays` compiled and checked against NumPy (result and
    written arguments) at each size; returns the qjit function."""
    f = kiln.qjit(_stencil_arrays)
    for n in sizes:
        a, b = np.linspace(-1.0, 1.0, n), np.linspace(2.0, 3.0, n)
        a2, b2 = a.copy(), b.copy()
        np.testing.assert_allclose(f(a, b, 3), _stencil_arrays(a2, b2, 3))
        np.testing.assert_allclose(a, a2)
        np.testing.assert_allclose(b, b2)
    return f


@pytest.mark.parametrize("threads", ["1", "3"])
def test_glue_entry_compiles_without_the_optimizer(tmp_path, monkeypatch, seed_toolchain, threads):
    """An entry whose loops only call the outlined bodies is glue: it gets a
    part of its own, compiled at level 0 with `optnone` functions, on one
    thread too (the bodies in the other parts keep O3); the library computes
    what NumPy does, mutated arguments included, and exports only the entry
    wrappers. KILN_COLD_GLUE=0 keeps the entry with the optimizer."""
    seen = _record_parts(monkeypatch, threads, min_split_lines=0)
    for cold_env, want_cold in (("", True), ("0", False)):
        monkeypatch.setenv("KILN_CACHE_DIR", str(seed_toolchain(tmp_path / f"cache{cold_env}")))
        monkeypatch.setenv("KILN_COLD_GLUE", cold_env)
        seen.clear()
        f = _checked_stencil_arrays((0, 1, 7, 20000))
        assert f.num_compiles == 2  # size 1 is its own signature
        if not want_cold and threads == "1":
            assert seen == []  # one thread, no glue part: one module, as before
            continue
        assert seen and all(len(parts) >= 2 for parts in seen)
        for parts in seen:
            assert [p.cold for p in parts] == [want_cold] + [False] * (len(parts) - 1)
            if want_cold:
                assert any(n.startswith("_mlir_ciface_") for n in parts[0].defines)
                assert not any("parallel" in n for n in parts[0].defines)
                # MLIR's dealloc_helper, which only the glue calls, compiles with it.
                defined = [n for p in parts for n in p.defines]
                assert defined.count("dealloc_helper") == 1
                assert "dealloc_helper" in parts[0].defines
        library = f.last.executable.library
        exported = {s for s in _defined_symbols(library) if "_stencil_arrays" in s}
        assert exported == {"_mlir_ciface__stencil_arrays", "_mlir__mlir_ciface__stencil_arrays"}


_EXIT_SCRIPT = """
import numpy as np, kiln
from kiln.compiler import split_codegen
split_codegen.MIN_SPLIT_LINES = 0
split_codegen.COLD_MIN_LINES = 0

def steps(a, b, n):
    for _ in range(n):
        b[1:-1] = 0.5 * (a[2:] + a[:-2]) - np.sin(a[1:-1])
        a[1:-1] = np.cos(b[1:-1]) * 0.25 + b[2:]
    return a * b

def whole(x):
    return np.exp(x) + 1.0

a, b = np.linspace(-1.0, 1.0, 9), np.linspace(2.0, 3.0, 9)
print(float(kiln.qjit(steps)(a, b, 2).sum()), float(kiln.qjit(whole)(a).sum()))
"""


def test_engines_released_after_the_compile_are_gone_before_exit(tmp_path, seed_toolchain):
    """Engines (a cut module's parts, a whole module) are destroyed on a
    thread of their own after their objects are written; a process that
    exits right after its compiles drains that thread first and exits
    cleanly, with the results NumPy gives."""
    env = dict(os.environ, KILN_CACHE_DIR=str(seed_toolchain(tmp_path / "cache")), KILN_COMPILE_THREADS="2")
    script = tmp_path / "exit_after_compiles.py"  # a file: autograph reads the loop's source
    script.write_text(_EXIT_SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    a, b = np.linspace(-1.0, 1.0, 9), np.linspace(2.0, 3.0, 9)
    first = float(_stencil_arrays(a, b, 2).sum())  # writes a, which the script's second call reads
    want = (first, float((np.exp(a) + 1.0).sum()))
    got = tuple(float(v) for v in proc.stdout.split())
    np.testing.assert_allclose(got, want)


_FORK_SCRIPT = """
import os, numpy as np, kiln

def f(x):
    return np.exp(x) + 1.0

def g(x):
    return np.sin(x) * 2.0

print(kiln.qjit(f)(np.ones(3)).sum())
pid = os.fork()
if pid == 0:
    os.write(1, f"{kiln.qjit(g)(np.ones(3)).sum()}\\n".encode())
    os._exit(0)
os.waitpid(pid, 0)
print(kiln.qjit(g)(np.ones(2)).sum())
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_child_forked_after_compiles_releases_its_own_engines(tmp_path, seed_toolchain):
    """A fork waits for an engine being destroyed on the release thread, and
    the child, which has no such thread, starts its own: both processes go
    on compiling and exit cleanly."""
    env = dict(os.environ, KILN_CACHE_DIR=str(seed_toolchain(tmp_path / "cache")))
    script = tmp_path / "fork_after_compiles.py"
    script.write_text(_FORK_SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    got = [float(v) for v in proc.stdout.split()]
    np.testing.assert_allclose(got, [3 * (np.e + 1.0), 3 * 2 * np.sin(1.0), 2 * 2 * np.sin(1.0)])


def test_module_below_the_split_size_is_cut_only_for_its_glue(tmp_path, monkeypatch, seed_toolchain):
    """Below MIN_SPLIT_LINES a module is cut only when its glue is large
    enough for a part of its own (COLD_MIN_LINES): the glue compiles without
    the optimizer, the bodies in one other part; without glue
    (KILN_COLD_GLUE=0) it compiles whole, on any number of threads."""
    seen = _record_parts(monkeypatch, "2", min_split_lines=10**9)
    for cold_env in ("", "0"):
        monkeypatch.setenv("KILN_CACHE_DIR", str(seed_toolchain(tmp_path / f"cache{cold_env}")))
        monkeypatch.setenv("KILN_COLD_GLUE", cold_env)
        seen.clear()
        _checked_stencil_arrays((0, 1, 7, 5001))
        if cold_env == "0":
            assert seen == []
        else:
            assert seen and all([p.cold for p in parts] == [True, False] for parts in seen), seen


_MARKED_PART = """
module {
  llvm.func @decl(i64) -> i64
  llvm.func @entry(%a: i64) -> i64 attributes {llvm.emit_c_interface} {
    %r = llvm.call @helper(%a) : (i64) -> i64
    %s = llvm.call @decl(%r) : (i64) -> i64
    llvm.return %s : i64
  }
  llvm.func @helper(%a: i64) -> i64 {
    llvm.return %a : i64
  }
  llvm.func @shared(%a: i64) -> i64 attributes {passthrough = ["cold"]} {
    llvm.return %a : i64
  }
  llvm.func @local(%a: i64) -> i64 {
    llvm.return %a : i64
  }
}
"""


@pytest.mark.parametrize("cold", [False, True])
def test_a_part_is_marked_in_its_worker_as_the_split_needs(cold):
    """split_codegen marks a part's functions through the C API, in the
    worker that compiles it: a function neither an entry nor used by another
    part is internal; an exported one and what an entry calls are
    `no_inline` (outside glue); in a glue part every function gets `optnone`
    and `noinline` after its own passthrough words. Declarations are left
    alone."""
    from kiln.compiler import split_codegen
    from kiln.compiler.mlir import MlirHandle, capi_pointer, ir, typed_capi
    from kiln.dialects import new_context

    part = split_codegen.Part(_MARKED_PART, ["entry", "helper", "shared", "local"], ["shared"], [], cold=cold)
    with new_context() as ctx:
        module = ir.Module.parse(_MARKED_PART, ctx)
        capi = typed_capi()
        split_codegen._mark_part(capi, MlirHandle(capi_pointer(ctx, "Context")),
                                 MlirHandle(capi_pointer(module, "Module")), part, ["entry"])
        functions = {ir.StringAttr(op.attributes["sym_name"]).value: op.attributes for op in module.body.operations}
        internal = {n for n, a in functions.items() if str(a["linkage"]) == "#llvm.linkage<internal>"}
        assert internal == {"helper", "local"}
        passthrough = {n: [ir.StringAttr(w).value for w in ir.ArrayAttr(a["passthrough"])]
                       if "passthrough" in a else [] for n, a in functions.items()}
        no_inline = {n for n, a in functions.items() if "no_inline" in a}
        if cold:
            assert no_inline == set()
            assert passthrough == {"decl": [], "entry": ["optnone", "noinline"], "helper": ["optnone", "noinline"],
                                   "shared": ["cold", "optnone", "noinline"], "local": ["optnone", "noinline"]}
        else:
            assert no_inline == {"helper", "shared"}
            assert passthrough == {"decl": [], "entry": [], "helper": [], "shared": ["cold"], "local": []}


def _function_lines(body: str) -> list[str]:
    """The printed lines of function @f of a module with `body` (the
    printer's own layout, as split_codegen reads it)."""
    from kiln.compiler import split_codegen
    from kiln.compiler.mlir import ir
    from kiln.dialects import new_context

    with new_context() as ctx:
        text = str(ir.Module.parse(textwrap.dedent("""
            llvm.func @kiln_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
            llvm.func @kiln_check_failed(i64, !llvm.ptr, i64, i64)
            llvm.func @kiln_warn(!llvm.ptr)
        """) + textwrap.dedent(body), ctx))
    lines = text.split("\n")
    function = split_codegen._layout(lines)[1]["f"]
    return lines[function.start:function.end]


def _counted_loop(step: str) -> str:
    """@f with one loop `for i in range(n)` whose body is `step`: the block
    ^step and any after it, ending with `llvm.br ^head(%next : i64)`."""
    frame = """
    llvm.func @f(%n: i64, %body: !llvm.ptr, %p: !llvm.ptr) {
      %zero = llvm.mlir.constant(0 : i64) : i64
      %one = llvm.mlir.constant(1 : i64) : i64
      llvm.br ^head(%zero : i64)
    ^head(%i: i64):
      %more = llvm.icmp "slt" %i, %n : i64
      llvm.cond_br %more, ^step, ^done
    STEP
    ^done:
      llvm.return
    }
    """
    return frame.replace("STEP", step.strip())


# A loop that hands its work to the runtime's parallel loop.
_DISPATCH_LOOP = _counted_loop("""
    ^step:
      llvm.call @kiln_parallel_for(%body, %p, %zero, %n, %one) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
      %next = llvm.add %i, %one : i64
      llvm.br ^head(%next : i64)
""")
# A loop that computes inline: its only call is a check's failure.
_COMPUTE_LOOP = _counted_loop("""
    ^step:
      %x = llvm.load %p : !llvm.ptr -> i64
      %bad = llvm.icmp "slt" %x, %zero : i64
      llvm.cond_br %bad, ^fail, ^ok
    ^fail:
      llvm.call @kiln_check_failed(%x, %p, %x, %x) : (i64, !llvm.ptr, i64, i64) -> ()
      llvm.br ^ok
    ^ok:
      %y = llvm.add %x, %i : i64
      llvm.store %y, %p : i64, !llvm.ptr
      %next = llvm.add %i, %one : i64
      llvm.br ^head(%next : i64)
""")
# A loop that computes inline and may warn (NumPy's RuntimeWarning kinds).
_WARNING_LOOP = _COMPUTE_LOOP.replace(
    "llvm.call @kiln_check_failed(%x, %p, %x, %x) : (i64, !llvm.ptr, i64, i64) -> ()",
    "llvm.call @kiln_warn(%p) : (!llvm.ptr) -> ()")
# A time loop that calls a body, around an inner loop that computes inline.
_NESTED_LOOPS = """
    llvm.func @f(%n: i64, %body: !llvm.ptr, %p: !llvm.ptr) {
      %zero = llvm.mlir.constant(0 : i64) : i64
      %one = llvm.mlir.constant(1 : i64) : i64
      llvm.br ^outer(%zero : i64)
    ^outer(%t: i64):
      %more = llvm.icmp "slt" %t, %n : i64
      llvm.cond_br %more, ^call, ^done
    ^call:
      llvm.call @kiln_parallel_for(%body, %p, %zero, %n, %one) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
      llvm.br ^inner(%zero : i64)
    ^inner(%i: i64):
      %go = llvm.icmp "slt" %i, %n : i64
      llvm.cond_br %go, ^work, ^next
    ^work:
      %x = llvm.load %p : !llvm.ptr -> i64
      %y = llvm.add %x, %i : i64
      llvm.store %y, %p : i64, !llvm.ptr
      %i1 = llvm.add %i, %one : i64
      llvm.br ^inner(%i1 : i64)
    ^next:
      %t1 = llvm.add %t, %one : i64
      llvm.br ^outer(%t1 : i64)
    ^done:
      llvm.return
    }
"""
_STRAIGHT = """
    llvm.func @f(%n: i64, %body: !llvm.ptr, %p: !llvm.ptr) {
      %zero = llvm.mlir.constant(0 : i64) : i64
      %bad = llvm.icmp "slt" %n, %zero : i64
      llvm.cond_br %bad, ^fail, ^ok
    ^fail:
      llvm.call @kiln_check_failed(%n, %p, %n, %n) : (i64, !llvm.ptr, i64, i64) -> ()
      llvm.br ^ok
    ^ok:
      llvm.return
    }
"""


@pytest.mark.parametrize("body, glue", [(_DISPATCH_LOOP, True), (_COMPUTE_LOOP, False), (_WARNING_LOOP, False),
                                        (_NESTED_LOOPS, False), (_STRAIGHT, True)],
                         ids=["dispatch-loop", "compute-loop", "warning-loop", "compute-inside-dispatch", "no-loop"])
def test_glue_is_a_function_whose_loops_hand_off_their_work(body, glue):
    """Only a function whose every loop calls out for its work (a body,
    kiln_parallel_for, a library; not a check's failure or an allocation)
    is compiled without the optimizer: a loop that computes inline, nested
    in a loop that calls out or not, keeps its function at O3."""
    from kiln.compiler import split_codegen

    assert split_codegen._loops_hand_off_work(_function_lines(body)) is glue


def test_compile_threads_setting_is_checked(monkeypatch):
    from kiln.compiler import split_codegen

    monkeypatch.setenv("KILN_COMPILE_THREADS", "two")
    with pytest.raises(ValueError, match="KILN_COMPILE_THREADS='two': expected a whole number"):
        split_codegen.compile_threads()
    monkeypatch.setenv("KILN_COMPILE_THREADS", "1")
    assert split_codegen.compile_threads() == 1


def _make_kiln_expand_exp_drop_the_return(monkeypatch):
    """kiln-expand-exp erases the function's `func.return` (invalid IR),
    for the tests of where an invalid result is caught and named."""
    from kiln.compiler.passes import parse_pass_spec

    def drop_return(self, module):
        for op in module.body.operations[0].regions[0].blocks[0].operations:
            if op.operation.name == "func.return":
                op.operation.erase()

    monkeypatch.setattr(type(parse_pass_spec("kiln-expand-exp").kiln_pass), "apply", drop_return)


@pytest.mark.parametrize("verify_each", [False, True])
def test_invalid_ir_from_a_kiln_pass_names_it(monkeypatch, verify_each):
    """A kiln pass that leaves invalid IR fails with a PipelineError; kiln
    verifies once per group of kiln passes (naming the group) unless each
    pass is verified (KILN_VERIFY_EACH_PASS=1, which names the pass)."""
    from kiln.compiler.mlir import ir
    from kiln.compiler.pipeline import PipelineError, run_passes
    from kiln.dialects import new_context

    _make_kiln_expand_exp_drop_the_return(monkeypatch)
    with new_context() as ctx:
        module = ir.Module.parse("func.func @f(%x: f64) -> f64 { return %x : f64 }", ctx)
        expected = (r"stage 'linalg', pass kiln-expand-exp: the result does not verify" if verify_each else
                    r"stage 'linalg', one of the passes kiln-expand-exp, kiln-flatten-copies: the result "
                    r"does not verify \(KILN_VERIFY_EACH_PASS=1")
        with pytest.raises(PipelineError, match=expected):
            run_passes(module, ["kiln-expand-exp", "kiln-flatten-copies"], "linalg", verify_each=verify_each)


@pytest.mark.parametrize("verify_each", [False, True])
def test_invalid_ir_after_an_upstream_batch_names_the_passes_since_the_last_verify(monkeypatch, verify_each):
    """An upstream batch runs without MLIR's verifier after each of its
    passes (unless KILN_VERIFY_EACH_PASS=1): its result is verified with the
    kiln passes after it, and a failure names the batch's passes too. The
    module before the batch was verified, so the passes before it are not named."""
    from kiln.compiler.mlir import ir
    from kiln.compiler.pipeline import PipelineError, run_passes
    from kiln.dialects import new_context

    _make_kiln_expand_exp_drop_the_return(monkeypatch)
    with new_context() as ctx:
        module = ir.Module.parse("func.func @f(%x: f64) -> f64 { return %x : f64 }", ctx)
        expected = (r"stage 'linalg', pass kiln-expand-exp: the result does not verify" if verify_each else
                    r"stage 'linalg', one of the passes cse, canonicalize, cse, kiln-expand-exp: the result "
                    r"does not verify \(KILN_VERIFY_EACH_PASS=1")
        with pytest.raises(PipelineError, match=expected):
            run_passes(module, ["kiln-flatten-copies", "cse", "canonicalize", "cse", "kiln-expand-exp"], "linalg",
                       verify_each=verify_each)


def _broadcasts(a, b, c):
    return a + b[:, None], a * c[:, None] - b[:, None]


def test_lowering_builds_one_shape_tensor_per_dims():
    """The `mlir` stage builds the shape tensor of a block's dims once
    (`hlo.reusing_shape_tensors`); the values are NumPy's."""
    import re

    f = kiln.qjit(_broadcasts)
    for n, m in ((7, 5), (300, 41), (0, 3), (1, 1)):
        a, b, c = np.arange(n * m, dtype=float).reshape(n, m), np.arange(n, dtype=float), np.ones(n)
        for got, want in zip(f(a, b, c), _broadcasts(a, b, c)):
            np.testing.assert_array_equal(got, want)
        if n == 300:
            assert f.num_compiles == 1  # a second size does not recompile
            # Three shape tensors: `a`'s (for the three broadcasts to it),
            # [len(b), 1] (both reshapes of `b`) and [len(c), 1]; six before.
            text = f.stage("mlir")
            assert text.count("stablehlo.dynamic_broadcast_in_dim") == 3
            assert text.count("stablehlo.dynamic_reshape") == 3
            assert len(re.findall(r"stablehlo.concatenate", text)) == 3


def test_lowering_on_several_threads():
    """Shape tensors are reused per thread: functions lowered on two threads
    at once stay correct."""
    import threading

    results, errors = {}, []

    def compile_and_run(k):
        try:
            def g(a, b):
                return a * float(k) + b[:, None]

            a, b = np.arange(12.0).reshape(4, 3), np.arange(4.0)
            results[k] = np.array_equal(kiln.qjit(g)(a, b), g(a, b))
        except Exception as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=compile_and_run, args=(k,)) for k in (2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == {2: True, 3: True}


def test_every_dialect_kiln_builds_ops_of_is_loaded_in_its_contexts():
    """`new_context` loads only the upstream dialects kiln creates ops of
    through the bindings (`BUILT_DIALECTS`; the bindings do not load a
    dialect for an op they create: the op is then "created with
    unregistered dialect"); the parser and the passes load the others on
    demand. Every dialect module kiln imports from its provider and every
    op it creates by name is of a loaded dialect, or of StableHLO or kiln's
    own (loaded by name)."""
    import re
    from pathlib import Path

    import kiln.compiler.mlir as provider
    from kiln.dialects import BUILT_DIALECTS, new_context

    own = {"stablehlo", "tensorssa", "immut", "kiln", "builtin"}
    modules = {"arith", "bufferization", "func", "llvm", "math", "memref", "scf", "tensor", "linalg",
               "affine", "index", "cf", "complex", "vector", "ub", "shape", "gpu", "omp", "sparse_tensor"}
    root = Path(provider.__file__).resolve().parent.parent
    imported, created = set(), set()
    for folder in ("compiler", "frontend", "dialects", "runtime"):
        for path in (root / folder).rglob("*.py"):
            text = path.read_text()
            for names in re.findall(r"from kiln\.compiler\.mlir import ([\w, ]+)", text):
                imported |= {n.split(" as ")[0].strip() for n in names.split(",")} & modules
            created |= set(re.findall(r"Operation\.create\(\s*f?\"(\w+)\.", text))
    assert imported >= {"arith", "func", "scf", "tensor"}, imported  # the scan sees the imports
    assert created >= {"scf", "llvm", "stablehlo", "kiln"}, created
    assert imported - set(BUILT_DIALECTS) == set()
    assert created - set(BUILT_DIALECTS) - own == set()
    # Loaded already: asking the context for each loads no dialect more.
    capi = ctypes.CDLL(provider._capi_library()._name)
    capi.mlirContextGetNumLoadedDialects.argtypes = [ctypes.c_void_p]
    capi.mlirContextGetNumLoadedDialects.restype = ctypes.c_ssize_t
    ctx = new_context()
    handle = provider.capi_pointer(ctx, "Context")
    loaded = capi.mlirContextGetNumLoadedDialects(handle)
    for name in BUILT_DIALECTS + ["stablehlo", "tensorssa", "immut", "kiln"]:
        assert ctx.dialects[name] is not None
        assert capi.mlirContextGetNumLoadedDialects(handle) == loaded, name
    ctx.dialects["tosa"]  # (the check can see a dialect load)
    assert capi.mlirContextGetNumLoadedDialects(handle) > loaded


def test_collect_ops_walks_in_c_as_the_bindings_walk(monkeypatch):
    """`collect_ops` walks in C (compiler/opwalk.c) and finds what the
    bindings' walk finds, in the same order (pre- and post-order), the ops
    wrapped as the same `ir.Operation`s; with KILN_OPWALK=0, or names it
    cannot take (any container but a set, tuple or list), the bindings walk."""
    from kiln.compiler.mlir import ir
    from kiln.compiler.passes import _util
    from kiln.dialects import new_context

    f = kiln.qjit(_stencil_steps, keep_intermediate=True)
    f(np.linspace(0.0, 1.0, 9), np.linspace(1.0, 2.0, 9), 2)
    assert _util.op_walker() is not None  # a C compiler and Python's headers are here

    class Names:  # a container the C walker does not take
        def __init__(self, names):
            self.names = set(names)

        def __contains__(self, name):
            return name in self.names

    def bindings_walk(module, names, post_order):
        found = []
        module.operation.walk(lambda op: (found.append(op) if op.name in names else None) or ir.WalkResult.ADVANCE,
                              ir.WalkOrder.POST_ORDER if post_order else ir.WalkOrder.PRE_ORDER)
        return found

    checked = 0
    for stage in ("mlir", "linalg", "bufferized", "llvm"):
        module = ir.Module.parse(f.stage(stage), new_context())
        for names in ({"scf.for", "scf.parallel", "scf.if"}, ("func.call", "memref.alloc"), ["llvm.func"],
                      frozenset({"arith.addf", "arith.mulf", "no.such_op"})):
            for post_order in (False, True):
                want = bindings_walk(module, set(names), post_order)
                got = _util.collect_ops(module, names, post_order)
                assert got == want and [op.name for op in got] == [op.name for op in want]
                assert _util.collect_ops(module, Names(names), post_order) == want
                checked += len(want)
    assert checked > 100
    monkeypatch.setattr(_util, "_WALKER", {})
    monkeypatch.setenv("KILN_OPWALK", "0")
    assert _util.op_walker() is None
    module = ir.Module.parse(f.stage("linalg"), new_context())
    assert _util.collect_ops(module, {"func.func"}) == bindings_walk(module, {"func.func"}, False)


def test_a_module_without_bodies_is_compiled_whole_without_printing_it(tmp_path, monkeypatch):
    """`split_codegen.has_bodies` finds on the ops what `split_module` could
    move (a function whose address is taken or that is called `no_inline`,
    not an entry); without one `emit_objects` compiles the module whole and
    never prints it for the split."""
    from kiln.compiler import codegen, split_codegen
    from kiln.compiler.mlir import ir
    from kiln.dialects import new_context

    body = """
        llvm.func @kiln_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
        llvm.func @g_parallel0(%ctx: !llvm.ptr, %lo: i64, %hi: i64) {
          llvm.return
        }
        llvm.func @g(%a: i64) -> i64 {
          %body = llvm.mlir.addressof @g_parallel0 : !llvm.ptr
          %null = llvm.mlir.zero : !llvm.ptr
          llvm.call @kiln_parallel_for(%body, %null, %a, %a, %a) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
          %r = llvm.call @h(%a) {no_inline} : (i64) -> i64
          llvm.return %r : i64
        }
        llvm.func @h(%a: i64) -> i64 {
          llvm.return %a : i64
        }
        llvm.func @_mlir_ciface_g(%a: i64) -> i64 attributes {llvm.emit_c_interface} {
          %r = llvm.call @g(%a) : (i64) -> i64
          llvm.return %r : i64
        }
    """
    without_address = body.replace("%body = llvm.mlir.addressof @g_parallel0 : !llvm.ptr", "%body = llvm.mlir.zero : !llvm.ptr")
    plain = without_address.replace("llvm.call @h(%a) {no_inline}", "llvm.call @h(%a)")
    with new_context() as ctx:
        for text, want in ((body, True), (without_address, True), (plain, False)):
            module = ir.Module.parse(textwrap.dedent(text), ctx)
            assert codegen.entry_names(module) == ["_mlir_ciface_g"]
            assert split_codegen.has_bodies(module, ["_mlir_ciface_g"]) is want
        printed = []
        monkeypatch.setattr(split_codegen, "split_module", lambda text, *a: printed.append(text) or None)
        objects, hidden = codegen.emit_objects(ir.Module.parse(textwrap.dedent(plain), ctx), str(tmp_path), "g")
        assert printed == [] and hidden == [] and len(objects) == 1
