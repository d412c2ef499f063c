"""Pass `kiln-lower-prints` (stage "linalg", after kiln-lower-checks).

In: `kiln.print(%t) {format, dtypes}`, `%t` a `stablehlo.tuple` of tensors
of any rank and dtype.
Out: calls into the runtime support code linked into every library:
`kiln_print_begin()`, `kiln_print_word(i64)` once per word of the record,
then `kiln_print_emit(text)`. The record holds, per value, its rank, its
dims and its elements in row-major order as 64-bit words (integers and
bools widened, floats by their bits, complex as real then imaginary); the
text is a private `llvm.mlir.global` of the module: the dtype names, a
newline, the format. The runtime decodes the words (runtime/debug_print.py).
"""

from __future__ import annotations

import numpy as np

from kiln.compiler.mlir import arith, func, ir, llvm, scf, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops, declare_private_function, index_value, StringGlobals
from kiln.dialects import stablehlo as hlo

BEGIN_CALLEE = "kiln_print_begin"
WORD_CALLEE = "kiln_print_word"
EMIT_CALLEE = "kiln_print_emit"
TEXT_PREFIX = "kiln_print_text_"


def _float_words(x: ir.Value, itemsize: int) -> ir.Value:
    bits = hlo.one("bitcast_convert", hlo.with_element(hlo.ranked(x), ir.IntegerType.get_signless(8 * itemsize)), x)
    return hlo.convert(bits, hlo.i64())


def _word_tensors(x: ir.Value, dtype: np.dtype) -> list[ir.Value]:
    """`x` as tensors of i64 words of its shape: one, or two for complex
    values (real and imaginary parts). Built from StableHLO ops, which the
    legalization later in the stage lowers (unsigned types included)."""
    if dtype.kind == "c":
        part = hlo.with_element(hlo.ranked(x), hlo.element_type(np.dtype(f"f{dtype.itemsize // 2}")))
        return [_float_words(hlo.one(name, part, x), dtype.itemsize // 2)
                for name in ("real", "imag")]
    if dtype.kind == "f":
        return [_float_words(x, dtype.itemsize)]
    return [hlo.convert(x, hlo.i64())]


def _push(word: ir.Value) -> None:
    func.CallOp([], ir.FlatSymbolRefAttr.get(WORD_CALLEE), [word])


def _push_elements(words: list[ir.Value], sizes: list[ir.Value], indices: list[ir.Value]) -> None:
    """Loops over the remaining `sizes` (row-major), pushing each word tensor's element."""
    if not sizes:
        for w in words:
            _push(tensor.extract(w, indices))
        return
    loop = scf.ForOp(index_value(0), sizes[0], index_value(1))
    with ir.InsertionPoint(loop.body):
        _push_elements(words, sizes[1:], [*indices, loop.induction_variable])
        scf.YieldOp([])


def _lower_print(op: ir.Operation, text_symbol: str) -> None:
    dtypes = [np.dtype(ir.StringAttr(d).value) for d in ir.ArrayAttr(op.attributes["dtypes"])]
    i64 = ir.IntegerType.get_signless(64)
    func.CallOp([], ir.FlatSymbolRefAttr.get(BEGIN_CALLEE), [])
    for value, dtype in zip(_printed_values(op), dtypes):
        words = _word_tensors(value, dtype)
        sizes = [tensor.dim(words[0], index_value(axis)) for axis in range(hlo.ranked(value).rank)]
        _push(arith.constant(i64, len(sizes)))
        for size in sizes:
            _push(arith.index_cast(i64, size))
        _push_elements(words, sizes, [])
    text = llvm.AddressOfOp(llvm.PointerType.get(), text_symbol).result
    func.CallOp([], ir.FlatSymbolRefAttr.get(EMIT_CALLEE), [text])


def _printed_values(op: ir.Operation) -> list[ir.Value]:
    """The tensors of the print's tuple: the operands of the `stablehlo.tuple`
    that made it, else one `stablehlo.get_tuple_element` each."""
    packed = op.operands[0]
    owner = packed.owner
    if not isinstance(owner, ir.Block) and owner.name == "stablehlo.tuple":
        return list(owner.operands)
    types = ir.TupleType(packed.type)
    return [hlo.one("get_tuple_element", types.get_type(i), packed,
                    index=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), i))
            for i in range(types.num_types)]


def _record_text(op: ir.Operation) -> str:
    """The dtype names, a newline, the format: the constant the runtime reads."""
    dtypes = ir.ArrayAttr(op.attributes["dtypes"])
    count = ir.TupleType(op.operands[0].type).num_types
    if len(dtypes) != count:
        raise ValueError(f"kiln-lower-prints: {op.location}: kiln.print has {count} values but "
                         f"{len(dtypes)} dtypes; give one NumPy dtype name per value")
    names = [ir.StringAttr(d).value for d in dtypes]
    for name in names:
        try:
            np.dtype(name)
        except TypeError:
            raise ValueError(f"kiln-lower-prints: {op.location}: {name!r} is not a NumPy dtype name; "
                             "write e.g. \"float64\" or \"uint8\"") from None
    return " ".join(names) + "\n" + ir.StringAttr(op.attributes["format"]).value


def lower_prints(module: ir.Module) -> None:
    """Turn `kiln.print` ops into calls that hand their values to the runtime."""
    prints = collect_ops(module, {"kiln.print"})
    if not prints:
        return
    with module.context, ir.Location.unknown():
        declare_private_function(module, BEGIN_CALLEE, [])
        declare_private_function(module, WORD_CALLEE, [ir.IntegerType.get_signless(64)])
        declare_private_function(module, EMIT_CALLEE, [llvm.PointerType.get()])
    strings = StringGlobals(module, TEXT_PREFIX)
    for op in prints:
        text = _record_text(op)
        with module.context, ir.Location.unknown():
            symbol = strings.symbol(text)
        packed = op.operands[0].owner
        with ir.InsertionPoint(op), op.location:
            _lower_print(op, symbol)
        op.erase()
        if not isinstance(packed, ir.Block) and packed.name == "stablehlo.tuple" and not list(packed.result.uses):
            packed.erase()


@register_pass
class KilnLowerPrints(ModulePass):
    """Turn `kiln.print` ops into calls that hand their values to the runtime."""

    name = "kiln-lower-prints"

    def apply(self, module: ir.Module) -> None:
        lower_prints(module)
