"""Helpers shared by kiln's Python passes: collecting ops, index values,
runtime callees and string constants of the module."""

from __future__ import annotations

import ctypes
import os
from typing import Container

from kiln.compiler.mlir import (CAPSULE_PREFIX, _capi_library, arith, capi_pointer, func, ir, linalg, llvm,
                                memref, tensor)
from kiln.errors import ToolchainError


def collect_ops(module: ir.Module, names: Container[str], post_order: bool = False) -> list[ir.Operation]:
    """All ops named in `names`, in pre-order, or with `post_order` inner ops
    before the ops that hold them (collected before any rewrite). Walked in
    C (compiler/opwalk.c) when `names` is a set, frozenset, tuple or list
    of names and the walker builds; else through the bindings' walk."""
    walker = op_walker() if isinstance(names, (set, frozenset, tuple, list)) and len(names) <= 64 else None
    if walker is not None:
        operation = module.operation
        return [ir.Operation._CAPICreate(capsule)
                for capsule in walker.collect(capi_pointer(operation, "Operation"), tuple(names), post_order)]
    found: list[ir.Operation] = []

    def visit(op):
        if op.name in names:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.POST_ORDER if post_order else ir.WalkOrder.PRE_ORDER)
    return found


_WALKER: dict = {}


def op_walker():
    """The C walker of `collect_ops` (compiler/opwalk.c, built once per
    cache like the call fast path), or None when it cannot be built (no C
    compiler, no Python headers) or `KILN_OPWALK=0`."""
    if "module" not in _WALKER:
        module = None
        if os.environ.get("KILN_OPWALK", "1") != "0":
            try:
                from kiln.runtime import toolchain

                module = toolchain.python_extension(_OPWALK_SOURCE, "kiln_opwalk")
                capi = _capi_library()
                names = ("mlirOperationGetContext", "mlirIdentifierGet", "mlirOperationGetName",
                         "mlirOperationGetNumRegions", "mlirOperationGetRegion", "mlirRegionGetFirstBlock",
                         "mlirBlockGetNextInRegion", "mlirBlockGetFirstOperation", "mlirOperationGetNextInBlock")
                addresses = tuple(ctypes.cast(getattr(capi, n), ctypes.c_void_p).value for n in names)
                module.init(addresses, f"{CAPSULE_PREFIX}Operation._CAPIPtr")
            except (ToolchainError, ImportError, OSError, AttributeError, ValueError):
                module = None  # the bindings' walk serves
        _WALKER["module"] = module
    return _WALKER["module"]


_OPWALK_SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "opwalk.c")


IDENTITY_2D = "affine_map<(d0, d1) -> (d0, d1)>"
TRANSPOSED_2D = "affine_map<(d0, d1) -> (d1, d0)>"


def copies_transposed(op: ir.Operation) -> bool:
    """Whether `op` is a transposing copy of a 2-d operand: `linalg.transpose`
    [1, 0], or the `linalg.generic` that reads its one input transposed and
    yields it (on tensors or on buffers)."""
    if op.name == "linalg.transpose":
        return list(ir.DenseI64ArrayAttr(op.attributes["permutation"])) == [1, 0]
    if op.name != "linalg.generic" or len(op.operands) != 2:
        return False
    maps = [str(m) for m in op.attributes["indexing_maps"]]
    body = [o.operation for o in op.regions[0].blocks[0].operations]
    return maps == [TRANSPOSED_2D, IDENTITY_2D] and len(body) == 1 and \
        list(body[0].operands) == [op.regions[0].blocks[0].arguments[0]]


def all_parallel(op: ir.Operation) -> bool:
    """Whether every loop of a linalg op is parallel."""
    return all("parallel" in str(t) for t in op.attributes["iterator_types"])


def remap_operands(op: ir.Operation, mapping: dict) -> None:
    """Replace, in `op` and every op nested in it, each operand found in
    `mapping` (old value -> new value); for clones of a loop body."""
    def visit(inner):
        for i, value in enumerate(inner.operands):
            replacement = mapping.get(value)
            if replacement is not None:
                inner.operands[i] = replacement
        return ir.WalkResult.ADVANCE

    op.walk(visit)


def clone_ops(operations, mapping: dict) -> None:
    """Clone `operations` in order at the current insertion point, each
    operand (nested ones too) read through `mapping` (old value -> new),
    and record each original result's clone in `mapping`: a block's body
    copied elsewhere (unrolled, fused, hoisted)."""
    for o in operations:
        clone = o.clone()
        remap_operands(clone, mapping)
        for old, new in zip(o.results, clone.results):
            mapping[old] = new


# Ops whose memref result views (part of) their first operand's buffer.
VIEW_OPS = frozenset({"memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.collapse_shape",
                      "memref.expand_shape", "memref.transpose", "memref.memory_space_cast"})


# Integer divisions and remainders: undefined behaviour in LLVM for a zero
# divisor, so never computed speculatively (e.g. before a loop that may not run).
UNSAFE_TO_SPECULATE = frozenset({
    "arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.ceildivsi", "arith.ceildivui",
    "arith.floordivsi", "index.divs", "index.divu", "index.rems", "index.remu", "index.ceildivs",
    "index.ceildivu", "index.floordivs"})


def mixed_slice_values(op: ir.Operation, static_name: str, first_operand: int) -> tuple[list, int]:
    """A slice op's offsets, sizes or strides (`static_name` its attribute):
    ints where static, operand Values where dynamic; and the index of the
    next dynamic operand (start with the first offset operand's index)."""
    dynamic = ir.ShapedType.get_dynamic_size()
    values, k = [], first_operand
    operands = list(op.operands)
    for s in ir.DenseI64ArrayAttr(op.attributes[static_name]):
        if s == dynamic:
            values.append(operands[k])
            k += 1
        else:
            values.append(s)
    return values, k


def _constant_attribute(value: ir.Value) -> ir.Attribute | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return owner.attributes["value"]


def constant_int(value: ir.Value) -> int | None:
    """The integer of an `arith.constant` value, else None."""
    attr = _constant_attribute(value)
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def constant_float(value: ir.Value) -> float | None:
    """The float of a scalar `arith.constant` value, else None."""
    attr = _constant_attribute(value)
    return ir.FloatAttr(attr).value if isinstance(attr, ir.FloatAttr) else None


def ancestors(op: ir.Operation):
    """The operations enclosing `op`, innermost first."""
    parent = op.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def index_value(i: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), i)


def dynamic_sizes_from_shape_tensor(shape: ir.Value, result_type: ir.RankedTensorType) -> list:
    """Sizes for `tensor.empty`: static ints, or index values read from `shape`."""
    sizes = []
    for i in range(result_type.rank):
        if not result_type.is_dynamic_dim(i):
            sizes.append(result_type.shape[i])
            continue
        v = tensor.extract(shape, [index_value(i)])
        # StableHLO shape operands hold integers or indices.
        sizes.append(v if isinstance(v.type, ir.IndexType) else arith.index_cast(ir.IndexType.get(), v))
    return sizes


def declare_private_function(module: ir.Module, name: str, argument_types: list[ir.Type],
                             result_types: list[ir.Type] = (), nounwind: bool = False) -> None:
    """`func.func private @name(argument_types) -> (result_types)` at the top
    of the module, unless it is declared already (a callee of the runtime
    support code); `nounwind`: marked `llvm.nounwind` (a C routine)."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return
    with ir.InsertionPoint.at_block_begin(module.body):
        decl = func.FuncOp(name, ir.FunctionType.get(argument_types, list(result_types)))
        decl.attributes["sym_visibility"] = ir.StringAttr.get("private")
        if nounwind:
            decl.attributes["llvm.nounwind"] = ir.UnitAttr.get()


def zero_fill(value: ir.Value) -> ir.Operation | None:
    """The `linalg.fill` of the constant 0 (float or integer) that defines
    `value`, else None."""
    op = value.owner
    if isinstance(op, ir.Block) or op.name != "linalg.fill":
        return None
    scalar = op.operands[0].owner
    if isinstance(scalar, ir.Block) or scalar.name != "arith.constant":
        return None
    attribute = scalar.attributes["value"]
    if isinstance(attribute, ir.FloatAttr):
        return op.operation if ir.FloatAttr(attribute).value == 0.0 else None
    if isinstance(attribute, ir.IntegerAttr):
        return op.operation if ir.IntegerAttr(attribute).value == 0 else None
    return None


class StringGlobals:
    """Private, constant, NUL-terminated `llvm.mlir.global`s of `module`
    holding texts, one per distinct text, named `prefix` + a number no
    symbol of the module has (`symbol(text)` makes or reuses one). The
    module's symbols are listed once, not once per new text (372 check
    messages in channel_flow made that quadratic)."""

    def __init__(self, module: ir.Module, prefix: str) -> None:
        self.module = module
        self.prefix = prefix
        self.names: dict[str, str] = {}
        self.used = {ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations
                     if "sym_name" in op.attributes}

    def symbol(self, text: str) -> str:
        if text in self.names:
            return self.names[text]
        index = len(self.names)
        while f"{self.prefix}{index}" in self.used:
            index += 1
        name = self.names[text] = f"{self.prefix}{index}"
        self.used.add(name)
        data = text.encode() + b"\0"
        array = ir.Type.parse(f"!llvm.array<{len(data)} x i8>")
        with ir.InsertionPoint(self.module.body):
            llvm.GlobalOp(array, name, ir.Attribute.parse("#llvm.linkage<private>"), constant=True,
                          value=ir.StringAttr.get(data), addr_space=0)
        return name


def axes_attribute(op: ir.Operation, name: str) -> set[int]:
    """The axes listed in a `DenseI64ArrayAttr` attribute (empty when absent)."""
    return set(ir.DenseI64ArrayAttr(op.attributes[name])) if name in op.attributes else set()


def maybe_expanding_axes(op: ir.Operation) -> list[int]:
    """Operand axes of a `stablehlo.dynamic_broadcast_in_dim` that may be 1
    at run time while the result dim is larger: dynamic and in neither of
    its `known_*expanding_dimensions` lists (StableHLO's meaning)."""
    operand_type = ir.RankedTensorType(op.operands[0].type)
    known = (axes_attribute(op, "known_nonexpanding_dimensions")
             | axes_attribute(op, "known_expanding_dimensions"))
    return [j for j in range(operand_type.rank) if operand_type.is_dynamic_dim(j) and j not in known]


def collapsed_1d(value: ir.Value) -> ir.Value:
    """`value`, a contiguous memref, as a one-dimensional view
    (`memref.collapse_shape` of all its dims; static size when all are)."""
    t = ir.MemRefType(value.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    size = dynamic
    if all(d != dynamic for d in t.shape):
        size = 1
        for d in t.shape:
            size *= d
    flat_type = ir.MemRefType.get([size], t.element_type, memory_space=t.memory_space)
    i64 = ir.IntegerType.get_signless(64)
    group = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, i) for i in range(t.rank)])])
    return memref.CollapseShapeOp(flat_type, value, group).result


_GENERIC_STRUCTURE = {"indexing_maps", "iterator_types", "operandSegmentSizes"}


def rebuild_generic(generic: ir.Operation, inputs: list[ir.Value], maps: list[ir.Attribute],
                    arguments: list, prologue=None) -> ir.Operation:
    """A copy of the `linalg.generic` `generic` (placed before it, its other
    attributes kept) reading `inputs` through `maps` (input maps; the output
    maps and operands stay) instead of its own inputs; `arguments[k]` is
    what the old body's k-th input argument becomes: an int j (the new
    body's j-th argument) or None (unused, must have no uses).
    `prologue(block_arguments, mapping)`, when given, is called in the new
    body before the old body is copied and may add to `mapping` (old value
    -> new); e.g. a fused producer's body. The results of `generic` are
    replaced and it is erased."""
    old_inputs = len(generic.operands) - len(generic.results)
    old_block = generic.regions[0].blocks[0]
    outputs = list(generic.operands)[old_inputs:]
    old_maps = list(generic.attributes["indexing_maps"])
    with ir.InsertionPoint(generic), generic.location:
        new = linalg.GenericOp([r.type for r in generic.results], inputs, outputs,
                               ir.ArrayAttr.get(list(maps) + old_maps[old_inputs:]),
                               generic.attributes["iterator_types"])
    for i in range(len(generic.attributes)):
        attribute = generic.attributes[i]
        if attribute.name not in _GENERIC_STRUCTURE:
            new.operation.attributes[attribute.name] = attribute.attr
    types = [ir.ShapedType(v.type).element_type for v in inputs] + \
        [a.type for a in list(old_block.arguments)[old_inputs:]]
    block = new.regions[0].blocks.append(*types)
    mapping = {}
    for k, j in enumerate(arguments):
        if j is not None:
            mapping[old_block.arguments[k]] = block.arguments[j]
    for k in range(len(outputs)):
        mapping[old_block.arguments[old_inputs + k]] = block.arguments[len(inputs) + k]
    with ir.InsertionPoint(block), generic.location:
        if prologue is not None:
            prologue(list(block.arguments), mapping)
        clone_ops([o.operation for o in old_block.operations], mapping)
    for old, result in zip(generic.results, new.operation.results):
        old.replace_all_uses_with(result)
    generic.erase()
    return new.operation


def _loop_dims(maps: list[ir.Attribute]) -> set[int]:
    """The loops that some map of `maps` indexes with a plain loop dim."""
    dims = set()
    for m in maps:
        for e in ir.AffineMapAttr(m).value.results:
            if isinstance(e, ir.AffineDimExpr):
                dims.add(e.position)
    return dims


def drop_unused_inputs(generic: ir.Operation) -> ir.Operation:
    """`generic` without the inputs its body does not read (rebuilt when it
    has any: an input read by no body still bufferizes as a buffer that is
    filled, or shares its buffer and keeps the fill alive)."""
    old_inputs = len(generic.operands) - len(generic.results)
    body = generic.regions[0].blocks[0]
    maps = list(generic.attributes["indexing_maps"])
    used = list(range(old_inputs))
    for k in range(old_inputs):
        if list(body.arguments[k].uses):
            continue
        # Kept only when it alone gives a loop its extent (a reduction over it).
        rest = [maps[j] for j in used if j != k] + maps[old_inputs:]
        if _loop_dims(rest) == set(range(ir.AffineMapAttr(maps[k]).value.n_dims)):
            used.remove(k)
    if len(used) == old_inputs:
        return generic
    arguments = [used.index(k) if k in used else None for k in range(old_inputs)]
    return rebuild_generic(generic, [generic.operands[k] for k in used], [maps[k] for k in used], arguments)
