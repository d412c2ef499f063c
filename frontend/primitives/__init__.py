"""Stage "jaxpr": the primitives of kiln's Jaxpr IR, one module per family.

Each family module defines its primitives and their abstract-evaluation
rules; lowering rules live in the matching `kiln.compiler.lowering` module.
`ALL_PRIMITIVES` lists every primitive (a test checks each has every rule).
"""

from kiln.primitives import checks, control_flow, elementwise, indexing, linalg, mutation, reduction, shape

ALL_PRIMITIVES = [
    p
    for module in (elementwise, shape, reduction, linalg, indexing, mutation, control_flow, checks)
    for p in module.PRIMITIVES
]
