"""Stage "jaxpr": the primitives of kiln's Jaxpr IR, one module per family.

Each family module defines its primitives (named handles such as `exp_p`)
and their abstract-evaluation rules, and lists them in `PRIMITIVES`;
lowering rules live in the matching `kiln.compiler.lowering` module.
`ALL_PRIMITIVES` gathers every family module found in this package (a test
checks each primitive has every rule).
"""

import importlib
import pkgutil


def _family_modules() -> list:
    return [importlib.import_module(f"{__name__}.{module.name}")
            for module in pkgutil.iter_modules(__path__) if not module.name.startswith("_")]


ALL_PRIMITIVES = [p for module in _family_modules() for p in module.PRIMITIVES]
