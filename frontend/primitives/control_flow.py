"""Stage "jaxpr": structured control flow primitives (for_loop, while_loop, cond)."""

PRIMITIVES: list = []
