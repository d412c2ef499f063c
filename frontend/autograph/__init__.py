"""Stage "jaxpr", before tracing: autograph rewrites Python control flow.

In: a function whose for/while/if/and/or/not may act on traced values.
Out: the same function recompiled from a rewritten AST (`convert`, in entry.py)
whose statements call the helpers of runtime.py, which run Python for Python
values and emit for_loop/while_loop/cond for traced ones.
"""

from kiln.autograph.entry import convert, convert_if_possible

__all__ = ["convert", "convert_if_possible"]
