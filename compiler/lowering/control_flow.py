"""Stage "mlir": lowering of for_loop / while_loop / cond to StableHLO control flow."""
