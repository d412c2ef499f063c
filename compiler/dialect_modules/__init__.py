"""Python modules of upstream dialects that kiln provides itself, found by
the bindings before the provider's own (kiln.compiler.mlir puts this
package first in the dialect search path).

Only `linalg` is here: the provider's `linalg` package also builds every
named op of the OpDSL (`opdsl.ops.core_named_ops`) when it is imported,
which was most of the time of importing the bindings (0.3-1.1 s of every
process's first compile, depending on load). kiln builds `linalg.generic`
and a few named ops directly, so it needs none of that.
"""
