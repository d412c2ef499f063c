"""Stage "mlir": lapack -> `kiln.lapack_<kernel>`.

In: a `lapack` equation (its arrays and the dims of its results).
Out: the `kiln` op of its kernel, the `?` dims of its result types as
`tensor<i64>` operands in order (what `kiln-lower-lapack` allocates).
"""

from __future__ import annotations

from kiln.compiler.lowering import lowering
from kiln.core import is_static_dim
from kiln.dialects import kiln as kiln_dialect
from kiln.dialects import stablehlo as hlo
from kiln.dialects.stablehlo import tensor_type
from kiln.primitives import lapack


@lowering(lapack.lapack_p)
def _lapack(ctx, eqn, *operands):
    kernel = eqn.params["kernel"]
    arrays = operands[:len(lapack.KERNELS[kernel][0])]
    dims = [hlo.convert(ctx.dim(d), hlo.i64()) for v in eqn.outvars for d in v.aval.shape if not is_static_dim(d)]
    return kiln_dialect.lapack(kernel, list(arrays), dims, list(eqn.params["options"]),
                               [tensor_type(v.aval) for v in eqn.outvars])
