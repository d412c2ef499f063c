"""Pass `kiln-dims-from-shapes` (stage "linalg", first).

In: a function whose implicit dim arguments carry `kiln.dim_of = [k, axis]`
(set by the lowering: the argument is the size of axis `axis` of argument
`k`, which the runtime guarantees).
Out: every use of such an argument reads `tensor.dim %arg<k>, axis` instead
(as a rank-0 tensor built with `tensor.from_elements`). Shape arithmetic
then refers to the array's own dims, so canonicalization can prove that a
slice covers a whole dim, fold a reshape that only adds or drops unit dims,
and drop a run-time check that compares a dim with itself.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import index_value


def _function_args_dim_of(fn: ir.Operation) -> list[tuple[int, int, int]]:
    """(dim argument, array argument, axis) for each annotated argument."""
    if "arg_attrs" not in fn.attributes:
        return []
    found = []
    for i, attrs in enumerate(ir.ArrayAttr(fn.attributes["arg_attrs"])):
        attrs = ir.DictAttr(attrs)
        if "kiln.dim_of" in attrs:
            k, axis = list(ir.DenseI64ArrayAttr(attrs["kiln.dim_of"]))
            found.append((i, k, axis))
    return found


@register_pass
class KilnDimsFromShapes(ModulePass):
    """Read implicit dim arguments from the dims of the arrays they describe."""

    name = "kiln-dims-from-shapes"

    def apply(self, module: ir.Module) -> None:
        for fn in module.body.operations:
            if fn.operation.name != "func.func" or not fn.regions[0].blocks:
                continue
            entry = fn.regions[0].blocks[0]
            for i, k, axis in _function_args_dim_of(fn):
                dim_arg, array = entry.arguments[i], entry.arguments[k]
                dim_type = ir.RankedTensorType(dim_arg.type)
                if dim_type.rank != 0 or not isinstance(array.type, ir.RankedTensorType):
                    continue
                if not list(dim_arg.uses):
                    continue
                with ir.InsertionPoint.at_block_begin(entry), fn.location:
                    size = tensor.dim(array, index_value(axis))
                    scalar = arith.index_cast(dim_type.element_type, size)
                    as_tensor = tensor.from_elements(dim_type, [scalar])
                dim_arg.replace_all_uses_with(as_tensor)
