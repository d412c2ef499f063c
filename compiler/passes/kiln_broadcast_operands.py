"""Pass `kiln-broadcast-operands` (stage "stablehlo", after immut-to-stablehlo).

In: `stablehlo.dynamic_broadcast_in_dim` ops with operand dims that may be 1
at run time (dynamic, in neither `known_*expanding_dimensions` list), whose
operand is the only use of an elementwise op or of another broadcast.
Out: the elementwise op applied to broadcast operands (`bcast(x + y)` becomes
`bcast(x) + bcast(y)`), and a broadcast of a broadcast as one broadcast, until
the broadcasts that may expand sit on values no elementwise op makes (slices,
arguments, reductions). kiln-legalize-dynamic versions each of them (the
operand itself when no dim is 1); the elementwise ops between them then fuse
into one loop as they would without broadcasting.
"""

from __future__ import annotations

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import axes_attribute, collect_ops, maybe_expanding_axes
from kiln.dialects import stablehlo as hlo

BROADCAST = "stablehlo.dynamic_broadcast_in_dim"
# StableHLO ops with the Elementwise trait that kiln emits (operands of the
# result's rank have its shape; rank-0 operands of select/clamp stay scalar).
ELEMENTWISE = frozenset(f"stablehlo.{name}" for name in (
    "abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "compare", "complex", "convert", "cosine", "divide",
    "exponential", "exponential_minus_one", "floor", "imag", "is_finite", "log", "log_plus_one", "logistic",
    "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "power", "real", "remainder",
    "round_nearest_afz", "round_nearest_even", "rsqrt", "select", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "sign", "sine", "sqrt", "subtract", "tan", "tanh", "xor",
))


def _single_use(value: ir.Value) -> bool:
    uses = list(value.uses)
    return len(uses) == 1


def _nonexpanding(op: ir.Operation, axis: int) -> bool:
    size = ir.RankedTensorType(op.operands[0].type).shape[axis]
    return axis in axes_attribute(op, "known_nonexpanding_dimensions") or size not in (1, ir.ShapedType.get_dynamic_size())


def _broadcast_like(bcast: ir.Operation, value: ir.Value, dims: list[int], known: list[int]) -> ir.Value:
    result = ir.RankedTensorType(bcast.results[0].type)
    element = ir.RankedTensorType(value.type).element_type
    attrs = {"broadcast_dimensions": hlo.dense_i64_array(dims)}
    if known:
        attrs["known_nonexpanding_dimensions"] = hlo.dense_i64_array(known)
    return hlo.one("dynamic_broadcast_in_dim", hlo.with_element(result, element), value, bcast.operands[1], **attrs)


def _through_elementwise(bcast: ir.Operation, producer: ir.Operation) -> list[ir.Operation]:
    """`bcast(f(x, y))` as `f(bcast(x), bcast(y))`; the new broadcasts."""
    rank = ir.RankedTensorType(producer.results[0].type).rank
    dims = list(ir.DenseI64ArrayAttr(bcast.attributes["broadcast_dimensions"]))
    known = sorted(axes_attribute(bcast, "known_nonexpanding_dimensions"))
    operands, made = [], []
    for v in producer.operands:
        if ir.RankedTensorType(v.type).rank != rank:
            operands.append(v)
            continue
        operands.append(_broadcast_like(bcast, v, dims, known))
        made.append(operands[-1].owner)
    result_type = hlo.with_element(ir.RankedTensorType(bcast.results[0].type),
                                   ir.RankedTensorType(producer.results[0].type).element_type)
    attrs = {named.name: named.attr for named in (producer.attributes[i] for i in range(len(producer.attributes)))}
    new = ir.Operation.create(producer.name, results=[result_type], operands=operands, attributes=attrs)
    bcast.results[0].replace_all_uses_with(new.results[0])
    return made


def _through_broadcast(bcast: ir.Operation, inner: ir.Operation) -> list[ir.Operation]:
    """`bcast(bcast'(x))` as one broadcast of `x`: an axis of `x` keeps its
    size only if it does in both."""
    outer_dims = list(ir.DenseI64ArrayAttr(bcast.attributes["broadcast_dimensions"]))
    inner_dims = list(ir.DenseI64ArrayAttr(inner.attributes["broadcast_dimensions"]))
    dims = [outer_dims[d] for d in inner_dims]
    known = [j for j, d in enumerate(inner_dims) if _nonexpanding(inner, j) and _nonexpanding(bcast, d)
             and ir.RankedTensorType(inner.operands[0].type).shape[j] != 1]
    new = _broadcast_like(bcast, inner.operands[0], dims, known)
    bcast.results[0].replace_all_uses_with(new)
    return [new.owner]


def _signature(op: ir.Operation) -> tuple:
    """What makes two broadcasts of one value the same value."""
    attrs = tuple(sorted((named.name, str(named.attr)) for named in (op.attributes[i] for i in range(len(op.attributes)))))
    return op.operands[1], str(op.results[0].type), attrs


def _merge_twins(bcast: ir.Operation, work: dict) -> bool:
    """When every use of `bcast`'s operand is a broadcast equal to `bcast`
    (same shape operand, type and attributes: `res` read by both sides of
    `np.where(res * d > 0, 0, res)` once they have moved down to the
    where's shape), make them all `bcast` and return True: the operand then
    has one use and the move can go on through it."""
    source = bcast.operands[0]
    users = [use.owner for use in source.uses]
    if any(user.name != BROADCAST or user.operands[0] != source for user in users):
        return False
    signature = _signature(bcast)
    if any(_signature(user) != signature for user in users):
        return False
    for user in users:
        if user == bcast.operation:
            continue
        user.results[0].replace_all_uses_with(bcast.results[0])
        work.pop(user, None)
        user.erase()
    return True


def broadcast_operands(module: ir.Module) -> None:
    """Move every broadcast that may expand onto the operands of the
    elementwise ops and broadcasts it is the only user of, last one first
    (so a chain moves down in one sweep). An op is erased as soon as it has
    no use left; a bypassed inner broadcast still waiting in the worklist
    leaves it first (the worklist is keyed by live ops only). Erasing it at
    once matters: its read of its operand would otherwise count as a second
    use and stop the move one level down."""
    work = dict.fromkeys(op for op in collect_ops(module, {BROADCAST}) if maybe_expanding_axes(op))
    while work:
        bcast, _ = work.popitem()
        source = bcast.operands[0]
        producer = source.owner
        if not list(bcast.results[0].uses) or isinstance(producer, ir.Block):
            continue
        if not _single_use(source) and not _merge_twins(bcast, work):
            continue
        if producer.name in ELEMENTWISE and len(producer.results) == 1:
            rewrite = _through_elementwise
        elif producer.name == BROADCAST and not axes_attribute(producer, "known_expanding_dimensions") \
                and not axes_attribute(bcast, "known_expanding_dimensions"):
            rewrite = _through_broadcast
        else:
            continue
        with ir.InsertionPoint(bcast), bcast.location:
            made = rewrite(bcast, producer)
        bcast.erase()
        work.pop(producer, None)
        producer.erase()
        work.update(dict.fromkeys(op for op in made if maybe_expanding_axes(op)))


@register_pass
class KilnBroadcastOperands(ModulePass):
    """Broadcast an elementwise op's operands instead of its result when the broadcast may expand at run time."""

    name = "kiln-broadcast-operands"

    def apply(self, module: ir.Module) -> None:
        broadcast_operands(module)
