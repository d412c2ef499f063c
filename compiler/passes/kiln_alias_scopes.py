"""Pass `kiln-alias-scopes` (stage "llvm", last).

In: the LLVM-dialect module, where every `llvm.load` and `llvm.store` of
array data addresses the aligned pointer (slot 1) of a memref descriptor,
and the buffers a parallel or serial body works on arrive as descriptors
in its context (`kiln_parallel_for(@body, %ctx, ...)`, `llvm.call
@body(%ctx)`).
Out: each such access tagged with LLVM's scoped alias metadata
(`alias_scopes`, `noalias_scopes`): one scope per buffer the function
touches, and an access declared not to alias the accesses of every other
buffer that kiln knows to be disjoint from its own.

Why: without it LLVM cannot tell a stencil's output from its inputs (all
are pointers loaded from a context or passed in), so its loop vectorizer
versions each loop behind run-time overlap checks, and above eight checks
does not vectorize it at all. Those checks cost run time and, more, compile
time: jacobi_2d's one body compiled in 44 ms with them, 26 ms without (the
vectorizer's dependence analysis and the implied-condition queries on the
checks), the same vector loop, half the machine code.

What kiln knows. Each access's pointer is traced back, through GEPs and the
descriptors' insertvalue/extractvalue of slot 1, to its buffer's root:
- an allocation (`_mlir_memref_to_llvm_alloc`, through the aligned-pointer
  arithmetic): disjoint from every other buffer;
- a global (`llvm.mlir.addressof`, kiln's constants): disjoint from every
  other buffer;
- an argument of an entry function (one with a `_mlir_ciface_` wrapper):
  disjoint from every other argument. A written argument shares no memory
  with any other argument (every Python entry refuses the call otherwise:
  `compiled_entry.check_writable`; kiln's functionalization relies on it
  already), and two arguments that are only read are never written
  through, so declaring them disjoint changes nothing;
- a field of a body's context: the root of the descriptor each call site
  stores into that field (the nearest store before the call, in its block,
  with no other call between). Two fields are disjoint when their roots are
  at every call site (kiln-dedup-parallel-bodies shares one body between
  `B = f(A)` and `A = f(B)`: both sites write one buffer and read the
  other).
Anything else (a descriptor carried by a loop's block argument, a pointer a
runtime call returned, slot 0) has no root: its accesses get no metadata,
and LLVM keeps assuming they may alias anything. Two accesses of one root
(an in-place update `a[1:] += a[:-1]`) are never declared disjoint. A
function touching more than MAX_ROOTS buffers is left alone (the metadata
would grow with its accesses times its buffers). Cost: 2-2.6 ms on small
NPBench kernels, 35 ms on channel_flow (one walk per function in C, the
tracing memoized per value).
"""

from __future__ import annotations

from typing import Any

from kiln.compiler.mlir import ir
from kiln.compiler.passes import ModulePass, register_pass
from kiln.compiler.passes._util import collect_ops

_ALLOC = "_mlir_memref_to_llvm_alloc"
_PARALLEL_FOR = "kiln_parallel_for"
# A function touching more buffers gets no scopes: each access lists the
# scopes of the buffers it is apart from, so the metadata grows with the
# accesses times the buffers (NPBench's largest: 10 buffers in a body).
MAX_ROOTS = 64
_BRANCHES = ("llvm.br", "llvm.cond_br", "llvm.switch", "llvm.indirectbr")
_WALKED = ("llvm.load", "llvm.store", "llvm.call", "llvm.mlir.addressof", *_BRANCHES)
_ENTRY_PREFIX = "_mlir_ciface_"  # codegen.ENTRY_PREFIX (codegen imports the passes)

# A root: ("alloc", n), ("global", name), ("arg", function, index) or, in a
# body, ("field", function, index). What a pointer may address: a frozenset
# of roots (a descriptor merged from branches may hold either of two
# buffers), or None: unknown.
Root = tuple
Roots = frozenset


def _callee(op: ir.Operation) -> str | None:
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value if "callee" in op.attributes else None


def _field_index(gep: ir.Operation, base: ir.Value, fields: dict) -> int | None:
    """k when `gep` is `llvm.getelementptr %base[0, k]` with constant indices
    (`fields`: the pass run's attribute `array<i32: 0, k>` -> k, so each
    is read once)."""
    if gep.name != "llvm.getelementptr" or len(gep.operands) != 1 or gep.operands[0] != base:
        return None
    indices = gep.attributes["rawConstantIndices"]
    if indices not in fields:
        values = list(ir.DenseI32ArrayAttr(indices))
        fields[indices] = values[1] if len(values) == 2 and values[0] == 0 and values[1] >= 0 else None
    return fields[indices]


def _incoming(edges: dict, block: ir.Block, index: int) -> list[ir.Value] | None:
    """The values the branches into `block` pass for its argument `index`
    (`edges`: block -> the operand groups of the branches to it; None when
    another terminator, a switch, reaches it)."""
    groups = edges.get(block)
    if not groups:
        return None
    return [group[index] for group in groups]


def _branch_edges(branches: list[ir.Operation]) -> dict:
    """Block -> the operand groups that the `llvm.br`/`llvm.cond_br` ops
    among `branches` (one function's) pass it; a block some other terminator reaches maps to None."""
    edges: dict = {}
    for terminator in branches:
        operands = list(terminator.operands)
        if terminator.name == "llvm.br":
            groups = [operands]
        elif terminator.name == "llvm.cond_br":
            _, taken, other = list(ir.DenseI32ArrayAttr(terminator.attributes["operandSegmentSizes"]))
            groups = [operands[1:1 + taken], operands[1 + taken:1 + taken + other]]
        else:
            for successor in terminator.successors:
                edges[successor] = None
            continue
        for successor, group in zip(terminator.successors, groups):
            if edges.get(successor, []) is not None:
                edges.setdefault(successor, []).append(group)
    return edges


class _Function:
    """Roots traced in one function."""

    def __init__(self, op: ir.Operation, entry: bool, allocs: dict, aligned: ir.Attribute, fields: dict):
        self.op = op
        self.fields = fields  # shared by the pass run's functions (_field_index)
        self.aligned = aligned  # a descriptor's slot 1, its aligned pointer
        self.branches: list[ir.Operation] = []
        self.edges: dict | None = None
        self.field_types: dict | None = None
        self.name = ir.StringAttr(op.attributes["sym_name"]).value
        self.block = op.regions[0].blocks[0]
        self.entry = entry
        self.allocs = allocs  # shared numbering of allocation calls
        self.memo: dict[Any, Roots | None] = {}
        self.visiting: set = set()

    def pointer_roots(self, value: ir.Value) -> Roots | None:
        """The roots of an address: GEPs down to a descriptor's slot 1."""
        for _ in range(64):
            owner = value.owner
            if isinstance(owner, ir.Block):
                return None
            op = owner.operation
            if op.name == "llvm.getelementptr":
                value = op.operands[0]
                continue
            if op.name == "llvm.extractvalue" and op.attributes["position"] == self.aligned:
                return self.descriptor_roots(op.operands[0])
            return None
        return None

    def descriptor_roots(self, value: ir.Value) -> Roots | None:
        """The roots of the buffer whose aligned pointer a descriptor holds."""
        if value in self.memo:
            return self.memo[value]
        if value in self.visiting:  # a descriptor a loop carries around to itself
            return None
        self.visiting.add(value)
        roots = self._descriptor_roots(value)
        self.visiting.discard(value)
        self.memo[value] = roots
        return roots

    def _descriptor_roots(self, value: ir.Value) -> Roots | None:
        current = value
        for _ in range(64):
            owner = current.owner
            if isinstance(owner, ir.Block):
                if owner == self.block:
                    return None
                if self.edges is None:
                    self.edges = _branch_edges(self.branches)
                incoming = _incoming(self.edges, owner, current.arg_number)
                if incoming is None:
                    return None
                merged: set = set()
                for v in incoming:
                    roots = self.descriptor_roots(v)
                    if roots is None:
                        return None
                    merged |= roots
                return frozenset(merged)
            op = owner.operation
            if op.name == "llvm.insertvalue":
                if op.attributes["position"] == self.aligned:
                    return self.slot_roots(op.operands[1])
                current = op.operands[0]
                continue
            if op.name == "llvm.load" and not self.entry and self.block.arguments:  # a body's context field
                address = op.operands[0].owner
                if not isinstance(address, ir.Block):
                    k = _field_index(address.operation, self.block.arguments[0], self.fields)
                    if k is not None:
                        return frozenset([("field", self.name, k)])
            return None
        return None

    def slot_roots(self, value: ir.Value) -> Roots | None:
        """The roots of a pointer stored into a descriptor's slot 1."""
        for _ in range(64):
            owner = value.owner
            if isinstance(owner, ir.Block):
                if self.entry and owner == self.block:
                    return frozenset([("arg", self.name, value.arg_number)])
                return None
            op = owner.operation
            if op.name == "llvm.extractvalue" and op.attributes["position"] == self.aligned:
                return self.descriptor_roots(op.operands[0])
            if op.name == "llvm.getelementptr":
                value = op.operands[0]
                continue
            if op.name == "llvm.inttoptr":  # the aligned pointer of an allocation
                allocated = _aligned_from(op.operands[0])
                if allocated is None:
                    return None
                value = allocated
                continue
            if op.name == "llvm.call" and _callee(op) == _ALLOC:
                return frozenset([("alloc", self.allocs.setdefault(op, len(self.allocs)))])
            if op.name == "llvm.mlir.addressof":
                return frozenset([("global", ir.FlatSymbolRefAttr(op.attributes["global_name"]).value)])
            return None
        return None

    def stores_before(self, call: ir.Operation, context: ir.Value, target: str,
                      field_types: dict) -> dict[int, ir.Value]:
        """The value stored into each field of `context` that `call` (of
        body `target`) sees: the one store into that field when the context
        serves only calls of `target`; else the nearest store before the
        call, in its block or, through blocks with a single predecessor,
        before, the walk stopping at any other call (kiln-outline-serial-loops
        shares one context between the nests of a function)."""
        sole = _sole_stores(context, target, field_types, self.fields)
        if sole is not None:
            return sole
        stored: dict[int, ir.Value] = {}
        call = call.operation
        block, stop = call.block, call
        for _ in range(64):
            ops = []
            for op in block.operations:
                if stop is not None and op.operation == stop:
                    break
                ops.append(op.operation)
            for previous in reversed(ops):
                if previous.name == "llvm.call":
                    return stored
                if previous.name != "llvm.store":
                    continue
                address = previous.operands[1].owner
                if isinstance(address, ir.Block):
                    continue
                k = _field_index(address.operation, context, self.fields)
                if k is None or k in stored:
                    continue
                expected = field_types.get(k)
                if expected is None or expected != address.operation.attributes["elem_type"]:
                    return stored  # the context seen through another layout: what it holds is unclear
                stored[k] = previous.operands[0]
            predecessors = list(block.predecessors)
            if len(predecessors) != 1 or block == self.block:
                return stored
            block, stop = predecessors[0], None
        return stored


def _sole_stores(context: ir.Value, target: str, field_types: dict, fields: dict) -> dict[int, ir.Value] | None:
    """Field -> value, when `context` is used only by calls of body
    `target` (direct, or through kiln_parallel_for) and by the field
    addresses of `target`'s context type, each stored into once (and
    maybe read back); else None."""
    stored: dict[int, ir.Value] = {}
    for use in context.uses:
        user = use.owner
        if user.name == "llvm.call":
            callee = _callee(user)
            if callee == target and use.operand_number == 0:
                continue
            if callee == _PARALLEL_FOR and use.operand_number == 1:
                function = user.operands[0].owner
                if not isinstance(function, ir.Block) and function.operation.name == "llvm.mlir.addressof" and \
                        ir.FlatSymbolRefAttr(function.operation.attributes["global_name"]).value == target:
                    continue
            return None
        k = _field_index(user, context, fields)
        expected = field_types.get(k) if k is not None else None
        if expected is None or expected != user.attributes["elem_type"]:
            return None
        for address_use in user.results[0].uses:
            access = address_use.owner
            if access.name == "llvm.store" and address_use.operand_number == 1:
                if k in stored:
                    return None
                stored[k] = access.operands[0]
            elif access.name != "llvm.load":
                return None
    return stored


def _aligned_from(value: ir.Value) -> ir.Value | None:
    """`p` when `value` is MLIR's aligned address of an allocation:
    `sub(add(ptrtoint p, a - 1), urem(add(...), a))`."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "llvm.sub":
        return None
    bumped, rem = owner.operation.operands
    rem_owner = rem.owner
    if isinstance(rem_owner, ir.Block) or rem_owner.operation.name != "llvm.urem" or \
            rem_owner.operation.operands[0] != bumped:
        return None
    add = bumped.owner
    if isinstance(add, ir.Block) or add.operation.name != "llvm.add":
        return None
    for operand in add.operation.operands:
        cast = operand.owner
        if not isinstance(cast, ir.Block) and cast.operation.name == "llvm.ptrtoint":
            return cast.operation.operands[0]
    return None


def _disjoint(a: Root, b: Root) -> bool:
    """Whether two roots with nothing unknown are different buffers."""
    if a == b:
        return False
    if a[0] in ("alloc", "global") or b[0] in ("alloc", "global"):
        return True
    return a[0] == b[0] == "arg" and a[1] == b[1]


@register_pass
class KilnAliasScopes(ModulePass):
    """Tag array loads and stores with LLVM alias scopes from the buffers kiln knows apart."""

    name = "kiln-alias-scopes"

    def apply(self, module: ir.Module) -> None:
        defined = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "llvm.func" and op.regions[0].blocks:
                defined[ir.StringAttr(op.attributes["sym_name"]).value] = op
        allocs: dict = {}
        with module.context:
            aligned = ir.DenseI64ArrayAttr.get([1])
        fields: dict = {}
        functions = {name: _Function(op, _ENTRY_PREFIX + name in defined, allocs, aligned, fields)
                     for name, op in defined.items()}
        accesses: dict[str, list[tuple[ir.Operation, Roots]]] = {}
        sites: dict[str, list | None] = {}

        def add_site(target: str, caller: _Function, call: ir.Operation, context: ir.Value | None) -> None:
            if context is None:
                sites[target] = None
            elif sites.get(target, []) is not None:
                stored = caller.stores_before(call.operation, context, target, _field_types(functions[target]))
                sites.setdefault(target, []).append((caller, stored))

        memory: list[tuple[_Function, list[ir.Operation]]] = []
        calls: list[tuple[_Function, ir.Operation]] = []
        for function in functions.values():
            # Each function's ops, walked in C; its branches first (a block
            # argument's roots come from all of them), then the call sites,
            # then the accesses.
            ops = collect_ops(function.op, _WALKED)
            function.branches = [op for op in ops if op.name in _BRANCHES]
            calls.extend((function, op) for op in ops if op.name in ("llvm.call", "llvm.mlir.addressof"))
            found = [op for op in ops if op.name in ("llvm.load", "llvm.store")]
            if any(op.name == "llvm.store" for op in found):  # loads alone need no scopes
                memory.append((function, found))
        for function, op in calls:
            if op.name == "llvm.mlir.addressof":
                # A parallel body's address goes to kiln_parallel_for with its context; any
                # other use of it leaves its fields unknown.
                target = ir.FlatSymbolRefAttr(op.attributes["global_name"]).value
                if target in functions:
                    for use in op.result.uses:
                        user = use.owner
                        if user.name == "llvm.call" and _callee(user) == _PARALLEL_FOR and \
                                use.operand_number == 0 and len(user.operands) > 1:
                            add_site(target, function, user, user.operands[1])
                        else:
                            sites[target] = None
            else:
                # Every direct call is a site (a serial body: `llvm.call @body(%ctx) {no_inline}`).
                target = _callee(op)
                if target in functions:
                    add_site(target, function, op, op.operands[0] if len(op.operands) else None)
        for function, found in memory:
            for op in found:
                roots = function.pointer_roots(op.operands[0 if op.name == "llvm.load" else 1])
                if roots:
                    accesses.setdefault(function.name, []).append((op, roots))
        resolver = _Resolver(sites)
        for name, found in accesses.items():
            resolver.tag(functions[name], found)


def _field_types(body: _Function) -> dict[int, ir.Attribute]:
    """The context type (its attribute) through which `body` reads each field."""
    if body.field_types is not None:
        return body.field_types
    found: dict[int, ir.Attribute] = {}
    body.field_types = found
    if body.entry or not body.block.arguments:
        return found
    for use in body.block.arguments[0].uses:
        gep = use.owner
        k = _field_index(gep, body.block.arguments[0], body.fields)
        if k is not None:
            found[k] = gep.attributes["elem_type"]
    return found


class _Resolver:
    """Which roots of a function are disjoint, through the call sites of a
    body for its fields; and the scopes."""

    def __init__(self, sites: dict):
        self.sites = sites
        self.resolving: set = set()
        self.memo: dict = {}

    def per_site(self, function: _Function, root: Root) -> list[frozenset] | None:
        """For each call site of `function`, the final roots (no fields)
        that the field `root` holds there; None when a site leaves it unknown."""
        key = ("sites", function.name, root)
        if key not in self.memo:
            self.memo[key] = self._per_site(function, root)
        return self.memo[key]

    def _per_site(self, function: _Function, root: Root) -> list[frozenset] | None:
        sites = self.sites.get(function.name)
        if not sites:
            return None
        result = []
        for caller, stored in sites:
            value = stored.get(root[2])
            final = self.final(caller, caller.descriptor_roots(value)) if value is not None else None
            if final is None:
                return None
            result.append(final)
        return result

    def final(self, function: _Function, roots: Roots | None) -> frozenset | None:
        """The final roots that roots of `function` may stand for."""
        if roots is None:
            return None
        result: set = set()
        for root in roots:
            if root[0] != "field":
                result.add(root)
                continue
            key = (function.name, root)
            if key not in self.memo:
                if key in self.resolving:  # a body reached again through its own sites
                    return None
                self.resolving.add(key)
                per_site = self.per_site(function, root)
                self.resolving.discard(key)
                self.memo[key] = frozenset().union(*per_site) if per_site else None
            if self.memo[key] is None:
                return None
            result |= self.memo[key]
        return frozenset(result)

    def disjoint(self, function: _Function, a: Root, b: Root) -> bool:
        """Whether two roots of `function` are different buffers at every call of it."""
        if a == b:
            return False
        if a[0] != "field" and b[0] != "field":
            return _disjoint(a, b)
        count = len(self.sites.get(function.name) or ())
        at_a = self.per_site(function, a) if a[0] == "field" else [frozenset([a])] * count
        at_b = self.per_site(function, b) if b[0] == "field" else [frozenset([b])] * count
        if not at_a or not at_b:
            return False
        return all(_disjoint(x, y) for xs, ys in zip(at_a, at_b) for x in xs for y in ys)

    def tag(self, function: _Function, found: list[tuple[ir.Operation, Roots]]) -> None:
        roots = list(dict.fromkeys(root for _, group in found for root in sorted(group)))
        if not 2 <= len(roots) <= MAX_ROOTS:
            return
        apart = {(r, q) for r in roots for q in roots if self.disjoint(function, r, q)}
        if not apart:
            return
        description = function.name.replace("\\", "\\\\").replace('"', '\\"')
        domain = f'#llvm.alias_scope_domain<id = distinct[0]<>, description = "{description}">'
        text = ", ".join(f"#llvm.alias_scope<id = distinct[{i + 1}]<>, domain = {domain}>"
                         for i in range(len(roots)))
        attributes: dict = {}
        with function.op.context:
            scopes = ir.ArrayAttr(ir.Attribute.parse(f"[{text}]"))
            scope = {r: scopes[i] for i, r in enumerate(roots)}
            for _, group in found:
                if group not in attributes:
                    others = [scope[q] for q in roots if all((r, q) in apart for r in group)]
                    attributes[group] = (ir.ArrayAttr.get([scope[r] for r in sorted(group)]),
                                         ir.ArrayAttr.get(others) if others else None)
        for op, group in found:
            own, others = attributes[group]
            op.attributes["alias_scopes"] = own
            if others is not None:
                op.attributes["noalias_scopes"] = others
