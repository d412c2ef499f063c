"""The `kiln` dialect: facts the lowering needs later, as ops with attributes
(stages "mlir", "functionalized", "stablehlo"; lowered early in "linalg").

Everything kiln needs StableHLO lacks travels as one of these ops, never as a
`custom_call` whose string config is parsed back. Declared once, in IRDL,
below: operand types and attribute kinds are verified by MLIR; the counts
IRDL cannot express (at most two check values) by `kiln-lower-checks`.

- `kiln.check`: run-time check. When `%ok` is false at run time, the call
  fails with `kind` (a Python exception name) and `message` (a Python format
  string whose `{}`s take the `tensor<i64>` values, at most two); the op's
  location names the user's source line. A warning `kind` (RuntimeWarning)
  makes the runtime warn with `message` after the call instead, once per
  call. Lowered by `kiln-lower-checks`.
  `"kiln.check"(%ok, %i, %n) {kind = "IndexError", message = "index {} is out of bounds for size {}"} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()`
- `kiln.scan`: inclusive scan of `%x` along `axis` (reversed when
  `reverse`), combining with `combiner` (add, mul, max, min); the result
  has the operand's type. Lowered to a loop by `kiln-legalize-dynamic`.
  `%y = "kiln.scan"(%x) {combiner = "add", axis = 0 : i64, reverse = false} : (tensor<?xf64>) -> tensor<?xf64>`
- `kiln.print`: when execution reaches it, print `format` (Python
  `str.format` with numbered fields `{0}`, `{1:.3f}`, one per element of
  the tuple `%values`, made by `stablehlo.tuple` just before) with the
  values as NumPy prints them; `dtypes` names each value's NumPy dtype
  (MLIR types do not tell uint8 from int8). One tuple operand because an
  IRDL variadic operand takes a single type. Effectful: never removed,
  merged or reordered. Lowered by `kiln-lower-prints`.
  `"kiln.print"(%t) {format = "x = {0}", dtypes = ["float64"]} : (tuple<tensor<?xf64>>) -> ()`
- `kiln.flatnonzero`: the row-major flat positions of the true elements of
  a bool tensor (rank >= 1), in increasing order, and how many there are
  (the positions' size, known only when the program runs). Lowered to two
  loops by `kiln-legalize-dynamic`.
  `%n, %p = "kiln.flatnonzero"(%mask) : (tensor<?x3xi1>) -> (tensor<i64>, tensor<?xi64>)`
- `kiln.elementwise`: the function `fn` of MLIR's `math` dialect that
  StableHLO lacks (`erf`, `erfc`) applied to each element of a float
  tensor; the result has the operand's type. Lowered to a `linalg.generic`
  around `math.<fn>` by `kiln-legalize-dynamic` (then `convert-math-to-libm`
  calls the C library's, the function Python's `math.erf` calls).
  `%y = "kiln.elementwise"(%x) {fn = "erf"} : (tensor<?xf64>) -> tensor<?xf64>`
"""

from __future__ import annotations

from kiln.errors import CHECK_ERRORS, CHECK_WARNINGS

# The exception a failed check raises, by `kind`; its position + 1 is the
# kind's code in the failure record of runtime/support.c (`kiln_check_failed`).
# A warning kind does not fail the call: support.c's `kiln_warn` records it.
CHECK_KINDS = tuple(CHECK_ERRORS) + tuple(CHECK_WARNINGS)
MAX_CHECK_VALUES = 2
SCAN_COMBINERS = ("add", "mul", "max", "min")
# The `math` functions `kiln.elementwise` applies.
ELEMENTWISE_FUNCTIONS = ("erf", "erfc")


def _one_of(name: str, values: tuple[str, ...]) -> str:
    """IRDL lines constraining `%name` to one of the string attributes `values`."""
    lines = [f'    %{name}_{i} = irdl.is "{v}"' for i, v in enumerate(values)]
    lines.append(f"    %{name} = irdl.any_of({', '.join(f'%{name}_{i}' for i in range(len(values)))})")
    return "\n".join(lines)


IRDL = f'''
irdl.dialect @kiln {{
  irdl.operation @check {{
    %ok = irdl.is tensor<i1>
    %value = irdl.is tensor<i64>
    %message = irdl.base "#builtin.string"
{_one_of("kind", CHECK_KINDS)}
    irdl.operands(ok: %ok, values: variadic %value)
    irdl.attributes {{ "kind" = %kind, "message" = %message }}
  }}
  irdl.operation @scan {{
    %x = irdl.base "!builtin.tensor"
    %axis = irdl.base "#builtin.integer"
    %reverse_true = irdl.is true
    %reverse_false = irdl.is false
    %reverse = irdl.any_of(%reverse_true, %reverse_false)
{_one_of("combiner", SCAN_COMBINERS)}
    irdl.operands(x: %x)
    irdl.attributes {{ "combiner" = %combiner, "axis" = %axis, "reverse" = %reverse }}
    irdl.results(result: %x)
  }}
  irdl.operation @print {{
    %values = irdl.base "!builtin.tuple"
    %format = irdl.base "#builtin.string"
    %dtypes = irdl.base "#builtin.array"
    irdl.operands(values: %values)
    irdl.attributes {{ "format" = %format, "dtypes" = %dtypes }}
  }}
  irdl.operation @flatnonzero {{
    %mask = irdl.base "!builtin.tensor"
    %count = irdl.is tensor<i64>
    %positions = irdl.is tensor<?xi64>
    irdl.operands(mask: %mask)
    irdl.results(count: %count, positions: %positions)
  }}
  irdl.operation @elementwise {{
    %x = irdl.base "!builtin.tensor"
{_one_of("fn", ELEMENTWISE_FUNCTIONS)}
    irdl.operands(x: %x)
    irdl.attributes {{ "fn" = %fn }}
    irdl.results(result: %x)
  }}
}}
'''


def check(ok, values: list, kind: str, message: str) -> None:
    """Build `kiln.check(ok, values...) {kind, message}` at the insertion point."""
    from kiln.compiler.mlir import ir

    ir.Operation.create("kiln.check", results=[], operands=[ok, *values],
                        attributes={"kind": ir.StringAttr.get(kind), "message": ir.StringAttr.get(message)})


def scan(x, combiner: str, axis: int, reverse: bool):
    """Build `kiln.scan(x) {combiner, axis, reverse}` and return its result."""
    from kiln.compiler.mlir import ir

    op = ir.Operation.create("kiln.scan", results=[x.type], operands=[x], attributes={
        "combiner": ir.StringAttr.get(combiner),
        "axis": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), axis),
        "reverse": ir.BoolAttr.get(reverse)})
    return op.result


def elementwise(x, fn: str):
    """Build `kiln.elementwise(x) {fn}` and return its result."""
    from kiln.compiler.mlir import ir

    op = ir.Operation.create("kiln.elementwise", results=[x.type], operands=[x],
                             attributes={"fn": ir.StringAttr.get(fn)})
    return op.result


def print_values(values: list, format: str, dtypes: list[str]) -> None:
    """Build `kiln.print(stablehlo.tuple(values...)) {format, dtypes}` at the insertion point."""
    from kiln.compiler.mlir import ir

    packed = ir.Operation.create("stablehlo.tuple", results=[ir.TupleType.get_tuple([v.type for v in values])],
                                 operands=values).result
    ir.Operation.create("kiln.print", results=[], operands=[packed], attributes={
        "format": ir.StringAttr.get(format),
        "dtypes": ir.ArrayAttr.get([ir.StringAttr.get(d) for d in dtypes])})


def flatnonzero(mask) -> tuple:
    """Build `kiln.flatnonzero(mask)`; return its (count, positions) results."""
    from kiln.compiler.mlir import ir

    i64 = ir.IntegerType.get_signless(64)
    op = ir.Operation.create("kiln.flatnonzero", operands=[mask], results=[
        ir.RankedTensorType.get([], i64), ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()], i64)])
    return op.results[0], op.results[1]
