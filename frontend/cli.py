"""The `kiln` command: `kiln demo` compiles example programs, prints their
jaxprs and per-stage compile times, and checks results against NumPy;
`kiln cache info` describes the compile cache, `kiln cache clear` empties it.

In: command-line arguments. Out: a report on stdout; exit status 1 if any
example disagrees with NumPy.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable

import numpy as np

import kiln
from kiln import numpy as knp


def _examples() -> list[tuple[str, Callable, Callable, list]]:
    """(name, kiln function, NumPy reference, list of argument tuples at several sizes)."""
    rng = np.random.default_rng(0)

    def elementwise(x, y):
        return np.exp(x) * 2.0 + y - np.sqrt(x)

    def softmax_rows(x):
        e = np.exp(x - np.max(x, axis=1, keepdims=True))
        return e / np.sum(e, axis=1, keepdims=True)

    def scaled_ones(sz: int):
        a = knp.ones(sz)
        return a + a * sz

    def slices_and_matmul(a, b):
        return np.maximum(a[1:, :] @ b, 0.0).sum(axis=0)

    def np_scaled_ones(sz):
        a = np.ones(sz)
        return a + a * sz

    def sized(n, m=None):
        return rng.random((n,) if m is None else (n, m))

    return [
        ("exp(x) * 2 + y - sqrt(x)", elementwise, elementwise,
         [(sized(n), sized(n)) for n in (7, 1000, 100_000)]),
        ("softmax over rows", softmax_rows, softmax_rows, [(sized(n, m),) for n, m in ((4, 5), (300, 17))]),
        ("ones(sz) with a traced size", scaled_ones, np_scaled_ones, [(n,) for n in (3, 10, 1000)]),
        ("slice, matmul, relu, sum", slices_and_matmul, slices_and_matmul,
         [(sized(n, k), sized(k, m)) for n, k, m in ((5, 4, 3), (64, 32, 16))]),
    ]


def demo() -> int:
    print(f"kiln demo — numpy {np.__version__}\n")
    failures = 0
    for name, fn, reference, arg_sets in _examples():
        compiled = kiln.qjit(fn)
        print(f"== {name}")
        first = True
        for args in arg_sets:
            start = time.perf_counter()
            result = compiled(*args)
            elapsed = time.perf_counter() - start
            expected = reference(*args)
            ok = np.allclose(result, expected, rtol=1e-10, atol=1e-12)
            failures += not ok
            if first:
                print(compiled.jaxpr)
                print("compile time per stage (ms):",
                      ", ".join(f"{s} {t * 1e3:.1f}" for s, t in compiled.stage_times.items()))
                first = False
            shapes = ", ".join(str(np.shape(a)) for a in args)
            print(f"  args {shapes:<28} {'OK ' if ok else 'MISMATCH'} vs NumPy   "
                  f"call {elapsed * 1e3:8.2f} ms   compiles so far: {compiled.num_compiles}")
        print()
    print("all results match NumPy" if not failures else f"{failures} result(s) differ from NumPy")
    return 1 if failures else 0


def _mib(size: int) -> str:
    return f"{size} bytes ({size / 2**20:.1f} MiB)"


def cache_command(action: str) -> int:
    from kiln.runtime import cache

    if action == "clear":
        path = cache.cache_dir()
        print(f"removed {cache.clear()} files from {path}")
        return 0
    info = cache.info()
    print(f"path:    {info['path']}")
    if info["fallback_reason"]:
        print(f"         (a private temporary cache: {info['requested']} cannot be used, "
              f"{info['fallback_reason']}; set KILN_CACHE_DIR to a writable directory)")
    print(f"entries: {info['entries']} compiled functions, {_mib(info['entry_bytes'])}")
    print(f"bytes:   {_mib(info['bytes'])} in all (with the support code and the fastcall extension)")
    print(f"cap:     {_mib(info['cap'])} for compiled functions (KILN_CACHE_MAX_BYTES); "
          "the least recently used are evicted beyond it")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kiln", description="kiln: NumPy-style Python to native code via MLIR")
    parser.add_argument("--version", action="version", version=f"kiln {kiln.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="compile example programs, show their jaxprs and stage times, check vs NumPy")
    cache_parser = sub.add_parser("cache", help="the compile cache (KILN_CACHE_DIR): `info` describes it, "
                                  "`clear` deletes every file in it")
    cache_parser.add_argument("action", choices=["info", "clear"])
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    if args.command == "cache":
        return cache_command(args.action)
    return 2


if __name__ == "__main__":
    sys.exit(main())
