"""Stage "jaxpr", before tracing: the signature a compiled function is specialized on.

In: the flat arguments of a call (arrays, scalars) with qjit's options
(abstracted_axes, share_equal_dims, specialize_unit_dims), or the parameter
annotations of a function compiled ahead of time (ShapeDtype, float/int/bool).
Out: one ArgSig per flat argument (dtype; per dim a static size or a dim class).
"""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from kiln.core import SUPPORTED_DTYPES
from kiln.errors import KilnTypeError, KilnValueError
from kiln.foreign_arrays import PLAIN_SUBCLASSES, foreign_array
from kiln.random_state import StateWords
from kiln.tracing import Tracer


@dataclass(frozen=True)
class ShapeDtype:
    """An array annotation for ahead-of-time compilation: ints are static
    dims, strings name dynamic dims (equal names share one dim).

    >>> ShapeDtype(("n", 3), "float64")
    ShapeDtype(shape=('n', 3), dtype='float64')
    """

    shape: tuple
    dtype: Any


@dataclass(frozen=True)
class ArgSig:
    """How one flat argument is traced: an array with per-dim specs
    (`("static", k)` or `("dim", class)`), or a scalar."""

    kind: str  # "array" | "scalar"
    dtype: str
    dims: tuple = ()
    weak: bool = False
    # A 0-d ndarray (not a NumPy or Python scalar): mutable, `x += 1`
    # writes it, and the caller sees the write.
    zero_d_array: bool = False


def refuse_non_array_argument(fn_name: str, param: str, value: Any) -> None:
    """A string (a mode, a method name) selects what the function does:
    kiln cannot trace it, but can compile once per value of it."""
    if isinstance(value, (str, bytes)):
        raise KilnTypeError(
            f"{fn_name}: argument {param!r} is a {type(value).__name__} ({value!r}), which kiln cannot trace; "
            f"if it selects what the function does, mark it static: kiln.qjit(static_argnames=({param!r},)) "
            "compiles once per value.")


def leaf_to_array(x: Any, where: str) -> Any:
    """A call argument as a NumPy array or scalar (lists become arrays)."""
    if type(x) is np.ndarray or type(x) is StateWords:
        return x
    if isinstance(x, np.ndarray):
        return _plain_array(x, where)
    if isinstance(x, (bool, int, float, np.generic)):
        return x
    if isinstance(x, Tracer):
        raise KilnTypeError(f"{where}: a traced value was passed to a compiled function from inside a trace")
    arr = foreign_array(x)
    if arr is not None:
        return arr
    if hasattr(type(x), "__dlpack__") and not hasattr(type(x), "__array__"):
        try:
            return np.from_dlpack(x)
        except Exception as e:
            raise KilnTypeError(f"{where}: NumPy cannot view the {type(x).__name__} through DLPack ({e}); "
                                "move it to CPU memory or pass a NumPy array") from None
    try:
        return np.asarray(x)
    except Exception:
        raise KilnTypeError(f"{where}: cannot pass a {type(x).__name__} to a compiled function; "
                            "pass NumPy arrays, Python scalars, or tuples/lists/dicts of them, or mark the "
                            "argument static (static_argnames) if it selects what the function does") from None


# ndarray subclasses that mean nothing more than their data: they run as
# plain arrays, and writes still reach them (the plain array is a view).
def _plain_array(x: np.ndarray, where: str) -> np.ndarray:
    """An ndarray subclass argument as a plain array, or a TypeError when
    its meaning would be lost (a masked array's mask, a subclass's own
    operators)."""
    if isinstance(x, PLAIN_SUBCLASSES):
        return x.view(np.ndarray)
    kind = f"{type(x).__module__}.{type(x).__qualname__}"
    if isinstance(x, np.ma.MaskedArray):
        raise KilnTypeError(f"{where}: a masked array ({kind}) cannot be passed to a compiled function: kiln "
                            "computes on plain arrays and would drop the mask. Pass x.filled(value) or "
                            "np.ma.getdata(x) with the mask as a separate boolean array (np.ma.getmaskarray(x)).")
    raise KilnTypeError(f"{where}: an ndarray subclass ({kind}) cannot be passed to a compiled function: kiln "
                        "computes on plain arrays and would lose what the subclass adds. Pass np.asarray(x) "
                        "if a plain array is what you mean.")


def _check_dtype(dtype: np.dtype, where: str) -> np.dtype:
    if dtype not in SUPPORTED_DTYPES and dtype.newbyteorder("=") in SUPPORTED_DTYPES:
        native = dtype.newbyteorder("=")
        raise KilnTypeError(f"{where}: dtype {dtype.str} is {native} in non-native byte order (big-endian data, e.g. "
                            f"read from a file); compiled code computes in the machine's byte order. Pass "
                            f"x.astype({native.name!r}) (and copy written values back with x[...] = result)")
    if dtype not in SUPPORTED_DTYPES:
        static_hint = ("; or, if it is not data but selects what the function does, mark the argument static "
                       "(static_argnames)") if dtype.kind in "OSU" else ""
        raise KilnTypeError(f"{where}: dtype {dtype} is not supported; convert it with .astype() to one of "
                            + ", ".join(sorted(str(d) for d in SUPPORTED_DTYPES)) + static_hint)
    return dtype


class DimClasses:
    """Assigns dims to classes: named axes by name, other dims by value."""

    def __init__(self):
        self.classes: dict[Any, int] = {}

    def cls(self, key: Any) -> int:
        if key not in self.classes:
            self.classes[key] = len(self.classes)
        return self.classes[key]


def _python_scalar_sig(x: Any) -> ArgSig:
    if isinstance(x, bool):
        return ArgSig("scalar", "bool", weak=True)
    if isinstance(x, int):
        return ArgSig("scalar", "int64", weak=True)
    return ArgSig("scalar", "float64", weak=True)


def signature_of(leaves: list, names: list[str], axes_names: list[dict], share_equal: bool,
                 specialize_unit_dims: bool) -> tuple[ArgSig, ...]:
    """The signature of a call's flat arguments: dims named alike share a
    class; others share one when `share_equal` and their sizes are equal; a
    size-1 dim is static 1 when `specialize_unit_dims`."""
    classes = DimClasses()
    sigs = []
    for x, where, named in zip(leaves, names, axes_names):
        if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):  # np.float64 is a float, not weak
            sigs.append(_python_scalar_sig(x))
            continue
        if type(x) is StateWords:  # a random generator's state: fixed size
            sigs.append(ArgSig("array", x.dtype.str, tuple(("static", size) for size in x.shape)))
            continue
        arr = np.asarray(x)
        dtype = _check_dtype(arr.dtype, where)
        if arr.ndim == 0:
            sigs.append(ArgSig("scalar", dtype.str, zero_d_array=isinstance(x, np.ndarray)))
            continue
        dims = []
        for axis, size in enumerate(arr.shape):
            if axis in named:
                dims.append(("dim", classes.cls(("name", named[axis]))))
            elif size == 1 and specialize_unit_dims:
                dims.append(("static", 1))
            else:
                key = ("size", size) if share_equal else ("arg", where, axis)
                dims.append(("dim", classes.cls(key)))
        sigs.append(ArgSig("array", dtype.str, tuple(dims)))
    return tuple(sigs)


def _axes_spec(spec: Any, position: int) -> dict:
    """One argument's named axes, from a dict `{axis: name}` or (Catalyst's
    form) a tuple/list with one name or None per axis."""
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return dict(spec)
    if isinstance(spec, (tuple, list)) and all(n is None or isinstance(n, str) for n in spec):
        return {axis: name for axis, name in enumerate(spec) if name is not None}
    raise KilnTypeError(f"abstracted_axes: the entry for argument {position} is {spec!r}; give a dict "
                        "{axis: name}, or a tuple with one name (or None) per axis, e.g. ('n', None)")


def named_axes_of(abstracted_axes: Any, dynamic: list, leaves_per_arg: list[int]) -> list[dict]:
    """The named axes (`{axis: name}`) of each flat argument, from qjit's
    `abstracted_axes`: one dict for every argument, or one entry per
    argument (a dict, a tuple of names per axis, or None)."""
    if abstracted_axes is None:
        return [{}] * sum(leaves_per_arg)
    if isinstance(abstracted_axes, dict):
        abstracted_axes = (abstracted_axes,) * len(dynamic)
    if not isinstance(abstracted_axes, (tuple, list)):
        raise KilnTypeError(f"abstracted_axes: expected a dict or a tuple with one entry per argument, got "
                            f"{type(abstracted_axes).__name__}")
    if len(abstracted_axes) > len(dynamic):
        raise KilnValueError(f"abstracted_axes has {len(abstracted_axes)} entries but the function takes "
                             f"{len(dynamic)} non-static arguments; give one entry per argument")
    out = []
    for position, count in enumerate(leaves_per_arg):
        spec = abstracted_axes[position] if position < len(abstracted_axes) else None
        out.extend([_axes_spec(spec, position)] * count)
    return out


def static_positions(fn_name: str, params: list[str], static_argnums: Any, static_argnames: Any) -> set[int]:
    """The parameter positions of qjit's `static_argnums` / `static_argnames`
    (each an int / str or a sequence of them; negative positions count
    from the end); an unknown position or name is an error."""
    def as_tuple(value: Any, kind: type, option: str) -> tuple:
        if value is None:
            return ()
        items = (value,) if isinstance(value, kind) else value
        try:
            items = tuple(items)
        except TypeError:
            raise KilnTypeError(f"{option}: expected a {kind.__name__} or a sequence of them, got "
                                f"{type(value).__name__}") from None
        for item in items:
            if not isinstance(item, kind) or isinstance(item, bool):
                raise KilnTypeError(f"{option}: expected {kind.__name__}s, got {item!r}")
        return items

    listed = ", ".join(params) or "none"
    positions = set()
    for i in as_tuple(static_argnums, int, "static_argnums"):
        if not -len(params) <= i < len(params):
            raise KilnValueError(f"static_argnums: {fn_name} has no parameter at position {i} (its parameters: "
                                 f"{listed}); use a position in range({len(params)})")
        positions.add(i % len(params))
    for name in as_tuple(static_argnames, str, "static_argnames"):
        if name not in params:
            close = difflib.get_close_matches(name, params, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise KilnValueError(f"static_argnames: {fn_name} has no parameter {name!r} (its parameters: "
                                 f"{listed}){hint}")
        positions.add(params.index(name))
    return positions


def static_key(v: Any) -> Any:
    """The cache-key form of a static argument (equal values of other types differ)."""
    return (type(v).__name__, v)


def check_named_axes(leaves: list, axes_names: list[dict]) -> None:
    """Axes that share a name must have one size across the arguments."""
    seen: dict[str, tuple[int, int, int]] = {}
    for i, (x, named) in enumerate(zip(leaves, axes_names)):
        shape = np.shape(x)
        for axis, name in named.items():
            if axis >= len(shape):
                raise KilnValueError(f"abstracted_axes: argument {i} has no axis {axis} (shape {shape})")
            size = shape[axis]
            if name in seen and seen[name][2] != size:
                j, ax, other = seen[name]
                raise KilnValueError(
                    f"abstracted_axes: axis {name!r} has size {size} in argument {i} (axis {axis}) but "
                    f"{other} in argument {j} (axis {ax}); arrays sharing a named axis must agree")
            seen.setdefault(name, (i, axis, size))


# --- from parameter annotations (compiled ahead of time)

_SCALAR_ANNOTATIONS = (bool, int, float)


def annotation_sig(annotation: Any, where: str, dim_classes: DimClasses) -> tuple[ArgSig, dict]:
    """The ArgSig of one annotated parameter and its JSON description."""
    if annotation in _SCALAR_ANNOTATIONS:
        sig = _python_scalar_sig(annotation())
        return sig, {"dtype": np.dtype(sig.dtype).name, "shape": []}
    if isinstance(annotation, type) and issubclass(annotation, np.generic):
        annotation = ShapeDtype((), annotation)
    if not isinstance(annotation, ShapeDtype):
        raise KilnTypeError(f"kiln.export: {where} needs an annotation kiln.ShapeDtype(shape, dtype) (or "
                            f"float/int/bool for a scalar), got {annotation!r}")
    dtype = _check_dtype(np.dtype(annotation.dtype), where)
    shape = list(annotation.shape)
    dims = []
    for axis, d in enumerate(shape):
        if isinstance(d, str):
            dims.append(("dim", dim_classes.cls(("name", d))))
        elif isinstance(d, (int, np.integer)) and d >= 0:
            dims.append(("static", int(d)))
        else:
            raise KilnTypeError(f"kiln.export: {where}, axis {axis}: a dim is an int (static) or a str "
                                f"(a named dynamic dim), got {d!r}")
    kind = "array" if shape else "scalar"
    return ArgSig(kind, dtype.str, tuple(dims)), {"dtype": dtype.name, "shape": [
        int(d) if not isinstance(d, str) else d for d in shape]}


def annotated_signature(fn: Callable, static_argnums: set) -> tuple | None:
    """ArgSigs from the parameter annotations when every parameter has a
    supported one (and none is static), else None."""
    if static_argnums:
        return None
    try:
        params = list(inspect.signature(fn, eval_str=True).parameters.values())
    except (NameError, TypeError, ValueError):
        return None
    if not params:
        return None
    for p in params:
        a = p.annotation
        supported = a in _SCALAR_ANNOTATIONS or isinstance(a, ShapeDtype) or (
            isinstance(a, type) and issubclass(a, np.generic))
        if not supported or p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return None
    classes = DimClasses()
    return tuple(annotation_sig(p.annotation, f"parameter {p.name!r}", classes)[0] for p in params)


def conform(x: Any, sig: ArgSig, where: str, named: dict) -> Any:
    """Check an argument against its ahead-of-time signature; return the leaf to pass."""
    if sig.kind == "scalar" and sig.weak:
        expected = {"bool": (bool, np.bool_), "int64": (int, np.integer), "float64": (float, int, np.floating,
                                                                                     np.integer)}
        if isinstance(x, bool) and sig.dtype != "bool" or not isinstance(x, expected[np.dtype(sig.dtype).name]):
            raise KilnTypeError(f"{where}: expected a {np.dtype(sig.dtype).name} scalar as annotated "
                                f"(compiled ahead of time), got {type(x).__name__}")
        return x
    arr = np.asarray(x)
    want = np.dtype(sig.dtype)
    if arr.dtype != want or arr.ndim != len(sig.dims):
        raise KilnTypeError(f"{where}: expected a {want.name} array of rank {len(sig.dims)} as annotated "
                            f"(compiled ahead of time), got {arr.dtype.name} of rank {arr.ndim}")
    for axis, (kind, value) in enumerate(sig.dims):
        size = arr.shape[axis]
        if kind == "static" and size != value:
            raise KilnValueError(f"{where}: axis {axis} must have size {value} as annotated, got {size}")
        if kind == "dim" and named.setdefault(value, size) != size:
            raise KilnValueError(f"{where}: axis {axis} has size {size}, but a dim of the same name has size "
                                 f"{named[value]} in an earlier argument")
    return arr
