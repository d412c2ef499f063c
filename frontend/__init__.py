"""kiln: compile NumPy-style Python to native code through MLIR, with
dynamic dimensions and in-place mutation.

>>> import numpy as np, kiln
>>> @kiln.qjit
... def f(x, y):
...     return np.exp(x) * 2.0 + y - np.sqrt(x)
>>> f(np.ones(4), np.ones(4)).shape
(4,)
"""

from kiln.version import __version__
from kiln.jit import QJIT, get_compilation_stage, qjit
from kiln.tree import register_pytree_class, register_pytree_node
from kiln.signatures import ShapeDtype
from kiln.exporting import export
from kiln.runtime.aot import load
from kiln.stablehlo_import import from_stablehlo
from kiln.core import (
    DBIdx,
    DShapedArray,
    InDBIdx,
    Jaxpr,
    KilnError,
    KilnIndexError,
    KilnInternalError,
    KilnTypeError,
    KilnValueError,
    OutDBIdx,
    ShapedArray,
)
from kiln.control_flow import cond, for_loop, while_loop
from kiln import numpy  # noqa: F401

__all__ = [
    "QJIT", "ShapeDtype", "get_compilation_stage", "qjit", "DBIdx", "DShapedArray", "InDBIdx", "Jaxpr",
    "KilnError", "KilnIndexError", "KilnInternalError", "KilnTypeError", "KilnValueError", "OutDBIdx",
    "ShapedArray", "numpy", "for_loop", "while_loop", "cond", "export", "load", "register_pytree_node",
    "register_pytree_class", "__version__", "from_stablehlo",
]
