"""numpy.linalg through LAPACK (issue 15): the behaviour around the cases
of test/numpy_list/cases_linalg.py (which test/test_numpy_list.py runs):
LinAlgError raised from the compiled call with the user's line, NumPy's
shape errors, results that do not depend on the input layout,
arguments left untouched, the reference interpreter agreeing, and
reconstructions of larger ill-conditioned problems.
"""

from __future__ import annotations

import numpy as np
import pytest

import kiln

# Every case of test/numpy_list/cases_linalg.py runs in test/test_numpy_list.py
# (sizes 0, 1, odd, a second size without recompiling, arguments intact).


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


# --- qr(mode='raw'), the deprecated modes, and np.roots

def test_qr_raw_is_numpys_householder_form_for_stacks_and_every_dtype():
    f = kiln.qjit(lambda a: np.linalg.qr(a, mode="raw"))
    rng = np.random.default_rng(3)
    for shape in ((5, 3), (3, 5), (0, 4), (4, 0), (1, 1), (2, 3, 4)):
        for dtype in (np.float64, np.float32, np.complex128, np.int64):
            a = (rng.standard_normal(shape) * 4).astype(dtype)
            (h, tau), (h_np, tau_np) = f(a), np.linalg.qr(a, mode="raw")
            for got, want in ((h, h_np), (tau, tau_np)):
                assert got.shape == want.shape and got.dtype == want.dtype, (shape, dtype)
                np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-12)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="Unrecognized mode 'bogus'"):
        kiln.qjit(lambda a: (np.linalg.qr(a, mode="full"), np.linalg.qr(a, mode="bogus")))(np.eye(2))


def test_qr_deprecated_modes_warn_as_numpy():
    a = np.random.default_rng(4).standard_normal((4, 3))
    with pytest.warns(DeprecationWarning):
        q, r = kiln.qjit(lambda a: np.linalg.qr(a, mode="full"))(a)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    with pytest.warns(DeprecationWarning):
        h = kiln.qjit(lambda a: np.linalg.qr(a, mode="economic"))(a)
    with pytest.warns(DeprecationWarning):
        np.testing.assert_allclose(h, np.linalg.qr(a, mode="economic"), atol=1e-12)


def test_roots_strip_zeros_at_run_time_and_match_numpy():
    f = kiln.qjit(lambda p: np.roots(p))
    polys = [np.array([1.0, -3.0, 2.0]), np.array([0.0, 0.0, 1.0, -3.0, 2.0, 0.0, 0.0]), np.zeros(0), np.zeros(3),
             np.array([5.0]), np.array([0.0, 2.0, 0.0]), np.random.default_rng(5).standard_normal(41)]
    for p in polys:
        got, want = f(p), np.roots(p)
        assert got.dtype == np.complex128 and got.shape == want.shape
        np.testing.assert_allclose(got, want.astype(np.complex128), rtol=1e-9, atol=1e-12)
    compiles = f.num_compiles
    f(np.arange(1.0, 14.0))  # another size: no new compile
    assert f.num_compiles == compiles
    assert kiln.qjit(lambda p: np.roots(p))(np.array([1, 2, 3], np.float32)).dtype == np.complex64
    with pytest.raises(np.linalg.LinAlgError, match="Array must not contain infs or NaNs"):
        f(np.array([1.0, np.inf, 2.0]))
    with pytest.raises(ValueError, match="rank-1"):
        kiln.qjit(lambda p: np.roots(p))(np.ones((2, 2)))



def polyfit_quadratic(x, y):
    return np.polyfit(x, y, 2)


def polyfit_weighted_full(x, y, w):
    return np.polyfit(x, y, 1, w=w, full=True)


def test_polyfit_matches_numpy_at_every_size_and_raises_numpys_type_errors():
    f, g = kiln.qjit(polyfit_quadratic), kiln.qjit(polyfit_weighted_full)
    rng = np.random.default_rng(11)
    for n in (1, 2, 7, 60):
        x, y, Y, w = rng.normal(size=n), rng.normal(size=n), rng.normal(size=(n, 3)), rng.uniform(0.5, 1, n)
        x0 = x.copy()
        for args in ((x, y), (x, Y), (np.arange(1, n + 1), np.arange(1, n + 1) ** 2)):
            got, want = f(*args), np.polyfit(*args, 2)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        for got, want in zip(g(x, y, w), np.polyfit(x, y, 1, w=w, full=True)):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(x, x0)
    compiles = f.num_compiles
    f(rng.normal(size=13), rng.normal(size=13))  # another size: no new compile
    assert f.num_compiles == compiles
    assert f(np.ones(3, np.float32), np.ones(3, np.float32)).dtype == np.float64  # as NumPy
    with pytest.raises(TypeError, match="expected non-empty vector for x"):
        f(np.zeros(0), np.zeros(0))
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        f(np.zeros(3), np.zeros(4))
    with pytest.raises(np.linalg.LinAlgError):  # a zero column scaled to NaN: NumPy's LinAlgError too
        f(np.zeros(1), np.zeros(1))
    with pytest.raises(TypeError, match="cov= is not supported"):
        kiln.qjit(lambda x, y: np.polyfit(x, y, 1, cov=True))(np.ones(3), np.ones(3))


def test_operands_are_read_in_place_without_a_copy_and_writes_stay_ordered():
    """kiln-lower-lapack hands LAPACK calls the operand's own buffer (no
    copy): views (transposed, strided), a loop that writes the matrix after
    each call, and writes between calls on the same matrix must each see
    exactly the value NumPy's program order gives; the input is not written."""
    def between(a):
        b = a * 2
        b[0, 0] += 1
        first = np.linalg.cholesky(b)
        b[1, 1] += 1
        second = np.linalg.cholesky(b, upper=True)
        x = np.linalg.solve(b, b[:, ::-1])
        b *= 3
        return first, second, x, b

    def in_loop(a, n):
        out = np.zeros_like(a)
        for _ in range(n):
            out += np.linalg.inv(a)
            a += np.eye(a.shape[0])
        return out

    def views(a):
        return np.linalg.cholesky(a[::2, ::2].T), np.linalg.det(a[1:, 1:]), np.linalg.inv(a.T)

    rng = np.random.default_rng(11)
    for n in (2, 3, 8):
        m = rng.standard_normal((2 * n, 2 * n))
        a = m @ m.T + 2 * n * np.eye(2 * n)
        small = np.ascontiguousarray(a[:n, :n])
        for got, want in zip(kiln.qjit(between)(small.copy()), between(small.copy())):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        mine, theirs = small.copy(), small.copy()
        np.testing.assert_allclose(kiln.qjit(in_loop)(mine, 3), in_loop(theirs, 3), rtol=1e-10)
        np.testing.assert_array_equal(mine, theirs)
        before = a.copy()
        for got, want in zip(kiln.qjit(views)(a), views(a)):
            np.testing.assert_allclose(got, want, rtol=1e-9)
        np.testing.assert_array_equal(a, before)
    for upper in (False, True):  # complex Hermitian: the untransposed copy's conjugation
        m = rng.standard_normal((5, 5)) + 1j * rng.standard_normal((5, 5))
        h = m @ m.conj().T + 5 * np.eye(5)
        np.testing.assert_allclose(kiln.qjit(lambda a: np.linalg.cholesky(a, upper=upper))(h),
                                   np.linalg.cholesky(h, upper=upper), rtol=1e-12, atol=1e-13)


def _solves_between_updates(points, ham, y):
    """contour_integral's shape: a complex solve per point between updates
    of accumulators, written as a physicist would."""
    n = ham.shape[1]
    p0 = np.zeros((n, y.shape[1]), dtype=np.complex128)
    p1 = np.zeros((n, y.shape[1]), dtype=np.complex128)
    for z in points:
        t = np.zeros((n, n), dtype=np.complex128)
        for k in range(ham.shape[0]):
            t += z ** (k - 1) * ham[k]
        x = np.linalg.solve(t, y)
        if abs(z) < 1.0:
            x = -x
        p0 += x
        p1 += z * x
    return p0, p1


@pytest.mark.parametrize("n", [1, 7, 130])
def test_a_function_that_calls_lapack_keeps_its_loops_serial(n):
    """kiln-parallelize leaves the loops of a function that calls a LAPACK
    kernel inline, as for BLAS (OpenBLAS's threads and kiln's spinning
    workers would fight for the cores); the results are NumPy's."""
    rng = np.random.default_rng(n)
    ham = rng.standard_normal((3, n, n)) + 1j * rng.standard_normal((3, n, n)) + 4 * n * np.eye(n)
    y = rng.standard_normal((n, 2 * n + 1)) + 1j * rng.standard_normal((n, 2 * n + 1))
    points = np.exp(2j * np.pi * np.arange(5) / 5) * np.array([0.5, 1.5, 0.9, 2.0, 1.1])
    f = kiln.qjit(_solves_between_updates)
    got, want = f(points, ham, y), _solves_between_updates(points, ham, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9)
    assert "kiln_lapack_solve_c128" in f.stage("llvm")
    assert "kiln_parallel_for" not in f.stage("llvm")
