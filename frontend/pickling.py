"""Pickling `@kiln.qjit` functions so they travel to worker processes
(multiprocessing, Dask, Ray).

In: a QJIT being pickled. Out: a reference to it (module and qualified
name) when that name imports back to this very object; otherwise its value:
the Python function (cloudpickled when cloudpickle is installed), the qjit
options and, with `pickle_libraries=True`, every compiled signature's
library, so the receiving process calls them without compiling.
"""

from __future__ import annotations

import pickle
import sys
import uuid
from typing import TYPE_CHECKING, Any

from kiln.compiled_entry import CompiledEntry
from kiln.runtime.aot import received_library_path
from kiln.runtime.executable import Executable

if TYPE_CHECKING:
    from kiln.jit import QJIT

# The functions this process received by value, by the token of their
# original: every task that brings the same function shares one copy, so
# a signature compiles once per process however many tasks use it.
_RECEIVED: dict[str, QJIT] = {}


def _cloudpickle():
    try:
        import cloudpickle
    except ImportError:
        return None
    return cloudpickle


def _resolves_to(module_name: str, qualname: str, obj: Any) -> bool:
    """Whether `module_name.qualname` names `obj` in this process."""
    if "<locals>" in qualname or "<lambda>" in qualname:
        return False
    found = sys.modules.get(module_name)
    for part in qualname.split("."):
        found = getattr(found, part, None)
        if found is None:
            return False
    return found is obj


def importable(f: QJIT) -> bool:
    """`f` is reachable as module.qualname. Functions of `__main__` count only
    without cloudpickle: workers of Dask or Ray cannot import the main script
    (multiprocessing can, which serves when cloudpickle is missing)."""
    module = getattr(f, "__module__", None)
    if module is None or (module == "__main__" and _cloudpickle() is not None):
        return False
    return _resolves_to(module, f.__qualname__, f)


def reduce_qjit(f: QJIT) -> Any:
    """`QJIT.__reduce__`: by reference when importable (and no libraries are
    to travel), else by value."""
    if importable(f) and not f.pickle_libraries:
        return f.__qualname__
    if not hasattr(f, "_token"):
        f._token = uuid.uuid4().hex
    state: dict[str, Any] = {"options": f.options, "libraries": _libraries(f) if f.pickle_libraries else {}}
    if importable(f):
        state["function_ref"] = (f.__module__, f.__qualname__)
    else:
        state["function"] = f.fn
    cloudpickle = _cloudpickle()
    try:
        blob = cloudpickle.dumps(state) if cloudpickle is not None else pickle.dumps(state)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        raise pickle.PicklingError(
            f"kiln.qjit {f.__qualname__}: cannot pickle the Python function by value ({e}); install cloudpickle, "
            "or define the function at the top level of an importable module") from None
    return rebuild_qjit, (type(f), f._token, blob)


def _libraries(f: QJIT) -> dict:
    """Every compiled signature of `f`: what it takes to call it elsewhere."""
    out = {}
    for key, entry in f.cache.items():
        exe = entry.executable
        with open(exe.library, "rb") as lib:
            data = lib.read()
        # The library carries its run-time check messages itself.
        out[key] = {"library": data, "symbol": exe.name, "args": exe.args, "results": exe.results,
                    "written": exe.written,
                    "signature": entry.signature, "out_tree": entry.out_tree,
                    "num_implicit_out": entry.num_implicit_out, "dim_sources": entry.dim_sources,
                    "writeback": entry.writeback, "global_random": entry.global_random,
                    "jaxpr_text": entry.stages.get("jaxpr", "")}
    return out


def _entry(shipped: dict) -> CompiledEntry:
    path = received_library_path(shipped["library"], f"lib{shipped['symbol']}.so")
    exe = Executable(path, shipped["symbol"], shipped["args"], shipped["results"], shipped["written"])
    stages = {"jaxpr": shipped["jaxpr_text"]} if shipped["jaxpr_text"] else {}
    return CompiledEntry(shipped["signature"], None, exe, shipped["out_tree"], shipped["num_implicit_out"],
                         shipped["dim_sources"], stages, {}, True, tuple(shipped["writeback"]),
                         shipped.get("global_random", False))


def rebuild_qjit(qjit_class: type, token: str, blob: bytes) -> QJIT:
    """The receiving side: one QJIT per token in this process, with every
    library that came with any of its copies. The class travels by
    reference (this module is below kiln.jit and does not import it)."""
    state = pickle.loads(blob)
    known = _RECEIVED.get(token)
    if known is not None:
        for key, shipped in state["libraries"].items():
            if key not in known.cache:
                known.cache[key] = _entry(shipped)
        return known
    received = {key: _entry(shipped) for key, shipped in state["libraries"].items()}
    if "function_ref" in state:  # importable: the module's own function gets the libraries
        module, qualname = state["function_ref"]
        __import__(module)
        rebuilt: Any = sys.modules[module]
        for part in qualname.split("."):
            rebuilt = getattr(rebuilt, part)
        for key, entry in received.items():
            rebuilt.cache.setdefault(key, entry)
    else:
        rebuilt = qjit_class(state["function"], **state["options"], _received=received)
        rebuilt._token = token
    _RECEIVED[token] = rebuilt
    return rebuilt
