"""A `kiln.export` folder is self-contained: moved elsewhere, with the venv
out of sight, its library still finds the BLAS it calls (copied beside it)."""

import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

import kiln


def matmul_plus(a: kiln.ShapeDtype(("n", "k"), "float64"), b: kiln.ShapeDtype(("k", "m"), "float64")):
    return a @ b + 1.0


_C_PROGRAM = r"""
#include <stdio.h>
#include "matmul_plus.h"

int main(void) {
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  kiln_memref_2d ad = {a, a, 0, {2, 3}, {3, 1}}, bd = {b, b, 0, {3, 2}, {2, 1}};
  matmul_plus_results r;
  kiln_failure failure;
  long long code = matmul_plus(&r, &ad, &bd, &failure);
  if (code != 0) { printf("failed %lld\n", code); return 1; }
  for (int i = 0; i < 4; ++i) printf("%g ", ((double *)r.r0.aligned)[r.r0.offset + i]);
  printf("\n");
  matmul_plus_free_results(&r);
  return 0;
}
"""


@pytest.fixture(scope="module")
def moved_export(tmp_path_factory):
    """The export built in one folder, then moved to another (the first removed)."""
    root = tmp_path_factory.mktemp("relocatable")
    paths = kiln.export(matmul_plus, str(root / "built"))
    assert paths["bundled"], "a function calling BLAS bundles the BLAS library"
    moved = root / "moved"
    shutil.move(str(root / "built"), str(moved))
    return moved


def test_the_exported_library_records_no_path_into_the_venv(moved_export):
    with open(moved_export / "libmatmul_plus.so", "rb") as f:
        binary = f.read()
    numpy_libs = os.path.dirname(os.path.dirname(np.__file__))
    assert numpy_libs.encode() not in binary
    assert sys.prefix.encode() not in binary


def test_a_moved_export_runs_from_c_with_the_venv_hidden(moved_export, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc is not None, "kiln needs a C compiler to export"
    (tmp_path / "main.c").write_text(_C_PROGRAM)
    exe = tmp_path / "main"
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{moved_export}", str(tmp_path / "main.c"), "-o",
                    str(exe), f"-L{moved_export}", "-lmatmul_plus", f"-Wl,-rpath,{moved_export}"],
                   check=True, capture_output=True)
    # A clean environment: no PATH, no LD_LIBRARY_PATH, no VIRTUAL_ENV; the
    # run sees the moved folder only through the program's own rpath.
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env={}, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    a = np.arange(1.0, 7.0).reshape(2, 3)
    b = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert proc.stdout.split() == [f"{v:g}" for v in (a @ b + 1.0).ravel()]


def test_a_moved_export_loads_and_pickles_with_its_bundled_blas(moved_export):
    f = kiln.load(str(moved_export))
    a, b = np.random.default_rng(0).random((5, 4)), np.random.default_rng(1).random((4, 3))
    np.testing.assert_allclose(f(a, b), a @ b + 1.0)
    received = pickle.loads(pickle.dumps(f))
    assert received.directory != f.directory
    assert all(os.path.exists(os.path.join(received.directory, n)) for n in received.meta["bundled"])
    np.testing.assert_allclose(received(a, b), a @ b + 1.0)
