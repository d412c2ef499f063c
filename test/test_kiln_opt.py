"""kiln-opt as a command: exit statuses and messages on bad input, and a
mutation fuzz over the lit inputs (exit 0 or 1, never a traceback or a signal).

Message checks call `main()` in this process; exit statuses and the fuzz run
the installed console script, as users do.
"""

from __future__ import annotations

import random
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from kiln.compiler.opt import main, split_top_level
from kiln.compiler.passes import PASSES, ModulePass

LIT_DIR = Path(__file__).parent / "lit"
BIN_DIR = Path(sys.executable).parent
KILN_OPT = [str(BIN_DIR / "kiln-opt")] if (BIN_DIR / "kiln-opt").exists() else [sys.executable, "-m", "kiln.compiler.opt"]

GOOD = """\
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.exponential %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}
"""


def run_opt(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*KILN_OPT, *args], input=stdin, capture_output=True, timeout=120)


@pytest.fixture
def opt(tmp_path, capsys):
    """Run `main()` on `text` written to a file; returns (status, stdout, stderr)."""

    def call(text: str | bytes, *args: str) -> tuple[int, str, str]:
        path = tmp_path / "input.mlir"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        status = main([str(path), *args])
        out, err = capsys.readouterr()
        return status, out, err.replace(str(path), "input.mlir")

    return call


# --------------------------------------------------------------------------
# Good input


def test_runs_upstream_and_kiln_passes(opt):
    status, out, err = opt(GOOD, "-p", "kiln-legalize-dynamic,func.func(stablehlo-legalize-to-linalg),canonicalize")
    assert (status, err) == (0, "")
    assert "linalg.generic" in out and "math.exp" in out and "stablehlo" not in out


def test_pass_pipeline_and_output_file(opt, tmp_path):
    target = tmp_path / "out.mlir"
    status, out, err = opt(GOOD, "--pass-pipeline=builtin.module(func.func(stablehlo-legalize-to-linalg))",
                           "-o", str(target))
    assert (status, out, err) == (0, "", "")
    assert "linalg.generic" in target.read_text()


def test_stage_runs_default_pipeline_prefix(opt):
    status, out, _ = opt(GOOD, "--stage", "linalg")
    assert status == 0 and "linalg.generic" in out and "memref" not in out
    status, out, _ = opt(GOOD, "--stage", "bufferized")
    assert status == 0 and "memref" in out
    status, out, _ = opt(GOOD, "--pipeline")
    assert status == 0 and "llvm.func" in out


def test_split_input_file_joins_chunks(opt):
    status, out, err = opt(GOOD + "// -----\n" + GOOD.replace("@f", "@g"), "--split-input-file", "-p", "cse")
    assert (status, err) == (0, "")
    first, second = out.split("// -----\n")
    assert "@f" in first and "@g" in second


def test_list_passes(capsys):
    assert main(["--list-passes"]) == 0
    out = capsys.readouterr().out
    for name in ("kiln-legalize-dynamic", "kiln-lower-checks", "memref-copy-to-linalg", "bufferized"):
        assert name in out


def test_split_top_level_keeps_nested_commas():
    assert split_top_level("a, func.func(b,c),d{x=1,2}") == ["a", "func.func(b,c)", "d{x=1,2}"]


# --------------------------------------------------------------------------
# Bad input: message with its location on stderr, status 1


BAD_CASES = {
    "parse error": ("func.func @f(%x: f32<) {\n  return\n}\n", "input.mlir:1:21: error: expected ')'"),
    "unknown dialect": ("func.func @f() {\n  nosuch.op\n  return\n}\n",
                        "input.mlir:2:3: error: Dialect `nosuch' not found for custom op 'nosuch.op'"),
    "unknown op": ("func.func @f() {\n  stablehlo.nosuch\n  return\n}\n",
                   "input.mlir:2:3: error: custom op 'stablehlo.nosuch' is unknown"),
    "verifier failure": ('func.func @f() {\n  %0 = "tensor.empty"() : () -> tensor<?xf32>\n  return\n}\n',
                         "input.mlir:2:8: error: 'tensor.empty' op incorrect number of dynamic sizes"),
    "non-UTF-8": (b"func.func @f() {\n  \xff\n}\n",
                  "input.mlir:2: error: input is not valid UTF-8 (byte 0xff at offset 19)"),
    "binary": (b"ML\xefR\x00\x01\x02", "input.mlir:1: error: input looks binary (NUL byte at offset 4)"),
    # Deep enough to overflow the native stack in MLIR's recursive parser.
    "deep nesting": ("module attributes {a = " + "[" * 20000 + "]" * 20000 + "} {}",
                     "input.mlir:1: error: brackets nest 20001 levels deep; kiln-opt accepts at most 1000"),
}


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_input(opt, case):
    text, message = BAD_CASES[case]
    status, out, err = opt(text, "-p", "canonicalize")
    assert status == 1 and out == ""
    assert message in err
    assert "Traceback" not in err


BAD_PIPELINES = {
    "unknown pass": (["-p", "no-such-pass"], "'no-such-pass' does not refer to a registered pass"),
    "bad upstream option": (["-p", "canonicalize{no-such-option=1}"], "no such option no-such-option"),
    "bad kiln option": (["-p", "kiln-lower-checks{x=1}"], "pass 'kiln-lower-checks' has no option 'x'"),
    "not a bool": (["-p", "kiln-version-small-dims{bodies=maybe}"],
                   "pass 'kiln-version-small-dims' option 'bodies' expects true or false (or 1 or 0), got 'maybe'"),
    "not an int": (["-p", "kiln-parallelize{min-work=abc}"],
                   "pass 'kiln-parallelize' option 'min-work' expects an integer >= 0, got 'abc'"),
    "below minimum": (["-p", "kiln-parallelize{min-work=-1}"],
                      "pass 'kiln-parallelize' option 'min-work' expects an integer >= 0, got '-1'"),
    "option twice": (["-p", "kiln-parallelize{min-work=1 min-work=2}"],
                     "pass 'kiln-parallelize' option 'min-work' is given twice; give it once"),
    "unbalanced": (["-p", "cse)"], "unbalanced ')'"),
    "unknown stage": (["--stage", "nowhere"], "unknown stage 'nowhere'"),
    "stage and passes": (["--stage", "linalg", "-p", "cse"], "not both"),
}


@pytest.mark.parametrize("case", BAD_PIPELINES)
def test_bad_pipeline(opt, case):
    args, message = BAD_PIPELINES[case]
    status, out, err = opt(GOOD, *args)
    assert status == 1 and out == ""
    assert message in err and err.startswith("kiln-opt: error:")


def test_failing_pass_reports_op_location(opt):
    status, out, err = opt(GOOD, "-p", "one-shot-bufferize")
    assert status == 1 and out == ""
    assert "input.mlir:2:8: error: op was not bufferized" in err
    assert "while running one-shot-bufferize" in err


def test_kiln_pass_rejection_is_located(opt):
    # A kiln.check with more values than the failure hook reports.
    text = ('func.func @f(%a: tensor<i1>, %v: tensor<i64>) {\n  "kiln.check"(%a, %v, %v, %v) '
            '{kind = "ValueError", message = "m"} : (tensor<i1>, tensor<i64>, tensor<i64>, tensor<i64>) -> ()\n'
            '  return\n}\n')
    status, out, err = opt(text, "-p", "kiln-lower-checks")
    assert status == 1 and out == ""
    assert "input.mlir:2:3: error: kiln-lower-checks: kiln.check reports at most 2 values, got 3" in err
    assert "note: while running kiln-lower-checks" in err


def test_kiln_pass_bug_is_reported_not_raised(opt, monkeypatch):
    @dataclass(frozen=True)
    class BrokenPass(ModulePass):
        """A pass with a bug."""

        name = "test-broken-pass"

        def apply(self, module):
            return {}["missing"]

    monkeypatch.setitem(PASSES, "test-broken-pass", BrokenPass)
    status, out, err = opt(GOOD, "-p", "test-broken-pass")
    assert status == 1 and out == ""
    assert "error: internal error while running test-broken-pass: KeyError" in err
    assert "Traceback" not in err


def test_split_input_file_reports_every_failing_chunk(opt):
    bad = "func.func @bad() {\n  nosuch.op\n}\n"
    status, out, err = opt(bad + "// -----\n" + GOOD + "// -----\n" + bad, "--split-input-file", "-p", "cse")
    assert status == 1
    assert "@f" in out
    # Line numbers are those of the whole file.
    assert "input.mlir:2:3: error" in err and "input.mlir:11:3: error" in err


def test_console_script_statuses(tmp_path):
    good = run_opt("-p", "canonicalize", stdin=GOOD.encode())
    assert good.returncode == 0 and b"stablehlo.exponential" in good.stdout
    bad = run_opt("-", "-p", "canonicalize", stdin=b"func.func @f( {")
    assert bad.returncode == 1 and b"<stdin>:1:" in bad.stderr and b"Traceback" not in bad.stderr
    binary = run_opt(stdin=bytes(range(256)))
    assert binary.returncode == 1 and b"Traceback" not in binary.stderr
    module = subprocess.run([sys.executable, "-m", "kiln.compiler.opt", "--list-passes"], capture_output=True)
    assert module.returncode == 0 and b"kiln-legalize-dynamic" in module.stdout


# --------------------------------------------------------------------------
# Fuzz: mutated lit inputs never crash kiln-opt

MUTATIONS_PER_FILE = 30
FUZZ_FILES = sorted(LIT_DIR.rglob("*.mlir"))


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One byte-level mutation: delete, duplicate, swap or truncate."""
    if len(data) < 2:
        return data
    i = rng.randrange(len(data) - 1)
    kind = rng.choice(("delete", "duplicate", "swap", "truncate", "delete-span"))
    if kind == "delete":
        return data[:i] + data[i + 1:]
    if kind == "duplicate":
        return data[:i] + data[i:i + 1] + data[i:]
    if kind == "swap":
        return data[:i] + data[i + 1:i + 2] + data[i:i + 1] + data[i + 2:]
    if kind == "truncate":
        return data[:i]
    return data[:i] + data[i + rng.randrange(1, 40):]


def mutants(path: Path) -> list[bytes]:
    rng = random.Random(zlib.crc32(path.name.encode()))
    data = path.read_bytes()
    found = []
    for _ in range(MUTATIONS_PER_FILE):
        text = data
        for _ in range(rng.randint(1, 3)):
            text = mutate(text, rng)
        found.append(text)
    return found


def _crashed(proc: subprocess.CompletedProcess) -> bool:
    return proc.returncode not in (0, 1) or b"Traceback" in proc.stderr


# The lit inputs in groups: one kiln-opt process per group keeps each well
# under run_opt's time limit as the lit suite grows (all files together took
# ~90 s of CPU with 51 files), and lets pytest-xdist spread them.
FUZZ_GROUPS = 6


@pytest.mark.parametrize("group", range(FUZZ_GROUPS))
def test_fuzz_mutated_inputs(group):
    """Every mutant of every lit input of this group goes through one process
    as a `--split-input-file` chunk (each chunk is parsed and compiled on its
    own), which keeps the suite fast; a crash is then narrowed down to its mutant."""
    cases = {path: mutants(path) for path in FUZZ_FILES[group::FUZZ_GROUPS]}
    args = ("--split-input-file", "--pipeline")

    def crashes(texts: list[bytes]) -> subprocess.CompletedProcess | None:
        proc = run_opt("-", *args, stdin=b"\n// -----\n".join(texts))
        return proc if _crashed(proc) else None

    batch = crashes([text for texts in cases.values() for text in texts])
    if batch is None:
        return
    for path, texts in cases.items():
        if crashes(texts) is None:
            continue
        for text in texts:
            single = crashes([text])
            if single is not None:
                pytest.fail(f"kiln-opt {' '.join(args)} exited {single.returncode} on this mutant of {path.name}:\n"
                            f"{text.decode(errors='replace')}\n--- stderr ---\n"
                            f"{single.stderr.decode(errors='replace')[-4000:]}")
    pytest.fail(f"kiln-opt crashed on the batch of all mutants (exit {batch.returncode}), on no single one:\n"
                f"{batch.stderr.decode(errors='replace')[-4000:]}")
