"""The public entry point: `@kiln.qjit`, compiled once per signature, then called.

In: a Python function and its call arguments (NumPy arrays, scalars, pytrees of them).
Out: NumPy results; a new signature traces, lowers, runs the pipeline and links a
library, and later calls of that signature go straight to it, whatever the sizes.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np

from kiln import compile_log, tree
from kiln.core import SUPPORTED_DTYPES, Jaxpr
from kiln.errors import KilnTypeError, KilnValueError
from kiln.foreign_arrays import foreign_array
from kiln.signatures import (
    annotated_signature,
    check_named_axes,
    conform,
    leaf_to_array,
    named_axes_of,
    refuse_non_array_argument,
    signature_of,
    static_key,
    static_positions,
)
from kiln.numpy.random import GeneratorArgument, wrap_generators
from kiln.trace_entry import trace_function
from kiln.compiled_entry import CompiledEntry, PreparedCall
from kiln.lowered import lower
from kiln.pickling import reduce_qjit

_SCALAR_TYPES = frozenset([bool, int, float] + [np.dtype(d).type for d in SUPPORTED_DTYPES])
# Distinct argument shapes remembered per function before the fast cache restarts.
_FAST_CACHE_SIZE = 4096


class _NotFast(Exception):
    """A call argument the fast path does not key (the general path handles it)."""


class _CompileInFlight:
    """One signature being compiled: threads that need it meanwhile wait on
    `done` and share the entry, or the error of that one compile (a failed
    compile is not remembered: a later call tries again)."""

    __slots__ = ("done", "entry", "error")

    def __init__(self):
        self.done = threading.Event()
        self.entry: CompiledEntry | None = None
        self.error: BaseException | None = None


class _LeavesWithGenerators(list):
    """Fast-path leaves of a call with Generator arguments, and their
    `GeneratorArgument`s (written back after the call)."""

    generators: list


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
    if t is np.random.Generator and type(leaves) is _LeavesWithGenerators:
        generator = GeneratorArgument(x, leaves.generators)
        leaves.append(generator.words)
        leaves.generators.append(generator)
        return t
    arr = foreign_array(x)
    if arr is None:
        raise _NotFast
    leaves.append(arr)
    return (arr.dtype, arr.shape)


class QJIT:
    """A function compiled by kiln on first call per signature.

    >>> @qjit
    ... def f(x, y):
    ...     return np.exp(x) * 2.0 + y
    >>> f(np.ones(3), np.ones(3)).shape
    (3,)
    """

    def __init__(self, fn: Callable, *, static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (), abstracted_axes: Any = None,
                 share_equal_dims: bool = False, specialize_unit_dims: bool = True, pipelines: Any = None,
                 keep_intermediate: bool = False, autograph: bool = True, autograph_include: Sequence[str] = (),
                 autograph_exclude: Sequence[str] = (), runtime_checks: bool = True, pickle_libraries: bool = False,
                 _received: dict | None = None):
        functools.update_wrapper(self, fn)
        if not hasattr(self, "__name__"):  # functools.partial and other callables without a name
            inner = getattr(fn, "func", fn)
            self.__name__ = getattr(inner, "__name__", type(fn).__name__)
            self.__qualname__ = getattr(inner, "__qualname__", self.__name__)
        self.fn = fn
        # Everything needed to build this function again (pickling, methods).
        self.options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                            abstracted_axes=abstracted_axes, share_equal_dims=share_equal_dims,
                            specialize_unit_dims=specialize_unit_dims, pipelines=pipelines,
                            keep_intermediate=keep_intermediate, autograph=autograph,
                            autograph_include=autograph_include, autograph_exclude=autograph_exclude,
                            runtime_checks=runtime_checks, pickle_libraries=pickle_libraries)
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters)
        self.static_argnums = static_positions(self.__name__, self.params, static_argnums, static_argnames)
        self.pickle_libraries = pickle_libraries
        self.abstracted_axes = abstracted_axes
        self.share_equal_dims = share_equal_dims
        self.specialize_unit_dims = specialize_unit_dims
        self.pipelines = pipelines
        self.keep_intermediate = keep_intermediate
        self.runtime_checks = runtime_checks
        self.autograph = autograph
        self.autograph_include = tuple(autograph_include)
        self.autograph_exclude = tuple(autograph_exclude)
        # Entries received with a pickled function serve their signatures without compiling.
        self.cache: dict[Any, CompiledEntry] = dict(_received or {})
        self._method_variants: dict[bool, QJIT] = {}
        self.num_compiles = 0
        # Signatures being compiled now, by key; guarded by _compiling_lock.
        self._compiling: dict[Any, _CompileInFlight] = {}
        self._compiling_lock = threading.Lock()
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
        # The defaults of the trailing parameters, which a call that omits them
        # takes on the fast path as if passed (crc16(data) with poly=0x8408).
        self._trailing_defaults: list = []
        for p in reversed(self.signature.parameters.values() if self._fast_eligible else ()):
            if p.default is p.empty:
                break
            self._trailing_defaults.insert(0, p.default)
        self._aot = self._compile_ahead_of_time()

    # --- ahead of time
    def _compile_ahead_of_time(self) -> tuple | None:
        """With every parameter annotated (int, float, bool, a NumPy scalar
        type or kiln.ShapeDtype) compile at decoration; calls must then match
        the annotations. Returns (signature, entry) or None."""
        sigs = annotated_signature(self.fn, self.static_argnums)
        if sigs is None:
            return None
        in_tree = tree.flatten(tuple(range(len(sigs))))[1]
        key = ("aot", sigs)
        entry = self.cache.get(key) or self._compile(sigs, in_tree, {}, list(range(len(sigs))), key)
        self.last = entry
        return sigs, entry

    def conform_ahead_of_time(self, args: tuple, kwargs: dict) -> list:
        """The arguments of a call to an annotated function, conformed to
        its annotations (one leaf per parameter)."""
        sigs = self._aot[0]
        dynamic, _, _ = self._split_args(args, kwargs)
        named: dict[int, int] = {}
        return [conform(x, sig, f"{self.__name__}: argument {i} ({self.params[i]!r})", named)
                for i, (x, sig) in enumerate(zip(dynamic, sigs))]

    def _call_ahead_of_time(self, args: tuple, kwargs: dict) -> Any:
        entry = self._aot[1]
        leaves = self.conform_ahead_of_time(args, kwargs)
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
                refuse_non_array_argument(self.__name__, self.params[i], v)
                dynamic.append(v)
        return dynamic, static, list(range(len(values)))

    def __call__(self, *args, **kwargs):
        if kwargs and self._keywords_positional:
            # f(x, y=y) with every remaining parameter by keyword: the same
            # call as f(x, y), which the fast path handles.
            rest = self.params[len(args):]
            if len(kwargs) == len(rest) and all(p in kwargs for p in rest):
                args, kwargs = args + tuple(kwargs[p] for p in rest), {}
        if not kwargs and len(args) < len(self.params) <= len(args) + len(self._trailing_defaults):
            args = args + tuple(self._trailing_defaults[len(args) - len(self.params):])
        fast_key, fast_leaves = self._fast_key(args) if not kwargs else (None, None)
        if fast_key is not None:
            entry = self._fast_cache.get(fast_key)
            if entry is not None:
                self.last = entry
                if type(fast_leaves) is not _LeavesWithGenerators:
                    return entry.call(fast_leaves)
                result = entry.call(fast_leaves)
                for generator in fast_leaves.generators:
                    generator.write_back()
                return result
        if self._aot is not None:
            result = self._call_ahead_of_time(args, kwargs)
            if fast_key is not None:  # these dtypes and shapes conform to the annotations
                self._remember(fast_key, self._aot[1])
            return result
        call = self._prepare(args, kwargs)
        entry = self.cache.get(call.key)
        if entry is None:
            entry = self._compile_once(call)
        if fast_key is not None:
            self._remember(fast_key, entry)
        self.last = entry
        if not call.generators:
            return entry.call(call.leaves)
        result = entry.call(call.leaves)
        for generator in call.generators:
            generator.write_back()
        return result

    def _prepare(self, args: tuple, kwargs: dict) -> "PreparedCall":
        """The cache key, flat leaves and signature of a call (the general path)."""
        dynamic, static, positions = self._split_args(args, kwargs)
        generators: list = []
        dynamic = [wrap_generators(a, generators) for a in dynamic]
        leaves, in_tree = tree.flatten(tuple(dynamic))
        names = [f"argument {i}" for i in range(len(leaves))]
        leaves = [leaf_to_array(x, n) for x, n in zip(leaves, names)]
        per_arg = [len(tree.flatten(a)[0]) for a in dynamic]
        axes_names = named_axes_of(self.abstracted_axes, dynamic, per_arg)
        sig = signature_of(leaves, names, axes_names, self.share_equal_dims, self.specialize_unit_dims)
        check_named_axes(leaves, axes_names)
        key = (sig, str(in_tree), tuple(sorted((k, static_key(v)) for k, v in static.items())))
        return PreparedCall(key, leaves, sig, in_tree, static, positions, generators)

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
            elif t is tuple or t is list or t is dict or t is np.random.Generator:
                return self._tree_fast_key(args)
            else:
                arr = foreign_array(a)
                if arr is None:
                    return None, None
                if type(args) is tuple:
                    args = list(args)
                args[i] = arr
                key.append((arr.dtype, arr.shape))
        if statics:
            return tuple(key), [args[i] for i in self._dynamic_positions]
        return tuple(key), args

    def _tree_fast_key(self, args: tuple) -> tuple:
        """`_fast_key` for calls with pytree arguments."""
        key: list = []
        leaves = _LeavesWithGenerators()
        leaves.generators = []
        try:
            for i, a in enumerate(args):
                if i in self.static_argnums:
                    hash(a)
                    key.append((type(a), a))
                else:
                    key.append(_tree_key(a, leaves))
        except (_NotFast, TypeError):
            return None, None
        return tuple(key), leaves if leaves.generators else list(leaves)

    def traced_function(self) -> Callable:
        """The function to trace: `fn` converted by autograph when it is on
        (and `fn` has source to convert), else `fn` itself."""
        if not self.autograph:
            return self.fn
        from kiln.autograph import convert_if_possible

        fn = self.fn
        if isinstance(fn, functools.partial):
            return functools.partial(convert_if_possible(fn.func, include=self.autograph_include,
                                                         exclude=self.autograph_exclude), *fn.args, **fn.keywords)
        return convert_if_possible(fn, include=self.autograph_include, exclude=self.autograph_exclude)

    def _compile_once(self, call: PreparedCall) -> CompiledEntry:
        """The entry of `call`'s signature, compiled by one thread only: a
        thread that finds the signature being compiled waits for that
        compile and shares its entry, or raises its error."""
        with self._compiling_lock:
            entry = self.cache.get(call.key)
            if entry is not None:
                return entry
            flight = self._compiling.get(call.key)
            leader = flight is None
            if leader:
                flight = self._compiling[call.key] = _CompileInFlight()
        if not leader:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return flight.entry
        try:
            flight.entry = self._compile(call.signature, call.in_tree, call.static, call.positions, call.key)
            return flight.entry
        except BaseException as error:
            flight.error = error
            raise
        finally:
            with self._compiling_lock:
                del self._compiling[call.key]
            flight.done.set()

    def _compile(self, sig, in_tree, static, positions, key) -> CompiledEntry:
        return self._build(key, sig, *self._trace(sig, in_tree, static, positions))

    def _trace(self, sig, in_tree, static, positions) -> tuple:
        """(jaxpr, output tree, dim sources, seconds) of tracing one signature."""
        start = time.perf_counter()
        fn = self.traced_function()
        jaxpr, out_tree, dim_sources = trace_function(
            fn, sig, in_tree, static, positions,
            unit_dims_specialized=self.specialize_unit_dims and self.abstracted_axes is None,
            runtime_checks=self.runtime_checks)
        return jaxpr, out_tree, dim_sources, time.perf_counter() - start

    def _build(self, key, sig, jaxpr, out_tree, dim_sources, trace_seconds) -> CompiledEntry:
        """Compile a traced signature to a library and remember it under `key`."""
        from kiln.compiler import driver
        from kiln.runtime import cache as disk_cache

        built_before = disk_cache.toolchain_build_seconds()
        entry = driver.compile_jaxpr(jaxpr, self.__name__, pipelines=self.pipelines,
                                     keep_intermediate=self.keep_intermediate)
        self.workspace = entry.get("workspace")
        compiled = CompiledEntry(sig, jaxpr, entry["executable"], out_tree,
                                 sum(1 for e in jaxpr.out_explicit if not e),
                                 dim_sources, entry["stages"],
                                 {"jaxpr": trace_seconds, **entry["seconds"]}, entry["cache_hit"])
        with self._compiling_lock:
            self.cache[key] = compiled
            self.num_compiles += 1
        compile_log.log_compile(self.__qualname__, sig, compiled.seconds, compiled.cache_hit,
                                toolchain_seconds=disk_cache.toolchain_build_seconds() - built_before)
        return compiled

    # --- methods, lowering, pickling
    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """`@qjit` on a method: `obj.method(...)` calls the function with
        `obj` first. A dataclass, namedtuple or registered pytree `obj` is
        traced like any argument; any other object is a static argument
        (its attributes are read when the method compiles, once per object)."""
        if instance is None:
            return self
        static_self = tree.flatten(instance)[1] == ("leaf",)
        variant = self._method_variants.get(static_self)
        if variant is None:
            if static_self and 0 not in self.static_argnums:
                variant = QJIT(self.fn, **{**self.options, "static_argnums": sorted(self.static_argnums | {0}),
                                           "static_argnames": ()})
            else:
                variant = self
            self._method_variants[static_self] = variant
        return BoundQJIT(variant, instance)

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """Trace for the signature of these arguments without compiling:
        a `Lowered` with `.jaxpr`, `.as_text(stage)` and `.compile()`.

        >>> lowered = f.lower(np.ones(3), np.ones(3))  # doctest: +SKIP
        >>> lowered.compile()(np.ones(5), np.ones(5))  # doctest: +SKIP
        """
        return lower(self, args, kwargs)

    def __reduce__(self):
        return reduce_qjit(self)

    # --- introspection
    def _require_compiled(self) -> CompiledEntry:
        if self.last is None:
            raise KilnValueError(f"{self.__name__} has not been compiled yet: call it once first")
        return self.last

    @property
    def jaxpr(self) -> Jaxpr:
        entry = self._require_compiled()
        if entry.jaxpr is None:
            raise KilnValueError(f"{self.__name__}: this signature's library came with the pickled function, "
                                 "without its Jaxpr object; f.stage('jaxpr') has its text")
        return entry.jaxpr

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
        return self._require_compiled().stage_text(name, self.__name__, self.pipelines)

    def __repr__(self) -> str:
        return f"<kiln.qjit {self.__name__} compiled {self.num_compiles}x>"


class BoundQJIT:
    """A `@qjit` method bound to an object: calls pass the object first;
    other attributes (`jaxpr`, `stage`, `num_compiles`, ...) are the
    compiled function's."""

    def __init__(self, function: QJIT, instance: Any):
        self.__func__ = function
        self.__self__ = instance

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__func__(self.__self__, *args, **kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return self.__func__.lower(self.__self__, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__func__, name)

    def __repr__(self) -> str:
        return f"<bound kiln.qjit {self.__func__.__name__} of {self.__self__!r}>"


def qjit(fn: Callable | None = None, **options: Any):
    """Compile `fn` with kiln. Usable as `@qjit` or `@qjit(option=...)`.

    Options: static_argnums, static_argnames, abstracted_axes,
    share_equal_dims (default False: one dim variable per argument dim,
    except dims named alike in abstracted_axes / ShapeDtype annotations;
    True makes dims of equal size at the call share one variable, and a
    call whose equal-size pattern differs compiles again),
    specialize_unit_dims (default True: an argument dim of size 1 compiles
    a version where it is the constant 1; False serves it with the same
    binary, broadcasting at run time — slower on size-1 calls, see
    docs/numpy.md), pipelines, keep_intermediate,
    autograph (default True: Python control flow on traced values becomes
    for_loop/while_loop/cond; False traces Python control flow as is; see
    docs/autograph.md), autograph_include /
    autograph_exclude (module or function names whose functions autograph
    does / does not convert when the compiled function calls them),
    runtime_checks (default True; False leaves out the run-time checks of
    sizes and indices: a mismatch or an out-of-bounds index is then
    undefined behaviour — see docs/runtime.md), pickle_libraries (default
    False; True makes a pickled copy carry the compiled libraries, so a
    worker process runs them without compiling — see docs/distributed.md).
    static_argnums / static_argnames take an int / str or a sequence.
    """
    if fn is None:
        return lambda f: qjit(f, **options)
    return QJIT(fn, **options)


def get_compilation_stage(fn: QJIT, stage: str) -> str:
    """The text of a stage (`jaxpr`, `mlir`, ..., `llvmir`) of the last compile of `fn`."""
    if not isinstance(fn, QJIT):
        raise KilnTypeError("get_compilation_stage expects a @kiln.qjit function")
    return fn.stage(stage)
