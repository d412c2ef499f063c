/* kiln runtime: sorting and selection along the last axis, called by the
 * code kiln-lower-sorts emits for `kiln.sort` (included by support.c, so it
 * is part of every compiled library).
 *
 * In: a 2-d strided memref (rows x n) of one dtype, a fresh contiguous output
 * of the same shape (the dtype's values, or int64 positions), and the kth
 * positions (sorted, in [0, n)) when only a partition is asked for.
 * Out: each row sorted ascending in NumPy's order (NaNs last), or its stable
 * argsort; with kth, each row partitioned so that every kth position holds
 * the value a full sort puts there, smaller-or-equal ones before it and
 * greater-or-equal ones after.
 *
 * Keys: every dtype maps to an unsigned integer of its width whose order is
 * NumPy's (signed: flip the sign bit; floats: flip all bits of negatives, the
 * sign bit of the others). Sorting is an MSD radix sort on 8-bit digits
 * (out of place, so stable; a digit that is the same for every key is
 * skipped; after a scatter or two the buckets fit in cache), insertion sort
 * for short buckets; selection is a quickselect over the kths (branch-free
 * partitions around a median of three) that falls back to the radix sort of
 * a range when its pivots go bad. Values keep their bits
 * (NaN payloads, -0.0 before +0.0: equal values, either order is NumPy's);
 * for positions, -0.0 equals +0.0 and every NaN equals every other, so the
 * stable order is NumPy's kind='stable' order exactly.
 */
#include <stdint.h>
#include <string.h>

void *_mlir_memref_to_llvm_alloc(size_t size);
void _mlir_memref_to_llvm_free(void *p);

#define KILN_SORT_SHORT 32 /* rows up to this long: insertion sort */

/* A memref descriptor of rank 1 and 2 (MLIR's C interface). */
typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} kiln_memref2;
typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} kiln_memref1;

/* Scratch buffers are tracked like the compiled code's (freed if a call unwinds). */
static void *kiln_sort_alloc(size_t bytes) { return _mlir_memref_to_llvm_alloc(bytes ? bytes : 1); }

/* ---- keys: NumPy's order as unsigned integer order ------------------------ */

#define KILN_FLOAT_KEY(U, BITS)                                                           \
  static inline U kiln_fkey_##BITS(U b) {                                                 \
    const U sign = (U)1 << (BITS - 1);                                                    \
    return (b & sign) ? (U)~b : (U)(b | sign);                                            \
  }                                                                                       \
  static inline U kiln_funkey_##BITS(U k) {                                               \
    const U sign = (U)1 << (BITS - 1);                                                    \
    return (k & sign) ? (U)(k & ~sign) : (U)~k;                                           \
  }
KILN_FLOAT_KEY(uint16_t, 16)
KILN_FLOAT_KEY(uint32_t, 32)
KILN_FLOAT_KEY(uint64_t, 64)

static inline int kiln_isnan_16(uint16_t b) { return (b & 0x7c00u) == 0x7c00u && (b & 0x03ffu); }
static inline int kiln_isnan_32(uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu); }
static inline int kiln_isnan_64(uint64_t b) {
  return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0x000fffffffffffffull);
}
static inline int kiln_iszero_16(uint16_t b) { return (b & 0x7fffu) == 0; }
static inline int kiln_iszero_32(uint32_t b) { return (b & 0x7fffffffu) == 0; }
static inline int kiln_iszero_64(uint64_t b) { return (b & 0x7fffffffffffffffull) == 0; }

/* ---- radix sort and selection on keys of one width ------------------------ */

/* For each width: keys alone (values), and (key, position) pairs (positions). */
#define KILN_SORT_WIDTH(U, BITS)                                                                       \
  typedef struct {                                                                                     \
    U key;                                                                                             \
    int64_t pos;                                                                                       \
  } kiln_pair_##BITS;                                                                                  \
                                                                                                       \
  static void kiln_insertion_##BITS(U *k, int64_t n) {                                                 \
    for (int64_t i = 1; i < n; i++) {                                                                  \
      U v = k[i];                                                                                      \
      int64_t j = i;                                                                                   \
      while (j > 0 && k[j - 1] > v) {                                                                  \
        k[j] = k[j - 1];                                                                               \
        j--;                                                                                           \
      }                                                                                                \
      k[j] = v;                                                                                        \
    }                                                                                                  \
  }                                                                                                    \
  static void kiln_insertion_pairs_##BITS(kiln_pair_##BITS *p, int64_t n) {                            \
    for (int64_t i = 1; i < n; i++) {                                                                  \
      kiln_pair_##BITS v = p[i];                                                                       \
      int64_t j = i;                                                                                   \
      while (j > 0 && p[j - 1].key > v.key) {                                                          \
        p[j] = p[j - 1];                                                                               \
        j--;                                                                                           \
      }                                                                                                \
      p[j] = v;                                                                                        \
    }                                                                                                  \
  }                                                                                                    \
  /* MSD radix sort, 8-bit digits from the top (below `shift`): the keys of x[0:n] end sorted in x       \
   * (to_y = 0) or y (to_y = 1), the other buffer is scratch. A digit shared by every key costs one     \
   * read; after the first scatters the buckets fit in cache. Out-of-place counting keeps it stable. */  \
  static void kiln_msd_##BITS(U *x, U *y, int64_t n, int shift, int to_y) {                            \
    while (n > KILN_SORT_SHORT && shift > 0) {                                                         \
      shift -= 8;                                                                                      \
      int64_t count[256] = {0};                                                                        \
      for (int64_t i = 0; i < n; i++)                                                                  \
        count[(x[i] >> shift) & 0xff]++;                                                               \
      if (count[(x[0] >> shift) & 0xff] == n)                                                          \
        continue;                                                                                      \
      int64_t start[257], sum = 0;                                                                     \
      for (int b = 0; b < 256; b++) {                                                                  \
        start[b] = sum;                                                                                \
        sum += count[b];                                                                               \
      }                                                                                                \
      start[256] = n;                                                                                  \
      int64_t next[256];                                                                               \
      memcpy(next, start, sizeof next);                                                                \
      for (int64_t i = 0; i < n; i++) {                                                                \
        U v = x[i];                                                                                    \
        y[next[(v >> shift) & 0xff]++] = v;                                                            \
      }                                                                                                \
      for (int b = 0; b < 256; b++)                                                                    \
        if (start[b + 1] > start[b])                                                                   \
          kiln_msd_##BITS(y + start[b], x + start[b], start[b + 1] - start[b], shift, !to_y);          \
      return;                                                                                          \
    }                                                                                                  \
    kiln_insertion_##BITS(x, n);                                                                       \
    if (to_y)                                                                                          \
      memcpy(y, x, (size_t)n * sizeof *x);                                                             \
  }                                                                                                    \
  static void kiln_radix_##BITS(U *k, U *tmp, int64_t n) { kiln_msd_##BITS(k, tmp, n, BITS, 0); }      \
  static void kiln_msd_pairs_##BITS(kiln_pair_##BITS *x, kiln_pair_##BITS *y, int64_t n, int shift,   \
                                    int to_y) {                                                        \
    while (n > KILN_SORT_SHORT && shift > 0) {                                                         \
      shift -= 8;                                                                                      \
      int64_t count[256] = {0};                                                                        \
      for (int64_t i = 0; i < n; i++)                                                                  \
        count[(x[i].key >> shift) & 0xff]++;                                                           \
      if (count[(x[0].key >> shift) & 0xff] == n)                                                      \
        continue;                                                                                      \
      int64_t start[257], sum = 0;                                                                     \
      for (int b = 0; b < 256; b++) {                                                                  \
        start[b] = sum;                                                                                \
        sum += count[b];                                                                               \
      }                                                                                                \
      start[256] = n;                                                                                  \
      int64_t next[256];                                                                               \
      memcpy(next, start, sizeof next);                                                                \
      for (int64_t i = 0; i < n; i++)                                                                  \
        y[next[(x[i].key >> shift) & 0xff]++] = x[i];                                                  \
      for (int b = 0; b < 256; b++)                                                                    \
        if (start[b + 1] > start[b])                                                                   \
          kiln_msd_pairs_##BITS(y + start[b], x + start[b], start[b + 1] - start[b], shift, !to_y);    \
      return;                                                                                          \
    }                                                                                                  \
    kiln_insertion_pairs_##BITS(x, n);                                                                 \
    if (to_y)                                                                                          \
      memcpy(y, x, (size_t)n * sizeof *x);                                                             \
  }                                                                                                    \
  static void kiln_radix_pairs_##BITS(kiln_pair_##BITS *p, kiln_pair_##BITS *tmp, int64_t n) {         \
    kiln_msd_pairs_##BITS(p, tmp, n, BITS, 0);                                                         \
  }                                                                                                    \
  /* Partition x[lo:hi] so that each kth in kth[klo:khi] (sorted, in [lo, hi)) holds its sorted        \
   * element: quickselect with a median-of-three pivot and two branch-free passes (less than the      \
   * pivot, then equal to it); past `depth` bad splits, sort the range. */                             \
  KILN_SELECT(kiln_select_##BITS, U, KILN_KEY_SELF, kiln_radix_##BITS, kiln_insertion_##BITS)          \
  KILN_SELECT(kiln_select_pairs_##BITS, kiln_pair_##BITS, KILN_KEY_FIELD, kiln_radix_pairs_##BITS,     \
              kiln_insertion_pairs_##BITS)

#define KILN_KEY_SELF(e) (e)
#define KILN_KEY_FIELD(e) ((e).key)
/* Branch-free partition of x[lo:hi] (Lomuto): the elements whose key passes
 * `KEY(e) CMP pivot` first; returns where the others start. */
#define KILN_LOMUTO(E, KEY, CMP)                                                                       \
  ({                                                                                                   \
    int64_t store_ = lo_;                                                                              \
    for (int64_t i_ = lo_; i_ < hi_; i_++) {                                                           \
      E v_ = x[i_];                                                                                    \
      int64_t take_ = KEY(v_) CMP pivot;                                                               \
      x[i_] = x[store_];                                                                               \
      x[store_] = v_;                                                                                  \
      store_ += take_;                                                                                 \
    }                                                                                                  \
    store_;                                                                                            \
  })
#define KILN_SELECT(NAME, E, KEY, SORT, SHORT)                                                         \
  static void NAME(E *x, E *tmp, int64_t lo, int64_t hi, const int64_t *kth, int64_t klo, int64_t khi, \
                   int depth) {                                                                        \
    while (hi - lo > KILN_SORT_SHORT && klo < khi) {                                                   \
      if (depth-- <= 0) {                                                                              \
        SORT(x + lo, tmp, hi - lo);                                                                    \
        return;                                                                                        \
      }                                                                                                \
      __typeof__(KEY(x[lo])) a = KEY(x[lo]), b = KEY(x[lo + (hi - lo) / 2]), c = KEY(x[hi - 1]);       \
      __typeof__(a) pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));     \
      /* [lo, less) < pivot, [less, more) == pivot, [more, hi) > pivot */                              \
      int64_t lo_ = lo, hi_ = hi;                                                                      \
      int64_t less = KILN_LOMUTO(E, KEY, <);                                                           \
      lo_ = less;                                                                                      \
      int64_t more = KILN_LOMUTO(E, KEY, <=);                                                          \
      int64_t m1 = klo, m2;                                                                            \
      while (m1 < khi && kth[m1] < less)                                                               \
        m1++;                                                                                          \
      m2 = m1;                                                                                         \
      while (m2 < khi && kth[m2] < more)                                                               \
        m2++;                                                                                          \
      NAME(x, tmp, lo, less, kth, klo, m1, depth);                                                     \
      lo = more;                                                                                       \
      klo = m2;                                                                                        \
    }                                                                                                  \
    if (klo < khi)                                                                                     \
      SHORT(x + lo, hi - lo);                                                                          \
  }

KILN_SORT_WIDTH(uint8_t, 8)
KILN_SORT_WIDTH(uint16_t, 16)
KILN_SORT_WIDTH(uint32_t, 32)
KILN_SORT_WIDTH(uint64_t, 64)

static int kiln_depth_limit(int64_t n) {
  int depth = 8;
  while (n > 1) {
    depth += 2;
    n >>= 1;
  }
  return depth;
}

/* ---- entry points, one pair per dtype -------------------------------------
 *
 * kiln_sort_<T>(in, out, kth): out <- each row of in sorted (or partitioned
 * at kth when kth is non-empty). kiln_argsort_<T>(in, out, kth): the same
 * for the stable positions (int64). Each memref comes as its expanded fields
 * (MLIR's default calling convention): allocated and aligned pointers,
 * offset, sizes, strides. */
#define KILN_MEMREF2_ARGS(p)                                                                           \
  void *p##_allocated, void *p##_aligned, int64_t p##_offset, int64_t p##_size0, int64_t p##_size1,    \
      int64_t p##_stride0, int64_t p##_stride1
#define KILN_MEMREF1_ARGS(p)                                                                           \
  void *p##_allocated, void *p##_aligned, int64_t p##_offset, int64_t p##_size0, int64_t p##_stride0
#define KILN_MEMREF2(p)                                                                                \
  {p##_allocated, p##_aligned, p##_offset, {p##_size0, p##_size1}, {p##_stride0, p##_stride1}}
#define KILN_MEMREF1(p) {p##_allocated, p##_aligned, p##_offset, {p##_size0}, {p##_stride0}}

/* TO_KEY maps an element's bits to its key; ISNAN tells the NaNs of the
 * values, which are kept as they are (payload and sign) at the end of the
 * row while the keys of the others are made, in the same pass. */
#define KILN_NEVER_NAN(BITS, b) 0
#define KILN_FLOAT_NAN(BITS, b) kiln_isnan_##BITS(b)

#define KILN_SORT_ENTRIES(NAME, T, U, BITS, TO_KEY, FROM_KEY, POS_KEY, ISNAN)                               \
  void kiln_sort_##NAME(KILN_MEMREF2_ARGS(i), KILN_MEMREF2_ARGS(o), KILN_MEMREF1_ARGS(k)) {            \
    kiln_memref2 in_ = KILN_MEMREF2(i), out_ = KILN_MEMREF2(o), *in = &in_, *out = &out_;                \
    kiln_memref1 kth_ = KILN_MEMREF1(k), *kth = &kth_;                                                   \
    int64_t rows = in->sizes[0], n = in->sizes[1], kcount = kth->sizes[0];                               \
    if (rows == 0 || n == 0)                                                                             \
      return;                                                                                            \
    const T *base = (const T *)in->aligned + in->offset;                                                 \
    const int64_t *ks = (const int64_t *)kth->aligned + kth->offset;                                     \
    U *tmp = (U *)kiln_sort_alloc((size_t)n * sizeof(U));                                                \
    for (int64_t r = 0; r < rows; r++) {                                                                 \
      const T *row = base + r * in->strides[0];                                                          \
      U *k = (U *)((T *)out->aligned + out->offset + r * out->strides[0]);                               \
      int64_t m = 0, nans = 0;                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                                  \
        T v = row[i * in->strides[1]];                                                                   \
        U bits;                                                                                          \
        memcpy(&bits, &v, sizeof v);                                                                     \
        if (ISNAN(BITS, bits))                                                                           \
          tmp[nans++] = bits;                                                                            \
        else                                                                                             \
          k[m++] = TO_KEY(bits);                                                                         \
      }                                                                                                  \
      memcpy(k + m, tmp, (size_t)nans * sizeof(U));                                                      \
      int64_t klimit = 0;                                                                                \
      while (klimit < kcount && ks[klimit] < m)                                                          \
        klimit++;                                                                                        \
      if (kcount == 0)                                                                                   \
        kiln_radix_##BITS(k, tmp, m);                                                                    \
      else                                                                                               \
        kiln_select_##BITS(k, tmp, 0, m, ks, 0, klimit, kiln_depth_limit(m));                            \
      for (int64_t i = 0; i < m; i++)                                                                    \
        k[i] = FROM_KEY(k[i]);                                                                           \
    }                                                                                                    \
    _mlir_memref_to_llvm_free(tmp);                                                                      \
  }                                                                                                      \
  void kiln_argsort_##NAME(KILN_MEMREF2_ARGS(i), KILN_MEMREF2_ARGS(o), KILN_MEMREF1_ARGS(k)) {         \
    kiln_memref2 in_ = KILN_MEMREF2(i), out_ = KILN_MEMREF2(o), *in = &in_, *out = &out_;                \
    kiln_memref1 kth_ = KILN_MEMREF1(k), *kth = &kth_;                                                   \
    int64_t rows = in->sizes[0], n = in->sizes[1], kcount = kth->sizes[0];                               \
    if (rows == 0 || n == 0)                                                                             \
      return;                                                                                            \
    const T *base = (const T *)in->aligned + in->offset;                                                 \
    const int64_t *ks = (const int64_t *)kth->aligned + kth->offset;                                     \
    kiln_pair_##BITS *p = (kiln_pair_##BITS *)kiln_sort_alloc(2 * (size_t)n * sizeof *p);                \
    for (int64_t r = 0; r < rows; r++) {                                                                 \
      const T *row = base + r * in->strides[0];                                                          \
      int64_t *dst = (int64_t *)out->aligned + out->offset + r * out->strides[0];                        \
      for (int64_t i = 0; i < n; i++) {                                                                  \
        T v = row[i * in->strides[1]];                                                                   \
        U bits;                                                                                          \
        memcpy(&bits, &v, sizeof v);                                                                     \
        p[i].key = POS_KEY(bits);                                                                        \
        p[i].pos = i;                                                                                    \
      }                                                                                                  \
      if (kcount == 0)                                                                                   \
        kiln_radix_pairs_##BITS(p, p + n, n);                                                            \
      else                                                                                               \
        kiln_select_pairs_##BITS(p, p + n, 0, n, ks, 0, kcount, kiln_depth_limit(n));                    \
      for (int64_t i = 0; i < n; i++)                                                                    \
        dst[i] = p[i].pos;                                                                               \
    }                                                                                                    \
    _mlir_memref_to_llvm_free(p);                                                                        \
  }

#define KILN_ID(x) (x)
#define KILN_SIGNED_8(x) ((uint8_t)((x) ^ 0x80u))
#define KILN_SIGNED_16(x) ((uint16_t)((x) ^ 0x8000u))
#define KILN_SIGNED_32(x) ((uint32_t)((x) ^ 0x80000000u))
#define KILN_SIGNED_64(x) ((uint64_t)((x) ^ 0x8000000000000000ull))
#define KILN_BOOL(x) ((uint8_t)((x) != 0))
/* Positions of floats: every NaN is the greatest key, -0.0 is +0.0. */
#define KILN_FPOS(BITS, x)                                                                             \
  (kiln_isnan_##BITS(x) ? (__typeof__(x)) ~(__typeof__(x))0                                             \
                        : kiln_fkey_##BITS(kiln_iszero_##BITS(x) ? (__typeof__(x))0 : (x)))
#define KILN_FPOS_16(x) KILN_FPOS(16, x)
#define KILN_FPOS_32(x) KILN_FPOS(32, x)
#define KILN_FPOS_64(x) KILN_FPOS(64, x)

KILN_SORT_ENTRIES(bool, uint8_t, uint8_t, 8, KILN_BOOL, KILN_ID, KILN_BOOL, KILN_NEVER_NAN)
KILN_SORT_ENTRIES(u8, uint8_t, uint8_t, 8, KILN_ID, KILN_ID, KILN_ID, KILN_NEVER_NAN)
KILN_SORT_ENTRIES(u16, uint16_t, uint16_t, 16, KILN_ID, KILN_ID, KILN_ID, KILN_NEVER_NAN)
KILN_SORT_ENTRIES(u32, uint32_t, uint32_t, 32, KILN_ID, KILN_ID, KILN_ID, KILN_NEVER_NAN)
KILN_SORT_ENTRIES(u64, uint64_t, uint64_t, 64, KILN_ID, KILN_ID, KILN_ID, KILN_NEVER_NAN)
KILN_SORT_ENTRIES(i8, int8_t, uint8_t, 8, KILN_SIGNED_8, KILN_SIGNED_8, KILN_SIGNED_8, KILN_NEVER_NAN)
KILN_SORT_ENTRIES(i16, int16_t, uint16_t, 16, KILN_SIGNED_16, KILN_SIGNED_16, KILN_SIGNED_16, KILN_NEVER_NAN)
KILN_SORT_ENTRIES(i32, int32_t, uint32_t, 32, KILN_SIGNED_32, KILN_SIGNED_32, KILN_SIGNED_32, KILN_NEVER_NAN)
KILN_SORT_ENTRIES(i64, int64_t, uint64_t, 64, KILN_SIGNED_64, KILN_SIGNED_64, KILN_SIGNED_64, KILN_NEVER_NAN)
KILN_SORT_ENTRIES(f16, uint16_t, uint16_t, 16, kiln_fkey_16, kiln_funkey_16, KILN_FPOS_16, KILN_FLOAT_NAN)
KILN_SORT_ENTRIES(f32, float, uint32_t, 32, kiln_fkey_32, kiln_funkey_32, KILN_FPOS_32, KILN_FLOAT_NAN)
KILN_SORT_ENTRIES(f64, double, uint64_t, 64, kiln_fkey_64, kiln_funkey_64, KILN_FPOS_64, KILN_FLOAT_NAN)
