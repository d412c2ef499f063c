"""Pass `kiln-lower-sorts` (stage "linalg", after kiln-lower-prints).

In: `kiln.sort(%x, %kth) {indices}` on a tensor of rank >= 1 of a real or
bool dtype.
Out: a call of the runtime's sort routine for the dtype (runtime/sort.c,
linked into every library), on `%x` seen as rows x n (its leading axes
merged), writing a fresh `tensor.empty` of the same shape:
`@kiln_sort_<dtype>` for the values, `@kiln_argsort_<dtype>` for the stable
positions. The callee is declared private with `bufferization.access` per
argument (the input is only read, so no copy of it is made; the output only
written) and `kiln.returns_argument = 1`: the call's result is its output
argument (kiln-runtime-call-results drops the result after bufferization,
and the routine receives each memref as its expanded fields). Unsigned data are bitcast to
the signless type of the same width around the call (the callee's name
keeps the order: `kiln_sort_u32`).
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, func, ir, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops, index_value
from kiln.dialects import stablehlo as hlo

RETURNS_ARGUMENT = "kiln.returns_argument"
DYNAMIC = ir.ShapedType.get_dynamic_size() if hasattr(ir, "ShapedType") else -1


def dtype_name(element: ir.Type) -> str:
    """The runtime's name of an element type: bool, i8..i64, u8..u64, f16, f32, f64."""
    if isinstance(element, ir.FloatType) or str(element) in ("f16", "f32", "f64"):
        name = str(element)
        if name not in ("f16", "f32", "f64"):
            raise ValueError(f"kiln-lower-sorts: cannot sort elements of type {element}; kiln sorts f16, f32, "
                             "f64, integers and bools")
        return name
    integer = ir.IntegerType(element)
    if integer.width == 1:
        return "bool"
    return f"{'u' if integer.is_unsigned else 'i'}{integer.width}"


def _declare(module: ir.Module, symbol: str, element: ir.Type, result: ir.Type) -> None:
    if symbol in ir.SymbolTable(module.operation):
        return
    matrix = ir.RankedTensorType.get([DYNAMIC, DYNAMIC], element)
    out = ir.RankedTensorType.get([DYNAMIC, DYNAMIC], result)
    kth = ir.RankedTensorType.get([DYNAMIC], ir.IntegerType.get_signless(64))
    with ir.InsertionPoint.at_block_begin(module.body):
        fn = func.FuncOp(symbol, ir.FunctionType.get([matrix, out, kth], [out]), visibility="private")
    access = [ir.DictAttr.get({"bufferization.access": ir.StringAttr.get(a)}) for a in ("read", "write", "read")]
    fn.arg_attrs = ir.ArrayAttr.get(access)
    # The callee fills its output argument; kiln-runtime-call-results makes the
    # call's result that argument once buffers exist.
    fn.attributes[RETURNS_ARGUMENT] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)


def _signless(element: ir.Type) -> ir.Type:
    if isinstance(element, ir.IntegerType) and ir.IntegerType(element).is_unsigned:
        return ir.IntegerType.get_signless(ir.IntegerType(element).width)
    return element


def _bitcast(x: ir.Value, element: ir.Type) -> ir.Value:
    t = ir.RankedTensorType(x.type)
    if t.element_type == element:
        return x
    return hlo.one("bitcast_convert", ir.RankedTensorType.get(t.shape, element), x)


def _lower_sort(module: ir.Module, op: ir.Operation) -> None:
    x, kth = op.operands
    x_type, result_type = ir.RankedTensorType(x.type), ir.RankedTensorType(op.results[0].type)
    indices = ir.BoolAttr(op.attributes["indices"]).value
    if x_type.rank == 0:
        raise ValueError(f"kiln-lower-sorts: {op.location}: kiln.sort needs an operand of rank >= 1")
    name = dtype_name(x_type.element_type)
    element = _signless(x_type.element_type)
    out_element = ir.IntegerType.get_signless(64) if indices else element
    symbol = f"kiln_{'argsort' if indices else 'sort'}_{name}"
    _declare(module, symbol, element, out_element)
    rank = x_type.rank
    x = _bitcast(x, element)
    dims = [tensor.dim(x, index_value(a)) for a in range(rank)]
    if rank == 1:
        matrix = tensor.ExpandShapeOp(ir.RankedTensorType.get([1, x_type.shape[0]], element), x,
                                      ir.ArrayAttr.get([ir.ArrayAttr.get([_i64(0), _i64(1)])]),
                                      [dims[0]] if x_type.is_dynamic_dim(0) else [],
                                      [1, x_type.shape[0]]).result
    elif rank == 2:
        matrix = x
    else:
        lead = ir.ArrayAttr.get([_i64(a) for a in range(rank - 1)])
        rows = 1
        for a in range(rank - 1):
            rows = rows * x_type.shape[a] if rows != DYNAMIC and not x_type.is_dynamic_dim(a) else DYNAMIC
        matrix = tensor.CollapseShapeOp(ir.RankedTensorType.get([rows, x_type.shape[-1]], element), x,
                                        ir.ArrayAttr.get([lead, ir.ArrayAttr.get([_i64(rank - 1)])])).result
    dynamic_matrix = ir.RankedTensorType.get([DYNAMIC, DYNAMIC], element)
    matrix = tensor.CastOp(dynamic_matrix, matrix).result
    rows_value = index_value(1)
    for d in dims[:-1]:
        rows_value = arith.muli(rows_value, d)
    out_type = ir.RankedTensorType.get([DYNAMIC, DYNAMIC], out_element)
    out = tensor.CastOp(out_type, tensor.EmptyOp([rows_value, dims[-1]], out_element).result).result
    kth = tensor.CastOp(ir.RankedTensorType.get([DYNAMIC], ir.IntegerType.get_signless(64)), kth).result \
        if ir.RankedTensorType(kth.type).shape != [DYNAMIC] else kth
    sorted_matrix = func.CallOp([out_type], ir.FlatSymbolRefAttr.get(symbol), [matrix, out, kth]).result
    shaped_element = out_element
    if rank == 1:
        flat = tensor.CollapseShapeOp(ir.RankedTensorType.get([DYNAMIC], shaped_element), sorted_matrix,
                                      ir.ArrayAttr.get([ir.ArrayAttr.get([_i64(0), _i64(1)])])).result
        shaped = flat
    elif rank == 2:
        shaped = sorted_matrix
    else:
        lead = ir.ArrayAttr.get([_i64(a) for a in range(rank - 1)])
        static = [DYNAMIC] * rank
        shaped = tensor.ExpandShapeOp(ir.RankedTensorType.get(static, shaped_element), sorted_matrix,
                                      ir.ArrayAttr.get([lead, ir.ArrayAttr.get([_i64(rank - 1)])]),
                                      dims, static).result
    final_type = ir.RankedTensorType.get(result_type.shape, shaped_element)
    if shaped.type != final_type:
        shaped = tensor.CastOp(final_type, shaped).result
    shaped = _bitcast(shaped, result_type.element_type)
    op.results[0].replace_all_uses_with(shaped)
    op.erase()


def _i64(v: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


def lower_sorts(module: ir.Module) -> None:
    """Turn each `kiln.sort` into a call of the runtime's sort routine for its dtype."""
    for op in collect_ops(module, {"kiln.sort"}):
        with ir.InsertionPoint(op), op.location:
            _lower_sort(module, op)


@register_pass
class KilnLowerSorts(ModulePass):
    """Turn `kiln.sort` ops into calls of the runtime's sorting routines."""

    name = "kiln-lower-sorts"

    def apply(self, module: ir.Module) -> None:
        lower_sorts(module)
