"""`f.lower(*args)`: a qjit function traced for one signature, compiled on demand.

In: a QJIT and call arguments. Out: `Lowered` (the jaxpr; `as_text(stage)`,
`compile()`), whose `compile()` gives `Compiled`, a callable bound to that
signature; compiling stores the library in the function's cache too, so
later calls of `f` with that signature reuse it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kiln.core import Jaxpr
from kiln.errors import KilnTypeError
from kiln.compiled_entry import CompiledEntry, PreparedCall

if TYPE_CHECKING:  # the QJIT calls this module; it is never constructed here
    from kiln.jit import QJIT


def _describe(signature: tuple) -> str:
    from kiln.compile_log import describe_signature

    return describe_signature(signature)


class Compiled:
    """A qjit function compiled for one signature: call it with arguments of
    that signature (sizes of dynamic dims may differ).

    >>> compiled = f.lower(np.ones(3)).compile()  # doctest: +SKIP
    >>> compiled(np.ones(7))                      # doctest: +SKIP
    """

    def __init__(self, function: QJIT, key: tuple, entry: CompiledEntry):
        self.function = function
        self.key = key
        self.entry = entry

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.key[0] == "aot":
            return self.function(*args, **kwargs)
        call = self.function._prepare(args, kwargs)
        if call.key != self.key:
            raise KilnTypeError(
                f"{self.function.__name__}: this compiled version takes ({_describe(self.entry.signature)}), "
                f"got ({_describe(call.signature)}); call {self.function.__name__} itself to compile other "
                "signatures, or lower it again")
        return self.entry.call(call.leaves)

    @property
    def jaxpr(self) -> Jaxpr:
        return self.entry.jaxpr

    @property
    def stage_times(self) -> dict:
        return dict(self.entry.seconds)

    def as_text(self, stage: str = "mlir") -> str:
        """The text of a compilation stage (`jaxpr`, `mlir`, ..., `llvmir`)."""
        return self.entry.stage_text(stage, self.function.__name__, self.function.pipelines)


class Lowered:
    """A qjit function traced for one signature, not compiled yet.

    >>> lowered = f.lower(np.ones(3))     # doctest: +SKIP
    >>> print(lowered.as_text("jaxpr"))   # doctest: +SKIP
    >>> lowered.compile()(np.ones(5))     # doctest: +SKIP
    """

    def __init__(self, function: QJIT, call: PreparedCall | None, traced: tuple | None,
                 entry: CompiledEntry | None = None):
        self.function = function
        self.call = call
        self._traced = traced  # (jaxpr, out tree, dim sources, trace seconds)
        self._entry = entry

    @property
    def jaxpr(self) -> Jaxpr:
        return self._entry.jaxpr if self._traced is None else self._traced[0]

    def as_text(self, stage: str = "jaxpr") -> str:
        """The text of a stage: `jaxpr` without compiling; any later stage
        (`mlir`, `stablehlo`, ..., `llvmir`) compiles first."""
        if stage == "jaxpr":
            return self.jaxpr.pretty()
        return self.compile().as_text(stage)

    def compile(self) -> Compiled:
        """Compile (or find in the cache) this signature's library."""
        if self.call is None:  # compiled ahead of time
            return Compiled(self.function, ("aot", self.function._aot[0]), self._entry)
        if self._entry is None:
            key = self.call.key
            self._entry = self.function.cache.get(key) or self.function._build(key, self.call.signature,
                                                                               *self._traced)
        return Compiled(self.function, self.call.key, self._entry)


def lower(function: QJIT, args: tuple, kwargs: dict) -> Lowered:
    """`QJIT.lower`: trace the call's signature (compiled ahead of time:
    the annotated signature, already compiled)."""
    if function._aot is not None:
        return Lowered(function, None, None, function._aot[1])
    call = function._prepare(args, kwargs)
    return Lowered(function, call, function._trace(call.signature, call.in_tree, call.static, call.positions))
