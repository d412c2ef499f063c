"""The public entry point: `@kiln.qjit`, compiled functions and their stages.

In: a Python function written against kiln.numpy / NumPy, and its call
arguments (NumPy arrays, Python scalars, pytrees of them).
Out: NumPy results. On the first call with a new signature (dtype, rank,
size-1 dims, equal-dim pattern, static values) it traces, typechecks,
lowers, runs the pipeline and links a library; later calls of that
signature go straight to the library, whatever the sizes.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from kiln import tree
from kiln.core import (
    INDEX_DTYPE,
    SUPPORTED_DTYPES,
    DShapedArray,
    Jaxpr,
    KilnTypeError,
    KilnValueError,
    is_static_dim,
)
from kiln.tracing import Builder, Tracer, scope
from kiln.typecheck import dead_code_elimination, typecheck_jaxpr


@dataclass(frozen=True)
class ShapeDtype:
    """An array annotation for ahead-of-time compilation: ints are static
    dims, strings name dynamic dims (equal names share one dim).

    >>> ShapeDtype(("n", 3), "float64")
    ShapeDtype(shape=('n', 3), dtype='float64')
    """

    shape: tuple
    dtype: Any


# --------------------------------------------------------------------------
# Signatures


@dataclass(frozen=True)
class ArgSig:
    """How one flat argument is traced: an array with per-dim specs
    (`("static", k)` or `("dim", class)`), or a scalar."""

    kind: str  # "array" | "scalar"
    dtype: str
    dims: tuple = ()
    weak: bool = False


def _leaf_to_array(x: Any, where: str) -> Any:
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (bool, int, float, np.generic)):
        return x
    if isinstance(x, Tracer):
        raise KilnTypeError(f"{where}: a traced value was passed to a compiled function from inside a trace")
    try:
        return np.asarray(x)
    except Exception:
        raise KilnTypeError(f"{where}: cannot pass a {type(x).__name__} to a compiled function; "
                            "pass NumPy arrays, Python scalars, or tuples/lists/dicts of them") from None


def _check_dtype(dtype: np.dtype, where: str) -> np.dtype:
    if dtype not in SUPPORTED_DTYPES:
        raise KilnTypeError(f"{where}: dtype {dtype} is not supported; convert it with .astype() to one of "
                            + ", ".join(sorted(str(d) for d in SUPPORTED_DTYPES)))
    return dtype


class _DimClasses:
    """Assigns dims to classes: named axes by name, other dims by value."""

    def __init__(self, share_equal: bool):
        self.share_equal = share_equal
        self.classes: dict[Any, int] = {}

    def cls(self, key: Any) -> int:
        if key not in self.classes:
            self.classes[key] = len(self.classes)
        return self.classes[key]


def _python_scalar_sig(x: Any) -> ArgSig:
    if isinstance(x, bool):
        return ArgSig("scalar", "bool", weak=True)
    if isinstance(x, int):
        return ArgSig("scalar", "int64", weak=True)
    return ArgSig("scalar", "float64", weak=True)


def signature_of(leaves: list, names: list[str], axes_names: list[dict], share_equal: bool,
                 specialize_unit_dims: bool) -> tuple[ArgSig, ...]:
    classes = _DimClasses(share_equal)
    sigs = []
    for x, where, named in zip(leaves, names, axes_names):
        if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):  # np.float64 is a float, not weak
            sigs.append(_python_scalar_sig(x))
            continue
        arr = np.asarray(x)
        dtype = _check_dtype(arr.dtype, where)
        if arr.ndim == 0:
            sigs.append(ArgSig("scalar", dtype.str))
            continue
        dims = []
        for axis, size in enumerate(arr.shape):
            if axis in named:
                dims.append(("dim", classes.cls(("name", named[axis]))))
            elif size == 1 and specialize_unit_dims:
                dims.append(("static", 1))
            else:
                key = ("size", size) if share_equal else ("arg", where, axis)
                dims.append(("dim", classes.cls(key)))
        sigs.append(ArgSig("array", dtype.str, tuple(dims)))
    return tuple(sigs)


# --------------------------------------------------------------------------
# Compiled entries


@dataclass
class CompiledEntry:
    signature: tuple
    jaxpr: Jaxpr
    executable: Any
    out_tree: Any
    num_implicit_in: int
    num_implicit_out: int
    # for each implicit input: (flat arg index, axis) it is read from
    dim_sources: list
    stages: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    cache_hit: bool = False

    def __post_init__(self):
        self._single_leaf = self.out_tree == ("leaf",)
        self._flat_tuple = self.out_tree[0] == "tuple" and all(c == ("leaf",) for c in self.out_tree[1])

    def call(self, leaves: Sequence) -> Any:
        """Run on flat leaves that match `signature` (arrays in any layout,
        scalars); implicit dims are read off the leaves' shapes."""
        if self.jaxpr.writeback:
            _check_writable(self.jaxpr.writeback, leaves)
        values = [leaves[i].shape[axis] for i, axis in self.dim_sources]
        values += leaves
        results = self.executable(values)
        if self.num_implicit_out:
            results = results[self.num_implicit_out:]
        if self.jaxpr.writeback:
            results = _write_back(self.jaxpr.writeback, leaves, results)
        if self._single_leaf:
            return results[0]
        if self._flat_tuple:
            return tuple(results)
        return tree.unflatten(self.out_tree, results)


def _check_writable(positions: tuple, leaves: Sequence) -> None:
    """Before running: every argument the function writes must be a writable
    NumPy array that shares no memory with another argument."""
    for position in positions:
        arr = leaves[position]
        if not isinstance(arr, np.ndarray):
            raise KilnTypeError(
                f"argument {position} is written by the function but is a {type(arr).__name__}; "
                "pass a NumPy array to receive the writes")
        if not arr.flags.writeable:
            raise KilnValueError(
                f"argument {position} is read-only but the function writes to it; pass a writable "
                "array (for example arr.copy())")
        for other, leaf in enumerate(leaves):
            if other != position and isinstance(leaf, np.ndarray) and np.shares_memory(arr, leaf):
                raise KilnValueError(
                    f"argument {position} is written by the function and overlaps argument {other} in "
                    "memory; kiln would not see the write through the other argument — pass a copy "
                    "of one of them")


def _write_back(positions: tuple, leaves: Sequence, results: list) -> list:
    """Copy the final contents of written arguments into the caller's arrays."""
    count = len(positions)
    for position, final in zip(positions, results[-count:]):
        np.copyto(leaves[position], final)
    return results[:-count]


def trace_function(fn: Callable, leaves_sig: tuple[ArgSig, ...], in_tree: Any, static_args: dict,
                   arg_positions: list, unit_dims_specialized: bool = False,
                   runtime_checks: bool = True) -> tuple[Jaxpr, Any, list]:
    """Trace `fn` on avals built from the signature; returns the jaxpr, the
    output tree, and which argument dim fills each implicit input.
    `unit_dims_specialized`: no dynamic argument dim is 1 at run time.
    `runtime_checks=False` emits no run-time checks."""
    from kiln.numpy._base import runtime_checks_enabled

    builder = Builder()
    with scope(builder), runtime_checks_enabled(runtime_checks):
        dim_tracers: dict[int, Tracer] = {}
        dim_sources: list = []
        for i, sig in enumerate(leaves_sig):
            for axis, (kind, value) in enumerate(sig.dims):
                if kind == "dim" and value not in dim_tracers:
                    dim_tracers[value] = builder.new_arg(DShapedArray((), INDEX_DTYPE, weak_type=True), explicit=False)
                    dim_sources.append((i, axis))
        if unit_dims_specialized:
            builder.never_unit_dims.update(id(t) for t in dim_tracers.values())
        arg_tracers = []
        for sig in leaves_sig:
            if sig.kind == "scalar":
                aval = DShapedArray((), np.dtype(sig.dtype), weak_type=sig.weak)
            else:
                shape = [value if kind == "static" else dim_tracers[value] for kind, value in sig.dims]
                aval = DShapedArray(shape, np.dtype(sig.dtype))
            arg_tracers.append(builder.new_arg(aval))
        args_tree_values = tree.unflatten(in_tree, arg_tracers)
        call_args = list(args_tree_values)
        full_args = _merge_static(call_args, static_args, arg_positions)
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
        written = [i for i, t in enumerate(arg_tracers) if id(t) in builder.written_roots]
        written_leaves = [arg_tracers[i] for i in written]
        jaxpr = builder.build(implicit + out_leaves + written_leaves,
                              [False] * len(implicit) + [True] * (len(out_leaves) + len(written_leaves)))
    jaxpr.consts = list(builder.const_sources)
    jaxpr.writeback = tuple(written)
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


# --------------------------------------------------------------------------
# qjit

_SCALAR_TYPES = frozenset([bool, int, float] + [np.dtype(d).type for d in SUPPORTED_DTYPES])
# Distinct argument shapes remembered per function before the fast cache restarts.
_FAST_CACHE_SIZE = 4096


class _NotFast(Exception):
    """A call argument the fast path does not key (the general path handles it)."""


def _tree_key(x: Any, leaves: list) -> Any:
    """The fast-path key of a pytree argument; appends its leaves to
    `leaves` in `tree.flatten` order (dict keys sorted)."""
    t = type(x)
    if t is np.ndarray:
        leaves.append(x)
        return (x.dtype, x.shape)
    if t in _SCALAR_TYPES:
        leaves.append(x)
        return t
    if t is tuple or t is list:
        return (t, tuple([_tree_key(e, leaves) for e in x]))
    if t is dict:
        keys = sorted(x)
        return (dict, tuple(keys), tuple([_tree_key(x[k], leaves) for k in keys]))
    raise _NotFast


class QJIT:
    """A function compiled by kiln on first call per signature.

    >>> @qjit
    ... def f(x, y):
    ...     return np.exp(x) * 2.0 + y
    >>> f(np.ones(3), np.ones(3)).shape
    (3,)
    """

    def __init__(self, fn: Callable, *, static_argnums: Sequence[int] = (), static_argnames: Sequence[str] = (),
                 abstracted_axes: Any = None, share_equal_dims: bool = False, specialize_unit_dims: bool = True,
                 pipelines: Any = None, keep_intermediate: bool = False, autograph: bool = False,
                 autograph_include: Sequence[str] = (), autograph_exclude: Sequence[str] = (),
                 runtime_checks: bool = True):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters)
        self.static_argnums = {i % len(self.params) if self.params else i for i in static_argnums}
        self.static_argnums |= {self.params.index(n) for n in static_argnames if n in self.params}
        self.abstracted_axes = abstracted_axes
        self.share_equal_dims = share_equal_dims
        self.specialize_unit_dims = specialize_unit_dims
        self.pipelines = pipelines
        self.keep_intermediate = keep_intermediate
        self.runtime_checks = runtime_checks
        self.autograph = autograph
        self.autograph_include = tuple(autograph_include)
        self.autograph_exclude = tuple(autograph_exclude)
        self.cache: dict[Any, CompiledEntry] = {}
        self.num_compiles = 0
        self.last: CompiledEntry | None = None
        self.workspace: str | None = None
        # Calls whose arguments are all arrays/scalars skip signature work:
        # (dtype, shape) per argument -> entry.
        self._fast_cache: dict[tuple, CompiledEntry] = {}
        self._dynamic_positions = [i for i in range(len(self.params)) if i not in self.static_argnums]
        self._fast_eligible = all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in self.signature.parameters.values())
        self._keywords_positional = self._fast_eligible and all(
            p.kind == p.POSITIONAL_OR_KEYWORD for p in self.signature.parameters.values())
        self._aot = self._compile_ahead_of_time()

    # --- ahead of time
    def _compile_ahead_of_time(self) -> tuple | None:
        """With every parameter annotated (int, float, bool, a NumPy scalar
        type or kiln.ShapeDtype) compile at decoration; calls must then match
        the annotations. Returns (signature, entry) or None."""
        sigs = _annotated_signature(self.fn, self.static_argnums)
        if sigs is None:
            return None
        in_tree = tree.flatten(tuple(range(len(sigs))))[1]
        entry = self._compile(sigs, in_tree, {}, list(range(len(sigs))), ("aot", sigs))
        self.last = entry
        return sigs, entry

    def _call_ahead_of_time(self, args: tuple, kwargs: dict) -> Any:
        sigs, entry = self._aot
        dynamic, _, _ = self._split_args(args, kwargs)
        named: dict[int, int] = {}
        leaves = []
        for i, (x, sig) in enumerate(zip(dynamic, sigs)):
            leaves.append(_conform(x, sig, f"{self.__name__}: argument {i} ({self.params[i]!r})", named))
        self.last = entry
        return entry.call(leaves)

    # --- calling
    def _split_args(self, args: tuple, kwargs: dict) -> tuple[list, dict, list]:
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise KilnTypeError(f"{self.__name__}: {e}") from None
        bound.apply_defaults()
        values = list(bound.arguments.values())
        static = {}
        dynamic = []
        for i, v in enumerate(values):
            if i in self.static_argnums:
                try:
                    hash(v)
                except TypeError:
                    raise KilnTypeError(f"{self.__name__}: static argument {self.params[i]!r} must be hashable, "
                                        f"got {type(v).__name__}") from None
                static[i] = v
            else:
                dynamic.append(v)
        return dynamic, static, list(range(len(values)))

    def _axes_names(self, dynamic: list, leaves_per_arg: list[int]) -> list[dict]:
        axes = self.abstracted_axes
        if axes is None:
            return [{}] * sum(leaves_per_arg)
        if isinstance(axes, dict):
            axes = (axes,) * len(dynamic)
        out = []
        for spec, count in zip(axes, leaves_per_arg):
            spec = spec or {}
            out.extend([dict(spec)] * count)
        return out

    def __call__(self, *args, **kwargs):
        if kwargs and self._keywords_positional:
            # f(x, y=y) with every remaining parameter by keyword: the same
            # call as f(x, y), which the fast path handles.
            rest = self.params[len(args):]
            if len(kwargs) == len(rest) and all(p in kwargs for p in rest):
                args, kwargs = args + tuple(kwargs[p] for p in rest), {}
        fast_key, fast_leaves = self._fast_key(args) if not kwargs else (None, None)
        if fast_key is not None:
            entry = self._fast_cache.get(fast_key)
            if entry is not None:
                self.last = entry
                return entry.call(fast_leaves)
        if self._aot is not None:
            result = self._call_ahead_of_time(args, kwargs)
            if fast_key is not None:  # these dtypes and shapes conform to the annotations
                self._remember(fast_key, self._aot[1])
            return result
        dynamic, static, positions = self._split_args(args, kwargs)
        leaves, in_tree = tree.flatten(tuple(dynamic))
        names = [f"argument {i}" for i in range(len(leaves))]
        leaves = [_leaf_to_array(x, n) for x, n in zip(leaves, names)]
        per_arg = [len(tree.flatten(a)[0]) for a in dynamic]
        axes_names = self._axes_names(dynamic, per_arg)
        sig = signature_of(leaves, names, axes_names, self.share_equal_dims, self.specialize_unit_dims)
        _check_named_axes(leaves, axes_names)
        key = (sig, str(in_tree), tuple(sorted((k, _static_key(v)) for k, v in static.items())))
        entry = self.cache.get(key)
        if entry is None:
            entry = self._compile(sig, in_tree, static, positions, key)
        if fast_key is not None:
            self._remember(fast_key, entry)
        self.last = entry
        return entry.call(leaves)

    def _remember(self, fast_key: tuple, entry: CompiledEntry) -> None:
        if len(self._fast_cache) >= _FAST_CACHE_SIZE:
            self._fast_cache.clear()
        self._fast_cache[fast_key] = entry

    def _fast_key(self, args: tuple) -> tuple:
        """(key, flat leaves) for a call with every parameter passed
        positionally as NumPy arrays, scalars, tuples/lists/dicts of them,
        or hashable static arguments; the key holds the tree structure,
        dtypes and exact shapes (which fix the signature, unit dims and
        equal-dim pattern included), scalar types and static values.
        (None, None) when the call needs the general path."""
        if not self._fast_eligible or len(args) != len(self.params):
            return None, None
        key = []
        statics = self.static_argnums
        for i, a in enumerate(args):
            t = type(a)
            if statics and i in statics:
                try:
                    hash(a)
                except TypeError:
                    return None, None
                key.append((t, a))
            elif t is np.ndarray:
                key.append((a.dtype, a.shape))
            elif t in _SCALAR_TYPES:
                key.append(t)
            elif t is tuple or t is list or t is dict:
                return self._tree_fast_key(args)
            else:
                return None, None
        if statics:
            return tuple(key), [args[i] for i in self._dynamic_positions]
        return tuple(key), args

    def _tree_fast_key(self, args: tuple) -> tuple:
        """`_fast_key` for calls with pytree arguments."""
        key: list = []
        leaves: list = []
        try:
            for i, a in enumerate(args):
                if i in self.static_argnums:
                    hash(a)
                    key.append((type(a), a))
                else:
                    key.append(_tree_key(a, leaves))
        except (_NotFast, TypeError):
            return None, None
        return tuple(key), leaves

    def _compile(self, sig, in_tree, static, positions, key) -> CompiledEntry:
        from kiln.compiler import driver

        start = time.perf_counter()
        fn = self.fn
        if self.autograph:
            from kiln.autograph import convert

            fn = convert(fn, include=self.autograph_include, exclude=self.autograph_exclude)
        jaxpr, out_tree, dim_sources = trace_function(
            fn, sig, in_tree, static, positions,
            unit_dims_specialized=self.specialize_unit_dims and self.abstracted_axes is None,
            runtime_checks=self.runtime_checks)
        trace_seconds = time.perf_counter() - start
        entry = driver.compile_jaxpr(jaxpr, self.__name__, pipelines=self.pipelines,
                                     keep_intermediate=self.keep_intermediate)
        self.workspace = entry.get("workspace")
        compiled = CompiledEntry(sig, jaxpr, entry["executable"], out_tree,
                                 sum(1 for e in jaxpr.in_explicit if not e),
                                 sum(1 for e in jaxpr.out_explicit if not e),
                                 dim_sources, {"jaxpr": jaxpr.pretty(), **entry["stages"]},
                                 {"jaxpr": trace_seconds, **entry["seconds"]}, entry["cache_hit"])
        self.cache[key] = compiled
        self.num_compiles += 1
        return compiled

    # --- introspection
    def _require_compiled(self) -> CompiledEntry:
        if self.last is None:
            raise KilnValueError(f"{self.__name__} has not been compiled yet: call it once first")
        return self.last

    @property
    def jaxpr(self) -> Jaxpr:
        return self._require_compiled().jaxpr

    @property
    def mlir(self) -> str:
        return self.stage("mlir")

    @property
    def mlir_opt(self) -> str:
        """The module after the last MLIR stage of the pipeline (`llvm` by default)."""
        return self.stage(self.pipelines[-1][0] if self.pipelines else "llvm")

    @property
    def llvmir(self) -> str:
        return self.stage("llvmir")

    @property
    def stage_times(self) -> dict:
        """Seconds per stage of the last compile (`jaxpr` is tracing; `cache`
        the lookup and load when the library came from the cache)."""
        return dict(self._require_compiled().seconds)

    def print_stage_times(self, file: Any = None) -> None:
        """Print `stage_times` as a table (ms and share per stage).

        >>> f.print_stage_times()  # doctest: +SKIP
        stage             ms       %
        jaxpr           0.68     0.3
        ...
        """
        from kiln.compiler.driver import format_stage_times

        print(f"{self.__name__}: compile times\n" + format_stage_times(self.stage_times), file=file)

    def stage(self, name: str) -> str:
        entry = self._require_compiled()
        if name not in entry.stages:
            known = ", ".join(entry.stages)
            raise KilnValueError(f"no stage named {name!r} for {self.__name__}; stages: {known}")
        return entry.stages[name]

    def __repr__(self) -> str:
        return f"<kiln.qjit {self.__name__} compiled {self.num_compiles}x>"


def _static_key(v: Any) -> Any:
    return (type(v).__name__, v)


def _check_named_axes(leaves: list, axes_names: list[dict]) -> None:
    seen: dict[str, tuple[int, int, int]] = {}
    for i, (x, named) in enumerate(zip(leaves, axes_names)):
        shape = np.shape(x)
        for axis, name in named.items():
            if axis >= len(shape):
                raise KilnValueError(f"abstracted_axes: argument {i} has no axis {axis} (shape {shape})")
            size = shape[axis]
            if name in seen and seen[name][2] != size:
                j, ax, other = seen[name]
                raise KilnValueError(
                    f"abstracted_axes: axis {name!r} has size {size} in argument {i} (axis {axis}) but "
                    f"{other} in argument {j} (axis {ax}); arrays sharing a named axis must agree")
            seen.setdefault(name, (i, axis, size))


def qjit(fn: Callable | None = None, **options: Any):
    """Compile `fn` with kiln. Usable as `@qjit` or `@qjit(option=...)`.

    Options: static_argnums, static_argnames, abstracted_axes,
    share_equal_dims (default False: one dim variable per argument dim,
    except dims named alike in abstracted_axes / ShapeDtype annotations;
    True makes dims of equal size at the call share one variable, and a
    call whose equal-size pattern differs compiles again),
    specialize_unit_dims (default True), pipelines, keep_intermediate,
    autograph (default False; see docs/autograph.md), autograph_include /
    autograph_exclude (module or function names whose functions autograph
    does / does not convert when the compiled function calls them),
    runtime_checks (default True; False leaves out the run-time checks of
    sizes and indices: a mismatch or an out-of-bounds index is then
    undefined behaviour — see docs/runtime.md).
    """
    if fn is None:
        return lambda f: qjit(f, **options)
    return QJIT(fn, **options)


def get_compilation_stage(fn: QJIT, stage: str) -> str:
    """The text of a stage (`jaxpr`, `mlir`, ..., `llvmir`) of the last compile of `fn`."""
    if not isinstance(fn, QJIT):
        raise KilnTypeError("get_compilation_stage expects a @kiln.qjit function")
    return fn.stage(stage)



# --------------------------------------------------------------------------
# Ahead-of-time: export / load


def _annotation_sig(annotation: Any, where: str, dim_classes: _DimClasses) -> tuple[ArgSig, dict]:
    """The ArgSig of one annotated parameter and its JSON description."""
    if annotation in (bool, int, float):
        sig = _python_scalar_sig(annotation())
        return sig, {"dtype": np.dtype(sig.dtype).name, "shape": []}
    if isinstance(annotation, type) and issubclass(annotation, np.generic):
        annotation = ShapeDtype((), annotation)
    if not isinstance(annotation, ShapeDtype):
        raise KilnTypeError(f"kiln.export: {where} needs an annotation kiln.ShapeDtype(shape, dtype) (or "
                            f"float/int/bool for a scalar), got {annotation!r}")
    dtype = _check_dtype(np.dtype(annotation.dtype), where)
    shape = list(annotation.shape)
    dims = []
    for axis, d in enumerate(shape):
        if isinstance(d, str):
            dims.append(("dim", dim_classes.cls(("name", d))))
        elif isinstance(d, (int, np.integer)) and d >= 0:
            dims.append(("static", int(d)))
        else:
            raise KilnTypeError(f"kiln.export: {where}, axis {axis}: a dim is an int (static) or a str "
                                f"(a named dynamic dim), got {d!r}")
    kind = "array" if shape else "scalar"
    return ArgSig(kind, dtype.str, tuple(dims)), {"dtype": dtype.name, "shape": [
        int(d) if not isinstance(d, str) else d for d in shape]}


_SCALAR_ANNOTATIONS = (bool, int, float)


def _annotated_signature(fn: Callable, static_argnums: set) -> tuple | None:
    """ArgSigs from the parameter annotations when every parameter has a
    supported one (and none is static), else None."""
    if static_argnums:
        return None
    try:
        params = list(inspect.signature(fn, eval_str=True).parameters.values())
    except (NameError, TypeError, ValueError):
        return None
    if not params:
        return None
    for p in params:
        a = p.annotation
        supported = a in _SCALAR_ANNOTATIONS or isinstance(a, ShapeDtype) or (
            isinstance(a, type) and issubclass(a, np.generic))
        if not supported or p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return None
    classes = _DimClasses(share_equal=False)
    return tuple(_annotation_sig(p.annotation, f"parameter {p.name!r}", classes)[0] for p in params)


def _conform(x: Any, sig: ArgSig, where: str, named: dict) -> Any:
    """Check an argument against its ahead-of-time signature; return the leaf to pass."""
    if sig.kind == "scalar" and sig.weak:
        expected = {"bool": (bool, np.bool_), "int64": (int, np.integer), "float64": (float, int, np.floating,
                                                                                     np.integer)}
        if isinstance(x, bool) and sig.dtype != "bool" or not isinstance(x, expected[np.dtype(sig.dtype).name]):
            raise KilnTypeError(f"{where}: expected a {np.dtype(sig.dtype).name} scalar as annotated "
                                f"(compiled ahead of time), got {type(x).__name__}")
        return x
    arr = np.asarray(x)
    want = np.dtype(sig.dtype)
    if arr.dtype != want or arr.ndim != len(sig.dims):
        raise KilnTypeError(f"{where}: expected a {want.name} array of rank {len(sig.dims)} as annotated "
                            f"(compiled ahead of time), got {arr.dtype.name} of rank {arr.ndim}")
    for axis, (kind, value) in enumerate(sig.dims):
        size = arr.shape[axis]
        if kind == "static" and size != value:
            raise KilnValueError(f"{where}: axis {axis} must have size {value} as annotated, got {size}")
        if kind == "dim" and named.setdefault(value, size) != size:
            raise KilnValueError(f"{where}: axis {axis} has size {size}, but a dim of the same name has size "
                                 f"{named[value]} in an earlier argument")
    return arr


def export(fn: Any, path: str) -> dict:
    """Compile `fn` ahead of time from its parameter annotations into the
    folder `path`: `lib<name>.so` (with a plain C entry point `<name>`),
    `<name>.h` and `<name>.kiln.json`. Returns those paths.

    >>> @kiln.qjit
    ... def saxpy(a: float, x: kiln.ShapeDtype(("n",), "float64"), y: kiln.ShapeDtype(("n",), "float64")):
    ...     return a * x + y
    >>> kiln.export(saxpy, "out")  # doctest: +SKIP
    """
    from kiln.compiler import driver
    from kiln.runtime import aot

    py_fn = fn.fn if isinstance(fn, QJIT) else fn
    try:
        signature = inspect.signature(py_fn, eval_str=True)
    except (NameError, TypeError) as e:
        raise KilnTypeError(f"kiln.export: cannot evaluate the annotations of {py_fn.__name__}: {e}") from None
    name = driver._symbol_name(py_fn.__name__)
    classes = _DimClasses(share_equal=False)
    sigs, params = [], []
    for pname, param in signature.parameters.items():
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            raise KilnTypeError(f"kiln.export: parameter {pname!r} of {name} must be positional")
        sig, desc = _annotation_sig(param.annotation, f"parameter {pname!r} of {name}", classes)
        sigs.append(sig)
        params.append({"name": aot.c_parameter_name(driver._symbol_name(pname)), **desc})
    in_tree = tree.flatten(tuple(range(len(sigs))))[1]
    traced_fn = py_fn
    if isinstance(fn, QJIT) and fn.autograph:
        from kiln.autograph import convert

        traced_fn = convert(py_fn, include=fn.autograph_include, exclude=fn.autograph_exclude)
    jaxpr, out_tree, dim_sources = trace_function(traced_fn, tuple(sigs), in_tree, {}, list(range(len(sigs))),
                                                  runtime_checks=not isinstance(fn, QJIT) or fn.runtime_checks)
    num_implicit_out = sum(1 for e in jaxpr.out_explicit if not e)
    writeback = list(getattr(jaxpr, "writeback", ()))
    results = jaxpr.outvars[num_implicit_out:len(jaxpr.outvars) - len(writeback)]
    meta = {
        "format": aot.FORMAT_VERSION, "name": name, "kernel_symbol": f"{name}_kernel",
        "library": f"lib{name}.so", "header": f"{name}.h", "params": params,
        "dim_sources": [list(s) for s in dim_sources], "num_implicit_out": num_implicit_out,
        "results": [{"dtype": v.aval.dtype.name, "rank": v.aval.ndim} for v in results],
        "writeback": writeback, "out_tree": out_tree,
        "kernel_args": [{"dtype": v.aval.dtype.name, "rank": v.aval.ndim} for v in jaxpr.invars],
        "kernel_results": [{"dtype": v.aval.dtype.name, "rank": v.aval.ndim} for v in jaxpr.outvars],
    }
    os.makedirs(path, exist_ok=True)
    header = os.path.join(path, meta["header"])
    with open(header, "w") as f:
        f.write(aot.c_header(meta))

    def write_wrapper() -> str:
        source = os.path.join(path, f"{name}_wrapper.c")
        with open(source, "w") as f:
            f.write(aot.c_wrapper(meta, meta["header"]))
        return source

    library = os.path.join(path, meta["library"])
    driver.build_library(jaxpr, meta["kernel_symbol"], library, write_wrapper, include_dirs=[path])
    metadata = os.path.join(path, f"{name}.kiln.json")
    with open(metadata, "w") as f:
        json.dump(meta, f, indent=1)
    return {"library": library, "header": header, "metadata": metadata,
            "wrapper_source": os.path.join(path, f"{name}_wrapper.c")}


def load(path: str, name: str | None = None) -> Any:
    """Load a function exported with `kiln.export` from the folder `path`
    (no tracing, no MLIR): a callable taking NumPy arrays and scalars."""
    from kiln.runtime import aot

    return aot.LoadedFunction(path, aot.read_metadata(path, name))
