"""Stage "jaxpr": primitives with reference semantics (copies, views, writes).

`copy` makes a fresh array that aliases nothing; later writes to either side
are not seen by the other.
"""

from __future__ import annotations

from kiln.core import Primitive

copy_p = Primitive("copy")


@copy_p.def_abstract_eval
def _copy_rule(x):
    return x.aval


PRIMITIVES = [copy_p]
