"""LLVM command-line options kiln sets in its MLIR provider's LLVM.

Some of LLVM's codegen choices are reachable only through its global
command-line options (`cl::opt`), which the MLIR C API's
`LLVMParseCommandLineOptions` sets for the whole process. kiln sets its
defaults once, before its first `ExecutionEngine`:

- `-disable-lsr`: codegen's loop strength reduction is the largest single
  LLVM pass on kiln's code (~20 % of LLVM's time on channel_flow; 1.1 of
  vadv's bodies' 2.7 s), and on an idle machine the loops kiln emits ran
  as fast or faster without it (channel_flow -23 %, spmv -45 %; seidel_2d
  +8 %, the one kernel slower; docs/benchmarks.md).
- `-x86-cmov-converter=false`: x86 codegen turns a conditional move on a
  loop's critical path into a branch, betting that the branch predicts
  well. kiln-branchless-bit-selects makes selects exactly where the
  condition is a bit of the data, which predicts half the time, and a cmov
  is its shortest form (crc16 on 16 kB: 0.255 ms with the mask form the
  pass used before, 0.196 with cmovs, 0.54 with branches). On the 40
  NPBench kernels and the seven workloads the option alone changed no time
  beyond noise (docs/benchmarks.md, session 18).

`KILN_LLVM_OPTIONS` replaces the defaults (`KILN_LLVM_OPTIONS=` keeps
LLVM's own: loop strength reduction on). It is read once per process;
the options are part of the disk cache's toolchain fingerprint, so
libraries built under other options are not reused.

The options are process-wide in the provider's LLVM: other users of that
LLVM in the same process (torch-mlir's own compiles) see them too. The
provider's LLVM parses them with its errors discarded, so an option it
does not know is ignored, not reported: kiln checks only that each word
is an option (starts with `-`).

This module does not import the MLIR bindings (the cache's fingerprint
reads `llvm_options()` on a cache hit, which must stay cheap).
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading

from kiln.errors import KilnValueError

ENVIRONMENT_VARIABLE = "KILN_LLVM_OPTIONS"
KEEP_CMOVS = "-x86-cmov-converter=false"  # (kiln-branchless-bit-selects reads it)
DEFAULT_LLVM_OPTIONS: tuple[str, ...] = ("-disable-lsr", KEEP_CMOVS)


@functools.lru_cache(maxsize=None)
def llvm_options() -> tuple[str, ...]:
    """The options kiln passes to LLVM in this process: `KILN_LLVM_OPTIONS`
    split on whitespace when it is set (empty: none), else the defaults.
    Raises KilnValueError naming a word that is not an option."""
    text = os.environ.get(ENVIRONMENT_VARIABLE)
    if text is None:
        return DEFAULT_LLVM_OPTIONS
    options = tuple(text.split())
    for option in options:
        if not option.startswith("-") or option in ("-", "--"):
            raise KilnValueError(
                f"{ENVIRONMENT_VARIABLE}={text!r}: {option!r} is not an LLVM option (each word must be one, "
                f"such as -disable-lsr); fix: set {ENVIRONMENT_VARIABLE} to options separated by spaces, "
                f"or to the empty string for LLVM's own defaults, or unset it for kiln's "
                f"({' '.join(DEFAULT_LLVM_OPTIONS)})")
    return options


_APPLIED = False
_LOCK = threading.Lock()


def apply_llvm_options() -> tuple[str, ...]:
    """Set `llvm_options()` in the provider's LLVM, once per process (later
    calls return at once); call it before creating an ExecutionEngine.
    Returns the options set."""
    global _APPLIED
    options = llvm_options()
    if _APPLIED:
        return options
    with _LOCK:
        if not _APPLIED:
            if options:
                from kiln.compiler.mlir import _capi_library

                parse = _capi_library().LLVMParseCommandLineOptions
                parse.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p]
                parse.restype = None
                argv = (ctypes.c_char_p * (len(options) + 1))(b"kiln", *[o.encode() for o in options])
                parse(len(options) + 1, argv, None)
            _APPLIED = True
    return options
