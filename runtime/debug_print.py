"""Runtime: the text of `kiln.debug_print`, for compiled code and the interpreter.

In: a print record of a compiled library (the constant text `dtypes line +
"\\n" + format` and the 64-bit words support.c collected), or NumPy values.
Out: one line on `sys.stdout` per print, the values formatted as NumPy
prints them (`x = [1. 2. 3.]`), flushed so it lands in order with Python's prints.
"""

from __future__ import annotations

import ctypes
import math
import string
import sys
from typing import Any, Sequence

import numpy as np

# support.c's kiln_print_hook_fn: (text, words, word count).
PRINT_HOOK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64)


def printable(value: Any) -> Any:
    """What a field of the format receives: a NumPy array, or a NumPy scalar
    for a 0-d value (so `{:.3f}` works and `1.5` prints as `1.5`)."""
    array = np.asarray(value)
    return array[()] if array.ndim == 0 else array


class PrintFormatter(string.Formatter):
    """`str.format` whose empty spec means `str(value)`, as for `print`:
    NumPy scalars format `{}` through Python's float (`1.100000023841858`
    for float32(1.1)), but print as `1.1`."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return str(value) if format_spec == "" else format(value, format_spec)


FORMATTER = PrintFormatter()


def print_formatted(format: str, values: Sequence[Any]) -> None:
    """Print `format` filled with `values` to the current `sys.stdout` and flush it."""
    print(FORMATTER.format(format, *[printable(v) for v in values]), file=sys.stdout, flush=True)


def _elements_from_words(words: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Elements of `dtype` from their words (bits zero- or sign-extended to
    64; a complex element is two words, real then imaginary)."""
    if dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        return _elements_from_words(words[0::2], part) + 1j * _elements_from_words(words[1::2], part)
    if dtype.kind == "f":
        return words.astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)
    if dtype.kind == "b":
        return words != 0
    return words.astype(dtype)


def decode_record(dtypes: Sequence[str], words: np.ndarray) -> list[np.ndarray]:
    """The values of a print record: per value its rank, its dims, then its
    elements in row-major order (see kiln-lower-prints)."""
    values, position = [], 0
    for name in dtypes:
        dtype = np.dtype(name)
        rank = int(words[position])
        shape = tuple(int(d) for d in words[position + 1:position + 1 + rank])
        position += 1 + rank
        count = math.prod(shape) * (2 if dtype.kind == "c" else 1)
        elements = _elements_from_words(words[position:position + count], dtype)
        values.append(elements.astype(dtype).reshape(shape))
        position += count
    return values


@PRINT_HOOK_TYPE
def _print_hook(text: bytes, words, count: int) -> None:
    dtype_line, _, format = text.decode().partition("\n")
    record = np.ctypeslib.as_array(words, shape=(count,)).copy() if count else np.zeros(0, np.int64)
    print_formatted(format, decode_record(dtype_line.split(), record))


def install_print_hook(setter_address: int | None) -> None:
    """Route a library's `kiln.print`s to `sys.stdout` through its
    `kiln_set_print_hook` at `setter_address` (without the hook, support.c
    prints them in plain C, as for a library called from C). None: a
    library exported by a kiln older than debug_print, with no prints."""
    if setter_address:
        ctypes.CFUNCTYPE(None, PRINT_HOOK_TYPE)(setter_address)(_print_hook)
