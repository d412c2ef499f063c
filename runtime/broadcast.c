/* kiln runtime: the size-1 broadcast copy, called by the code
 * kiln-legalize-dynamic emits for the run-time size-1 path of a
 * `dynamic_broadcast_in_dim` (included by support.c, so it is part of every
 * compiled library).
 *
 * In: the element size in bytes, the source's aligned address and offset
 * (in elements), the fresh destination's address, and per destination dim
 * its size and the source's stride in elements (0 along a dim the source
 * broadcasts: a dim that is 1 in the source, or one it lacks).
 * Out: the destination, contiguous in row-major order, holds at position
 * (i0, ..., ik) the source element at offset + i0*s0 + ... + ik*sk.
 *
 * One routine for every dtype and rank instead of one loop nest per
 * broadcast operand: that path runs only when a dim is 1 at run time, and
 * LLVM spent most of a stencil kernel's compile time on those nests.
 */

#include <stdint.h>
#include <string.h>

#define KILN_BROADCAST_MAX_RANK 8

/* One destination row: `n` elements of `size` bytes, read `stride` elements
 * apart (0: the same element; 1: a contiguous run). */
static void kiln_broadcast_row(char *dst, const char *src, int64_t n, int64_t stride, int64_t size) {
  if (stride == 1) {
    memcpy(dst, src, (size_t)(n * size));
    return;
  }
  int64_t step = stride * size;
  switch (size) {
#define KILN_ROW_CASE(BYTES)                        \
  case BYTES:                                       \
    for (int64_t i = 0; i < n; i++)                 \
      memcpy(dst + i * BYTES, src + i * step, BYTES); \
    return;
    KILN_ROW_CASE(1)
    KILN_ROW_CASE(2)
    KILN_ROW_CASE(4)
    KILN_ROW_CASE(8)
    KILN_ROW_CASE(16)
#undef KILN_ROW_CASE
  default:
    for (int64_t i = 0; i < n; i++)
      memcpy(dst + i * size, src + i * step, (size_t)size);
  }
}

static void kiln_broadcast_copy(int64_t rank, int64_t size, intptr_t src_address, int64_t src_offset,
                                intptr_t dst_address, const int64_t *sizes, const int64_t *strides) {
  const char *src = (const char *)src_address + src_offset * size;
  char *dst = (char *)dst_address;
  int64_t rows = 1;
  for (int64_t d = 0; d < rank; d++) {
    if (sizes[d] == 0)
      return;
    if (d < rank - 1)
      rows *= sizes[d];
  }
  int64_t n = sizes[rank - 1], inner = strides[rank - 1];
  int64_t index[KILN_BROADCAST_MAX_RANK] = {0};
  const char *row = src;
  for (int64_t r = 0; r < rows; r++) {
    kiln_broadcast_row(dst, row, n, inner, size);
    dst += n * size;
    /* The next row: step the outer dims like an odometer, last fastest. */
    for (int64_t d = rank - 2; d >= 0; d--) {
      row += strides[d] * size;
      if (++index[d] < sizes[d])
        break;
      row -= index[d] * strides[d] * size;
      index[d] = 0;
    }
  }
}

/* The entry points, one per rank (the sizes and strides are scalar
 * arguments: no buffer to fill before the call). */
void kiln_broadcast_copy_1d(int64_t size, intptr_t src, int64_t offset, intptr_t dst, int64_t n0, int64_t s0) {
  const int64_t sizes[] = {n0}, strides[] = {s0};
  kiln_broadcast_copy(1, size, src, offset, dst, sizes, strides);
}

void kiln_broadcast_copy_2d(int64_t size, intptr_t src, int64_t offset, intptr_t dst, int64_t n0, int64_t n1,
                            int64_t s0, int64_t s1) {
  const int64_t sizes[] = {n0, n1}, strides[] = {s0, s1};
  kiln_broadcast_copy(2, size, src, offset, dst, sizes, strides);
}

void kiln_broadcast_copy_3d(int64_t size, intptr_t src, int64_t offset, intptr_t dst, int64_t n0, int64_t n1,
                            int64_t n2, int64_t s0, int64_t s1, int64_t s2) {
  const int64_t sizes[] = {n0, n1, n2}, strides[] = {s0, s1, s2};
  kiln_broadcast_copy(3, size, src, offset, dst, sizes, strides);
}

void kiln_broadcast_copy_4d(int64_t size, intptr_t src, int64_t offset, intptr_t dst, int64_t n0, int64_t n1,
                            int64_t n2, int64_t n3, int64_t s0, int64_t s1, int64_t s2, int64_t s3) {
  const int64_t sizes[] = {n0, n1, n2, n3}, strides[] = {s0, s1, s2, s3};
  kiln_broadcast_copy(4, size, src, offset, dst, sizes, strides);
}

void kiln_broadcast_copy_5d(int64_t size, intptr_t src, int64_t offset, intptr_t dst, int64_t n0, int64_t n1,
                            int64_t n2, int64_t n3, int64_t n4, int64_t s0, int64_t s1, int64_t s2, int64_t s3,
                            int64_t s4) {
  const int64_t sizes[] = {n0, n1, n2, n3, n4}, strides[] = {s0, s1, s2, s3, s4};
  kiln_broadcast_copy(5, size, src, offset, dst, sizes, strides);
}

void kiln_broadcast_copy_6d(int64_t size, intptr_t src, int64_t offset, intptr_t dst, int64_t n0, int64_t n1,
                            int64_t n2, int64_t n3, int64_t n4, int64_t n5, int64_t s0, int64_t s1, int64_t s2,
                            int64_t s3, int64_t s4, int64_t s5) {
  const int64_t sizes[] = {n0, n1, n2, n3, n4, n5}, strides[] = {s0, s1, s2, s3, s4, s5};
  kiln_broadcast_copy(6, size, src, offset, dst, sizes, strides);
}

void kiln_broadcast_copy_7d(int64_t size, intptr_t src, int64_t offset, intptr_t dst, int64_t n0, int64_t n1,
                            int64_t n2, int64_t n3, int64_t n4, int64_t n5, int64_t n6, int64_t s0, int64_t s1,
                            int64_t s2, int64_t s3, int64_t s4, int64_t s5, int64_t s6) {
  const int64_t sizes[] = {n0, n1, n2, n3, n4, n5, n6}, strides[] = {s0, s1, s2, s3, s4, s5, s6};
  kiln_broadcast_copy(7, size, src, offset, dst, sizes, strides);
}

void kiln_broadcast_copy_8d(int64_t size, intptr_t src, int64_t offset, intptr_t dst, int64_t n0, int64_t n1,
                            int64_t n2, int64_t n3, int64_t n4, int64_t n5, int64_t n6, int64_t n7, int64_t s0,
                            int64_t s1, int64_t s2, int64_t s3, int64_t s4, int64_t s5, int64_t s6, int64_t s7) {
  const int64_t sizes[] = {n0, n1, n2, n3, n4, n5, n6, n7}, strides[] = {s0, s1, s2, s3, s4, s5, s6, s7};
  kiln_broadcast_copy(8, size, src, offset, dst, sizes, strides);
}
