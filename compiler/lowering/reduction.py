"""Stage "mlir": reductions -> `stablehlo.reduce` with a one-op body; argmax /
argmin -> a two-operand `stablehlo.reduce` (value, index) keeping NumPy's
first-occurrence and NaN-first rules (marked `kiln.arg_reduce` for
kiln-block-arg-reductions); cumsum / cumprod / cummax / cummin ->
`kiln.scan` (lowered by kiln-legalize-dynamic).
"""

from __future__ import annotations

import numpy as np

from kiln.compiler.lowering import lowering
from kiln.dialects.stablehlo import element_type, tensor_type
from kiln.compiler.lowering.elementwise import compare_type
from kiln.compiler.mlir import ir
from kiln.dialects import kiln as kiln_dialect
from kiln.dialects import stablehlo as hlo
from kiln.primitives import reduction as rp

ARG_REDUCE = "kiln.arg_reduce"


def _identity(prim, dtype: np.dtype):
    """The reduction's init value: the identity of its body op."""
    if prim in (rp.reduce_sum_p, rp.reduce_or_p):
        return np.zeros((), dtype)
    if prim in (rp.reduce_prod_p, rp.reduce_and_p):
        return np.ones((), dtype)
    if dtype.kind == "f":
        return np.array(-np.inf if prim is rp.reduce_max_p else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if prim is rp.reduce_max_p else info.max, dtype)


def _reduce_op(operands, inits, result_types, axes, body_builder):
    op = ir.Operation.create("stablehlo.reduce", results=result_types, operands=list(operands) + list(inits),
                             attributes={"dimensions": hlo.dense_i64_array(axes)}, regions=1)
    scalar_types = [ir.RankedTensorType.get([], hlo.ranked(v).element_type) for v in operands]
    block = op.regions[0].blocks.append(*(scalar_types + scalar_types))
    with ir.InsertionPoint(block):
        results = body_builder(list(block.arguments))
        hlo.op("return", [], results)
    return op


def _reduce_rule(body_op: str):
    def rule(ctx, eqn, x):
        if not eqn.params["axes"]:
            # A reduction over no axes (np.sum of a 0-d array) is the operand; a convert makes it
            # a fresh value (stablehlo.reduce without dimensions does not legalize to linalg).
            return [hlo.one("convert", tensor_type(eqn.outvars[0].aval), x)]
        dtype = eqn.invars[0].aval.dtype
        init = hlo.constant(_identity(eqn.primitive, dtype))
        scalar = ir.RankedTensorType.get([], element_type(dtype))

        def body(args):
            return [hlo.one(body_op, scalar, args[0], args[1])]

        in_aval, out_aval = eqn.invars[0].aval, eqn.outvars[0].aval
        if 0 in in_aval.shape:
            # Statically empty: every result is the init value (and
            # stablehlo-legalize-to-linalg leaves such a reduce unconverted).
            return [ctx.broadcast(init, in_aval.update(shape=()), out_aval, ())]
        op = _reduce_op([x], [init], [tensor_type(out_aval)], eqn.params["axes"], body)
        return [op.results[0]]

    return rule


for _prim, _body_op in ((rp.reduce_sum_p, "add"), (rp.reduce_prod_p, "multiply"), (rp.reduce_max_p, "maximum"),
                        (rp.reduce_min_p, "minimum"), (rp.reduce_and_p, "and"), (rp.reduce_or_p, "or")):
    lowering(_prim)(_reduce_rule(_body_op))


def _arg_rule(is_max: bool):
    def rule(ctx, eqn, x):
        aval = eqn.invars[0].aval
        axis = eqn.params["axis"]
        index_dtype = eqn.params["index_dtype"]
        iota_aval = aval.update(dtype=index_dtype)
        iota_dim = ir.IntegerAttr.get(hlo.i64(), axis)
        if iota_aval.is_static:
            idx = hlo.one("iota", tensor_type(iota_aval), iota_dimension=iota_dim)
        else:
            idx = hlo.one("dynamic_iota", tensor_type(iota_aval), ctx.shape_of(iota_aval), iota_dimension=iota_dim)
        if aval.dtype.kind == "f":
            init_v = np.array(-np.inf if is_max else np.inf, aval.dtype)
        elif aval.dtype == np.bool_:
            init_v = np.array(not is_max, aval.dtype)
        else:
            info = np.iinfo(aval.dtype)
            init_v = np.array(info.min if is_max else info.max, aval.dtype)
        inits = [hlo.constant(init_v), hlo.constant(np.array(np.iinfo(index_dtype).max, index_dtype))]
        vt = ir.RankedTensorType.get([], element_type(aval.dtype))
        it = ir.RankedTensorType.get([], element_type(index_dtype))
        ctype = compare_type(aval.dtype)
        b1 = ir.RankedTensorType.get([], hlo.i1())

        def body(args):
            v1, i1, v2, i2 = args
            better = hlo.comparison("GT" if is_max else "LT", v1, v2, ctype)
            equal = hlo.comparison("EQ", v1, v2, ctype)
            if aval.dtype.kind == "f":
                # NumPy returns the first NaN: a NaN beats everything but an earlier NaN.
                nan1 = hlo.comparison("NE", v1, v1, ctype)
                nan2 = hlo.comparison("NE", v2, v2, ctype)
                better = hlo.one("or", b1, better, hlo.one("and", b1, nan1, hlo.one("not", b1, nan2)))
                equal = hlo.one("or", b1, equal, hlo.one("and", b1, nan1, nan2))
            first = hlo.comparison("LT", i1, i2, "SIGNED")
            take1 = hlo.one("or", b1, better, hlo.one("and", b1, equal, first))
            return [hlo.one("select", vt, take1, v1, v2), hlo.one("select", it, take1, i1, i2)]

        out_val_aval = eqn.outvars[0].aval.update(dtype=aval.dtype)
        op = _reduce_op([x, idx], inits, [tensor_type(out_val_aval), tensor_type(eqn.outvars[0].aval)],
                        [axis], body)
        if aval.dtype.kind in "fib":
            # kiln-block-arg-reductions may replace the (value, index) loop by a
            # blocked search (the body above stays the meaning).
            op.attributes[ARG_REDUCE] = ir.StringAttr.get("max" if is_max else "min")
        return [op.results[1]]

    return rule


lowering(rp.argmax_p)(_arg_rule(True))
lowering(rp.argmin_p)(_arg_rule(False))


# A scan along a dynamic axis has no StableHLO op (`reduce_window` needs a
# static window), so it travels as `kiln.scan`, which kiln-legalize-dynamic
# turns into a loop.
SCAN_COMBINER = {rp.cumsum_p: "add", rp.cumprod_p: "mul", rp.cummax_p: "max", rp.cummin_p: "min"}


@lowering(*rp.CUMULATIVE)
def _cumulative(ctx, eqn, x):
    aval = eqn.invars[0].aval
    if any(isinstance(d, int) and d == 0 for d in aval.shape):
        # An empty scan is its (empty) operand; the scan's slices of a static size-0
        # dim would not verify ("offset 0 is out-of-bounds: 0 >= 0").
        return [hlo.one("convert", tensor_type(aval), x)]
    combiner = SCAN_COMBINER[eqn.primitive]
    axis, reverse = eqn.params["axis"], bool(eqn.params.get("reverse", False))
    if aval.dtype.kind != "u":
        return [kiln_dialect.scan(x, combiner, axis, reverse)]
    # The loop is built from signless arith ops: scan unsigned values as
    # signed ones of the same width (sums and products wrap alike), with
    # the sign bit flipped for max/min so the signed order is the unsigned one.
    signed = np.dtype(f"i{aval.dtype.itemsize}")
    signed_aval = aval.update(dtype=signed)
    signed_type = tensor_type(signed_aval)
    y = hlo.convert(x, element_type(signed))
    if combiner in ("add", "mul"):
        y = kiln_dialect.scan(y, combiner, axis, reverse)
        return [hlo.convert(y, element_type(aval.dtype))]
    sign_bit = ctx.broadcast(hlo.constant(np.array(np.iinfo(signed).min, signed)), signed_aval.update(shape=()),
                             signed_aval, ())
    y = kiln_dialect.scan(hlo.one("xor", signed_type, y, sign_bit), combiner, axis, reverse)
    return [hlo.convert(hlo.one("xor", signed_type, y, sign_bit), element_type(aval.dtype))]
