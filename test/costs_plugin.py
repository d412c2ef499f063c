"""Where the suite's time goes: with KILN_TEST_COSTS=FILE set, conftest.py
registers this plugin, which appends one JSON line per test to FILE (one
file per xdist worker: FILE.gw0, ...): its wall seconds (setup, call and
teardown), CPU seconds (this process and the child processes it waited
for), and the kiln compiles it made (count, cache hits, seconds).
`python test/costs_plugin.py FILE...` prints the totals per module, most
CPU first, and the 20 most expensive tests."""

from __future__ import annotations

import collections
import json
import os
import resource
import sys

import pytest


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CostsRecorder:
    """One record per test; compiles counted through kiln's compile log."""

    def __init__(self, path: str):
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        self.path = f"{path}.{worker}" if worker else path
        self.record: dict | None = None
        from kiln import compile_log

        logged = compile_log.log_compile

        def counting(name, signature, seconds, cache_hit, **details):
            if self.record is not None:
                self.record["compiles"] += 1
                self.record["cache_hits"] += bool(cache_hit)
                self.record["compile_seconds"] += sum(seconds.values())
            return logged(name, signature, seconds, cache_hit, **details)

        compile_log.log_compile = counting

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.record = {"id": item.nodeid, "seconds": 0.0, "compiles": 0, "cache_hits": 0, "compile_seconds": 0.0}
        start = _cpu_seconds()
        yield
        self.record["cpu_seconds"] = _cpu_seconds() - start
        with open(self.path, "a") as f:
            f.write(json.dumps(self.record) + "\n")
        self.record = None

    def pytest_runtest_logreport(self, report):
        if self.record is not None and report.nodeid == self.record["id"]:
            self.record["seconds"] += report.duration


def summarize(paths: list[str]) -> None:
    records = [json.loads(line) for path in paths for line in open(path)]
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0, 0, 0])
    for r in records:
        total = modules[r["id"].split("::")[0]]
        for i, key in enumerate(("cpu_seconds", "seconds", "compiles", "cache_hits")):
            total[i] += r[key]
        total[4] += 1
    print(f"{'CPU s':>8} {'wall s':>8} {'compiles':>8} {'hits':>6} {'tests':>6}  module")
    for name, (cpu, wall, compiles, hits, tests) in sorted(modules.items(), key=lambda kv: -kv[1][0]):
        print(f"{cpu:8.1f} {wall:8.1f} {compiles:8d} {hits:6d} {tests:6d}  {name}")
    print(f"\n{'CPU s':>8} {'wall s':>8} {'compiles':>8}  test")
    for r in sorted(records, key=lambda r: -r["cpu_seconds"])[:20]:
        print(f"{r['cpu_seconds']:8.1f} {r['seconds']:8.1f} {r['compiles']:8d}  {r['id']}")


if __name__ == "__main__":
    summarize(sys.argv[1:])
