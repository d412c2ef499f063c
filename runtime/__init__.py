"""kiln's runtime: loading compiled libraries, the memref ABI, result
ownership, run-time check errors, and the toolchain that links libraries."""
