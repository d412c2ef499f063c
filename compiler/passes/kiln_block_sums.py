"""Pass `kiln-block-sums` (stage "linalg", after kiln-reassociate-reductions).

In: `linalg.generic` float sums (one result, the yield an `arith.addf` of
the output element, a body without `linalg.index`) whose last loop is the
one reduction and is long (dynamic or at least two blocks).
Out: the same sum in two levels, so that its rounding error stays near
NumPy's pairwise summation while every loop still vectorizes: (1) the sum of
each block of `block` elements, over a view of the leading `m * block`
elements of each input (`tensor.extract_slice` at offset 0, then
`tensor.expand_shape` of the summed axis into (m, block): no copy), written
to a tensor of partial sums; (2) the original generic over the remaining
`n - m * block` elements; (3) the partial sums added onto that, as a sum
over m whose adds are reassociable. A sum over all axes of a 2-D operand
(rank-2 domain, both loops reductions) is first split into row sums and the
sum of those.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, ir, linalg, tensor
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import collect_ops, index_value

FASTMATH = "#arith.fastmath<reassoc,contract>"
PARALLEL = "#linalg.iterator_type<parallel>"
REDUCTION = "#linalg.iterator_type<reduction>"
DYNAMIC = ir.ShapedType.get_dynamic_size()


def _iterators(op: ir.Operation) -> list[str]:
    return ["reduction" if "reduction" in str(t) else "parallel" for t in op.attributes["iterator_types"]]


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]


def _is_float(t: ir.Type) -> bool:
    return isinstance(t, (ir.F16Type, ir.F32Type, ir.F64Type))


def _is_sum(op: ir.Operation) -> bool:
    """One float result whose body yields `addf(out, ...)` (either order) and reads no `linalg.index`."""
    if len(op.results) != 1 or not _is_float(ir.RankedTensorType(op.results[0].type).element_type):
        return False
    block = op.regions[0].blocks[0]
    out = block.arguments[len(block.arguments) - 1]
    ops = [o.operation for o in block.operations]
    if any(o.name == "linalg.index" for o in ops):
        return False
    terminator = ops[-1]
    combiner = terminator.operands[0].owner
    if isinstance(combiner, ir.Block) or combiner.name != "arith.addf":
        return False
    return out in list(combiner.operands) and len(list(out.uses)) == 1


def _axis_of(m: ir.AffineMap, dim: int) -> int | None | bool:
    """The result position that is exactly `dim` in `m`; None when `dim` is
    not used; False when it is used otherwise (inside an expression or twice)."""
    found = None
    for p, expr in enumerate(m.results):
        if str(expr) == f"d{dim}":
            if found is not None:
                return False
            found = p
        elif _mentions(expr, dim):
            return False
    return found


def _mentions(expr: ir.AffineExpr, dim: int) -> bool:
    text = str(expr)
    for sep in "()+*-":
        text = text.replace(sep, " ")
    return f"d{dim}" in text.split()


def _size(v: ir.Value, axis: int):
    t = ir.RankedTensorType(v.type)
    return t.shape[axis] if not t.is_dynamic_dim(axis) else tensor.dim(v, index_value(axis))


def _as_index(v) -> ir.Value:
    return v if isinstance(v, ir.Value) else index_value(v)


def _slice(v: ir.Value, axis: int, start, length) -> ir.Value:
    """`v[..., start:start+length, ...]` along `axis` (a view)."""
    t = ir.RankedTensorType(v.type)
    rank = t.rank
    offsets, sizes, s_off, s_size = [], [], [], []
    for d in range(rank):
        if d == axis:
            s_off.append(DYNAMIC if isinstance(start, ir.Value) else start)
            if isinstance(start, ir.Value):
                offsets.append(start)
            s_size.append(DYNAMIC)
            sizes.append(length)
        else:
            s_off.append(0)
            size = _size(v, d)
            s_size.append(DYNAMIC if isinstance(size, ir.Value) else size)
            if isinstance(size, ir.Value):
                sizes.append(size)
    shape = [DYNAMIC if d == axis else t.shape[d] for d in range(rank)]
    return tensor.extract_slice(ir.RankedTensorType.get(shape, t.element_type), v, offsets, sizes, [],
                                s_off, s_size, [1] * rank)


def _expand(v: ir.Value, axis: int, m: ir.Value, block: int) -> ir.Value:
    """`v` with `axis` (of size m * block) split into (m, block): a view."""
    t = ir.RankedTensorType(v.type)
    shape, groups, dyn, static = [], [], [], []
    for d in range(t.rank):
        if d == axis:
            groups.append([len(shape), len(shape) + 1])
            shape += [DYNAMIC, block]
            dyn.append(m)
            static += [DYNAMIC, block]
        else:
            groups.append([len(shape)])
            shape.append(t.shape[d])
            if t.is_dynamic_dim(d):
                dyn.append(tensor.dim(v, index_value(d)))
            static.append(t.shape[d])
    result = ir.RankedTensorType.get(shape, t.element_type)
    reassociation = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
                                                        for i in g]) for g in groups])
    return tensor.ExpandShapeOp(result, v, reassociation, dyn, static).result


def _fill(value: float, sizes: list, element: ir.Type) -> ir.Value:
    empty = tensor.empty(sizes, element)
    return linalg.fill(arith.constant(element, value), outs=[empty])


def _generic(result_type, inputs, outputs, maps, iterators) -> linalg.GenericOp:
    return linalg.GenericOp([result_type], inputs, outputs,
                            ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                            ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL if k == "parallel" else REDUCTION)
                                              for k in iterators]))


def _add_generic(partials: ir.Value, init: ir.Value, in_map, out_map, iterators) -> ir.Value:
    """`init` plus the sum of `partials` over the loops marked reduction (reassociable adds)."""
    element = ir.RankedTensorType(init.type).element_type
    op = _generic(init.type, [partials], [init], [in_map, out_map], iterators)
    body = op.regions[0].blocks.append(element, element)
    with ir.InsertionPoint(body):
        total = arith.AddFOp(body.arguments[1], body.arguments[0])
        total.attributes["fastmath"] = ir.Attribute.parse(FASTMATH)
        linalg.YieldOp([total.result])
    return op.result


def _move_body(old: ir.Operation, new: linalg.GenericOp) -> None:
    """Move the body of `old` into `new` (same block argument types)."""
    old_block = old.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*[a.type for a in old_block.arguments])
    for a, b in zip(old_block.arguments, block.arguments):
        a.replace_all_uses_with(b)
    for o in list(old_block.operations):
        block.append(o.operation)


def _block_last(op: ir.Operation, block: int) -> ir.Value | None:
    """The two-level form of a sum whose last loop is its one reduction."""
    iterators = _iterators(op)
    rank = len(iterators)
    last = rank - 1
    num_inputs = len(op.operands) - 1
    maps = _maps(op)
    axes = [_axis_of(m, last) for m in maps[:num_inputs]]
    if any(a is False for a in axes) or all(a is None for a in axes):
        return None
    first = next(i for i, a in enumerate(axes) if a is not None)
    n = _size(op.operands[first], axes[first])
    if isinstance(n, int) and n < 2 * block:
        return None
    n = _as_index(n)
    b = index_value(block)
    m = arith.divsi(n, b)  # signed: a size that is invalid (negative) in a loop that never runs stays negative, and kiln-check-alloc-sizes{loops=true} makes its buffer empty
    head = arith.muli(m, b)
    tail_len = arith.subi(n, head)
    # (1) Partial sums of each block: loops (..., blocks, within block).
    views, new_maps = [], []
    for v, mp, axis in zip(op.operands[:num_inputs], maps[:num_inputs], axes):
        exprs = list(mp.results)
        if axis is None:
            views.append(v)
            new_maps.append(ir.AffineMap.get(rank + 1, 0, exprs))
            continue
        views.append(_expand(_slice(v, axis, 0, head), axis, m, block))
        exprs[axis:axis + 1] = [ir.AffineDimExpr.get(last), ir.AffineDimExpr.get(rank)]
        new_maps.append(ir.AffineMap.get(rank + 1, 0, exprs))
    init = op.operands[num_inputs]
    init_type = ir.RankedTensorType(init.type)
    out_map = maps[num_inputs]
    partial_sizes = [_size(init, d) for d in range(init_type.rank)] + [m]
    partial_type = ir.RankedTensorType.get(list(init_type.shape) + [DYNAMIC], init_type.element_type)
    partial_init = _fill(-0.0, partial_sizes, init_type.element_type)
    partial_out_map = ir.AffineMap.get(rank + 1, 0, list(out_map.results) + [ir.AffineDimExpr.get(last)])
    partial = _generic(partial_type, views, [partial_init], new_maps + [partial_out_map],
                       iterators[:last] + ["parallel", "reduction"])
    # (2) The tail: the original loop over the last n - m * block elements.
    rests = [None if axis is None else _slice(v, axis, head, tail_len)
             for v, axis in zip(op.operands[:num_inputs], axes)]
    tail = op.clone()
    for i, rest in enumerate(rests):
        if rest is not None:
            tail.operands[i] = rest
    _move_body(op, partial)
    # (3) The partial sums added onto the tail's result.
    in_map = ir.AffineMap.get(rank, 0, list(out_map.results) + [ir.AffineDimExpr.get(last)])
    return _add_generic(partial.result, tail.results[0], in_map, out_map, iterators)


def _split_rows(op: ir.Operation) -> tuple[ir.Value, ir.Operation]:
    """A sum over both loops of a rank-2 domain as row sums (the last loop)
    then the sum of the rows: two one-reduction sums."""
    element = ir.RankedTensorType(op.results[0].type).element_type
    num_inputs = len(op.operands) - 1
    maps = _maps(op)
    init = op.operands[num_inputs]
    rows = None
    for v, mp in zip(op.operands[:num_inputs], maps[:num_inputs]):
        axis = _axis_of(mp, 0)
        if axis is not None and axis is not False:
            rows = _size(v, axis)
            break
    assert rows is not None, "kiln-block-sums: a split sum reads its rows"
    row_init = _fill(-0.0, [rows], element)
    row_map = ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(0)])
    row_type = ir.RankedTensorType.get([rows if isinstance(rows, int) else DYNAMIC], element)
    row_sums = _generic(row_type, list(op.operands[:num_inputs]), [row_init], maps[:num_inputs] + [row_map],
                        ["parallel", "reduction"])
    _move_body(op, row_sums)
    whole = ir.AffineMap.get(1, 0, [ir.AffineDimExpr.get(0)])
    scalar = ir.AffineMap.get(1, 0, [])
    return _add_generic(row_sums.result, init, whole, scalar, ["reduction"]), row_sums


@register_pass
class KilnBlockSums(ModulePass):
    """Sum long float reductions in blocks, then the block sums, for pairwise-like accuracy at vector speed."""

    name = "kiln-block-sums"
    block: int = option(4096, "elements per block: reductions shorter than two blocks are left alone", minimum=2)

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"linalg.generic"}):
            if not _is_sum(op):
                continue
            iterators = _iterators(op)
            if iterators.count("reduction") == 1 and iterators[-1] == "reduction":
                target = op
            elif iterators == ["reduction", "reduction"] and ir.RankedTensorType(op.results[0].type).rank == 0 \
                    and all(_axis_of(mp, 0) is not False for mp in _maps(op)) \
                    and any(isinstance(_axis_of(mp, 0), int) and _axis_of(mp, 0) is not False
                            for mp in _maps(op)[:-1]):
                with ir.InsertionPoint(op), op.location:
                    new, target = _split_rows(op)
                op.results[0].replace_all_uses_with(new)
                op.erase()
                target = target.operation
            else:
                continue
            with ir.InsertionPoint(target), target.location:
                new = _block_last(target, self.block)
            if new is None:
                continue
            target.results[0].replace_all_uses_with(new)
            target.erase()
