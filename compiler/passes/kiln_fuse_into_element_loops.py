"""Pass `kiln-fuse-into-element-loops` (stage "linalg", after kiln-element-access).

In: a 1-D elementwise `linalg.generic` whose results are only read one
element at a time, `tensor.extract %r[%i]`, with `%i` the induction variable
of an `scf.for` in the generic's own block: the scatter loop of
`np.histogram` (kiln-legalize-writes) reading the bin index and the weight
computed for each value, `np.bincount`, `np.add.at`.
Out: the generic's body computed in the loop, at element `%i`, from
`tensor.extract`s of its inputs (a 0-d input is read whole); the generic is
erased. The values are no longer written to an n-element array and read back:
the histogram of n values is one loop over them. Generics are visited last
first, so a producer whose readers were all fused this way (the `keep` mask
read by the binning and by the weights) is fused in turn. Only generics whose
every use is such a read are fused: one still read elsewhere would be
computed twice and still materialized. Each fused read copies the body once
(one pass over the generics and their uses).
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import all_parallel, clone_ops, collect_ops

_IDENTITY = "affine_map<(d0) -> (d0)>"
_SCALAR = "affine_map<(d0) -> ()>"


def _loop_index_read(use: ir.Operation, generic: ir.Operation) -> bool:
    """Whether `use` is `tensor.extract %r[%i]` with `%i` the induction
    variable of an `scf.for` in `generic`'s block (so each iteration reads
    the element once, and the generic's operands dominate the loop)."""
    if use.name != "tensor.extract" or len(use.operands) != 2:
        return False
    index = use.operands[1]
    if not isinstance(index.owner, ir.Block) or index.arg_number != 0:
        return False
    loop = index.owner.owner.operation
    return loop.name == "scf.for" and loop.parent == generic.parent and loop.block == generic.block


def _fusable(generic: ir.Operation) -> bool:
    if len(generic.regions[0].blocks) != 1 or not all_parallel(generic):
        return False
    maps = [str(m) for m in generic.attributes["indexing_maps"]]
    inputs = len(generic.operands) - len(generic.results)
    if any(m != _IDENTITY for m in maps[inputs:]) or any(m not in (_IDENTITY, _SCALAR) for m in maps[:inputs]):
        return False
    body = generic.regions[0].blocks[0]
    if any(list(a.uses) for a in list(body.arguments)[inputs:]):
        return False  # reads its output: not elementwise on its inputs alone
    for op in body.operations:
        if op.regions or op.name == "linalg.index" or not _pure(op):
            return False
    uses = [u.owner for r in generic.results for u in r.uses]
    return bool(uses) and all(_loop_index_read(u, generic) for u in uses)


def _pure(op: ir.Operation) -> bool:
    return op.name.split(".")[0] in ("arith", "math", "linalg", "complex")


def _fuse(generic: ir.Operation) -> None:
    body = generic.regions[0].blocks[0]
    inputs = len(generic.operands) - len(generic.results)
    maps = [str(m) for m in generic.attributes["indexing_maps"]]
    operations = list(body.operations)
    terminator = operations[-1]
    reads = [(u.owner, i) for i, r in enumerate(generic.results) for u in r.uses]
    for read, result in reads:
        index = read.operands[1]
        mapping = {}
        with ir.InsertionPoint(read), read.location:
            for k in range(inputs):
                operand = generic.operands[k]
                argument = body.arguments[k]
                if list(argument.uses):
                    mapping[argument] = tensor.extract(operand, [index] if maps[k] == _IDENTITY else [])
            clone_ops(operations[:-1], mapping)
        yielded = terminator.operands[result]
        read.results[0].replace_all_uses_with(mapping.get(yielded, yielded))
        read.erase()
    generic.erase()


@register_pass
class KilnFuseIntoElementLoops(ModulePass):
    """Compute an elementwise generic read only element by element in loops inside those loops."""

    name = "kiln-fuse-into-element-loops"

    def apply(self, module: ir.Module) -> None:
        for generic in reversed(collect_ops(module, {"linalg.generic"})):
            if _fusable(generic):
                _fuse(generic)
