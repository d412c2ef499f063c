"""NPBench (issue 14, acceptance 1): each of the 40 kernels of ../shared/npbench, unchanged,
compiled with plain `kiln.qjit(kernel)`, validated against NumPy as NPBench validates at
preset S and again at a smaller size, with one compile for both sizes (test/npbench_harness.py)."""

import pytest

import kiln
from npbench_harness import find_npbench_dir, load_kernels, run_kernel

KERNELS = [
    "adi", "arc_distance", "atax", "azimint_hist", "channel_flow", "cholesky", "cholesky2", "compute",
    "contour_integral", "conv2d_bias", "correlation", "covariance", "crc16", "deriche", "doitgen",
    "floyd_warshall", "gemm", "gesummv", "gramschmidt", "hdiff", "heat_3d", "jacobi_1d", "jacobi_2d", "k2mm",
    "k3mm", "lu", "mandelbrot1", "mlp", "mvt", "nbody", "resnet", "scattering_self_energies", "seidel_2d",
    "softmax", "spmv", "stockham_fft", "symm", "syrk", "trisolv", "vadv",
]

_LOOP = "int() on a traced value (i64[])"
_ITERATION = "iteration over a traced array with a dynamic first dim"
# Kernel -> (the missing part, the error plain kiln.qjit raises today and where).
MISSING = {
    "adi": ("autograph", f"{_LOOP} at adi_numpy.py:27 `for t in range(1, TSTEPS + 1)`"),
    "channel_flow": ("autograph", f"{_LOOP} at channel_flow_numpy.py:45 `for q in range(nit)`"),
    "cholesky": ("autograph", f"{_LOOP} at cholesky_numpy.py:7 `for i in range(1, A.shape[0])`"),
    "contour_integral": ("autograph", f"{_ITERATION} (c128[?]) at contour_integral_numpy.py:9 `for z in int_pts`"),
    "conv2d_bias": ("autograph", f"{_LOOP} at conv2d_numpy.py:14 `for i in range(H_out)`"),
    "correlation": ("autograph", f"{_LOOP} at correlation_numpy.py:12 `for i in range(M - 1)`"),
    "covariance": ("autograph", f"{_LOOP} at covariance_numpy.py:9 `for i in range(M)`"),
    "crc16": ("autograph", f"{_ITERATION} (u8[?]) at crc16_numpy.py:10 `for b in data`"),
    "deriche": ("autograph", f"{_LOOP} at deriche_numpy.py:19 `for j in range(2, imgIn.shape[1])`"),
    "floyd_warshall": ("autograph", f"{_LOOP} at floyd_warshall_numpy.py:6 `for k in range(path.shape[0])`"),
    "gramschmidt": ("autograph", f"{_LOOP} at gramschmidt_numpy.py:9 `for k in range(A.shape[1])`"),
    "heat_3d": ("autograph", f"{_LOOP} at heat_3d_numpy.py:6 `for t in range(1, TSTEPS)`"),
    "jacobi_1d": ("autograph", f"{_LOOP} at jacobi_1d_numpy.py:6 `for t in range(1, TSTEPS)`"),
    "jacobi_2d": ("autograph", f"{_LOOP} at jacobi_2d_numpy.py:6 `for t in range(1, TSTEPS)`"),
    "lu": ("autograph", f"{_LOOP} at lu_numpy.py:6 `for i in range(A.shape[0])`"),
    "mandelbrot1": ("autograph", f"{_LOOP} at mandelbrot1_numpy.py:18 `for n in range(maxiter)`"),
    "resnet": ("autograph", f"{_LOOP} at resnet_numpy.py:18 `for i in range(H_out)`"),
    "scattering_self_energies": ("autograph", f"{_LOOP} at scattering_self_energies_numpy.py:8 "
                                              "`for k in range(G.shape[0])`"),
    "seidel_2d": ("autograph", f"{_LOOP} at seidel_2d_numpy.py:6 `for t in range(0, TSTEPS - 1)`"),
    "spmv": ("autograph", f"{_LOOP} at spmv_numpy.py:10 `for i in range(A_row.size - 1)`"),
    "stockham_fft": ("autograph", f"{_LOOP} at stockham_fft_numpy.py:18 `for i in range(K)`"),
    "symm": ("autograph", f"{_LOOP} at symm_numpy.py:8 `for i in range(C.shape[0])`"),
    "syrk": ("autograph", f"{_LOOP} at syrk_numpy.py:6 `for i in range(A.shape[0])`"),
    "trisolv": ("autograph", f"{_LOOP} at trisolv_numpy.py:6 `for i in range(x.shape[0])`"),
    "vadv": ("autograph", f"{_LOOP} at vadv_numpy.py:32 `for k in range(1, K - 1)`"),
    "nbody": ("masks", "KilnIndexError: boolean-mask indexing is not supported on traced arrays, "
                       "at nbody_numpy.py:34"),
    "azimint_hist": ("breadth", "np.histogram is not supported by kiln on traced values"),
    "cholesky2": ("breadth", "np.linalg.cholesky is not supported by kiln on traced values"),
}
_ITEMS = {"autograph": "autograph on by default, issue 14 item 2", "masks": "boolean-mask reads, issue 14 item 7",
          "breadth": "a NumPy function no part of issue 14 covers: the NumPy-breadth issue"}


def _param(name: str):
    if name not in MISSING:
        return name
    part, error = MISSING[name]
    reason = f"needs {part} ({_ITEMS[part]}): {error}"
    return pytest.param(name, marks=pytest.mark.xfail(reason=reason, strict=True))


NPBENCH = find_npbench_dir()
needs_npbench = pytest.mark.skipif(NPBENCH is None, reason="../shared/npbench (the NPBench kernels) is absent")


@needs_npbench
def test_the_kernel_list_is_npbench_folder():
    assert sorted(load_kernels(NPBENCH)) == sorted(KERNELS)


@needs_npbench
@pytest.mark.parametrize("name", [_param(n) for n in KERNELS])
def test_npbench_kernel(name):
    outcome = run_kernel(load_kernels(NPBENCH)[name], kiln.qjit)
    assert outcome.ok, f"{name}: {outcome.stage}: {outcome.error}"
    assert outcome.compiles == 1
