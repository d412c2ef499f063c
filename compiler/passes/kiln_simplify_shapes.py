"""Pass `kiln-simplify-shapes` (stage "linalg", after stablehlo-legalize-to-linalg).

In: shape arithmetic as StableHLO leaves it once lowered to linalg: small
integer tensors (`tensor<3xi64>` start/limit/shape vectors built with
`concatenate` and `add`) computed by `linalg.generic`s, and
`tensor.reshape %x(%shape)` ops that only add or drop unit dims.
Out:
- a `linalg.generic` whose results are static integer tensors of at most
  16 elements becomes `tensor.from_elements` of one scalar computation per
  element (its body inlined with `linalg.index` set to the element's
  position), so `canonicalize` folds `tensor.extract` of it into the
  scalars, down to `tensor.dim`s of the arrays;
- `tensor.extract` at constant indices of a constant seen through static
  slices and reshapes becomes that constant;
- a `tensor.reshape` whose shape operand lists the source's own dims in
  order with unit dims added or removed becomes `tensor.collapse_shape`
  and/or `tensor.expand_shape`, which bufferize to views and which
  empty-tensor elimination and fusion see through.
Run `canonicalize` before (so shape operands are `from_elements`) and
after. Option `reshapes=false` leaves reshapes alone: the default pipeline
rewrites them only after elementwise fusion, which fuses chains of 1-d
column arithmetic better across a `tensor.reshape` than across the
expand_shape it would propagate (2-d `?x1` generics).
"""

from __future__ import annotations

import itertools

from kiln.compiler.mlir import arith, ir, tensor
from kiln.compiler.passes import ModulePass, option, register_pass
from kiln.compiler.passes._util import collect_ops, index_value

MAX_ELEMENTS = 16


def _is_small_integer_tensor(t: ir.Type) -> bool:
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return False
    if not isinstance(t.element_type, (ir.IntegerType, ir.IndexType)):
        return False
    count = 1
    for d in t.shape:
        count *= d
    return count <= MAX_ELEMENTS


def _affine_exprs(map_attr: ir.Attribute) -> list | None:
    """The map's results as ('dim', d) / ('const', c), or None if other."""
    exprs = []
    for e in ir.AffineMapAttr(map_attr).value.results:
        e = e.maybe_downcast()
        if isinstance(e, ir.AffineDimExpr):
            exprs.append(("dim", e.position))
        elif isinstance(e, ir.AffineConstantExpr):
            exprs.append(("const", e.value))
        else:
            return None
    return exprs


def _scalarizable(op: ir.Operation) -> bool:
    if not op.results or not all(_is_small_integer_tensor(r.type) for r in op.results):
        return False
    if any(str(it) != "#linalg.iterator_type<parallel>" for it in ir.ArrayAttr(op.attributes["iterator_types"])):
        return False
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    n_outs = len(op.results)
    for m in maps[-n_outs:]:
        if ir.AffineMapAttr(m).value != ir.AffineMap.get_identity(ir.AffineMapAttr(m).value.n_dims):
            return False
    if any(_affine_exprs(m) is None for m in maps):
        return False
    # Bodies of pure arithmetic, selects, extracts and scf.if only.
    ok = []

    def visit(inner):
        if inner == op:
            return ir.WalkResult.ADVANCE
        name = inner.name
        if not (name.startswith("arith.") or name in ("tensor.extract", "linalg.index", "linalg.yield",
                                                       "scf.if", "scf.yield")):
            ok.append(name)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return not ok


def _scalarize(op: ir.Operation) -> None:
    """Replace a small integer generic by from_elements of inlined bodies."""
    shape = list(ir.RankedTensorType(op.results[0].type).shape)
    n_outs = len(op.results)
    operands = list(op.operands)
    inputs, inits = operands[:-n_outs], operands[-n_outs:]
    maps = [_affine_exprs(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    elements: list[list[ir.Value]] = [[] for _ in range(n_outs)]
    for position in itertools.product(*[range(d) for d in shape]):
        with ir.InsertionPoint(op), op.location:
            def at(exprs):
                return [index_value(position[v] if kind == "dim" else v) for kind, v in exprs]

            values = [tensor.extract(x, at(maps[i])) for i, x in enumerate(inputs)]
            values += [tensor.extract(x, at(maps[len(inputs) + i])) for i, x in enumerate(inits)]
            coordinates = [index_value(p) for p in position]
            clone = op.clone()
            block = clone.regions[0].blocks[0]
            indices = collect_ops(clone, {"linalg.index"})
            for index_op in indices:
                dim = ir.IntegerAttr(index_op.attributes["dim"]).value
                index_op.results[0].replace_all_uses_with(coordinates[dim])
                index_op.erase()
            for arg, value in zip(block.arguments, values):
                arg.replace_all_uses_with(value)
            body = list(block.operations)
            terminator = body[-1]
            for inner in body[:-1]:
                inner.move_before(clone)
            for i, yielded in enumerate(terminator.operands):
                elements[i].append(yielded)
            clone.erase()
    with ir.InsertionPoint(op), op.location:
        replacements = [tensor.from_elements(r.type, elements[i]) for i, r in enumerate(op.results)]
    for r, new in zip(op.results, replacements):
        r.replace_all_uses_with(new)
    op.erase()


def _strip_casts(v: ir.Value) -> ir.Value:
    """Look through integer casts between index and i32/i64 (dims fit)."""
    while not isinstance(v.owner, ir.Block) and v.owner.name in ("arith.index_cast", "arith.extsi",
                                                                     "arith.extui", "arith.index_castui"):
        v = v.owner.operands[0]
    return v


def _dim_of(v: ir.Value) -> tuple[ir.Value, int] | int | None:
    """(array, axis) if `v` is `tensor.dim array, axis` (through casts), the
    integer if it is a constant, else None."""
    v = _strip_casts(v)
    if isinstance(v.owner, ir.Block):
        return None
    if v.owner.name == "arith.constant" and isinstance(v.owner.attributes["value"], ir.IntegerAttr):
        return ir.IntegerAttr(v.owner.attributes["value"]).value
    if v.owner.name == "tensor.dim":
        axis = _strip_casts(v.owner.operands[1])
        if not isinstance(axis.owner, ir.Block) and axis.owner.name == "arith.constant":
            return v.owner.operands[0], ir.IntegerAttr(axis.owner.attributes["value"]).value
    return None


def _resolve_dim(t: ir.Value, axis: int):
    """What dim `axis` of tensor `t` is known to equal: its static size, the
    size operand it was created with (tensor.empty, extract_slice; through
    the init of a linalg op, the destination of an insert_slice and casts)
    as a Value, else ("dim", tensor, axis)."""
    dynamic = ir.ShapedType.get_dynamic_size()
    while True:
        if not ir.RankedTensorType(t.type).is_dynamic_dim(axis):
            return ir.RankedTensorType(t.type).shape[axis]
        owner = t.owner
        if isinstance(owner, ir.Block):
            return ("dim", t, axis)
        name = owner.name
        if name == "tensor.empty":
            tt = ir.RankedTensorType(t.type)
            return _resolve_value(list(owner.operands)[sum(1 for d in range(axis) if tt.is_dynamic_dim(d))])
        if name == "tensor.extract_slice":
            sizes = list(ir.DenseI64ArrayAttr(owner.attributes["static_sizes"]))
            if len(sizes) != ir.RankedTensorType(t.type).rank or sizes[axis] != dynamic:
                return ("dim", t, axis)  # rank-reducing or static
            n_offsets = sum(1 for o in ir.DenseI64ArrayAttr(owner.attributes["static_offsets"]) if o == dynamic)
            return _resolve_value(list(owner.operands)[1 + n_offsets + sum(1 for d in sizes[:axis] if d == dynamic)])
        if name == "tensor.cast":
            t = owner.operands[0]
            continue
        if name == "tensor.insert_slice":
            t = owner.operands[1]
            continue
        if name.startswith("linalg.") and len(owner.results):
            # Destination-style: a result has its init's shape.
            position = next(i for i, r in enumerate(owner.results) if r == t)
            init = list(owner.operands)[len(owner.operands) - len(owner.results) + position]
            t = init
            continue
        return ("dim", t, axis)


def _resolve_value(v: ir.Value):
    """An index/integer value, through casts and `tensor.dim` (resolved with `_resolve_dim`)."""
    v = _strip_casts(v)
    owner = v.owner
    if not isinstance(owner, ir.Block) and owner.name == "tensor.dim":
        axis = _strip_casts(owner.operands[1])
        if not isinstance(axis.owner, ir.Block) and axis.owner.name == "arith.constant":
            return _resolve_dim(owner.operands[0], ir.IntegerAttr(axis.owner.attributes["value"]).value)
    return v


def _same_dim_value(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return a[1] == b[1] and a[2] == b[2]
    if isinstance(a, tuple) or isinstance(b, tuple):
        return False
    return a == b


def _constant_element(op: ir.Operation) -> ir.Attribute | None:
    """The value `tensor.extract` reads when its source is a constant seen
    through static extract_slice / collapse_shape / expand_shape views."""
    indices = []
    for v in list(op.operands)[1:]:
        c = _dim_of(v)
        if not isinstance(c, int):
            return None
        indices.append(c)
    value = op.operands[0]
    while True:
        owner = value.owner
        if isinstance(owner, ir.Block):
            return None
        name = owner.name
        if name == "arith.constant":
            attr = owner.attributes["value"]
            if not isinstance(attr, ir.DenseIntElementsAttr):
                return None
            shape = ir.RankedTensorType(value.type).shape
            if len(indices) != len(shape) or any(not 0 <= i < d for i, d in zip(indices, shape)):
                return None  # out of bounds (code that never runs for this element)
            flat = 0
            for i, d in zip(indices, shape):
                flat = flat * d + i
            element_type = ir.RankedTensorType(value.type).element_type
            return ir.IntegerAttr.get(element_type, attr[0] if attr.is_splat else attr[flat])
        if name == "tensor.extract_slice" and len(owner.operands) == 1:
            offsets = list(ir.DenseI64ArrayAttr(owner.attributes["static_offsets"]))
            strides = list(ir.DenseI64ArrayAttr(owner.attributes["static_strides"]))
            src_rank = ir.RankedTensorType(owner.operands[0].type).rank
            if len(indices) != src_rank:
                return None  # rank-reducing slice
            indices = [o + i * st for o, i, st in zip(offsets, indices, strides)]
            value = owner.operands[0]
        elif name in ("tensor.collapse_shape", "tensor.expand_shape"):
            src_type = ir.RankedTensorType(owner.operands[0].type)
            if not src_type.has_static_shape:
                return None
            res_shape = ir.RankedTensorType(value.type).shape
            flat = 0
            for i, d in zip(indices, res_shape):
                flat = flat * d + i
            indices = []
            for d in reversed(src_type.shape):
                indices.append(flat % d if d else 0)
                flat = flat // d if d else 0
            indices.reverse()
            value = owner.operands[0]
        else:
            return None


def _group(rank: int, keep: list[int]) -> list[list[int]]:
    """Reassociation folding the dims not in `keep` (unit dims) into a
    neighbouring kept dim; [] when nothing is kept (to rank 0)."""
    if not keep:
        return []
    groups = [[k] for k in keep]
    owner = 0
    for d in range(rank):
        if d in keep:
            owner = keep.index(d)
        elif d < keep[0]:
            groups[0].append(d)
        else:
            groups[owner].append(d)
    return [sorted(g) for g in groups]


def _reassociation(groups: list[list[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def _unit_reshape(op: ir.Operation) -> bool:
    """Rewrite a reshape that only adds/drops unit dims; False if it is not one."""
    source, shape = op.operands
    shape_owner = shape.owner
    if isinstance(shape_owner, ir.Block) or shape_owner.name != "tensor.from_elements":
        return False
    if not isinstance(source.type, ir.RankedTensorType) or not isinstance(op.results[0].type, ir.RankedTensorType):
        return False
    src_type = ir.RankedTensorType(source.type)
    res_type = ir.RankedTensorType(op.results[0].type)
    keep_src = [d for d in range(src_type.rank) if src_type.shape[d] != 1]
    keep_res = [d for d in range(res_type.rank) if res_type.shape[d] != 1]
    if len(keep_src) != len(keep_res):
        return False
    entries = list(shape_owner.operands)
    if len(entries) != res_type.rank:
        return False
    for s, r in zip(keep_src, keep_res):
        known = _dim_of(entries[r])
        if src_type.is_dynamic_dim(s):
            if not _same_dim_value(_resolve_dim(source, s), _resolve_value(entries[r])):
                return False
        elif not (known == src_type.shape[s] or (not res_type.is_dynamic_dim(r) and res_type.shape[r] == src_type.shape[s])):
            return False
    with ir.InsertionPoint(op), op.location:
        value = source
        if len(keep_src) != src_type.rank:
            squeezed = ir.RankedTensorType.get([src_type.shape[d] for d in keep_src], src_type.element_type)
            value = tensor.collapse_shape(squeezed, value, _reassociation(_group(src_type.rank, keep_src)))
        # The squeezed dims with the result's static/dynamic sizes.
        target = ir.RankedTensorType.get([res_type.shape[d] for d in keep_res], src_type.element_type)
        if value.type != target:
            value = tensor.cast(target, value)
        if len(keep_res) != res_type.rank:
            sizes = []
            for d in range(res_type.rank):
                if d in keep_res and res_type.is_dynamic_dim(d):
                    sizes.append(tensor.dim(value, index_value(keep_res.index(d))))
            value = tensor.expand_shape(res_type, value, _reassociation(_group(res_type.rank, keep_res)),
                                        sizes, list(res_type.shape))
    op.results[0].replace_all_uses_with(value)
    op.erase()
    return True


@register_pass
class KilnSimplifyShapes(ModulePass):
    """Scalarize small integer shape tensors; turn unit-dim reshapes into collapse/expand_shape."""

    name = "kiln-simplify-shapes"
    reshapes: bool = option(True, "also turn reshapes that only add or drop unit dims into collapse/expand_shape")

    def apply(self, module: ir.Module) -> None:
        for op in collect_ops(module, {"linalg.generic"}):
            if _scalarizable(op):
                _scalarize(op)
        if self.reshapes:
            for op in collect_ops(module, {"tensor.reshape"}):
                _unit_reshape(op)
        for op in collect_ops(module, {"tensor.extract"}):
            attr = _constant_element(op)
            if attr is not None:
                with ir.InsertionPoint(op), op.location:
                    constant = arith.constant(op.results[0].type, attr)
                op.results[0].replace_all_uses_with(constant)
                op.erase()

