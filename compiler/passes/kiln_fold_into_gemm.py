"""Pass `kiln-fold-into-gemm` (stage "linalg", after kiln-pair-matvecs).

What BLAS gemm computes besides the product, `C := alpha * A @ B + beta * C`,
prepared for kiln-linalg-to-blas, which makes the call:

- Epilogue: a `linalg.matmul` into a zero fill whose only user is an
  elementwise `linalg.generic` adding a term to it, `T = A @ B; R = T +
  e(...)` (`e` any elementwise expression of the generic's other operands:
  gemm's `C[:] = alpha * A @ B + beta * C` has `e = beta * C`, an MLP layer
  `x @ W + b` has `e = b`), becomes `Z = e(...)` as its own elementwise
  generic and the matmul accumulating into it (init `Z`). The call then
  runs with beta = 1 on `Z`'s buffer: the product is added where it is
  computed, instead of a temporary `T` read again by another pass. When `e`
  reads an argument that the function writes (gemm's `C`) and nothing reads
  that argument later, `Z` is computed in the argument's own buffer, where
  the result is stored anyway: no copy back.
- Prologue: an elementwise scaling `s * X` used only by the matmul (gemm's
  `alpha * A`) moves right before it; kiln-linalg-to-blas then passes `X`
  and `alpha = s` to the call instead of scaling a copy of the matrix.

Rounding: `Z + A @ B` summed inside BLAS instead of `(A @ B) + Z` after it,
and `alpha` applied inside BLAS: the same terms, the order of one operation
per element differs (as between two BLAS libraries).
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, linalg
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import all_parallel, clone_ops, collect_ops, zero_fill

_ADDS = ("arith.addf", "arith.addi")


def _depends_on(value: ir.Value, argument: ir.Value, block: ir.Block) -> bool:
    """Whether `value` (in the generic's body `block`) is computed from `argument`."""
    stack, seen = [value], []
    while stack:
        v = stack.pop()
        if v == argument:
            return True
        owner = v.owner
        if isinstance(owner, ir.Block) or owner.operation.block != block or any(owner.operation == s for s in seen):
            continue
        seen.append(owner.operation)
        stack.extend(owner.operation.operands)
    return False


def _match(matmul: ir.Operation):
    """(generic, index of the product among its inputs, the added term) when
    `matmul` qualifies, else None."""
    if len(matmul.results) != 1 or "cast" in matmul.attributes or zero_fill(matmul.operands[2]) is None:
        return None
    product = matmul.results[0]
    uses = list(product.uses)
    generic = uses[0].owner.operation if uses else None
    if generic is None or any(u.owner.operation != generic for u in uses):
        return None
    if generic.name != "linalg.generic" or len(generic.results) != 1 or not all_parallel(generic):
        return None
    if generic.results[0].type != product.type:
        return None
    inputs = len(generic.operands) - 1
    positions = [i for i, v in enumerate(generic.operands) if v == product]
    if len(positions) != 1 or positions[0] >= inputs:
        # The product is the generic's init too (an in-place update): its
        # body may read it through the output argument; the input counts.
        if not (len(positions) == 2 and positions[0] < inputs and positions[1] == inputs):
            return None
    index = positions[0]
    maps = [ir.AffineMapAttr(m).value for m in generic.attributes["indexing_maps"]]
    rank = ir.RankedTensorType(product.type).rank
    identity = ir.AffineMap.get_identity(rank)
    if maps[index] != identity or maps[-1] != identity:
        return None
    block = generic.regions[0].blocks[0]
    argument, out_argument = block.arguments[index], block.arguments[inputs]
    if list(out_argument.uses):
        return None
    body = [o.operation for o in block.operations]
    yielded = body[-1]
    total = yielded.operands[0].owner
    if isinstance(total, ir.Block) or total.name not in _ADDS or total.operation.block != block:
        return None
    if [u.owner.operation for u in argument.uses] != [total.operation] or len(list(total.result.uses)) != 1:
        return None
    left, right = total.operands
    term = right if left == argument else left if right == argument else None
    if term is None or term == argument or _depends_on(term, argument, block):
        return None
    return generic, index, term


def _writable_destination(generic: ir.Operation, candidates: list[int]) -> ir.Value | None:
    """An input of `generic` (among `candidates`, read elementwise) that is a
    writable argument of the function (an argument the function writes:
    gemm's `C`) read by nothing after `generic`: the term is then computed in
    the argument's own buffer, where the result is stored anyway."""
    for i in candidates:
        value = generic.operands[i]
        if not isinstance(value.owner, ir.Block) or value.type != generic.results[0].type:
            continue
        fn = value.owner.owner.operation
        if fn.name != "func.func" or "arg_attrs" not in fn.attributes:
            continue
        attrs = ir.DictAttr(ir.ArrayAttr(fn.attributes["arg_attrs"])[value.arg_number])
        if "bufferization.writable" not in attrs or not ir.BoolAttr(attrs["bufferization.writable"]).value:
            continue
        users = [u.owner.operation for u in value.uses]
        if all(u == generic or (u.block == generic.block and u.is_before_in_block(generic)) for u in users):
            return value
    return None


def _rewrite(matmul: ir.Operation, generic: ir.Operation, index: int, term: ir.Value) -> ir.Operation:
    fill = zero_fill(matmul.operands[2])
    empty = fill.operands[1]
    inputs = len(generic.operands) - 1
    maps = list(generic.attributes["indexing_maps"])
    old_block = generic.regions[0].blocks[0]
    keep = [i for i in range(inputs) if i != index]
    destination = _writable_destination(generic, [i for i in keep if maps[i] == maps[-1]])
    if destination is not None:
        empty = destination
    with ir.InsertionPoint(generic), generic.location:
        addend = linalg.GenericOp([matmul.results[0].type], [generic.operands[i] for i in keep], [empty],
                                  ir.ArrayAttr.get([maps[i] for i in keep] + [maps[-1]]),
                                  generic.attributes["iterator_types"])
        block = addend.regions[0].blocks.append(*[old_block.arguments[i].type for i in keep + [inputs]])
        mapping = {old_block.arguments[i]: block.arguments[k] for k, i in enumerate(keep)}
        mapping[old_block.arguments[inputs]] = block.arguments[-1]
        body = [o.operation for o in old_block.operations]
        addition = body[-1].operands[0].owner.operation
        with ir.InsertionPoint(block):
            clone_ops([o for o in body[:-1] if o != addition], mapping)
            linalg.YieldOp([mapping.get(term, term)])
        # The matmul itself, pointed at the new init (placed here: the term's
        # operands may be defined after the old matmul).
        accumulate = matmul.clone()
        accumulate.operands[2] = addend.result
    generic.results[0].replace_all_uses_with(accumulate.results[0])
    generic.erase()
    matmul.erase()
    return accumulate


def _is_scaling(op: ir.Operation) -> bool:
    """An elementwise `linalg.generic` computing `s * x` (s from outside its body)."""
    if op.name != "linalg.generic" or len(op.results) != 1 or not all_parallel(op):
        return False
    block = op.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    if len(body) != 2 or body[0].name != "arith.mulf" or body[1].operands[0] != body[0].result:
        return False
    arguments = list(block.arguments)
    inside = [v in arguments for v in body[0].operands]
    return inside.count(True) == 1


def _move_scalings(matmul: ir.Operation) -> None:
    """Put a scaling of an operand that only `matmul` reads right before it."""
    for operand in list(matmul.operands[:2]):
        owner = operand.owner
        if isinstance(owner, ir.Block):
            continue
        owner = owner.operation
        if owner.block != matmul.block or not _is_scaling(owner):
            continue
        if all(u.owner.operation == matmul for u in operand.uses):
            owner.move_before(matmul)


@register_pass
class KilnFoldIntoGemm(ModulePass):
    """Fold a matmul's added term and operand scaling into what gemm computes."""

    name = "kiln-fold-into-gemm"

    def apply(self, module: ir.Module) -> None:
        for matmul in collect_ops(module, {"linalg.matmul"}):
            found = _match(matmul)
            if found is not None:
                matmul = _rewrite(matmul.operation, *found)
            _move_scalings(matmul.operation)
