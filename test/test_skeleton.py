"""End to end: @kiln.qjit on elementwise code, dynamic sizes, stages, rule tables."""

import numpy as np
import pytest

import kiln
from kiln import numpy as knp


def reference(x, y):
    return np.exp(x) * 2.0 + y - np.sqrt(x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rank", [1, 2])
def test_elementwise_matches_numpy_at_every_size(dtype, rank):
    @kiln.qjit
    def f(x, y):
        return np.exp(x) * 2.0 + y - np.sqrt(x)

    rng = np.random.default_rng(0)
    sizes = [0, 7, 1000, 1_000_000] if rank == 1 else [(0, 3), (7, 5), (40, 25), (1000, 1000)]
    for size in sizes:
        x = rng.random(size).astype(dtype)
        y = rng.random(size).astype(dtype)
        out = f(x, y)
        assert out.dtype == dtype
        np.testing.assert_allclose(out, reference(x, y), rtol=1e-6 if dtype == np.float32 else 1e-12)
    # One compile served every size (no dim was 1).
    assert f.num_compiles == 1


def test_unit_dims_are_specialized_once():
    @kiln.qjit
    def f(x):
        return knp.tanh(x) + knp.log(x + 1.0)

    for n in (5, 1, 9, 1, 3):
        x = np.linspace(0.1, 2.0, n)
        np.testing.assert_allclose(f(x), np.tanh(x) + np.log(x + 1.0))
    # Sizes 5, 9, 3 share a compile; size 1 is the documented specialization.
    assert f.num_compiles == 2


def test_every_stage_is_printable():
    @kiln.qjit
    def f(x):
        return knp.exp(x) / 2

    f(np.ones(4))
    for stage in ("jaxpr", "mlir", "functionalized", "stablehlo", "linalg", "bufferized", "llvm"):
        assert kiln.get_compilation_stage(f, stage).strip()
    assert "stablehlo.exponential" in f.mlir
    assert "tensor<?xf64>" in f.mlir
    assert "llvm.func" in f.mlir_opt
    assert "f64[a]" in str(f.jaxpr)
    with pytest.raises(ValueError, match="no stage named 'nope'"):
        kiln.get_compilation_stage(f, "nope")


def test_scalars_and_weak_types():
    @kiln.qjit
    def f(x, s):
        return x * s + 1

    x = np.arange(5, dtype=np.float32)
    out = f(x, 3.0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, x * 3.0 + 1)


def test_outside_a_trace_kiln_numpy_is_numpy():
    x = np.arange(4.0)
    np.testing.assert_array_equal(knp.exp(x), np.exp(x))
    np.testing.assert_array_equal(knp.sum(x), np.sum(x))


def test_every_pass_is_documented():
    from pathlib import Path

    from kiln.compiler.passes import load_all

    text = (Path(__file__).resolve().parent.parent / "docs" / "passes.md").read_text()
    missing = [name for name in load_all() if f"`{name}`" not in text]
    assert not missing, f"run cmake-free-scripts/gen_pass_docs.py; undocumented: {missing}"
