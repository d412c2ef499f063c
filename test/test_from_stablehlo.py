"""`kiln.from_stablehlo` against jax: a static MLP and a dynamic-batch
function exported with symbolic shapes, whose shape assertions become
kiln run-time checks."""

import numpy as np
import pytest

import kiln

jax = pytest.importorskip("jax")
jnp = jax.numpy
export = jax.export


@pytest.fixture(autouse=True, scope="module")
def _x64():
    """float64 in jax for this module only."""
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


def mlp(x, w1, b1, w2):
    return jnp.tanh(x @ w1 + b1) @ w2


def _mlp_arguments(batch):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in [(batch, 4), (4, 16), (16,), (16, 2)]]


def test_a_static_mlp_matches_jax_from_the_exported_and_from_its_text():
    args = _mlp_arguments(8)
    exported = export.export(jax.jit(mlp))(*[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args])
    expected = np.asarray(jax.jit(mlp)(*args))
    for source in (exported, exported.mlir_module()):
        f = kiln.from_stablehlo(source)
        result = f(*args)
        assert result.dtype == np.float32 and result.shape == (8, 2)
        np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


def test_a_static_mlp_rejects_another_batch_size_and_dtype():
    args = _mlp_arguments(8)
    f = kiln.from_stablehlo(export.export(jax.jit(mlp))(*[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]))
    with pytest.raises(kiln.KilnValueError, match=r"argument 0 must be float32\[8, 4\], got shape \(3, 4\)"):
        f(*_mlp_arguments(3))
    with pytest.raises(kiln.KilnTypeError, match=r"got dtype float64; convert it with .astype\('float32'\)"):
        f(args[0].astype(np.float64), *args[1:])


def dynamic_batch(x, w, bias):
    return jnp.sum(jnp.sin(x) * w, axis=1) + bias + x.shape[0]


@pytest.fixture(scope="module")
def dynamic_export(_x64):
    b, = export.symbolic_shape("b")
    return export.export(jax.jit(dynamic_batch))(jax.ShapeDtypeStruct((b, 3), jnp.float64),
                                                 jax.ShapeDtypeStruct((3,), jnp.float64),
                                                 jax.ShapeDtypeStruct((b,), jnp.float64))


def test_a_dynamic_batch_export_matches_jax_for_every_batch(dynamic_export):
    f = kiln.from_stablehlo(dynamic_export)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(3)
    for batch in (1, 5, 64):
        x, bias = rng.standard_normal((batch, 3)), rng.standard_normal(batch)
        np.testing.assert_allclose(f(x, w, bias), np.asarray(dynamic_export.call(x, w, bias)), rtol=1e-12)
    np.testing.assert_allclose(f(jnp.asarray(x), jnp.asarray(w), jnp.asarray(bias)),
                               np.asarray(dynamic_batch(x, w, bias)), rtol=1e-12)


def test_shape_assertions_of_a_polymorphic_export_are_run_time_checks(dynamic_export):
    f = kiln.from_stablehlo(dynamic_export)
    w = np.ones(3)
    with pytest.raises(kiln.KilnValueError, match=r"Expected value >= 1 for dimension variable 'b'.*'b' = 0"):
        f(np.ones((0, 3)), w, np.ones(0))
    with pytest.raises(kiln.KilnValueError, match=r"args\[2\].shape\[0\] \(= 5\) and the specification 'b' \(= 4\)"):
        f(np.ones((4, 3)), w, np.ones(5))


def test_what_is_not_stablehlo_is_refused_with_the_fix():
    with pytest.raises(kiln.KilnTypeError, match="pass StableHLO text or a jax.export.Exported"):
        kiln.from_stablehlo(mlp)
    with pytest.raises(kiln.KilnValueError, match="does not parse"):
        kiln.from_stablehlo("func.func @main(")
