"""Pass `kiln-lower-random` (stage "linalg", after kiln-lower-prints).

In: `kiln.random(%state, %count, %a, %b, %p, %q, %r) {method, bit_generator}`.
Out: calls into runtime/random.c, linked into the libraries that draw: `kiln_rng_begin(kind)`,
`kiln_rng_set(k, word)` for each state word, then an `scf.for` over the
`%count` elements calling `kiln_rng_<method>` once each (with the element of
each 1-D parameter, or the scalar one) and inserting the
value (a seeding method is called once instead), then a tensor of the state
words read back with `kiln_rng_get(k)`. The calls have effects, so nothing
reorders or merges them: one op's draws run between its begin and its reads.
"""

from __future__ import annotations

from kiln.compiler.mlir import arith, func, ir, scf, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops, declare_private_function, index_value
from kiln.dialects.kiln import RANDOM_BIT_GENERATORS, RANDOM_METHODS

BEGIN_CALLEE = "kiln_rng_begin"
SET_CALLEE = "kiln_rng_set"
GET_CALLEE = "kiln_rng_get"
METHOD_PREFIX = "kiln_rng_"
# runtime/random.c's bit generator kinds.
KIND_CODES = {"pcg64": 0, "mt19937": 1}


def _method_signature(method: str) -> tuple[list, list]:
    """(argument types, result types) of `kiln_rng_<method>`: float methods
    take (p, q, r) and return f64; integer and seeding ones take (a, b, p, q)
    and return i64."""
    i64, f64 = ir.IntegerType.get_signless(64), ir.F64Type.get()
    if RANDOM_METHODS[method] in ("f64", "f32"):
        return [f64, f64, f64], [f64]
    return [i64, i64, f64, f64], [i64]


def _call(name: str, args: list, results: list) -> list:
    return list(func.CallOp(results, ir.FlatSymbolRefAttr.get(name), args).results)


def _state_words_in(state: ir.Value, count: int) -> None:
    i64 = ir.IntegerType.get_signless(64)
    loop = scf.ForOp(index_value(0), index_value(count), index_value(1))
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        _call(SET_CALLEE, [arith.index_cast(i64, k), tensor.extract(state, [k])], [])
        scf.YieldOp([])


def _state_words_out(state_type: ir.RankedTensorType) -> ir.Value:
    i64 = ir.IntegerType.get_signless(64)
    count = state_type.shape[0]
    loop = scf.ForOp(index_value(0), index_value(count), index_value(1), [tensor.empty([count], i64)])
    with ir.InsertionPoint(loop.body):
        k = loop.induction_variable
        word = _call(GET_CALLEE, [arith.index_cast(i64, k)], [i64])[0]
        scf.YieldOp([tensor.insert(word, loop.inner_iter_args[0], [k])])
    return loop.results[0]


def _parameters(op: ir.Operation) -> None:
    """The parameters must be i64 (`a`, `b`) and f64 (`p`, `q`, `r`) scalars or 1-D tensors."""
    for k, (name, value) in enumerate(zip("abpqr", op.operands[2:7])):
        t = ir.RankedTensorType(value.type)
        want = ir.IntegerType.get_signless(64) if k < 2 else ir.F64Type.get()
        if t.element_type != want or t.rank > 1:
            raise ValueError(f"kiln-lower-random: {op.location}: parameter %{name} must be a {want} scalar tensor or "
                             f"a 1-D tensor of one {want} per draw, got {t}")


def _draws(op: ir.Operation, method: str, n: ir.Value) -> ir.Value:
    """`n` values of `method`, one call each, inserted into a new tensor;
    a 1-D parameter gives each call its own value."""
    values_type = ir.RankedTensorType(op.results[1].type)
    params = op.operands[2:7]
    scalars = {k: tensor.extract(v, []) for k, v in enumerate(params) if ir.RankedTensorType(v.type).rank == 0}
    used = [2, 3, 4] if RANDOM_METHODS[method] in ("f64", "f32") else [0, 1, 2, 3]
    sizes = [n] if values_type.is_dynamic_dim(0) else [values_type.shape[0]]
    loop = scf.ForOp(index_value(0), n, index_value(1), [tensor.empty(sizes, values_type.element_type)])
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        args = [scalars[k] if k in scalars else tensor.extract(params[k], [i]) for k in used]
        value = _call(METHOD_PREFIX + method, args, _method_signature(method)[1])[0]
        if RANDOM_METHODS[method] == "f32":
            value = arith.truncf(values_type.element_type, value)
        scf.YieldOp([tensor.insert(value, loop.inner_iter_args[0], [loop.induction_variable])])
    return loop.results[0]


def _lower(op: ir.Operation) -> tuple[ir.Value, ir.Value]:
    method = ir.StringAttr(op.attributes["method"]).value
    generator = ir.StringAttr(op.attributes["bit_generator"]).value
    state_type = ir.RankedTensorType(op.operands[0].type)
    if state_type.rank != 1 or state_type.shape[0] != RANDOM_BIT_GENERATORS[generator]:
        raise ValueError(f"kiln-lower-random: {op.location}: a {generator} state has "
                         f"{RANDOM_BIT_GENERATORS[generator]} words, got {state_type}; pass the state words as "
                         "one 1-D i64 tensor")
    _parameters(op)
    i64 = ir.IntegerType.get_signless(64)
    _call(BEGIN_CALLEE, [arith.constant(i64, KIND_CODES[generator])], [])
    _state_words_in(op.operands[0], state_type.shape[0])
    n = arith.index_cast(ir.IndexType.get(), tensor.extract(op.operands[1], []))
    if RANDOM_METHODS[method] == "seed":
        ints = [tensor.extract(v, []) for v in op.operands[2:4]]
        floats = [tensor.extract(v, []) for v in op.operands[4:6]]
        _call(METHOD_PREFIX + method, ints + floats, [i64])
        values_type = ir.RankedTensorType(op.results[1].type)
        sizes = [n] if values_type.is_dynamic_dim(0) else [values_type.shape[0]]
        values = tensor.empty(sizes, values_type.element_type)
    else:
        values = _draws(op, method, n)
    return _state_words_out(state_type), values


def lower_random(module: ir.Module) -> None:
    """Turn `kiln.random` ops into calls of the random-number runtime."""
    ops = collect_ops(module, {"kiln.random"})
    if not ops:
        return
    i64 = ir.IntegerType.get_signless(64)
    with module.context, ir.Location.unknown():
        declare_private_function(module, BEGIN_CALLEE, [i64])
        declare_private_function(module, SET_CALLEE, [i64, i64])
        declare_private_function(module, GET_CALLEE, [i64], [i64])
        for method in sorted({ir.StringAttr(op.attributes["method"]).value for op in ops}):
            declare_private_function(module, METHOD_PREFIX + method, *_method_signature(method))
    for op in ops:
        with ir.InsertionPoint(op), op.location:
            new = _lower(op)
        for old, value in zip(op.results, new):
            old.replace_all_uses_with(value)
        op.erase()


@register_pass
class KilnLowerRandom(ModulePass):
    """Turn `kiln.random` ops into calls of the random-number runtime."""

    name = "kiln-lower-random"

    def apply(self, module: ir.Module) -> None:
        lower_random(module)
