"""Interrupting compiled code: Ctrl-C (SIGINT) and signal handlers (an
alarm) stop a long compiled loop, which unwinds like a failed check: the
caller's arrays are untouched, nothing leaks, and nothing is printed. Each
test runs in a subprocess (a signal to the test process would hit pytest),
through the C hot path and the Python one; the loops are endless, so an
interrupt that was not delivered shows as the subprocess timing out."""

import os
import subprocess
import sys
import textwrap

import pytest

PRELUDE = textwrap.dedent("""
    import gc, os, signal, threading, time
    import numpy as np
    import kiln

    def rss_bytes():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def sigint_after(seconds):
        timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        return timer

    @kiln.qjit
    def endless(x, n):
        # Runs n iterations (days, for the n below); allocates a buffer per
        # iteration and writes its argument.
        acc = np.zeros_like(x)
        i = 0
        while i < n:
            acc = acc + x * 0.5
            x[i % x.shape[0]] += 1.0
            i += 1
        return acc
""")


def _run(body: str, call_path: str, tmp_path) -> subprocess.CompletedProcess:
    """Run PRELUDE + body as a script (autograph reads the loops' source)."""
    script = tmp_path / "script.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    env = dict(os.environ, KILN_FASTCALL="1" if call_path == "c" else "0")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, f"rc {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return proc


def _assert_nothing_printed(stderr: str) -> None:
    """Nothing but kiln's note on a slow compile (a loaded machine)."""
    lines = [line for line in stderr.splitlines() if not line.startswith("compiled ")]
    assert lines == [], stderr


@pytest.fixture(params=["c", "python"])
def call_path(request):
    return request.param


def test_sigint_stops_a_long_loop_and_leaves_the_arguments_untouched(call_path, tmp_path):
    """SIGINT 0.5 s into a loop that would run for days raises KeyboardInterrupt;
    the argument the loop writes is untouched; 30 more interrupts keep resident
    memory flat; nothing is printed to stderr."""
    proc = _run("""
        x = np.arange(100_000.0)
        want, got = x.copy(), x.copy()
        np.testing.assert_allclose(endless(got, 3), endless.fn(want, 3))  # compiles; NumPy's answer
        np.testing.assert_array_equal(got, want)
        original = x.copy()
        start = time.perf_counter()
        try:
            sigint_after(0.5)
            endless(x, 10**15)
            raise SystemExit("the loop was not interrupted")
        except KeyboardInterrupt:
            latency = time.perf_counter() - start - 0.5
        np.testing.assert_array_equal(x, original)
        assert latency < 1.0, f"KeyboardInterrupt came {latency:.2f} s after SIGINT"
        gc.collect()
        before = rss_bytes()
        for _ in range(30):
            try:  # the timer may fire before start() returns on a loaded machine
                sigint_after(0.05)
                endless(x, 10**15)
            except KeyboardInterrupt:
                pass
        gc.collect()
        growth = rss_bytes() - before
        np.testing.assert_array_equal(x, original)
        assert growth < 20 * 2**20, f"resident memory grew by {growth / 2**20:.1f} MB over 30 interrupts"
        want, got = x.copy(), x.copy()
        np.testing.assert_allclose(endless(got, 2), endless.fn(want, 2))  # still works
        np.testing.assert_array_equal(got, want)
        print(f"latency {latency * 1e3:.0f} ms")
    """, call_path, tmp_path)
    _assert_nothing_printed(proc.stderr)
    print(f"\n{call_path} path: KeyboardInterrupt {proc.stdout.split()[-2]} ms after SIGINT")


def test_sigint_stops_a_counted_loop_that_polls_per_block(call_path, tmp_path):
    """A counted loop of plain instructions polls once per block of
    iterations (kiln-poll-interrupts strip-mines it so LLVM still vectorizes
    it): SIGINT 0.5 s in still raises KeyboardInterrupt within 1 s, and the
    argument it writes is untouched."""
    proc = _run("""
        @kiln.qjit
        def spin(x, n):
            total = 0.0
            for i in range(n):
                total += x[i % x.shape[0]] * 0.5
                x[i % x.shape[0]] += 1.0
            return total

        x = np.arange(1000.0)
        want, got = x.copy(), x.copy()
        assert spin(got, 5000) == spin.fn(want, 5000)
        np.testing.assert_array_equal(got, want)
        original = x.copy()
        start = time.perf_counter()
        try:
            sigint_after(0.5)
            spin(x, 10**15)
            raise SystemExit("the loop was not interrupted")
        except KeyboardInterrupt:
            latency = time.perf_counter() - start - 0.5
        np.testing.assert_array_equal(x, original)
        assert latency < 1.0, f"KeyboardInterrupt came {latency:.2f} s after SIGINT"
        print(f"latency {latency * 1e3:.0f} ms")
    """, call_path, tmp_path)
    _assert_nothing_printed(proc.stderr)
    print(f"\n{call_path} path: KeyboardInterrupt {proc.stdout.split()[-2]} ms after SIGINT (blocked loop)")


def test_a_signal_handlers_exception_stops_the_loop(call_path, tmp_path):
    """signal.alarm's handler raises: its exception comes out of the call."""
    _run("""
        def on_alarm(signum, frame):
            raise TimeoutError("too slow")

        signal.signal(signal.SIGALRM, on_alarm)
        x = np.ones(10)
        endless(x.copy(), 1)  # compiles before the alarm is set
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        try:
            endless(x, 10**15)
            raise SystemExit("the loop was not interrupted")
        except TimeoutError as e:
            assert str(e) == "too slow"
        np.testing.assert_array_equal(x, np.ones(10))
    """, call_path, tmp_path)


def test_a_handler_that_returns_lets_the_loop_finish(call_path, tmp_path):
    """A handler that does not raise runs during the call, which goes on to
    its normal result."""
    _run("""
        seen = []
        signal.signal(signal.SIGALRM, lambda signum, frame: seen.append(signum))

        @kiln.qjit
        def count(n):
            i = 0
            total = 0
            while i < n:
                total += i % 7
                i += 1
            return total

        count(10)
        n = 400_000_000
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        start = time.perf_counter()
        got = count(n)
        seconds = time.perf_counter() - start
        assert got == sum(range(7)) * (n // 7) + sum(range(n % 7)), got
        assert seen == [signal.SIGALRM] or seconds < 0.05, (seen, seconds)
    """, call_path, tmp_path)


def test_interrupting_python_loops_of_compiled_calls_prints_nothing(call_path, tmp_path):
    """Ctrl-C lands anywhere in a Python loop of short compiled calls
    (inside a call, while its results are wrapped, or while they are freed):
    KeyboardInterrupt every time, never 'Exception ignored' on stderr, and
    no result buffer left alive. On both paths no Python code runs when a
    result dies (the Python path's owners hold a capsule freed in C); the
    Python path may leak the buffers of a call interrupted between its
    return and the wrapping of its results (docs/runtime.md, "Interrupts")."""
    proc = _run("""
        from kiln.runtime import memref

        @kiln.qjit
        def step(x):
            return x * 2.0, x + 1.0

        x = np.ones(1000)
        step(x)
        before = memref.live_buffers()
        for round in range(40):
            try:
                sigint_after(0.01 + 0.003 * round)
                while True:
                    y, z = step(x)
            except KeyboardInterrupt:
                pass
        y = z = None
        gc.collect()
        assert memref.live_buffers() <= before + 2, (memref.live_buffers(), before)
    """, call_path, tmp_path)
    _assert_nothing_printed(proc.stderr)


# linalg's op classes (which register the dialect's namespace) come through
# kiln's own linalg module (kiln.compiler.dialect_modules).
@pytest.mark.parametrize("module", ["torch_mlir.ir", "kiln.compiler.dialect_modules.linalg",
                                    "torch_mlir.dialects._linalg_ops_gen", "torch_mlir.execution_engine"])
def test_ctrl_c_while_the_mlir_bindings_import_leaves_kiln_working(module, tmp_path, seed_toolchain):
    """SIGINT arriving while the first compile imports the MLIR bindings
    (made certain by an import hook that sends it when `module` starts
    importing): KeyboardInterrupt once the import is done; the next call
    compiles and runs. Before, the handler raised inside the bindings'
    native imports: the process crashed (SIGALRM's handler) or every later
    compile failed ("Dialect namespace 'linalg' is already registered")."""
    proc = _run(f"""
        import importlib.abc, sys

        class SendSigintOnImport(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == {module!r}:
                    sys.meta_path.remove(self)
                    os.kill(os.getpid(), signal.SIGINT)
                return None

        sys.meta_path.insert(0, SendSigintOnImport())

        @kiln.qjit
        def g(x):
            return np.sin(x) + 1.0

        os.environ["KILN_CACHE_DIR"] = {str(seed_toolchain(tmp_path / "cache"))!r}
        try:
            g(np.ones(3))
            raise SystemExit("no KeyboardInterrupt")
        except KeyboardInterrupt:
            pass
        np.testing.assert_allclose(g(np.ones(3)), np.sin(np.ones(3)) + 1.0)
    """, "c", tmp_path)
    _assert_nothing_printed(proc.stderr)
