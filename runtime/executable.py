"""Runtime: calling a compiled library on NumPy arrays.

In: a shared library exporting the packed entry point
`_mlir__mlir_ciface_<name>` and `kiln_invoke`, plus the signature
(dtype and rank of each argument and result) and the table of run-time
checks.
Out: NumPy results (owning their buffers), or the `ValueError` /
`IndexError` of the run-time check that failed.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from kiln.core import KilnIndexError, KilnValueError
from kiln.runtime.memref import descriptor_for, descriptor_type, owned_array, results_type


@dataclass(frozen=True)
class ValueSpec:
    dtype: np.dtype
    rank: int


class Executable:
    """One compiled function: `exe(arrays) -> list of NumPy arrays`."""

    def __init__(self, library: str, name: str, args: list[ValueSpec], results: list[ValueSpec],
                 checks: list[tuple[str, str]]):
        self.library = library
        self.name = name
        self.args = args
        self.results = results
        self.checks = checks
        self._lib = ctypes.CDLL(library)
        self._packed = ctypes.cast(getattr(self._lib, f"_mlir__mlir_ciface_{name}"), ctypes.c_void_p)
        self._invoke = self._lib.kiln_invoke
        self._invoke.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64)]
        self._invoke.restype = ctypes.c_int64
        ranks = tuple(r.rank for r in results)
        if len(results) == 1:
            self._result_struct = descriptor_type(ranks[0])
        elif results:
            self._result_struct = results_type(ranks)
        else:
            self._result_struct = None

    def __call__(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """Run on C-contiguous arrays of the declared dtypes and ranks."""
        descs = [descriptor_for(a) for a in arrays]
        slots = []
        result = self._result_struct() if self._result_struct is not None else None
        if result is not None:
            slots.append(ctypes.c_void_p(ctypes.addressof(result)))
        slots.extend(ctypes.c_void_p(ctypes.addressof(d)) for d in descs)
        packed_args = (ctypes.c_void_p * max(len(slots), 1))(*[ctypes.addressof(s) for s in slots])
        failure = (ctypes.c_int64 * 3)()
        code = self._invoke(self._packed, packed_args, failure)
        if code:
            raise self._check_error(failure)
        if result is None:
            return []
        result_descs = [result] if len(self.results) == 1 else [getattr(result, f"r{i}") for i in range(len(self.results))]
        return self._adopt_results(result_descs, arrays)

    def _adopt_results(self, descs: list, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """Wrap results as NumPy arrays that own their buffers; copy results
        that alias an argument, share one owner between duplicates."""
        input_ptrs = {a.ctypes.data for a in arrays if a.nbytes}
        owners: dict[int, np.ndarray] = {}
        out = []
        for desc, spec in zip(descs, self.results):
            allocated = desc.allocated or 0
            if allocated in input_ptrs:
                view = np.asarray(_Borrowed(desc, spec.dtype))
                out.append(view.copy())
                continue
            if allocated and allocated in owners:
                out.append(owned_array(desc, spec.dtype, parent=owners[allocated].base))
                continue
            arr = owned_array(desc, spec.dtype)
            if allocated:
                owners[allocated] = arr
            out.append(arr)
        return out

    def _check_error(self, failure) -> Exception:
        check_id, v0, v1 = failure[0], failure[1], failure[2]
        if not 1 <= check_id <= len(self.checks):
            return KilnValueError(f"run-time check {check_id} failed")
        kind, message = self.checks[check_id - 1]
        text = message.format(v0, v1)
        return KilnIndexError(text) if kind == "IndexError" else KilnValueError(text)


class _Borrowed:
    """A non-owning array view of a descriptor (for results to copy)."""

    def __init__(self, desc, dtype):
        from kiln.runtime.memref import array_interface

        self.__array_interface__ = array_interface(desc, np.dtype(dtype))



