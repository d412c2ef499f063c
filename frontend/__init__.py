"""kiln: compile NumPy-style Python to native code through MLIR, with
dynamic dimensions and in-place mutation.

>>> import numpy as np, kiln
>>> @kiln.qjit
... def f(x, y):
...     return np.exp(x) * 2.0 + y - np.sqrt(x)
>>> f(np.ones(4), np.ones(4)).shape
(4,)

The public names load their modules on first use, so `import kiln` is cheap
and the tools below the tracer (`kiln-opt`, `kiln.load` of an exported
library) never import it.
"""

from __future__ import annotations

import importlib
from typing import Any

from kiln.errors import KilnError, KilnIndexError, KilnInternalError, KilnTypeError, KilnValueError
from kiln.version import __version__

# Public name -> the module that defines it (a module itself for `numpy`).
_LAZY_EXPORTS = {
    "QJIT": "kiln.jit", "qjit": "kiln.jit", "get_compilation_stage": "kiln.jit",
    "register_pytree_class": "kiln.tree", "register_pytree_node": "kiln.tree",
    "ShapeDtype": "kiln.signatures",
    "export": "kiln.exporting",
    "load": "kiln.runtime.aot",
    "from_stablehlo": "kiln.stablehlo_import",
    "DBIdx": "kiln.core", "DShapedArray": "kiln.core", "InDBIdx": "kiln.core", "Jaxpr": "kiln.core",
    "OutDBIdx": "kiln.core", "ShapedArray": "kiln.core",
    "cond": "kiln.control_flow", "for_loop": "kiln.control_flow", "while_loop": "kiln.control_flow",
    "interpret": "kiln.interpreted", "eval_jaxpr": "kiln.interpreter",
    "debug_print": "kiln.debugging",
    "numpy": "kiln.numpy",
}

__all__ = ["KilnError", "KilnIndexError", "KilnInternalError", "KilnTypeError", "KilnValueError", "__version__",
           *_LAZY_EXPORTS]


def __getattr__(name: str) -> Any:
    module_name = _LAZY_EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'kiln' has no attribute {name!r}")
    module = importlib.import_module(module_name)
    value = module if module_name == f"kiln.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_EXPORTS))
