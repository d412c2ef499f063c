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

NPBENCH = find_npbench_dir()
needs_npbench = pytest.mark.skipif(NPBENCH is None, reason="../shared/npbench (the NPBench kernels) is absent")


@needs_npbench
def test_the_kernel_list_is_npbench_folder():
    assert sorted(load_kernels(NPBENCH)) == sorted(KERNELS)


@needs_npbench
@pytest.mark.parametrize("name", KERNELS)
def test_npbench_kernel(name):
    outcome = run_kernel(load_kernels(NPBENCH)[name], kiln.qjit)
    assert outcome.ok, f"{name}: {outcome.stage}: {outcome.error}"
    assert outcome.compiles == 1
