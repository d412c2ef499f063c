// Input that is not MLIR text: exit 1 with a located message, no traceback.

// RUN: %PYTHON -c 'import sys; sys.stdout.buffer.write(bytes([10, 109, 111, 255, 10]))' > %t.bad
// RUN: not kiln-opt %t.bad 2>&1 | filecheck %s --check-prefix=UTF8
// UTF8: .bad:2: error: input is not valid UTF-8 (byte 0xff at offset 3); kiln-opt reads MLIR text
// UTF8-NOT: Traceback

// RUN: %PYTHON -c 'import sys; sys.stdout.buffer.write(bytes([109, 0, 1, 2]))' | not kiln-opt 2>&1 | filecheck %s --check-prefix=BINARY
// BINARY: <stdin>:1: error: input looks binary (NUL byte at offset 1); kiln-opt reads MLIR text

// RUN: not kiln-opt %t.no-such-file 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: .no-such-file: error: cannot read input: No such file or directory

// RUN: not kiln-opt %s --no-such-flag 2>&1 | filecheck %s --check-prefix=FLAG
// FLAG: kiln-opt: error: unrecognized arguments: --no-such-flag
