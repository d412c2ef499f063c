"""Stage "mlir", entered from outside: `kiln.from_stablehlo` compiles a StableHLO module.

In: StableHLO text, or a `jax.export.Exported` (static or shape-polymorphic).
Out: a callable on NumPy arrays; jax's `custom_call @shape_assertion` become
kiln run-time checks (`kiln.check` ops, lowered by `kiln-lower-checks`).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from kiln.errors import KilnTypeError, KilnValueError
from kiln.foreign_arrays import foreign_array

# jax's run-time test of symbolic dimensions.
SHAPE_ASSERTION = "shape_assertion"
_ELEMENT_DTYPES = {
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
    "f16": "float16", "f32": "float32", "f64": "float64",
    "complex<f32>": "complex64", "complex<f64>": "complex128",
}


def _module_text(source: Any) -> tuple[str, str]:
    """(text, name) of a StableHLO source: text, or an object with
    `mlir_module()` (a jax.export.Exported)."""
    if isinstance(source, str):
        return source, "stablehlo"
    if callable(getattr(source, "mlir_module", None)):
        return source.mlir_module(), getattr(source, "fun_name", "stablehlo")
    raise KilnTypeError(f"kiln.from_stablehlo: cannot compile a {type(source).__name__}; pass StableHLO text "
                        "or a jax.export.Exported (jax.export.export(jax.jit(f))(*shapes))")


def _entry(module: Any) -> Any:
    """The module's public function: `main`, or the only public one."""
    from kiln.compiler.mlir import ir

    public = [op for op in module.body.operations if op.operation.name == "func.func"
              and ("sym_visibility" not in op.attributes
                   or ir.StringAttr(op.attributes["sym_visibility"]).value == "public")]
    named = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in public}
    if "main" in named:
        return named["main"]
    if len(public) == 1:
        return public[0]
    raise KilnValueError(f"kiln.from_stablehlo: the module has public functions {sorted(named) or 'none'} "
                         "and none is named main; make the entry point the only public function or name it main")


def _spec(tensor_type: Any, where: str) -> tuple[np.dtype, tuple]:
    """(dtype, dims with None for a dynamic dim) of a ranked tensor type."""
    from kiln.compiler.mlir import ir

    if not isinstance(tensor_type, ir.RankedTensorType):
        raise KilnTypeError(f"kiln.from_stablehlo: {where} has type {tensor_type}; kiln takes ranked tensors only")
    t = ir.RankedTensorType(tensor_type)
    element = str(t.element_type)
    if element not in _ELEMENT_DTYPES:
        raise KilnTypeError(f"kiln.from_stablehlo: {where} has element type {element}, which kiln does not "
                            f"compile; supported: {', '.join(_ELEMENT_DTYPES)}")
    dims = tuple(None if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank))
    return np.dtype(_ELEMENT_DTYPES[element]), dims


def _rewrite_shape_assertions(module: Any) -> None:
    """Rewrite each `custom_call @shape_assertion(%ok, %v...)` into a
    `kiln.check` reporting the first two values with jax's message."""
    from kiln.compiler.mlir import ir
    from kiln.compiler.passes._util import collect_ops
    from kiln.dialects import kiln as kiln_dialect
    from kiln.dialects import stablehlo as hlo

    for op in collect_ops(module, {"stablehlo.custom_call"}):
        if ir.StringAttr(op.attributes["call_target_name"]).value != SHAPE_ASSERTION:
            continue
        message = ir.StringAttr(op.attributes["error_message"]).value if "error_message" in op.attributes \
            else "a shape assertion of the StableHLO module failed"
        # Placeholders past the reported values have nothing to show.
        message = re.sub(r"\{(\d+)\}", lambda m: m.group(0) if int(m.group(1)) < kiln_dialect.MAX_CHECK_VALUES
                         else "?", message)
        operands = list(op.operands)
        with ir.InsertionPoint(op), op.location:
            values = [hlo.convert(v, hlo.i64()) for v in operands[1:1 + kiln_dialect.MAX_CHECK_VALUES]]
            kiln_dialect.check(operands[0], values, "ValueError", message)
        op.erase()


class StableHLOFunction:
    """A StableHLO module compiled by kiln: call it with arrays of the
    entry point's dtypes and ranks (any array with `__array__` or
    `__dlpack__`); one result comes back as an array, several as a tuple."""

    def __init__(self, name: str, executable: Any, params: list[tuple[np.dtype, tuple]], num_results: int,
                 stages: dict[str, str]):
        self.__name__ = name
        self.executable = executable
        self.params = params
        self.num_results = num_results
        self.stages = stages

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.params):
            raise KilnTypeError(f"{self.__name__} takes {len(self.params)} arguments, got {len(args)}")
        values = [self._conform(i, x) for i, x in enumerate(args)]
        results = self.executable(values)
        return results[0] if self.num_results == 1 else tuple(results)

    def _conform(self, i: int, x: Any) -> Any:
        dtype, dims = self.params[i]
        arr = foreign_array(x)
        if arr is None:
            arr = np.asarray(x)
        expected = f"{dtype}[{', '.join('?' if d is None else str(d) for d in dims)}]"
        if arr.dtype != dtype:
            raise KilnTypeError(f"{self.__name__}: argument {i} must be {expected}, got dtype {arr.dtype}; "
                                f"convert it with .astype({dtype.name!r})")
        if arr.ndim != len(dims) or any(d is not None and d != n for d, n in zip(dims, arr.shape)):
            raise KilnValueError(f"{self.__name__}: argument {i} must be {expected}, got shape {arr.shape}")
        return arr if arr.ndim else arr[()]

    def __repr__(self) -> str:
        return f"<kiln StableHLO function {self.__name__}>"


def from_stablehlo(source: Any) -> StableHLOFunction:
    """Compile a StableHLO module (text, or a `jax.export.Exported`) with
    kiln's pipeline; shape-polymorphic exports take any size for their
    symbolic dims, and jax's shape assertions raise KilnValueError.

    >>> exported = jax.export.export(jax.jit(f))(jax.ShapeDtypeStruct((8, 4), "float32"))  # doctest: +SKIP
    >>> kiln.from_stablehlo(exported)(np.ones((8, 4), np.float32))  # doctest: +SKIP
    """
    from kiln.compiler import driver
    from kiln.compiler.mlir import ir
    from kiln.dialects import new_context
    from kiln.compiler.pipeline import run_passes
    from kiln.runtime.executable import ValueSpec

    text, name = _module_text(source)
    symbol = driver._symbol_name(name)
    ctx = new_context()
    with ctx, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise KilnValueError(f"kiln.from_stablehlo: the module does not parse: {e}; pass StableHLO text "
                                 "(jax.export.Exported.mlir_module()) or the Exported itself") from None
        entry = _entry(module)
        entry.attributes["sym_name"] = ir.StringAttr.get(symbol)
        entry.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        function_type = ir.FunctionType(ir.TypeAttr(entry.attributes["function_type"]).value)
        params = [_spec(t, f"argument {i}") for i, t in enumerate(function_type.inputs)]
        results = [_spec(t, f"result {i}") for i, t in enumerate(function_type.results)]
        # jax wraps the body in private functions: one function for kiln's pipeline.
        run_passes(module, ["inline", "symbol-dce"], stage="mlir")
        _rewrite_shape_assertions(module)
    compiled = driver.compile_module(module, symbol, [ValueSpec(d, len(s)) for d, s in params],
                                     [ValueSpec(d, len(s)) for d, s in results])
    return StableHLOFunction(name, compiled["executable"], params, len(results), compiled["stages"])
