"""Stage "jaxpr": the entry to tracing for a compiled function.

In: a Python function, the ArgSig of each flat argument, the argument tree
and the static arguments.
Out: a dead-code-eliminated, typechecked Jaxpr whose first inputs are the
implicit dims, the output tree, and which argument dim fills each implicit input.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from kiln import tree
from kiln.numpy._base import runtime_checks_enabled  # importing kiln.numpy installs NumPy's surface on Tracer
from kiln.core import INDEX_DTYPE, DShapedArray, Jaxpr, is_static_dim
from kiln.numpy.random_legacy import GlobalRandomStateNeeded, global_random_state
from kiln.random_state import MT19937_WORDS
from kiln.signatures import ArgSig
from kiln.trace_namespace import trace_namespace
from kiln.tracing import Builder, Tracer, scope
from kiln.typecheck import dead_code_elimination, typecheck_jaxpr


def trace_function(fn: Callable, leaves_sig: tuple[ArgSig, ...], in_tree: Any, static_args: dict,
                   arg_positions: list, unit_dims_specialized: bool = False,
                   runtime_checks: bool = True) -> tuple[Jaxpr, Any, list]:
    """Trace `fn` on avals built from the signature; returns the jaxpr, the
    output tree, and which argument dim fills each implicit input.
    `unit_dims_specialized`: no dynamic argument dim is 1 at run time.
    `runtime_checks=False` emits no run-time checks. A function that calls
    the legacy np.random functions is traced again with the global
    RandomState's state words as a last, implicit argument."""
    try:
        return _trace(fn, leaves_sig, in_tree, static_args, arg_positions, unit_dims_specialized,
                      runtime_checks, global_random=False)
    except GlobalRandomStateNeeded:
        return _trace(fn, leaves_sig, in_tree, static_args, arg_positions, unit_dims_specialized,
                      runtime_checks, global_random=True)


def _trace(fn: Callable, leaves_sig: tuple, in_tree: Any, static_args: dict, arg_positions: list,
           unit_dims_specialized: bool, runtime_checks: bool, global_random: bool) -> tuple[Jaxpr, Any, list]:
    builder = Builder()
    with scope(builder), runtime_checks_enabled(runtime_checks), trace_namespace() as names:
        # NumPy names in fn (and the user functions it reaches) take their traced meaning.
        fn = names.function(fn)
        dim_tracers: dict[int, Tracer] = {}
        dim_sources: list = []
        for i, sig in enumerate(leaves_sig):
            for axis, (kind, value) in enumerate(sig.dims):
                if kind == "dim" and value not in dim_tracers:
                    dim_tracers[value] = builder.new_arg(DShapedArray((), INDEX_DTYPE, weak_type=True), explicit=False)
                    dim_sources.append((i, axis))
        if unit_dims_specialized:
            builder.aliases.never_unit_dims.update(id(t) for t in dim_tracers.values())
        arg_tracers = []
        for sig in leaves_sig:
            if sig.kind == "scalar":
                aval = DShapedArray((), np.dtype(sig.dtype), weak_type=sig.weak)
            else:
                shape = [value if kind == "static" else dim_tracers[value] for kind, value in sig.dims]
                aval = DShapedArray(shape, np.dtype(sig.dtype))
            arg_tracers.append(builder.new_arg(aval))
            if sig.zero_d_array:
                builder.aliases.zero_d_arrays.add(id(arg_tracers[-1]))
        args_tree_values = tree.unflatten(in_tree, arg_tracers)
        call_args = list(args_tree_values)
        full_args = _merge_static(call_args, static_args, arg_positions)
        if global_random:
            arg_tracers.append(builder.new_arg(DShapedArray((MT19937_WORDS,), np.dtype(np.int64))))
            with global_random_state(arg_tracers[-1]):
                out = _call_with_parameters(fn, full_args)
        else:
            out = _call_with_parameters(fn, full_args)
        from kiln import numpy as knp

        out_leaves, out_tree = tree.flatten(out)
        out_leaves = [knp.asarray(o) for o in out_leaves]
        # Dims of results that are not inputs become implicit outputs.
        inputs = {id(t) for t in builder.invars}
        implicit: list[Tracer] = []
        for o in out_leaves:
            for d in o.aval.shape:
                if not is_static_dim(d) and id(d) not in inputs and all(d is not t for t in implicit):
                    implicit.append(d)
        # Arguments written through any alias go back to the caller: their
        # final contents are extra outputs.
        written = [i for i, t in enumerate(arg_tracers) if id(t) in builder.aliases.written_roots]
        written_leaves = [arg_tracers[i] for i in written]
        jaxpr = builder.build(implicit + out_leaves + written_leaves,
                              [False] * len(implicit) + [True] * (len(out_leaves) + len(written_leaves)))
    jaxpr.consts = list(builder.const_sources)
    jaxpr.writeback = tuple(written)
    jaxpr.global_random_state = global_random
    dead_code_elimination(jaxpr)
    typecheck_jaxpr(jaxpr)
    return jaxpr, out_tree, dim_sources


def _call_with_parameters(fn: Callable, values: list) -> Any:
    """Call `fn` with one value per parameter (in signature order), passing
    keyword-only parameters by name and spreading *args / **kwargs."""
    args: list = []
    kwargs: dict = {}
    for param, value in zip(inspect.signature(fn).parameters.values(), values):
        if param.kind == param.VAR_POSITIONAL:
            args.extend(value)
        elif param.kind == param.VAR_KEYWORD:
            kwargs.update(value)
        elif param.kind == param.KEYWORD_ONLY:
            kwargs[param.name] = value
        else:
            args.append(value)
    return fn(*args, **kwargs)


def _merge_static(call_args: list, static_args: dict, positions: list) -> list:
    """Rebuild the positional argument list with static arguments in place."""
    merged = []
    dyn = iter(call_args)
    for pos in positions:
        merged.append(static_args[pos] if pos in static_args else next(dyn))
    return merged
