"""Stage "jaxpr": `lapack`, one LAPACK kernel on a stack of matrices.

In: the kernel's arrays (float64 or complex128, each batch-first: a stack
of B matrices is rank 3, a stack of vectors rank 2, per-matrix scalars rank
1), then the result shapes' dynamic dims as scalar int operands; static
params `kernel`, `options` (ints), `shapes` (static dims, `None` where
dynamic) and `dtypes`.
Out: the kernel's results; every kernel that can fail also returns `info`
(i64[B]: 0, or LAPACK's positive code with that matrix's results NaN) for
the numpy layer to turn into LinAlgError (kiln/numpy/lapack.py).
"""

from __future__ import annotations

import numpy as np

from kiln.core import DShapedArray, KilnInternalError, Primitive
from kiln.primitives._rules import shape_with_dynamic

# kernel -> (its array operands, its results), as runtime/lapack.c and the
# `kiln.lapack_*` ops of dialects/kiln.py take them.
KERNELS = {
    "solve": (("a", "b"), ("x", "info")),
    "inv": (("a",), ("x", "info")),
    "cholesky": (("a",), ("l", "info")),
    "slogdet": (("a",), ("sign", "logdet", "det")),
    "qr": (("a",), ("q", "r", "info")),
    "eigh": (("a",), ("values", "vectors", "info")),
    "eig": (("a",), ("values", "vectors", "info")),
    "svd": (("a",), ("u", "s", "vt", "info")),
    "lstsq": (("a", "b", "rcond"), ("x", "s", "rank", "resid", "info")),
}
# kernel -> the names of its integer options, in order.
KERNEL_OPTIONS = {
    "cholesky": ("upper",), "qr": ("mode",), "eigh": ("upper", "vectors"), "eig": ("vectors",),
    "svd": ("full", "uv"),
}
QR_MODES = ("reduced", "complete", "r", "raw")

lapack_p = Primitive("lapack", multiple_results=True)


@lapack_p.def_abstract_eval
def _lapack_rule(*operands, kernel, options, shapes, dtypes):
    if kernel not in KERNELS:
        raise KilnInternalError(f"lapack: unknown kernel {kernel!r}")
    arrays, results = KERNELS[kernel]
    if len(options) != len(KERNEL_OPTIONS.get(kernel, ())) or len(shapes) != len(results) != len(dtypes):
        raise KilnInternalError(f"lapack {kernel}: {len(options)} options, {len(shapes)} shapes for {results}")
    compute = operands[0].aval.dtype
    if compute not in (np.float64, np.complex128) or any(
            x.aval.dtype != compute for x in operands[1:len(arrays)] if x.aval.ndim):
        raise KilnInternalError(f"lapack {kernel}: operands must be all float64 or all complex128")
    dyn = list(operands[len(arrays):])
    avals = []
    for shape, dtype in zip(shapes, dtypes):
        n_dyn = sum(d is None for d in shape)
        avals.append(DShapedArray(shape_with_dynamic(shape, dyn[:n_dyn]), np.dtype(dtype)))
        dyn = dyn[n_dyn:]
    if dyn:
        raise KilnInternalError(f"lapack {kernel}: {len(dyn)} dim operands left over")
    return avals


PRIMITIVES = [lapack_p]


# --------------------------------------------------------------------------
# Interpreter rule (kiln.interpreter): NumPy's own linalg, one matrix at a
# time, a failure turned into `info` = 1 and NaN results as the kernels do.

from kiln.interpreter import checked_shape, fill_dims, interpret_rule  # noqa: E402


def _nan(shape, dtype) -> np.ndarray:
    return np.full(shape, np.nan, dtype)


def _one_matrix(kernel: str, options: tuple, shapes: list[tuple], dtypes: list, arrays: list) -> list:
    """The kernel's results for one matrix (the batch axis dropped)."""
    a = arrays[0]
    opts = dict(zip(KERNEL_OPTIONS.get(kernel, ()), options))
    failed = [_nan(s, d) for s, d in zip(shapes[:-1], dtypes[:-1])] + [np.int64(1)]
    try:
        if kernel == "solve":
            return [np.linalg.solve(a, arrays[1]), np.int64(0)]
        if kernel == "inv":
            return [np.linalg.inv(a), np.int64(0)]
        if kernel == "cholesky":
            return [np.linalg.cholesky(a, upper=bool(opts["upper"])), np.int64(0)]
        if kernel == "slogdet":
            sign, logdet = np.linalg.slogdet(a)
            return [sign, logdet, np.linalg.det(a)]
        if kernel == "qr":
            mode = QR_MODES[opts["mode"]]
            if mode == "r":
                return [np.zeros(shapes[0], a.dtype), np.linalg.qr(a, mode="r"), np.int64(0)]
            if mode == "raw":
                h, tau = np.linalg.qr(a, mode="raw")
                return [h, tau.reshape(1, -1), np.int64(0)]
            q, r = np.linalg.qr(a, mode=mode)
            return [q, r, np.int64(0)]
        if kernel == "eigh":
            uplo = "U" if opts["upper"] else "L"
            if opts["vectors"]:
                w, v = np.linalg.eigh(a, UPLO=uplo)
                return [w, v, np.int64(0)]
            return [np.linalg.eigvalsh(a, UPLO=uplo), np.zeros(shapes[1], a.dtype), np.int64(0)]
        if kernel == "eig":
            if opts["vectors"]:
                w, v = np.linalg.eig(a)
                return [w.astype(complex), v.astype(complex), np.int64(0)]
            return [np.linalg.eigvals(a).astype(complex), np.zeros(shapes[1], complex), np.int64(0)]
        if kernel == "svd":
            if opts["uv"]:
                u, s, vt = np.linalg.svd(a, full_matrices=bool(opts["full"]))
                return [u, s, vt, np.int64(0)]
            return [np.zeros(shapes[0], a.dtype), np.linalg.svd(a, compute_uv=False), np.zeros(shapes[2], a.dtype),
                    np.int64(0)]
        if kernel == "lstsq":
            b = arrays[1]
            x, _, rank, s = np.linalg.lstsq(a, b, rcond=float(arrays[2]))
            m, n = a.shape
            resid = (np.abs(b - a @ x) ** 2).sum(axis=0) if m > n else np.zeros(b.shape[1])
            return [x, s, np.int64(rank), resid, np.int64(0)]
    except np.linalg.LinAlgError:
        return failed
    raise KilnInternalError(f"lapack: no interpreter rule for kernel {kernel!r}")


@interpret_rule(lapack_p)
def _lapack_value(*operands, kernel, options, shapes, dtypes):
    n_arrays = len(KERNELS[kernel][0])
    arrays, dyn = list(operands[:n_arrays]), list(operands[n_arrays:])
    full_shapes = []
    for shape in shapes:
        n_dyn = sum(d is None for d in shape)
        full_shapes.append(checked_shape(fill_dims(shape, dyn[:n_dyn])))
        dyn = dyn[n_dyn:]
    outs = [np.empty(s, d) for s, d in zip(full_shapes, dtypes)]
    batch = arrays[0].shape[0]
    with np.errstate(all="ignore"):
        for b in range(batch):
            per_matrix = [x[b] if x.ndim else x for x in arrays]
            results = _one_matrix(kernel, options, [s[1:] for s in full_shapes], list(dtypes), per_matrix)
            for out, value in zip(outs, results):
                out[b] = value
    return outs
