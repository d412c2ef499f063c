"""Long differential-fuzzing run: random kiln programs against NumPy, with
kiln's reference interpreter as a second oracle (a failure names the side
that disagrees: a tracing bug, a compiler bug or an interpreter bug).

    python cmake-free-scripts/fuzz_long.py 1800 --out /tmp/kiln-fuzz

runs for 1800 seconds. `--programs user` draws programs shaped like user
code and NPBench kernels (test/fuzz/user_programs.py) instead of the
expression programs of test/fuzz/program_gen.py; `--programs both`
alternates batches. Each batch of programs runs in a worker subprocess
(Hypothesis with a fresh seed), so a crash or a hang of the compiled code is
caught and reported with the program that caused it. Failures are
minimized by Hypothesis, deduplicated by their message, printed, and
written with the figures (programs tried, outcomes, failures) to
OUT/summary.json and OUT/summary.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEST_DIR = HERE.parent / "test"
HANG_SECONDS = 240


# --------------------------------------------------------------------------
# Worker: one Hypothesis run, events as JSON lines


def worker(seed: int, examples: int, events_path: str, programs: str) -> None:
    sys.path.insert(0, str(TEST_DIR))
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hyp_seed

    from fuzz.program_gen import program_cases, run_case
    from fuzz.user_programs import user_program_cases

    cases = user_program_cases() if programs == "user" else program_cases()

    events = open(events_path, "a", buffering=1)

    def emit(**event):
        events.write(json.dumps(event) + "\n")

    last_failure: dict = {}

    @hyp_seed(seed)
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.generate, Phase.shrink], print_blob=False)
    @given(cases)
    def check(case):
        program, inputs = case
        emit(kind="start", source=program.source, inputs=repr(inputs), time=time.time())
        outcome = run_case(program, inputs)
        emit(kind="outcome", status=outcome.status, counts=outcome.counts)
        if outcome.status == "failure":
            last_failure.update(source=program.source, inputs=repr(inputs), detail=outcome.detail)
            raise AssertionError(outcome.detail)

    try:
        check()
    except AssertionError:
        emit(kind="failure", **last_failure)
    except Exception as exc:  # noqa: BLE001 - reported, the run goes on
        emit(kind="failure", source=last_failure.get("source", "?"), inputs=last_failure.get("inputs", "?"),
             detail=f"worker error {type(exc).__name__}: {exc}")
    emit(kind="done")


# --------------------------------------------------------------------------
# Driver


SIDES = ("tracing bug", "compiler bug", "interpreter bug")  # run_case's first line of a failure


def signature(detail: str) -> str:
    """A failure's identity: which side disagrees (tracing, compiler or
    interpreter; run_case's first line) and the first line of what it did,
    without numbers, shapes and dtypes."""
    lines = detail.split("\n")
    side = lines[0].split(" bug")[0] + " bug: " if lines[0].startswith(SIDES) else ""
    if side:
        lines = lines[1:] or [""]
    first = lines[0]
    first = first.split(": ", 1)[-1] if first.startswith("x: ") else first
    first = re.sub(r"x: \S+ \(\w+\), y: \S+: ", "", first)
    return side + re.sub(r"-?\d+", "N", first)[:200]


def run(budget: float, out: Path, examples: int, first_seed: int, programs: str) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("KILN_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-fuzz-cache-"))
    end = time.time() + budget
    seed = first_seed
    totals = {"programs": 0, "same": 0, "both_raise": 0, "accepted": 0, "kind_differs": 0, "batches": 0,
              "crashes": 0, "hangs": 0}
    failures: dict[str, dict] = {}
    started = time.time()
    while time.time() < end - 30:
        events_path = out / f"events-{seed}.jsonl"
        events_path.unlink(missing_ok=True)
        kind = programs if programs != "both" else ("user", "expressions")[seed % 2]
        proc = subprocess.Popen([sys.executable, __file__, "--worker", "--seed", str(seed), "--examples",
                                 str(examples), "--events", str(events_path), "--programs", kind], env=env,
                                stdout=subprocess.DEVNULL, stderr=open(out / f"stderr-{seed}.txt", "w"))
        hung = False
        while proc.poll() is None:
            time.sleep(2)
            last = _events(events_path)
            starts = [e for e in last if e["kind"] == "start"]
            if starts and last[-1]["kind"] == "start" and time.time() - starts[-1]["time"] > HANG_SECONDS:
                proc.kill()
                hung = True
            elif time.time() > end + 120:
                proc.kill()
        events = _events(events_path)
        totals["batches"] += 1
        for e in events:
            if e["kind"] == "start":
                totals["programs"] += 1
            elif e["kind"] == "outcome":
                for k, v in e["counts"].items():
                    totals[k] = totals.get(k, 0) + v
        failure = next((e for e in events if e["kind"] == "failure"), None)
        if failure is None and proc.returncode not in (0, None) and not hung and time.time() < end + 120:
            starts = [e for e in events if e["kind"] == "start"]
            failure = {"source": starts[-1]["source"] if starts else "?",
                       "inputs": starts[-1]["inputs"] if starts else "?",
                       "detail": f"worker died with exit status {proc.returncode} (crash)"}
            totals["crashes"] += 1
        if hung:
            starts = [e for e in events if e["kind"] == "start"]
            failure = {"source": starts[-1]["source"], "inputs": starts[-1]["inputs"],
                       "detail": f"hang: one program ran for more than {HANG_SECONDS} s"}
            totals["hangs"] += 1
        if failure is not None:
            key = signature(failure["detail"])
            if key not in failures:
                failures[key] = dict(failure, seed=seed, count=0)
                print(f"\n=== failure {len(failures)} (seed {seed}) ===\n{failure['source']}{failure['inputs']}\n"
                      f"{failure['detail']}\n", flush=True)
            failures[key]["count"] += 1
        else:
            events_path.unlink(missing_ok=True)
            (out / f"stderr-{seed}.txt").unlink(missing_ok=True)
        print(f"[{time.time() - started:7.0f} s] seed {seed}: {totals['programs']} programs, "
              f"{len(failures)} distinct failures", flush=True)
        seed += 1
        _write_summary(out, budget, time.time() - started, totals, failures)
    return _write_summary(out, budget, time.time() - started, totals, failures)


def _events(path: Path) -> list:
    if not path.exists():
        return []
    events = []
    for line in path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # a line cut by a killed worker
    return events


def _write_summary(out: Path, budget: float, elapsed: float, totals: dict, failures: dict) -> dict:
    summary = {"budget_seconds": budget, "elapsed_seconds": round(elapsed), **totals,
               "distinct_failures": len(failures), "failures": list(failures.values())}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    lines = [f"kiln differential fuzzing: {elapsed:.0f} s of a {budget:.0f} s budget",
             f"programs tried: {totals['programs']} (in {totals['batches']} batches)",
             f"runs (program x shape): same answer {totals['same']}, both raised {totals['both_raise']} "
             f"(different exception kinds: {totals['kind_differs']}), accepted size-1 broadcast "
             f"differences {totals['accepted']}",
             f"crashes: {totals['crashes']}, hangs: {totals['hangs']}",
             f"distinct failures: {len(failures)}"]
    for i, f in enumerate(failures.values(), 1):
        lines += [f"\n--- failure {i} (seen {f['count']}x, seed {f['seed']}) ---", f["source"] + f["inputs"],
                  f["detail"]]
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("budget", nargs="?", type=float, default=600.0, help="time budget in seconds")
    parser.add_argument("--out", default="/tmp/kiln-fuzz", help="folder for the summary and failure logs")
    parser.add_argument("--examples", type=int, default=40, help="programs per worker batch")
    parser.add_argument("--seed", type=int, default=1, help="first Hypothesis seed")
    parser.add_argument("--programs", choices=("expressions", "user", "both"), default="expressions",
                        help="which generator draws the programs")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--events", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.seed, args.examples, args.events, args.programs)
        return
    summary = run(args.budget, Path(args.out), args.examples, args.seed, args.programs)
    print((Path(args.out) / "summary.txt").read_text())
    sys.exit(1 if summary["distinct_failures"] else 0)


if __name__ == "__main__":
    main()
