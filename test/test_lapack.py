"""numpy.linalg through LAPACK (issue 15): every case of
test/numpy_list/cases_linalg.py against NumPy, and the behaviour around
them: LinAlgError raised from the compiled call with the user's line,
NumPy's shape errors, results that do not depend on the input layout,
arguments left untouched, the reference interpreter agreeing, and
reconstructions of larger ill-conditioned problems.
"""

from __future__ import annotations

import copy
import importlib.util
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln.errors import KilnError, KilnInternalError

_PACKAGE = Path(__file__).parent / "numpy_list"


def _load_cases():
    """cases_linalg.py, with test/numpy_list registered as `test.numpy_list`
    (the name case modules import it by; Python's own `test` package would
    win a search of sys.path)."""
    if "test.numpy_list" not in sys.modules:
        spec = importlib.util.spec_from_file_location("test.numpy_list", _PACKAGE / "__init__.py",
                                                      submodule_search_locations=[str(_PACKAGE)])
        module = importlib.util.module_from_spec(spec)
        sys.modules["test.numpy_list"] = module
        spec.loader.exec_module(module)
    return importlib.import_module("test.numpy_list.cases_linalg").CASES


CASES = _load_cases()


def _ids(cases):
    seen: dict[str, int] = {}
    out = []
    for c in cases:
        seen[c.name] = seen.get(c.name, 0) + 1
        out.append(c.name if seen[c.name] == 1 else f"{c.name}#{seen[c.name]}")
    return out


def assert_same(result, expected, rtol, atol, what):
    if isinstance(expected, tuple):
        assert isinstance(result, tuple) and len(result) == len(expected), f"{what}: {result!r}"
        assert type(result) is type(expected), f"{what}: {type(result).__name__} != {type(expected).__name__}"
        for i, (r, e) in enumerate(zip(result, expected)):
            assert_same(r, e, rtol, atol, f"{what}[{i}]")
        return
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.shape == expected.shape, f"{what}: shape {result.shape} != {expected.shape}"
    assert result.dtype == expected.dtype, f"{what}: dtype {result.dtype} != {expected.dtype}"
    if expected.dtype.kind in "fc":
        tol = max(rtol, 1e-5 if expected.dtype in (np.float32, np.complex64) else 0.0)
        np.testing.assert_allclose(result, expected, rtol=tol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(result, expected, err_msg=what)


def _run(case, compiled, n, rng):
    args = case.make_args(n, rng)
    numpy_args, kiln_args = copy.deepcopy(args), copy.deepcopy(args)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected, error = case.fn(*numpy_args), None
        except Exception as exc:  # noqa: BLE001 - NumPy's error is the expected behaviour
            expected, error = None, exc
        if error is not None:
            with pytest.raises(type(error)):
                compiled(*kiln_args)
            return
        result = compiled(*kiln_args)
    assert_same(result, expected, case.rtol, case.atol, f"{case.name} at size {n}")
    assert_same(tuple(kiln_args), tuple(numpy_args), 0.0, 0.0, f"{case.name} at size {n}: arguments")


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_case(case):
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    compiled = kiln.qjit(case.fn)
    if case.refused:
        with pytest.raises(KilnError) as caught:
            compiled(*case.make_args(case.sizes[-1], rng))
        assert not isinstance(caught.value, KilnInternalError)
        return
    for n in case.sizes:
        _run(case, compiled, n, rng)
    compiles = compiled.num_compiles
    _run(case, compiled, case.second_size, rng)
    assert compiled.num_compiles == compiles, f"{case.name}: size {case.second_size} compiled again"


def test_kernel_tables_agree():
    from kiln.dialects.kiln import LAPACK_OPS
    from kiln.primitives.lapack import KERNELS

    assert KERNELS == LAPACK_OPS


# --- errors: NumPy's class and message, raised from the compiled call at the user's line


def test_singular_matrix_raises_linalgerror_at_the_users_line():
    @kiln.qjit
    def f(a, b):
        return np.linalg.solve(a, b)

    with pytest.raises(np.linalg.LinAlgError, match=r"Singular matrix \(at .*test_lapack.py:\d+\)"):
        f(np.ones((3, 3)), np.ones(3))
    np.testing.assert_allclose(f(np.eye(3) * 2, np.ones(3)), np.full(3, 0.5))


def test_one_singular_matrix_of_a_stack_raises():
    a = np.stack([np.eye(3), np.zeros((3, 3)), np.eye(3)])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        kiln.qjit(lambda a: np.linalg.inv(a))(a)


def test_not_positive_definite_raises():
    with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
        kiln.qjit(lambda a: np.linalg.cholesky(a))(np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_non_square_and_one_dimensional_inputs_raise_linalgerror():
    with pytest.raises(np.linalg.LinAlgError, match="Last 2 dimensions of the array must be square"):
        kiln.qjit(lambda a: np.linalg.inv(a))(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="1-dimensional array given"):
        kiln.qjit(lambda a: np.linalg.det(a))(np.ones(3))


def test_solve_rows_must_match():
    with pytest.raises(ValueError, match="b has 4 rows but a has 3"):
        kiln.qjit(lambda a, b: np.linalg.solve(a, b))(np.eye(3), np.ones(4))


def test_real_eig_with_complex_eigenvalues_names_the_fix():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"complex eigenvalues.*astype\(np.complex128\)"):
        kiln.qjit(lambda a: np.linalg.eigvals(a))(rotation)
    w = kiln.qjit(lambda a: np.linalg.eigvals(a))(rotation.astype(complex))
    np.testing.assert_allclose(sorted(w, key=np.imag), sorted(np.linalg.eigvals(rotation), key=np.imag), atol=1e-15)


def test_eig_of_nan_raises_as_numpy():
    with pytest.raises(np.linalg.LinAlgError, match="Array must not contain infs or NaNs"):
        kiln.qjit(lambda a: np.linalg.eig(a))(np.full((2, 2), np.nan))


def test_unsupported_forms_are_refused_clearly():
    with pytest.raises(ValueError, match="Unrecognized mode 'bad'"):
        kiln.qjit(lambda a: np.linalg.qr(a, mode="bad"))(np.eye(2))
    with pytest.raises(ValueError, match="UPLO argument must be 'L' or 'U'"):
        kiln.qjit(lambda a: np.linalg.eigh(a, UPLO="X"))(np.eye(2))
    with pytest.raises(TypeError, match="float16 is unsupported in linalg"):
        kiln.qjit(lambda a: np.linalg.inv(a))(np.eye(2, dtype=np.float16))


# --- values beyond the list


def test_views_and_transposes_read_in_place():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((9, 12))

    @kiln.qjit
    def f(a):
        view = a[1:8:2, ::3]  # strided rows and columns
        return np.linalg.inv(view.T @ view + np.eye(4)), np.linalg.det(a[:5, :5].T)

    inv, det = f(a)
    view = a[1:8:2, ::3]
    np.testing.assert_allclose(inv, np.linalg.inv(view.T @ view + np.eye(4)), rtol=1e-12)
    np.testing.assert_allclose(det, np.linalg.det(a[:5, :5].T), rtol=1e-12)


def test_larger_ill_conditioned_reconstructions():
    n = 120
    i = np.arange(n)
    hilbert = 1.0 / (i[:, None] + i[None, :] + 1)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n + 7))

    @kiln.qjit
    def f(h, a):
        q, r = np.linalg.qr(a)
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        w, v = np.linalg.eigh(h)
        return q, r, u, s, vt, w, v, np.linalg.cond(h)

    q, r, u, s, vt, w, v, cond = f(hilbert, a)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose((u * s) @ vt, a, atol=1e-12)
    np.testing.assert_allclose((v * w) @ v.T, hilbert, atol=1e-12)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(hilbert), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(cond, np.linalg.cond(hilbert), rtol=1e-6)


def test_interpreter_agrees_with_compiled_code():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 6)) + 6 * np.eye(6)

    def f(a):
        sign, logdet = np.linalg.slogdet(a)
        return np.linalg.inv(a), sign * logdet, np.linalg.svd(a, compute_uv=False), np.linalg.lstsq(a, a[:, 0])[0]

    for got, want in zip(kiln.interpret(f)(a), kiln.qjit(f)(a)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_linalg_inside_a_loop_and_a_second_size_reuse_the_library():
    @kiln.qjit
    def f(a, steps):
        total = 0.0
        for _ in range(steps):
            a = np.linalg.inv(a)
            total += np.linalg.det(a)
        return total

    rng = np.random.default_rng(4)
    for n in (3, 8):
        a = rng.standard_normal((n, n)) + n * np.eye(n)
        expected, b = 0.0, a
        for _ in range(3):
            b = np.linalg.inv(b)
            expected += np.linalg.det(b)
        np.testing.assert_allclose(f(a, 3), expected, rtol=1e-12)
    assert f.num_compiles == 1


def test_calls_sharing_a_converted_operand_each_read_it_intact():
    """Regression: the float32 -> float64 copy of `a`, read by three calls,
    was overwritten in place by the conversion of `v` before the later calls
    ran (one-shot-bufferize does not see a buffer's uses after `to_buffer`)."""
    def f(a, b, v):
        return np.linalg.solve(a, b), np.linalg.solve(a, v), np.linalg.inv(a)

    compiled = kiln.qjit(f)
    rng = np.random.default_rng(5)
    for n in (1, 4):
        a = (rng.standard_normal((n, n)) + n * np.eye(n)).astype(np.float32)
        b, v = rng.standard_normal((n, 3)).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        for got, want in zip(compiled(a, b, v), f(a, b, v)):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_an_export_bundles_the_lapack_it_calls(tmp_path):
    """kiln.export of a function calling LAPACK bundles NumPy's OpenBLAS: the
    moved folder loads and solves with the venv's numpy.libs out of reach."""
    import shutil

    def solve(a: kiln.ShapeDtype(("n", "n"), "float64"), b: kiln.ShapeDtype(("n",), "float64")):
        return np.linalg.solve(a, b)

    paths = kiln.export(solve, str(tmp_path / "built"))
    assert paths["bundled"]
    shutil.move(str(tmp_path / "built"), str(tmp_path / "moved"))
    f = kiln.load(str(tmp_path / "moved"))
    a, b = np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])
    np.testing.assert_allclose(f(a, b), np.linalg.solve(a, b))
