"""Work a first call does not wait for: linking the shared library of a
function whose first call ran from the JIT, storing it in the disk cache,
and handing it to the function's executable (docs/architecture.md, "The
first call runs in the JIT").

One worker thread runs the tasks in order. Whoever needs their result
waits for them: a cache lookup of the same entry (`wait(key)`), anything
that reads the cache's folder as a whole (`wait()`), an executable's
`library`. The interpreter's exit waits for the queue (atexit), so a
process that ends right after a first call still leaves its entry for the
next one. A fork's child runs no task of its parent: what its parent had
queued is done by the parent, and the child's executables keep their code
in the JIT.

A task that fails (the linker refused the objects) warns once, with the
reason: the function keeps running from the JIT in this process, and the
next process compiles it again.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
import warnings
from typing import Callable, Sequence

_LOCK = threading.Lock()
_QUEUE: "queue.SimpleQueue | None" = None
_WORKER: threading.Thread | None = None
# key -> (the event set when the task of that key is done or failed, its `failed`)
_PENDING: dict[str, tuple[threading.Event, Callable[[str], None]]] = {}


def submit(keys: str | Sequence[str], task: Callable[[], None], failed: Callable[[str], None]) -> None:
    """Run `task` on the worker thread; `wait` of any of its `keys` waits
    for it. When it raises, `failed(reason)` is called there and a
    RuntimeWarning names the reason."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    global _QUEUE, _WORKER
    with _LOCK:
        if _QUEUE is None:
            _QUEUE = queue.SimpleQueue()
            _WORKER = threading.Thread(target=_work, args=(_QUEUE,), name="kiln-deferred-link", daemon=True)
            _WORKER.start()
        done = threading.Event()
        for key in keys:
            _PENDING[key] = (done, failed)
        _QUEUE.put((keys, task, failed, done))


def _work(tasks: "queue.SimpleQueue") -> None:
    while True:
        item = tasks.get()
        if item is None:
            return
        keys, task, failed, done = item
        try:
            task()
        except Exception as e:  # noqa: BLE001 (any failure: the code keeps running from the JIT)
            reason = f"{type(e).__name__}: {e}"
            try:
                failed(reason)
            finally:
                warnings.warn(f"kiln could not link the library of a compiled function ({reason}); it keeps "
                              "running in this process, but is not in the disk cache for the next one",
                              RuntimeWarning, stacklevel=1)
        finally:
            # (Nothing of the task outlives it: it holds a first call's JIT image, which the
            # executable has let go.)
            del item, task, failed
            with _LOCK:
                for key in keys:
                    if _PENDING.get(key, (None,))[0] is done:
                        del _PENDING[key]
            done.set()


def wait(key: str | None = None) -> None:
    """Wait for the task of `key`, or with no key for every task queued so
    far. Returns at once on the worker thread itself (its own task waits
    for nothing)."""
    if threading.current_thread() is _WORKER:
        return
    with _LOCK:
        events = [_PENDING[key][0]] if key is not None and key in _PENDING else \
            list({id(done): done for done, _ in _PENDING.values()}.values()) if key is None else []
    for event in events:
        event.wait()


def _drain_at_exit() -> None:
    if _QUEUE is not None and _WORKER is not None:
        wait()
        _QUEUE.put(None)
        _WORKER.join()


def _after_fork_in_child() -> None:
    global _QUEUE, _WORKER, _LOCK
    _LOCK = threading.Lock()
    _QUEUE = _WORKER = None
    for done, failed in {id(done): (done, failed) for done, failed in _PENDING.values()}.values():
        # The parent links and stores the library; the child's function keeps its code in the JIT.
        failed("it was being linked by the parent process when this one forked")
        done.set()
    _PENDING.clear()


atexit.register(_drain_at_exit)
os.register_at_fork(after_in_child=_after_fork_in_child)
