"""The `immut` dialect: pure Access/Assign pairs (stage "functionalized").

Every op returns a new value and changes nothing. An *access* op reads a
part of `base`; its *assign* (`*_rev`) op returns `base` with that part
replaced by `value`. `immut-to-stablehlo` lowers them all to StableHLO.

| access | assign | meaning |
|---|---|---|
| `immut.slice(base, starts, sizes) {strides}` | `immut.slice_rev(base, value, starts, sizes) {strides}` | strided box `base[starts : starts+sizes*strides : strides]` |
| `immut.reshape(base, shape)` | `immut.reshape_rev(base, value)` | same elements in C order (also squeeze / unsqueeze / expand_dims) |
| `immut.transpose(base) {permutation}` | `immut.transpose_rev(base, value) {permutation}` | permuted axes |
| `immut.reverse(base) {dimensions}` | `immut.reverse_rev(base, value) {dimensions}` | dims read backwards |
| `immut.gather(base, indices) {axis}` | `immut.scatter(base, indices, updates) {axis}` | integer-array index along `axis` (last write wins) |
| `immut.assign(source, like)` | | `source` broadcast to `like`'s shape and cast to its element type; never aliases `source` |

Example (`b[i] = b[i] + 1` after functionalization):

    %row = "immut.slice"(%b0, %s, %n) {strides = array<i64: 1, 1>} : (...) -> tensor<1x?xf64>
    %new = stablehlo.add %row, %ones : tensor<1x?xf64>
    %b1 = "immut.slice_rev"(%b0, %new, %s, %n) {strides = array<i64: 1, 1>} : (...) -> tensor<?x?xf64>
"""

from __future__ import annotations

ACCESS_OF_VIEW = {
    "tensorssa.slice": "immut.slice",
    "tensorssa.reshape": "immut.reshape",
    "tensorssa.transpose": "immut.transpose",
    "tensorssa.reverse": "immut.reverse",
}
ASSIGN_OF_VIEW = {
    "tensorssa.slice": "immut.slice_rev",
    "tensorssa.reshape": "immut.reshape_rev",
    "tensorssa.transpose": "immut.transpose_rev",
    "tensorssa.reverse": "immut.reverse_rev",
}


def _op(name: str, operands: list[str], attrs: dict[str, str], same_type_as: str | None = None) -> str:
    """IRDL for one op; `same_type_as` ties the result type to that operand's."""
    lines = [f"  irdl.operation @{name} {{"]
    for o in operands:
        lines.append(f'    %{o} = irdl.base "!builtin.tensor"')
    for a, kind in attrs.items():
        lines.append(f'    %{a} = irdl.base "#builtin.{kind}"')
    if same_type_as is None:
        lines.append('    %result = irdl.base "!builtin.tensor"')
    lines.append(f"    irdl.operands({', '.join(f'{o}: %{o}' for o in operands)})")
    if attrs:
        lines.append("    irdl.attributes { " + ", ".join(f'"{a}" = %{a}' for a in attrs) + " }")
    lines.append(f"    irdl.results(result: %{same_type_as or 'result'})")
    lines.append("  }")
    return "\n".join(lines)


IRDL = "irdl.dialect @immut {\n" + "\n".join([
    _op("slice", ["base", "starts", "sizes"], {"strides": "dense_array"}),
    _op("slice_rev", ["base", "value", "starts", "sizes"], {"strides": "dense_array"}, "base"),
    _op("reshape", ["base", "shape"], {}),
    _op("reshape_rev", ["base", "value"], {}, "base"),
    _op("transpose", ["base"], {"permutation": "dense_array"}),
    _op("transpose_rev", ["base", "value"], {"permutation": "dense_array"}, "base"),
    _op("reverse", ["base"], {"dimensions": "dense_array"}),
    _op("reverse_rev", ["base", "value"], {"dimensions": "dense_array"}, "base"),
    _op("gather", ["base", "indices"], {"axis": "integer"}),
    _op("scatter", ["base", "indices", "updates"], {"axis": "integer"}, "base"),
    _op("assign", ["source", "like"], {}, "like"),
]) + "\n}\n"
