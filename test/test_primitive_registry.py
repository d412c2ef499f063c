"""Every primitive has every rule: abstract evaluation (its family module in
kiln.primitives), a lowering (kiln.compiler.lowering's LOWERINGS) and an
interpreter rule (kiln.interpreter's INTERPRET_RULES). One test per
primitive, so a missing rule fails by the primitive's name."""

import pytest

from kiln.compiler.lowering import LOWERINGS  # imports every lowering module of the package
from kiln.interpreter import INTERPRET_RULES
from kiln.primitives import ALL_PRIMITIVES


def test_primitive_names_are_unique():
    names = [p.name for p in ALL_PRIMITIVES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=lambda p: p.name)
def test_primitive_has_every_rule(prim):
    missing = [what for what, present in (("abstract-eval rule", prim.abstract_eval is not None),
                                          ("lowering", prim in LOWERINGS),
                                          ("interpreter rule", prim in INTERPRET_RULES)) if not present]
    assert not missing, f"primitive {prim.name} has no {', no '.join(missing)}"
