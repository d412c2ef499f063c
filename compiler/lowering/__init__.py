"""Stage "mlir": Jaxpr -> MLIR module of `func` + StableHLO (+ kiln's dialects).

In: a typechecked `Jaxpr` (dims are other vars).
Out: an `ir.Module` with one public function `@<name>` whose arguments are
the jaxpr's invars (implicit dims first, scalars as 0-d tensors) and whose
results are its outvars; every value is a `tensor<...>` with `?` for
dynamic dims. Lowering rules are registered per primitive with
`@lowering(prim)` in the family modules of this package, which are all
imported (found by scanning the package) when it is imported.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable

import numpy as np

from kiln.compiler.mlir import func, ir
from kiln.dialects import stablehlo as hlo
from kiln.dialects.stablehlo import tensor_type
from kiln.core import DShapedArray, Jaxpr, KilnInternalError, Literal, Primitive, Var, is_static_dim
from kiln.primitives.checks import check_p
from kiln.primitives.mutation import WRITE_PRIMITIVES

LoweringRule = Callable[..., list]
LOWERINGS: dict[Primitive, LoweringRule] = {}


def lowering(*prims: Primitive) -> Callable[[LoweringRule], LoweringRule]:
    """Register `rule(ctx, eqn, *operands) -> [results]` for each primitive."""

    def register(rule: LoweringRule) -> LoweringRule:
        for p in prims:
            LOWERINGS[p] = rule
        return rule

    return register


class LoweringContext:
    """Maps jaxpr vars to MLIR values while one function body is emitted."""

    def __init__(self, module: ir.Module):
        self.module = module
        self.env: dict[int, ir.Value] = {}
        # True when the function writes to arrays: views then lower to
        # tensorssa ops with reference semantics (see lowering/mutation.py).
        self.reference_semantics = False

    # --- values
    def bind_var(self, var: Var, value: ir.Value) -> None:
        self.env[id(var)] = value

    def read(self, x: Any) -> ir.Value:
        if isinstance(x, Literal):
            return hlo.constant(np.array(x.val, dtype=x.aval.dtype))
        try:
            return self.env[id(x)]
        except KeyError:
            raise KilnInternalError(f"var {x} used before it was lowered") from None

    def dim(self, d: Any) -> ir.Value | int:
        """A dim as a static int or the `tensor<i64>` value of its var."""
        return int(d) if is_static_dim(d) else self.read(d)

    def _unalias(self, eqn, outs: list) -> list:
        """A non-view result must not be an operand's SSA value: a later write
        to that operand would otherwise change it too."""
        operands = [self.read(x) for x in eqn.invars if not isinstance(x, Literal)]

        def aliases(o):
            return any(o == v for v in operands)

        if not any(aliases(o) for o in outs):
            return outs
        return [fresh_value(o) if aliases(o) else o for o in outs]

    def broadcast(self, x: ir.Value, operand_aval: DShapedArray, out_aval: DShapedArray,
                  broadcast_dimensions: tuple, expanding: tuple = ()) -> ir.Value:
        """`x` broadcast to `out_aval`'s shape (static or dynamic); operand
        dims in `expanding` may be 1 at run time (and then broadcast)."""
        out_type = tensor_type(out_aval.update(dtype=operand_aval.dtype))
        if out_aval.is_static and operand_aval.is_static:
            return hlo.one("broadcast_in_dim", out_type, x,
                           broadcast_dimensions=hlo.dense_i64_array(broadcast_dimensions))
        shape = hlo.shape_tensor([self.dim(d) for d in out_aval.shape])
        return hlo.dynamic_broadcast(out_type, x, shape, broadcast_dimensions, expanding)

    def shape_of(self, aval: DShapedArray) -> ir.Value:
        return hlo.shape_tensor([self.dim(d) for d in aval.shape])

    # --- jaxprs
    def lower_jaxpr_body(self, jaxpr: Jaxpr, args: list[ir.Value]) -> list[ir.Value]:
        """Emit `jaxpr` at the current insertion point with binders = args."""
        binders = list(jaxpr.constvars) + list(jaxpr.invars)
        if len(binders) != len(args):
            raise KilnInternalError(f"jaxpr takes {len(binders)} values, got {len(args)}")
        for v, a in zip(binders, args):
            self.bind_var(v, a)
        for eqn in jaxpr.eqns:
            rule = LOWERINGS.get(eqn.primitive)
            if rule is None:
                raise KilnInternalError(f"primitive {eqn.primitive.name} has no lowering rule")
            with _source_location(eqn):
                outs = rule(self, eqn, *[self.read(x) for x in eqn.invars])
            if len(outs) != len(eqn.outvars):
                raise KilnInternalError(f"lowering of {eqn.primitive.name} gave {len(outs)} results")
            if self.reference_semantics and not eqn.primitive.is_view:
                outs = self._unalias(eqn, outs)
            for v, o in zip(eqn.outvars, outs):
                self.bind_var(v, o)
        return [self.read(v) for v in jaxpr.outvars]


def _source_location(eqn) -> ir.Location:
    """`loc("prim"("file.py":line:col))`: the user's line that made the
    equation, named by its primitive (every op the rule builds carries it)."""
    where = eqn.source_info
    file_loc = ir.Location.unknown() if where is None else ir.Location.file(where.filename, where.line, where.column)
    return ir.Location.name(eqn.primitive.name, file_loc)


def fresh_value(x: ir.Value) -> ir.Value:
    """A value equal to `x` that is not an alias of it."""
    return ir.Operation.create("immut.assign", results=[x.type], operands=[x, x]).result


def has_writes(jaxpr: Jaxpr) -> bool:
    """Whether `jaxpr` (or a jaxpr nested in it) writes to an array."""
    for eqn in jaxpr.eqns:
        if eqn.primitive in WRITE_PRIMITIVES:
            return True
        for value in eqn.params.values():
            for sub in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(sub, Jaxpr) and has_writes(sub):
                    return True
    return False


def _sub_jaxprs(eqn) -> list:
    found = []
    for value in eqn.params.values():
        for sub in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(sub, Jaxpr):
                found.append(sub)
    return found


def _check_after_write(jaxpr: Jaxpr, wrote: bool = False) -> tuple[bool, bool, bool]:
    """(whether a run-time check can run after a write, whether `jaxpr`
    writes, whether it checks), in one walk of the equations in program
    order; a loop or branch writes or checks if one of its bodies does, and
    one that does both checks after a write (its next iteration checks
    after this one wrote)."""
    writes = checks = False
    for eqn in jaxpr.eqns:
        if eqn.primitive is check_p:
            if wrote or writes:
                return True, True, True
            checks = True
        if eqn.primitive in WRITE_PRIMITIVES:
            writes = True
        sub_writes = sub_checks = False
        for sub in _sub_jaxprs(eqn):
            bad, w, c = _check_after_write(sub, wrote or writes)
            if bad:
                return True, True, True
            sub_writes, sub_checks = sub_writes or w, sub_checks or c
        if sub_writes and sub_checks:
            return True, True, True
        writes, checks = writes or sub_writes, checks or sub_checks
    return False, writes, checks


def writes_arguments_in_place(jaxpr: Jaxpr) -> bool:
    """Whether the written arguments may be updated in place as the program
    runs: only when no run-time check can fail after a write, so that a
    failed check still leaves the caller's arrays untouched (otherwise the
    final values are stored into them at the return, after every check)."""
    return not _check_after_write(jaxpr)[0]


# Result attribute: this result is the final value of the argument it names.
WRITTEN_ARGUMENT = "kiln.written_argument"


def lower_jaxpr_to_module(jaxpr: Jaxpr, name: str, ctx: ir.Context) -> ir.Module:
    """The `mlir` stage of a top-level jaxpr (its consts become constants)."""
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        arg_types = [tensor_type(v.aval) for v in jaxpr.invars]
        result_types = [tensor_type(v.aval) for v in jaxpr.outvars]
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp(name, ir.FunctionType.get(arg_types, result_types))
            fn.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            # Arguments are the caller's NumPy buffers. One the function
            # writes (`jaxpr.writeback`) is writable when no check can fail
            # after a write: bufferization updates it in place where no read
            # of an older value needs a copy. Any other argument is
            # read-only: bufferization never writes it (docs/mutation.md,
            # "Writes to arguments").
            num_implicit = sum(1 for explicit in jaxpr.in_explicit if not explicit)
            written = {num_implicit + position for position in getattr(jaxpr, "writeback", ())}
            in_place = written if writes_arguments_in_place(jaxpr) else set()
            # An implicit dim argument records which array dim it is
            # (`kiln.dim_of = [arg, axis]`): kiln-dims-from-shapes reads the
            # dim from the array instead, so shape arithmetic folds.
            dim_of = {}
            for k, v in enumerate(jaxpr.invars):
                for axis, d in enumerate(getattr(v.aval, "shape", ())):
                    if not isinstance(d, int) and d not in dim_of:
                        dim_of[d] = (k, axis)
            attrs = []
            for k, v in enumerate(jaxpr.invars):
                entry_attrs = {"bufferization.writable": ir.BoolAttr.get(k in in_place)}
                if v in dim_of:
                    entry_attrs["kiln.dim_of"] = ir.DenseI64ArrayAttr.get(list(dim_of[v]))
                attrs.append(ir.DictAttr.get(entry_attrs))
            fn.arg_attrs = ir.ArrayAttr.get(attrs)
            # The last len(writeback) results are the final values of the
            # written arguments; each names its argument, and
            # kiln-store-written-arguments stores it there and drops it.
            writeback = list(getattr(jaxpr, "writeback", ()))
            first = len(jaxpr.outvars) - len(writeback)
            fn.result_attrs = ir.ArrayAttr.get([
                ir.DictAttr.get({} if k < first else {WRITTEN_ARGUMENT: ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(64), num_implicit + writeback[k - first])})
                for k in range(len(jaxpr.outvars))])
            entry = fn.add_entry_block()
            with ir.InsertionPoint(entry), hlo.reusing_shape_tensors():
                lctx = LoweringContext(module)
                lctx.reference_semantics = has_writes(jaxpr)
                consts = [hlo.constant(np.asarray(c)) for c in jaxpr.consts]
                outs = lctx.lower_jaxpr_body(jaxpr, consts + list(entry.arguments))
                func.ReturnOp(outs)
    return module


def _import_rule_modules() -> None:
    """Import every module of this package: each registers its rules with
    `@lowering`. They only need the names above, so their order is free."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_import_rule_modules()
