"""Compiled functions on Dask and Ray workers, for real: a local Dask
cluster of 2 worker processes (loopback only) and a local Ray, running kiln
functions over chunked arrays; each worker compiles a signature at most
once, or never when the libraries travel with the function (which also
serves a worker without a C compiler)."""

import os

import numpy as np
import pytest

import kiln

# Chunks of different sizes share one signature (one dynamic dim).
CHUNKS = (5, 7, 11, 13)


def _functions():
    """Functions defined here, not at module level: they travel by value,
    as a notebook's or a script's functions do."""

    @kiln.qjit
    def softplus(x):
        return np.log(1.0 + np.exp(x))

    @kiln.qjit(pickle_libraries=True)
    def shifted_square(x):
        return (x - 1.0) ** 2

    @kiln.qjit
    def never_compiled_here(x):
        return np.tanh(x) * 3.0

    @kiln.qjit
    def run_from_the_jit(x):
        return np.sin(x) * 2.0

    return softplus, shifted_square, never_compiled_here, run_from_the_jit


def _worker_helpers():
    """Functions that run on the workers (local too: a worker cannot import
    this test module)."""

    def compiles(token):
        """How often this worker compiled the function with this token."""
        from kiln import pickling

        received = pickling._RECEIVED.get(token)
        return None if received is None else received.num_compiles

    def set_compiler(cc, first_call_jit=None):
        for name, value in (("CC", cc), ("KILN_FIRST_CALL_JIT", first_call_jit)):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    return compiles, set_compiler


@pytest.fixture(scope="module")
def dask_client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=40)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_dask_map_blocks_and_submit(dask_client):
    import dask.array as da

    softplus, shifted_square, never_compiled_here, run_from_the_jit = _functions()
    worker_compiles, set_worker_compiler = _worker_helpers()
    data = np.linspace(-3.0, 3.0, sum(CHUNKS))
    x = da.from_array(data, chunks=(CHUNKS,))
    np.testing.assert_allclose(x.map_blocks(softplus, dtype=float).compute(), np.log1p(np.exp(data)))
    np.testing.assert_allclose(dask_client.submit(softplus, data[:4]).result(), np.log1p(np.exp(data[:4])))
    compiles = dask_client.run(worker_compiles, softplus._token)
    assert len(compiles) == 2
    assert all(count is None or count <= 1 for count in compiles.values()), compiles  # one signature
    assert any(count == 1 for count in compiles.values())

    # Libraries that travel: no compile at all, even with no C compiler on the workers.
    shifted_square(data[:3])
    dask_client.run(set_worker_compiler, "/nonexistent/cc")
    try:
        np.testing.assert_allclose(x.map_blocks(shifted_square, dtype=float).compute(), (data - 1.0) ** 2)
        np.testing.assert_allclose(dask_client.submit(shifted_square, data).result(), (data - 1.0) ** 2)
        compiles = dask_client.run(worker_compiles, shifted_square._token)
        assert set(compiles.values()) <= {0, None} and 0 in compiles.values(), compiles
        # Without its libraries a function compiles there: its first calls run from the JIT, which
        # needs no C compiler (its library, which does, is not linked: a warning says so there).
        np.testing.assert_allclose(dask_client.submit(run_from_the_jit, data).result(), np.sin(data) * 2.0)
        # Waiting for its library instead, it cannot.
        dask_client.run(set_worker_compiler, "/nonexistent/cc", "0")
        with pytest.raises(RuntimeError, match=r"the C compiler '/nonexistent/cc' could not be run"):
            dask_client.submit(never_compiled_here, data).result()
    finally:
        dask_client.run(set_worker_compiler, os.environ.get("CC"), os.environ.get("KILN_FIRST_CALL_JIT"))


def test_ray_remote_tasks():
    ray = pytest.importorskip("ray", reason="Ray runs only where the `ray` extra is installed")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        softplus, shifted_square, _, _ = _functions()
        shifted_square(np.ones(3))

        @ray.remote
        def run(f, chunk):
            return f(chunk), os.getpid(), f.num_compiles

        data = np.linspace(-3.0, 3.0, sum(CHUNKS))
        chunks = np.split(data, np.cumsum(CHUNKS)[:-1])
        for f, reference, most in ((softplus, lambda v: np.log1p(np.exp(v)), 1), (shifted_square,
                                                                                   lambda v: (v - 1.0) ** 2, 0)):
            results = ray.get([run.remote(f, chunk) for chunk in chunks])
            np.testing.assert_allclose(np.concatenate([r[0] for r in results]), reference(data))
            per_process: dict = {}
            for _, pid, count in results:
                per_process[pid] = max(per_process.get(pid, 0), count)
            assert all(count <= most for count in per_process.values()), per_process
    finally:
        ray.shutdown()
