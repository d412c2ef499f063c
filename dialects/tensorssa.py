"""The `tensorssa` dialect: tensors with reference semantics (stage "mlir").

Values produced by the view ops alias their `base`: a write through any
alias (`tensorssa.copy`, `tensorssa.scatter`) changes what every alias and
the base read afterwards. The functionalization passes (tensorssa-*) turn
this into pure SSA with `immut` ops; no tensorssa op survives them.

Ops (declared once, in IRDL, below; operands verified by count and kind):

- `%v = "tensorssa.slice"(%base, %starts, %sizes) {strides = array<i64: ...>}`
  view of base[starts[d] : starts[d] + sizes[d]*strides[d] : strides[d]];
  `%starts`, `%sizes` are `tensor<Rxi64>`.
- `%v = "tensorssa.reshape"(%base, %shape)` view with the same elements in C order.
- `%v = "tensorssa.transpose"(%base) {permutation = array<i64: ...>}` view with permuted axes.
- `%v = "tensorssa.reverse"(%base) {dimensions = array<i64: ...>}` view reading the dims backwards.
- `"tensorssa.copy"(%target, %source)` in-place copy of source into target
  (source broadcasts to target's shape and is cast to its element type).
- `"tensorssa.scatter"(%target, %indices, %updates) {axis = i64}` in-place
  `target[..., indices, ...] = updates` along `axis` (last write wins).
- `"tensorssa.update"(%new, %old)` marker: from here on `%old`'s buffer holds `%new`.

Example:

    %row = "tensorssa.slice"(%b, %s, %n) {strides = array<i64: 1, 1>}
        : (tensor<?x?xf64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x?xf64>
    "tensorssa.copy"(%row, %plus_one) : (tensor<1x?xf64>, tensor<1x?xf64>) -> ()
"""

from __future__ import annotations

VIEW_OPS = ("tensorssa.slice", "tensorssa.reshape", "tensorssa.transpose", "tensorssa.reverse")
WRITE_OPS = ("tensorssa.copy", "tensorssa.scatter")

IRDL = r'''
irdl.dialect @tensorssa {
  irdl.operation @slice {
    %base = irdl.base "!builtin.tensor"
    %starts = irdl.base "!builtin.tensor"
    %sizes = irdl.base "!builtin.tensor"
    %view = irdl.base "!builtin.tensor"
    %strides = irdl.base "#builtin.dense_array"
    irdl.operands(base: %base, starts: %starts, sizes: %sizes)
    irdl.attributes { "strides" = %strides }
    irdl.results(view: %view)
  }
  irdl.operation @reshape {
    %base = irdl.base "!builtin.tensor"
    %shape = irdl.base "!builtin.tensor"
    %view = irdl.base "!builtin.tensor"
    irdl.operands(base: %base, shape: %shape)
    irdl.results(view: %view)
  }
  irdl.operation @transpose {
    %base = irdl.base "!builtin.tensor"
    %view = irdl.base "!builtin.tensor"
    %perm = irdl.base "#builtin.dense_array"
    irdl.operands(base: %base)
    irdl.attributes { "permutation" = %perm }
    irdl.results(view: %view)
  }
  irdl.operation @reverse {
    %base = irdl.base "!builtin.tensor"
    %view = irdl.base "!builtin.tensor"
    %dims = irdl.base "#builtin.dense_array"
    irdl.operands(base: %base)
    irdl.attributes { "dimensions" = %dims }
    irdl.results(view: %view)
  }
  irdl.operation @copy {
    %target = irdl.base "!builtin.tensor"
    %source = irdl.base "!builtin.tensor"
    irdl.operands(target: %target, source: %source)
  }
  irdl.operation @scatter {
    %target = irdl.base "!builtin.tensor"
    %indices = irdl.base "!builtin.tensor"
    %updates = irdl.base "!builtin.tensor"
    %axis = irdl.base "#builtin.integer"
    irdl.operands(target: %target, indices: %indices, updates: %updates)
    irdl.attributes { "axis" = %axis }
  }
  irdl.operation @update {
    %t = irdl.base "!builtin.tensor"
    irdl.operands(new: %t, old: %t)
  }
}
'''


def view(name: str, result_type, base, *operands, **attributes):
    """Build `tensorssa.<name>` (a view op) and return its result."""
    from kiln.compiler.mlir import ir

    op = ir.Operation.create(f"tensorssa.{name}", results=[result_type], operands=[base, *operands],
                             attributes=attributes)
    return op.result


def effect(name: str, *operands, **attributes) -> None:
    """Build a result-less `tensorssa.<name>` (copy, scatter, update)."""
    from kiln.compiler.mlir import ir

    ir.Operation.create(f"tensorssa.{name}", results=[], operands=list(operands), attributes=attributes)
