"""The public entry of the reference interpreter: `kiln.interpret(f)`.

In: a `@kiln.qjit` function (or a plain one, with qjit's options) and call
arguments. Out: what a compiled call returns — results and writes to the
argument arrays — computed by tracing as qjit does and running the jaxpr
with `eval_jaxpr` instead of compiling it.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from kiln import tree
from kiln.compiled_entry import check_writable
from kiln.jit import QJIT
from kiln.trace_entry import trace_function
from kiln.core import Jaxpr
from kiln.errors import KilnTypeError
from kiln.interpreter import eval_jaxpr
from kiln.random_state import global_random_state, random_state_words, set_random_state_words


class Interpreted:
    """`f`'s calls traced as `qjit` traces them (same signatures, options
    and run-time checks) and evaluated by the reference interpreter; one
    trace per signature, no compilation.

    >>> @kiln.qjit
    ... def f(x):
    ...     x[0] = -1.0
    ...     return x * 2.0
    >>> a = np.ones(3)
    >>> kiln.interpret(f)(a), a
    (array([-2.,  2.,  2.]), array([-1.,  1.,  1.]))
    """

    def __init__(self, qjit: QJIT):
        self.qjit = qjit
        # signature key -> (jaxpr, out_tree, dim_sources)
        self.traces: dict[Any, tuple] = {}
        # The jaxpr of the last call (as `QJIT.jaxpr` is the last compiled one).
        self.jaxpr: Jaxpr | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        q = self.qjit
        generators: list = []
        if q._aot is not None:  # an annotated function: the signature is its annotations
            sigs = q._aot[0]
            leaves = q.conform_ahead_of_time(args, kwargs)
            in_tree = tree.flatten(tuple(range(len(sigs))))[1]
            key, static, positions = ("aot", sigs), {}, list(range(len(sigs)))
        else:
            call = q._prepare(args, kwargs)
            sigs, leaves, in_tree, key = call.signature, call.leaves, call.in_tree, call.key
            static, positions, generators = call.static, call.positions, call.generators
        if key not in self.traces:
            self.traces[key] = self._trace(sigs, in_tree, static, positions)
        jaxpr, out_tree, dim_sources = self.traces[key]
        self.jaxpr = jaxpr
        results = run_jaxpr(jaxpr, dim_sources, leaves)
        for generator in generators:
            generator.write_back()
        return tree.unflatten(out_tree, results)

    def _trace(self, sigs: tuple, in_tree: Any, static: dict, positions: list) -> tuple:
        q = self.qjit
        return trace_function(q.traced_function(), sigs, in_tree, static, positions,
                              unit_dims_specialized=q.specialize_unit_dims and q.abstracted_axes is None,
                              runtime_checks=q.runtime_checks)


def run_jaxpr(jaxpr: Jaxpr, dim_sources: list, leaves: list) -> list:
    """Evaluate a top-level jaxpr on flat argument leaves as a compiled call
    runs: the implicit dims are read off the leaves' shapes, written
    arguments are checked, worked on as copies and written back only when
    the whole call succeeded, results are fresh C-ordered arrays (NumPy
    scalars for rank 0). The global RandomState's words are a last argument
    when the jaxpr draws from it, and its state advances."""
    if not jaxpr.global_random_state:
        return _run(jaxpr, dim_sources, leaves)
    state = global_random_state()
    with state._bit_generator.lock:
        words = random_state_words(state)
        results = _run(jaxpr, dim_sources, [*leaves, words])
        set_random_state_words(state, words)
    return results


def _run(jaxpr: Jaxpr, dim_sources: list, leaves: list) -> list:
    if jaxpr.writeback:
        check_writable(jaxpr.writeback, leaves)
    num_implicit_in = sum(1 for e in jaxpr.in_explicit if not e)
    explicit_vars = jaxpr.invars[num_implicit_in:]
    values: list = [np.asarray(leaves[i].shape[axis], dtype=np.int64) for i, axis in dim_sources]
    for position, (leaf, var) in enumerate(zip(leaves, explicit_vars)):
        values.append(_argument_value(leaf, var.aval.dtype, position in jaxpr.writeback,
                                      num_implicit_in + position))
    outs = eval_jaxpr(jaxpr, jaxpr.consts, *values)
    outs = outs[sum(1 for e in jaxpr.out_explicit if not e):]
    if jaxpr.writeback:
        count = len(jaxpr.writeback)
        for position, final in zip(jaxpr.writeback, outs[-count:]):
            np.copyto(leaves[position], final)
        outs = outs[:-count]
    return [np.array(o, order="C")[()] if o.ndim == 0 else np.array(o, order="C") for o in outs]


def _argument_value(leaf: Any, dtype: np.dtype, written: bool, index: int) -> np.ndarray:
    if isinstance(leaf, np.ndarray) and leaf.ndim:
        return np.array(leaf, copy=True) if written else leaf
    try:
        return np.asarray(leaf, dtype=dtype)
    except OverflowError:
        raise OverflowError(f"scalar argument {index} (after the implicit dims): {leaf!r} does not fit in "
                            f"{dtype}; pass a float or a NumPy array") from None


_interpreted: "weakref.WeakKeyDictionary[QJIT, Interpreted]" = weakref.WeakKeyDictionary()


def interpret(fn: Callable | None = None, **options: Any) -> Any:
    """`fn` run by the reference interpreter instead of compiled code.
    `fn` is a `@kiln.qjit` function or a plain one (then `options` are
    qjit's options). Use it to tell a tracing bug from a compiler bug: if
    `kiln.interpret(f)(*args)` is right and `f(*args)` is wrong, the
    compiler is at fault (see docs/debugging.md).

    >>> kiln.interpret(lambda x: np.cumsum(x))(np.arange(4))
    array([0, 1, 3, 6])
    """
    if fn is None:
        return lambda f: interpret(f, **options)
    if isinstance(fn, Interpreted):
        return fn
    if isinstance(fn, QJIT):
        if options:
            raise KilnTypeError("kiln.interpret: pass options to kiln.qjit, not to interpret of a qjit function")
        if fn not in _interpreted:
            _interpreted[fn] = Interpreted(fn)
        return _interpreted[fn]
    return Interpreted(_QJITWithoutAheadOfTime(fn, **options))


class _QJITWithoutAheadOfTime(QJIT):
    """qjit's options and argument handling for a plain function, without
    compiling at decoration when every parameter is annotated."""

    def _compile_ahead_of_time(self) -> None:
        return None
