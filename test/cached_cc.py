"""A C compiler for tests that rebuild kiln's support code: it runs the real
compiler (KILN_TEST_REAL_CC) on every command, except that a command which
compiles a C source (`-c x.c`, or `-shared x.c` as the fastcall extension's
build) is answered from a cache of this test session when the same command
(output path aside) already compiled the same preprocessed source with the
same compiler. The session's first build of runtime/support.c (~30 CPU s:
sort.c's vector code) is then the only one; kiln's side of every rebuild
(the damaged or missing file found, the compiler called, the result written,
verified and recorded with its sha256) runs as before.

In: the compiler's argv; KILN_TEST_REAL_CC, KILN_TEST_CC_CACHE (a folder).
Out: the compiler's output file and exit status. The conftest fixture
`cached_cc` writes this file as an executable next to its cache (with this
Python in its first line) and returns the environment to run it with."""

import hashlib
import os
import shutil
import subprocess
import sys


def _key(real_cc: str, args: list[str], output_index: int) -> str | None:
    """The cache key of a command that compiles C sources, else None: the
    compiler, the command without its output path, and the preprocessed
    sources (so an edited header or included .c file is a new key)."""
    sources = [a for a in args if a.endswith(".c") and not a.startswith("-")]
    if not sources:
        return None
    flags = [a for i, a in enumerate(args) if i not in (output_index - 1, output_index)]
    h = hashlib.sha256("\0".join([os.path.realpath(real_cc), *flags]).encode())
    compile_flags = [a for a in flags if a.startswith(("-I", "-D", "-U", "-std", "-O", "-f", "-m", "-pthread"))]
    for source in sources:
        pre = subprocess.run([real_cc, *compile_flags, "-E", source], capture_output=True)
        if pre.returncode != 0:
            return None  # the real compiler reports the error
        h.update(pre.stdout)
    return h.hexdigest()


def main(argv: list[str]) -> int:
    real_cc, cache = os.environ["KILN_TEST_REAL_CC"], os.environ["KILN_TEST_CC_CACHE"]
    key = _key(real_cc, argv, argv.index("-o") + 1) if "-o" in argv[:-1] else None
    if key is None:
        return subprocess.run([real_cc, *argv]).returncode
    output = argv[argv.index("-o") + 1]
    cached = os.path.join(cache, key)
    if not os.path.exists(cached):
        status = subprocess.run([real_cc, *argv]).returncode
        if status != 0:
            return status
        partial = f"{cached}.{os.getpid()}.tmp"
        shutil.copy(output, partial)
        os.replace(partial, cached)  # processes building together: the last one wins
        return 0
    shutil.copy(cached, output)  # content and mode
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
