"""pytest configuration: a private compile cache per test session, the
`execution` parameter that runs the value tests of a few modules twice:
compiled, and through the reference interpreter (`kiln.interpret`), and
`seed_toolchain`, which gives a test's own cache directory this session's
support code instead of a rebuild.

In those modules every call of a `kiln.qjit` function goes through
`kiln.interpret` in the `interpreted` variant; `f.jaxpr` is then the last
traced jaxpr and `f.num_compiles` counts traces (one per signature, as
compiles are). A test that checks facts only compiled code has (stages,
IR text) is marked `@pytest.mark.compiled_only` and runs once.
"""

import os
import shlex
import shutil
import sys
import tempfile
import threading
import time

import pytest

os.environ.setdefault("KILN_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-test-cache-"))
SESSION_CACHE_DIR = os.environ["KILN_CACHE_DIR"]
# A kiln pass that leaves invalid IR fails the test naming that pass (the
# default verifies once per group of kiln passes, docs/debugging.md).
os.environ.setdefault("KILN_VERIFY_EACH_PASS", "1")
# The `cached_cc` compiler's cache: one for the session's workers (they inherit it).
os.environ.setdefault("KILN_TEST_CC_CACHE", tempfile.mkdtemp(prefix="kiln-test-cc-"))

import kiln  # noqa: E402

# The modules whose tests run both ways (the interpreter needs no compile:
# the interpreted half adds about 30 s to the suite).
RUN_BOTH_WAYS = {"test_numpy_surface", "test_numpy_npbench_functions", "test_run_time_aliases", "test_mutation",
                 "test_control_flow", "test_autograph", "test_boolean_masks", "test_runtime_checks", "test_regressions",
                 "test_bad_inputs", "test_runtime_broadcast", "test_debug_print", "test_special_functions",
                 "test_loop_return", "test_swapped_buffers"}


def pytest_configure(config):
    if os.environ.get("KILN_TEST_COSTS"):
        from costs_plugin import CostsRecorder  # where the time goes (docs/contributing.md)

        config.pluginmanager.register(CostsRecorder(os.environ["KILN_TEST_COSTS"]), "kiln-test-costs")
    config.addinivalue_line("markers", "compiled_only: the test checks facts of compiled code; no interpreted run")
    config.addinivalue_line("markers", "peers: runs Numba and JAX (cmake-free-scripts/bench_numpy_list.py's harness)")
    if getattr(config.option, "numprocesses", None) and not os.environ.get("PYTEST_XDIST_WORKER"):
        _build_toolchain_for_workers()


# The pytest-xdist controller builds the session's toolchain files (support
# code, fastcall extension) in a thread while the workers start
# and collect; each worker waits for it before its first test. Without this
# every worker's first compile built them at the same time.
_TOOLCHAIN_READY = "KILN_TEST_TOOLCHAIN_READY"


def _build_toolchain_for_workers():
    from kiln.runtime import executable, toolchain

    marker = os.path.join(tempfile.mkdtemp(prefix="kiln-test-toolchain-"), "ready")
    os.environ[_TOOLCHAIN_READY] = marker  # the workers inherit it

    def build():
        try:
            toolchain.support_library()
            executable.fastcall_module()
        finally:  # a failed build is the workers' to report: they build again
            open(marker, "w").close()

    threading.Thread(target=build, name="kiln-test-toolchain", daemon=True).start()


@pytest.fixture(scope="session", autouse=True)
def _toolchain_built():
    marker = os.environ.get(_TOOLCHAIN_READY)
    deadline = time.monotonic() + 900
    while marker and not os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.2)


def pytest_generate_tests(metafunc):
    if metafunc.module.__name__.rpartition(".")[2] not in RUN_BOTH_WAYS:
        return
    compiled_only = metafunc.definition.get_closest_marker("compiled_only") is not None
    metafunc.parametrize("execution", ["compiled"] if compiled_only else ["compiled", "interpreted"],
                         indirect=True)


@pytest.fixture(autouse=True)
def execution(request, monkeypatch):
    """'compiled' (the default) or 'interpreted': then calls of qjit
    functions run the reference interpreter on the traced jaxpr."""
    mode = getattr(request, "param", "compiled")
    if mode == "interpreted":
        monkeypatch.setattr(kiln.QJIT, "__call__", _interpreted_call)
        monkeypatch.setattr(kiln.QJIT, "jaxpr", property(lambda f: kiln.interpret(f).jaxpr))
    return mode


def _interpreted_call(f, *args, **kwargs):
    runner = kiln.interpret(f)
    try:
        return runner(*args, **kwargs)
    finally:
        f.num_compiles = len(runner.traces)


@pytest.fixture(scope="session")
def seed_toolchain():
    """`seed_toolchain(directory)`: copy this session's verified toolchain
    files (support object and library, LAPACK object, fastcall extension,
    each with its recorded sha256; built in the session's cache first if
    absent) into `directory`, a cache directory of the test's own, and
    return it. Building the support code costs ~1-2 CPU s per directory;
    tests whose subject is not that build (a library's cache entry, logging,
    a child process's settings) seed their fresh cache instead. Tests of the
    build itself (damaged or missing toolchain files, an empty cache,
    processes building together, a compile after `kiln cache clear`) do not."""
    from kiln.runtime import cache, executable, toolchain

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KILN_CACHE_DIR", SESSION_CACHE_DIR)
        toolchain.support_library()
        executable.fastcall_module()
        root = cache.cache_dir()
    names = sorted(name for name in os.listdir(root) if name.startswith(cache._TOOLCHAIN_PREFIXES))

    def seed(directory):
        os.makedirs(directory, exist_ok=True)
        for name in names:
            source, target = os.path.join(root, name), os.path.join(directory, name)
            if os.path.isdir(source):
                shutil.copytree(source, target, dirs_exist_ok=True)
            else:
                shutil.copyfile(source, target)
        return directory

    return seed


@pytest.fixture(scope="session")
def cached_cc():
    """The environment (CC and its settings) that makes kiln build C code
    with test/cached_cc.py: the real compiler, except that a C source
    compiled before in this session with the same command and preprocessed
    text is copied from its cache. For the tests whose subject is a rebuild
    of the toolchain files (damaged, missing or cleared; a private fallback
    cache), which then cost kiln's work and not the `cc` runs each; the
    session's first build of each source is the real compiler's."""
    from kiln.runtime import toolchain

    folder = os.environ["KILN_TEST_CC_CACHE"]
    launcher = os.path.join(folder, "cc")
    if not os.path.exists(launcher):
        script = os.path.join(folder, "cached_cc.py")
        # A link (no C source) goes straight to the real compiler: no Python start.
        files = {script: open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cached_cc.py")).read(),
                 launcher: "#!/bin/sh\n"
                           'for a in "$@"; do case "$a" in -*) ;; *.c) '
                           f'exec {shlex.quote(sys.executable)} -I {shlex.quote(script)} "$@";; esac; done\n'
                           'exec "$KILN_TEST_REAL_CC" "$@"\n'}
        for path, text in files.items():  # workers write the same files
            partial = f"{path}.{os.getpid()}.tmp"
            with open(partial, "w") as f:
                f.write(text)
            os.chmod(partial, 0o755)
            os.replace(partial, path)
    return {"CC": launcher, "KILN_TEST_REAL_CC": toolchain.c_compiler(), "KILN_TEST_CC_CACHE": folder}
