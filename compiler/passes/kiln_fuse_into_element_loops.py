"""Pass `kiln-fuse-into-element-loops` (stage "linalg", after kiln-element-access;
again after kiln-scalarize-dots).

In: a 1-D elementwise `linalg.generic` whose results are only read one
element at a time, `tensor.extract %r[%i]`, with `%i` the induction variable
of an `scf.for` in the generic's own block: the scatter loop of
`np.histogram` (kiln-legalize-writes) reading the bin index and the weight
computed for each value, `np.bincount`, `np.add.at`, and the dot loop of
kiln-scalarize-dots reading a gathered vector (`vals @ x[cols]` in a sparse
matrix-vector product). A read through a `tensor.expand_shape` that only
adds unit dims (`x[cols]` as the Kx1 operand of the dot) counts, with the
unit indices 0. The body may read other tensors (`tensor.extract`: the
gather itself) and its own position (`linalg.index`, which becomes `%i`).
Out: the generic's body computed in the loop, at element `%i`, from
`tensor.extract`s of its inputs (a 0-d input is read whole); the generic is
erased. The values are no longer written to an n-element array and read back:
the histogram of n values is one loop over them, and a CSR row's product
reads `x` at the row's columns directly, with no gathered copy per row.

A generic may also be read as an input (identity map) by another 1-D
generic of its block (the bounds check of an index array reads the
normalized indices that the gather reads too): its body is then computed
inside that generic as well, which reads the producer's inputs instead
(elementwise fusion; upstream's fuses only a producer with a single use).
When a generic has several uses, this is done only for cheap bodies (no
`math` op, no gather), since each use computes the body again.

Generics are visited last first, so a producer whose readers were all fused
this way (the `keep` mask read by the binning and by the weights; the
normalized indices read by the check and by the fused gather) is fused in
turn. Only generics whose every use is such a read are fused: one still read
elsewhere would be computed twice and still materialized. Each fused read
copies the body once (one pass over the generics and their uses).
"""

from __future__ import annotations

from kiln.compiler.mlir import ir, tensor
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import all_parallel, clone_ops, collect_ops, constant_int, rebuild_generic

_IDENTITY = "affine_map<(d0) -> (d0)>"
_SCALAR = "affine_map<(d0) -> ()>"


def _loop_index(index: ir.Value, generic: ir.Operation) -> bool:
    """Whether `index` is the induction variable of an `scf.for` in
    `generic`'s block (so each iteration reads the element once, and the
    generic's operands dominate the loop)."""
    if not isinstance(index.owner, ir.Block) or index.arg_number != 0:
        return False
    loop = index.owner.owner.operation
    return loop.name == "scf.for" and loop.parent == generic.parent and loop.block == generic.block


def _unit_expansion_axis(op: ir.Operation) -> int | None:
    """For a `tensor.expand_shape` of a 1-D tensor that only adds unit dims:
    the result axis holding the source's elements."""
    if op.name != "tensor.expand_shape" or ir.RankedTensorType(op.operands[0].type).rank != 1:
        return None
    t = ir.RankedTensorType(op.results[0].type)
    axes = [a for a in range(t.rank) if t.is_dynamic_dim(a) or t.shape[a] != 1]
    return axes[0] if len(axes) == 1 else None


def _loop_reads(use: ir.Operation, generic: ir.Operation) -> list | None:
    """The element reads `(extract, index)` that `use` makes of a result of
    `generic` (itself, or the reads of an expand_shape adding unit dims),
    or None when some read is not at a loop's position."""
    if use.name == "tensor.extract" and len(use.operands) == 2:
        return [(use, use.operands[1])] if _loop_index(use.operands[1], generic) else None
    axis = _unit_expansion_axis(use)
    if axis is None:
        return None
    reads = []
    for u in use.results[0].uses:
        read = u.owner.operation
        if read.name != "tensor.extract":
            return None
        indices = list(read.operands)[1:]
        if not _loop_index(indices[axis], generic) or any(
                constant_int(v) != 0 for a, v in enumerate(indices) if a != axis):
            return None
        reads.append((read, indices[axis]))
    return reads


def _generic_reader(use: ir.OpOperand, generic: ir.Operation) -> bool:
    """Whether `use` is an input of another 1-D generic of `generic`'s block
    read with the identity map (its loop runs over the same elements)."""
    consumer = use.owner.operation
    if consumer.name != "linalg.generic" or consumer.block != generic.block:
        return False
    inputs = len(consumer.operands) - len(consumer.results)
    maps = [str(m) for m in consumer.attributes["indexing_maps"]]
    if use.operand_number >= inputs or maps[use.operand_number] != _IDENTITY:
        return False
    # After the fusion some operand must still give the loop its extent.
    results = list(generic.results)
    if any(m == _IDENTITY for m in maps[inputs:]) or any(
            maps[k] == _IDENTITY and consumer.operands[k] not in results for k in range(inputs)):
        return True
    body = generic.regions[0].blocks[0]
    producer_maps = [str(m) for m in generic.attributes["indexing_maps"]]
    return any(producer_maps[j] == _IDENTITY and list(body.arguments[j].uses)
               for j in range(len(generic.operands) - len(generic.results)))


def _cheap(generic: ir.Operation) -> bool:
    return not any(op.name.startswith("math.") or op.name == "tensor.extract"
                   for op in generic.regions[0].blocks[0].operations)


def _fusable(generic: ir.Operation) -> tuple[list, list] | None:
    """(element reads, generic readers) of `generic` when all its uses are
    such, else None."""
    if len(generic.regions[0].blocks) != 1 or not all_parallel(generic):
        return None
    maps = [str(m) for m in generic.attributes["indexing_maps"]]
    inputs = len(generic.operands) - len(generic.results)
    if any(m != _IDENTITY for m in maps[inputs:]) or any(m not in (_IDENTITY, _SCALAR) for m in maps[:inputs]):
        return None
    body = generic.regions[0].blocks[0]
    if any(list(a.uses) for a in list(body.arguments)[inputs:]):
        return None  # reads its output: not elementwise on its inputs alone
    for op in body.operations:
        if op.regions or not _pure(op):
            return None
    reads, readers = [], []
    for r in generic.results:
        for u in r.uses:
            if _generic_reader(u, generic):
                if u.owner.operation not in readers:
                    readers.append(u.owner.operation)
                continue
            found = _loop_reads(u.owner.operation, generic)
            if found is None:
                return None
            reads += [(read, index, r.result_number) for read, index in found]
    if not reads and not readers:
        return None
    if len(reads) + len(readers) > 1 and readers and not _cheap(generic):
        return None
    return reads, readers


def _pure(op: ir.Operation) -> bool:
    return op.name.split(".")[0] in ("arith", "math", "linalg", "complex") or op.name == "tensor.extract"


def _body_at(generic: ir.Operation, mapping: dict, index: ir.Value | None) -> None:
    """Clone `generic`'s body (not its yield) at the insertion point;
    `linalg.index` becomes `index` when given."""
    for op in list(generic.regions[0].blocks[0].operations)[:-1]:
        if op.name == "linalg.index" and index is not None:
            mapping[op.result] = index
        else:
            clone_ops([op], mapping)


def _fuse_reads(generic: ir.Operation, reads: list) -> None:
    body = generic.regions[0].blocks[0]
    inputs = len(generic.operands) - len(generic.results)
    maps = [str(m) for m in generic.attributes["indexing_maps"]]
    terminator = list(body.operations)[-1]
    for read, index, result in reads:
        mapping = {}
        with ir.InsertionPoint(read), read.location:
            for k in range(inputs):
                argument = body.arguments[k]
                if list(argument.uses):
                    mapping[argument] = tensor.extract(generic.operands[k],
                                                       [index] if maps[k] == _IDENTITY else [])
            _body_at(generic, mapping, index)
        yielded = terminator.operands[result]
        read.results[0].replace_all_uses_with(mapping.get(yielded, yielded))
        expansion = read.operands[0].owner
        read.erase()
        if not isinstance(expansion, ir.Block) and expansion.name == "tensor.expand_shape" \
                and not list(expansion.results[0].uses):
            expansion.erase()


def _fuse_into_reader(generic: ir.Operation, consumer: ir.Operation) -> None:
    """Compute `generic`'s body inside `consumer` (which reads it with the
    identity map), from `generic`'s inputs."""
    producer_body = generic.regions[0].blocks[0]
    producer_inputs = len(generic.operands) - len(generic.results)
    producer_maps = list(generic.attributes["indexing_maps"])
    yielded = list(producer_body.operations)[-1].operands
    inputs = len(consumer.operands) - len(consumer.results)
    maps = list(consumer.attributes["indexing_maps"])
    results = list(generic.results)
    keep = [k for k in range(inputs) if consumer.operands[k] not in results]
    added = [j for j in range(producer_inputs) if list(producer_body.arguments[j].uses)]
    new_inputs = [consumer.operands[k] for k in keep] + [generic.operands[j] for j in added]
    new_maps = [maps[k] for k in keep] + [producer_maps[j] for j in added]
    arguments = [keep.index(k) if k in keep else None for k in range(inputs)]
    fused = {k: results.index(consumer.operands[k]) for k in range(inputs) if k not in keep}
    old_arguments = list(consumer.regions[0].blocks[0].arguments)

    def prologue(block_arguments, mapping):
        inner = {producer_body.arguments[j]: block_arguments[len(keep) + n] for n, j in enumerate(added)}
        _body_at(generic, inner, None)
        for k, result in fused.items():
            mapping[old_arguments[k]] = inner.get(yielded[result], yielded[result])

    rebuild_generic(consumer, new_inputs, new_maps, arguments, prologue)


def _fuse(generic: ir.Operation, reads: list, readers: list) -> None:
    _fuse_reads(generic, reads)
    for consumer in readers:
        _fuse_into_reader(generic, consumer)
    generic.erase()


@register_pass
class KilnFuseIntoElementLoops(ModulePass):
    """Compute an elementwise generic read only element by element in loops inside those loops."""

    name = "kiln-fuse-into-element-loops"

    def apply(self, module: ir.Module) -> None:
        for generic in reversed(collect_ops(module, {"linalg.generic"})):
            uses = _fusable(generic)
            if uses is not None:
                _fuse(generic, *uses)
