"""kiln's compiler: Jaxpr -> MLIR lowering, passes, pipelines, codegen, kiln-opt."""
