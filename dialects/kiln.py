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
- `kiln.random`: `%count` draws of `method` (one of `RANDOM_METHODS`) from
  the bit generator `bit_generator` (pcg64: 6 state words, mt19937: 627,
  int64 each, laid out as runtime/random.c says) whose state is `%state`,
  with the distribution's integer parameters `%a, %b` (i64) and float
  ones `%p, %q, %r` (f64), each a scalar tensor or one value per draw (a
  1-D tensor of `%count` values; unused ones are zero; `kiln-lower-random`
  checks the types). Results: the advanced state and the
  1-D values (f64, f32 for the `_f32` methods, i64 for integer methods; a
  seeding method draws nothing and only replaces the state). Pure: the
  same state gives the same numbers. Lowered by `kiln-lower-random`.
  `%s2, %v = "kiln.random"(%s, %n, %a, %b, %p, %q, %r) {method = "normal", bit_generator = "pcg64"} : (tensor<6xi64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>, tensor<f64>) -> (tensor<6xi64>, tensor<?xf64>)`
- `kiln.lapack_<kernel>` (solve, inv, cholesky, slogdet, qr, eigh, eig,
  svd, lstsq): one LAPACK kernel of runtime/lapack.c on a stack of
  matrices (operands and results batch-first, f64 or complex<f64>), its
  integer `options` in the order the kernel declares them, and after the
  arrays the results' dynamic dims as `tensor<i64>` operands, in order
  (what the lowering allocates). Lowered to a call by `kiln-lower-lapack`.
  `%x, %info = "kiln.lapack_solve"(%a, %b, %n, %n, %k) {options = array<i64>} : (tensor<?x?x?xf64>, tensor<?x?x?xf64>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<?x?x?xf64>, tensor<?xi64>)`
- `kiln.sort`: each row along the last axis of `%x` (rank >= 1) sorted
  ascending in NumPy's order (NaNs last); with `indices`, the stable
  argsort instead (i64 positions along that axis, NumPy's kind='stable'
  order). `%kth` (i64 positions in [0, n), increasing) asks for a partition
  only: every kth position holds the element a full sort puts there, the
  ones before it are not greater and the ones after not smaller (empty:
  a full sort). Lowered to calls of runtime/sort.c by `kiln-lower-sorts`.
  `%y = "kiln.sort"(%x, %kth) {indices = false} : (tensor<?xf64>, tensor<0xi64>) -> tensor<?xf64>`
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
# The bit generators of `kiln.random` and their number of int64 state words.
RANDOM_BIT_GENERATORS = {"pcg64": 6, "mt19937": 627}
# `kiln.random` methods by the element type they draw: each is the function
# `kiln_rng_<method>` of runtime/random.c ("seed" methods replace the state).
_FLOAT_METHODS = (
    "random", "standard_normal", "normal", "standard_exponential", "standard_exponential_inv", "exponential",
    "uniform", "standard_gamma", "gamma", "beta", "chisquare", "f", "standard_cauchy", "pareto", "weibull",
    "power", "laplace", "gumbel", "logistic", "lognormal", "rayleigh", "standard_t", "noncentral_chisquare",
    "noncentral_f", "wald", "vonmises", "triangular", "legacy_gauss", "legacy_normal",
    "legacy_standard_exponential", "legacy_exponential", "legacy_standard_gamma", "legacy_gamma", "legacy_beta",
    "legacy_chisquare", "legacy_f", "legacy_standard_cauchy", "legacy_pareto", "legacy_weibull", "legacy_power",
    "legacy_lognormal", "legacy_rayleigh", "legacy_standard_t", "legacy_noncentral_chisquare",
    "legacy_noncentral_f", "legacy_wald", "legacy_vonmises")
RANDOM_METHODS = {
    **{m: "f64" for m in _FLOAT_METHODS},
    **{m + "_f32": "f32" for m in ("random", "standard_normal", "standard_exponential", "standard_exponential_inv")},
    **{m: "i64" for m in ("integers64", "integers32", "integers16", "integers8", "integers_bool",
                          "legacy_randint64", "legacy_randint32", "poisson", "binomial", "negative_binomial",
                          "geometric", "logseries", "zipf", "hypergeometric", "shuffle_index", "multinomial",
                          "choice_noreplace",
                          "legacy_negative_binomial", "legacy_geometric", "legacy_hypergeometric")},
    **{m: "seed" for m in ("seed_pcg64", "entropy_pcg64", "seed_mt19937")},
}
# `kiln.lapack_<kernel>`: its array operands and its results (the same table
# as kiln.primitives.lapack.KERNELS, which the frontend may not import from
# here; test/test_lapack.py checks they agree).
LAPACK_OPS = {
    "solve": (("a", "b"), ("x", "info")),
    "inv": (("a",), ("x", "info")),
    "cholesky": (("a",), ("l", "info")),
    "slogdet": (("a",), ("sign", "logdet", "det")),
    "qr": (("a",), ("q", "r", "info")),
    "eigh": (("a",), ("values", "vectors", "info")),
    "eig": (("a",), ("values", "vectors", "info")),
    "svd": (("a",), ("u", "s", "vt", "info")),
    "lstsq": (("a", "b", "rcond"), ("x", "s", "rank", "resid", "info")),
}
# The `math` functions `kiln.elementwise` applies.
ELEMENTWISE_FUNCTIONS = ("erf", "erfc")


def _one_of(name: str, values: tuple[str, ...]) -> str:
    """IRDL lines constraining `%name` to one of the string attributes `values`."""
    lines = [f'    %{name}_{i} = irdl.is "{v}"' for i, v in enumerate(values)]
    lines.append(f"    %{name} = irdl.any_of({', '.join(f'%{name}_{i}' for i in range(len(values)))})")
    return "\n".join(lines)


def _lapack_op(kernel: str) -> str:
    """IRDL of `kiln.lapack_<kernel>`: each array operand and result a tensor
    of its own type, the dims a variadic of `tensor<i64>`."""
    arrays, results = LAPACK_OPS[kernel]
    names = [*arrays, *results]
    lines = [f"  irdl.operation @lapack_{kernel} {{"]
    lines += [f'    %t_{name} = irdl.base "!builtin.tensor"' for name in names]
    lines += ["    %dim = irdl.is tensor<i64>", '    %options = irdl.base "#builtin.dense_array"']
    operands = ", ".join([f"{name}: %t_{name}" for name in arrays] + ["dims: variadic %dim"])
    lines += [f"    irdl.operands({operands})", '    irdl.attributes { "options" = %options }',
              f"    irdl.results({', '.join(f'{name}: %t_{name}' for name in results)})", "  }"]
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
  irdl.operation @random {{
    %state = irdl.base "!builtin.tensor"
    %count = irdl.is tensor<i64>
    %a = irdl.base "!builtin.tensor"
    %b = irdl.base "!builtin.tensor"
    %p = irdl.base "!builtin.tensor"
    %q = irdl.base "!builtin.tensor"
    %r = irdl.base "!builtin.tensor"
    %values = irdl.base "!builtin.tensor"
{_one_of("method", tuple(RANDOM_METHODS))}
{_one_of("bit_generator", tuple(RANDOM_BIT_GENERATORS))}
    irdl.operands(state: %state, count: %count, a: %a, b: %b, p: %p, q: %q, r: %r)
    irdl.attributes {{ "method" = %method, "bit_generator" = %bit_generator }}
    irdl.results(new_state: %state, values: %values)
  }}
  irdl.operation @flatnonzero {{
    %mask = irdl.base "!builtin.tensor"
    %count = irdl.is tensor<i64>
    %positions = irdl.is tensor<?xi64>
    irdl.operands(mask: %mask)
    irdl.results(count: %count, positions: %positions)
  }}
  irdl.operation @sort {{
    %x = irdl.base "!builtin.tensor"
    %kth = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %indices_true = irdl.is true
    %indices_false = irdl.is false
    %indices = irdl.any_of(%indices_true, %indices_false)
    irdl.operands(x: %x, kth: %kth)
    irdl.attributes {{ "indices" = %indices }}
    irdl.results(result: %result)
  }}
  irdl.operation @elementwise {{
    %x = irdl.base "!builtin.tensor"
{_one_of("fn", ELEMENTWISE_FUNCTIONS)}
    irdl.operands(x: %x)
    irdl.attributes {{ "fn" = %fn }}
    irdl.results(result: %x)
  }}
{"".join(_lapack_op(kernel) + chr(10) for kernel in LAPACK_OPS)}}}
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


def random(state, count, ints: list, floats: list, values_type, method: str, bit_generator: str) -> tuple:
    """Build `kiln.random(state, count, a, b, p, q, r) {method, bit_generator}`;
    return its (new state, values) results."""
    from kiln.compiler.mlir import ir

    op = ir.Operation.create("kiln.random", operands=[state, count, *ints, *floats],
                             results=[state.type, values_type], attributes={
                                 "method": ir.StringAttr.get(method),
                                 "bit_generator": ir.StringAttr.get(bit_generator)})
    return op.results[0], op.results[1]


def lapack(kernel: str, arrays: list, dims: list, options: list[int], result_types: list) -> list:
    """Build `kiln.lapack_<kernel>(arrays..., dims...) {options}`; return its results."""
    from kiln.compiler.mlir import ir

    op = ir.Operation.create(f"kiln.lapack_{kernel}", results=result_types, operands=[*arrays, *dims],
                             attributes={"options": ir.DenseI64ArrayAttr.get(list(options))})
    return list(op.results)


def sort(x, kth, result_type, indices: bool):
    """Build `kiln.sort(x, kth) {indices}` and return its result."""
    from kiln.compiler.mlir import ir

    op = ir.Operation.create("kiln.sort", results=[result_type], operands=[x, kth],
                             attributes={"indices": ir.BoolAttr.get(indices)})
    return op.result
