"""Ahead of time: `kiln.export` compiles a function from its parameter annotations.

In: a function (or a qjit) whose parameters are annotated with ShapeDtype or float/int/bool.
Out: a self-contained folder holding `lib<name>.so` with a plain C entry point,
`<name>.h`, `<name>.kiln.json` and the BLAS it calls (found relative to the
library), which `kiln.load` (runtime/aot.py) calls without tracing or MLIR.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any

from kiln import tree
from kiln.errors import KilnTypeError
from kiln.jit import QJIT
from kiln.runtime import aot
from kiln.signatures import DimClasses, annotation_sig
from kiln.trace_entry import trace_function


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

    py_fn = fn.fn if isinstance(fn, QJIT) else fn
    try:
        signature = inspect.signature(py_fn, eval_str=True)
    except (NameError, TypeError) as e:
        raise KilnTypeError(f"kiln.export: cannot evaluate the annotations of {py_fn.__name__}: {e}") from None
    name = driver._symbol_name(py_fn.__name__)
    classes = DimClasses()
    sigs, params = [], []
    for pname, param in signature.parameters.items():
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            raise KilnTypeError(f"kiln.export: parameter {pname!r} of {name} must be positional")
        sig, desc = annotation_sig(param.annotation, f"parameter {pname!r} of {name}", classes)
        sigs.append(sig)
        params.append({"name": aot.c_parameter_name(driver._symbol_name(pname)), **desc})
    in_tree = tree.flatten(tuple(range(len(sigs))))[1]
    traced_fn = fn.traced_function() if isinstance(fn, QJIT) else py_fn
    jaxpr, out_tree, dim_sources = trace_function(traced_fn, tuple(sigs), in_tree, {}, list(range(len(sigs))),
                                                  runtime_checks=not isinstance(fn, QJIT) or fn.runtime_checks)
    if jaxpr.global_random_state:
        raise KilnTypeError(f"kiln.export: {name} calls the legacy np.random functions, which draw from NumPy's "
                            "global state in the calling process; an exported library cannot reach it. Make a "
                            "Generator inside instead (np.random.default_rng(seed), with seed a parameter)")
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
        # Written arguments are not results of the kernel: it writes them in place.
        "kernel_results": [{"dtype": v.aval.dtype.name, "rank": v.aval.ndim}
                           for v in jaxpr.outvars[:len(jaxpr.outvars) - len(writeback)]],
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
    meta["bundled"] = driver.build_library(jaxpr, meta["kernel_symbol"], library, write_wrapper,
                                           include_dirs=[path])
    metadata = os.path.join(path, f"{name}.kiln.json")
    with open(metadata, "w") as f:
        json.dump(meta, f, indent=1)
    return {"library": library, "header": header, "metadata": metadata,
            "wrapper_source": os.path.join(path, f"{name}_wrapper.c"),
            "bundled": [os.path.join(path, f) for f in meta["bundled"]]}
