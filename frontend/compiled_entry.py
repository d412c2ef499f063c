"""Stage "runtime" (Python side): one compiled signature of a qjit function
and one prepared call.

In: a compiled library (`kiln.runtime.executable.Executable`) and the flat
leaves of a call. Out: the call's results; the library wrote the written
arguments in place (docs/mutation.md, "Writes to arguments").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from kiln import tree
from kiln.core import Jaxpr
from kiln.errors import KilnTypeError, KilnValueError
from kiln.random_state import global_random_state, random_state_words, set_random_state_words


@dataclass
class CompiledEntry:
    """One compiled signature of a qjit function: its jaxpr (None for a
    library received by pickle), its library and the stage texts and times
    of its compile."""

    signature: tuple
    jaxpr: Jaxpr | None
    executable: Any
    out_tree: Any
    num_implicit_out: int
    # for each implicit input: (flat arg index, axis) it is read from
    dim_sources: list
    stages: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    cache_hit: bool = False
    # flat argument positions the function writes (in place, in the caller's buffers)
    writeback: tuple = ()
    # the last argument is the global RandomState's state words (legacy np.random)
    global_random: bool = False

    def __post_init__(self):
        if self.jaxpr is not None:
            self.writeback = tuple(self.jaxpr.writeback)
            self.global_random = self.jaxpr.global_random_state
        self._single_leaf = self.out_tree == ("leaf",)
        self._flat_tuple = self.out_tree[0] == "tuple" and all(c == ("leaf",) for c in self.out_tree[1])

    def stage_text(self, name: str, function_name: str, pipelines: Any = None) -> str:
        """The text of stage `name` of this compile. A compile keeps its
        stage texts only when asked to (`keep_intermediate`, KILN_LOG); the
        first stage asked for then makes them all again from the jaxpr
        (`driver.stage_texts`: the pipeline without LLVM)."""
        if name in self.stages:
            return self.stages[name]
        known = list(self.stages)
        if self.jaxpr is not None:  # (a library received by pickle has its jaxpr's text only)
            from kiln.compiler import driver

            known = driver.stage_names(pipelines)
            if name in known:
                made = driver.stage_texts(self.jaxpr, function_name, pipelines)
                self.stages.update({k: v for k, v in made.items() if k not in self.stages})
                return self.stages[name]
        raise KilnValueError(f"no stage named {name!r} for {function_name}; stages: {', '.join(known)}")

    def call(self, leaves: Sequence) -> Any:
        """Run on flat leaves that match `signature` (arrays in any layout,
        scalars); implicit dims are read off the leaves' shapes. A function
        drawing from the global RandomState gets its state words as a last
        argument, and the state advances as NumPy's would."""
        if not self.global_random:
            return self._run(leaves)
        state = global_random_state()
        with state._bit_generator.lock:  # NumPy's draws from it hold the same lock
            words = random_state_words(state)
            results = self._run([*leaves, words])
            set_random_state_words(state, words)
        return results

    def _run(self, leaves: Sequence) -> Any:
        if self.writeback:
            check_writable(self.writeback, leaves)
        values = [leaves[i].shape[axis] for i, axis in self.dim_sources]
        values += leaves
        results = self.executable(values)
        if self.num_implicit_out:
            results = results[self.num_implicit_out:]
        if self._single_leaf:
            return results[0]
        if self._flat_tuple:
            return tuple(results)
        return tree.unflatten(self.out_tree, results)


def check_writable(positions: tuple, leaves: Sequence) -> None:
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
            # may_share_memory compares bounds only (cheap); shares_memory is exact.
            if (other != position and isinstance(leaf, np.ndarray) and np.may_share_memory(arr, leaf)
                    and np.shares_memory(arr, leaf)):
                raise KilnValueError(
                    f"argument {position} is written by the function and overlaps argument {other} in "
                    "memory; kiln would not see the write through the other argument — pass a copy "
                    "of one of them")


@dataclass
class PreparedCall:
    """A call's cache key, flat arguments and what tracing it needs."""

    key: tuple
    leaves: list
    signature: tuple
    in_tree: Any
    static: dict
    positions: list
    # Generator arguments (kiln.numpy.random.GeneratorArgument) whose state the call advances.
    generators: list = field(default_factory=list)
