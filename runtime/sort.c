/* kiln runtime: sorting and selection along the last axis, called by the
 * code kiln-lower-sorts emits for `kiln.sort`. Compiled on demand, one
 * object per routine and dtype (`-DKILN_SORT_ONE -DKILN_SORT_ONLY_<dtype>`
 * with `-DKILN_SORT_ENTRY_SORT` or `-DKILN_SORT_ENTRY_ARGSORT`, see
 * runtime/toolchain.py `sort_object`): a library that sorts float64 values
 * links only that object, and a library that does not sort links none (all
 * twelve dtypes in one object were ~26 s of `cc -O2`, 97 % of the support
 * code's build on a fresh cache; float64's sort and argsort ~6.1 s together,
 * ~4.4 s and ~1.5 s apart). The other entry becomes a static unused
 * function, which the compiler drops with every helper only it calls.
 * Without KILN_SORT_ONE every dtype and both entries are compiled.
 *
 * In: a 2-d strided memref (rows x n) of one dtype, a fresh contiguous output
 * of the same shape (the dtype's values, or int64 positions), and the kth
 * positions (sorted, in [0, n)) when only a partition is asked for.
 * Out: each row sorted ascending in NumPy's order (NaNs last), or its stable
 * argsort; with kth, each row partitioned so that every kth position holds
 * the value a full sort puts there, smaller-or-equal ones before it and
 * greater-or-equal ones after.
 *
 * Values of int32/int64/float32/float64 on a CPU with AVX2 (checked at
 * load time): contiguous rows of at most KILN_RUNS monotone runs merged
 * straight from the row (sorted / reversed rows stored by the scan), rows
 * of at most KILN_FEW distinct values counted by vector compares; else a
 * vectorized first pass (NaNs moved to the end, rows in order or reversed
 * answered at once), rows of at most KILN_RUNS monotone
 * runs merged, long 64-bit rows scattered into value buckets, then an
 * out-of-place vectorized quicksort (permutation-table partitions that
 * track the maximum, sampled pivots, bitonic networks of 1-8 vectors at
 * the leaves, the 8-vector one sorting columns first). Otherwise keys: every dtype maps to an unsigned integer of
 * its width whose order is NumPy's (signed: flip the sign bit; floats: flip
 * all bits of negatives, the sign bit of the others), sorted by an LSD radix
 * sort (32/64 bits: range-relative keys, <= 11-bit digits) or an MSD one
 * (8/16 bits). Positions: an LSD radix sort of (key - min) << bits | position
 * words when the keys' range and the positions fit in 64 bits, else a
 * stable MSD radix sort of (key, position) pairs; a stable merge of the
 * runs when there are at most KILN_RUNS; counting sorts of few values.
 * Selection: Floyd-Rivest (sampled pivot pair, one three-way out-of-place
 * pass per level, AVX2 for the four dtypes above); the 8- and 16-bit
 * values use a quickselect on keys. Sorted values are NumPy's kind='stable'
 * result bit for bit (NaN payloads in input order; the zeros of a sorted row
 * are rewritten in input order, kiln_fixzeros);
 * for positions, -0.0 equals +0.0 and every NaN equals every other, so the
 * stable order is NumPy's kind='stable' order exactly. Rows of 64Ki elements
 * or more are split into parts sorted on support.c's thread pool (see "long
 * rows on the thread pool" below), with the same answer bit for bit.
 * docs/numpy.md, "How sorting is compiled", has the details.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *_mlir_memref_to_llvm_alloc(size_t size);
void _mlir_memref_to_llvm_free(void *p);
/* support.c's thread pool (linked into every library). */
void kiln_parallel_for(void (*fn)(void *, int64_t, int64_t), void *ctx, int64_t lo, int64_t hi, int64_t work);
int kiln_parallel_worth(int64_t work);

/* Rows of at most this many monotone runs are merged, not quicksorted / radix sorted. */
#define KILN_RUNS 16
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

/* The merge path's binary search (the body of a function returning it): how many of the first k
 * values of the stable merge of runs a (na values) and b (nb) come from a, ties from a; A_LE_B is
 * an expression in i_ and j_ that says a[i_] <= b[j_]. */
#define KILN_CORANK(na, nb, k, A_LE_B)                                                                 \
  do {                                                                                                 \
    int64_t lo_ = (k) > (nb) ? (k) - (nb) : 0, hi_ = (k) < (na) ? (k) : (na);                          \
    while (lo_ < hi_) {                                                                                \
      int64_t i_ = lo_ + (hi_ - lo_) / 2, j_ = (k) - i_ - 1;                                           \
      if (A_LE_B)                                                                                      \
        lo_ = i_ + 1;                                                                                  \
      else                                                                                             \
        hi_ = i_;                                                                                      \
    }                                                                                                  \
    return lo_;                                                                                        \
  } while (0)

/* The row-sized scratch of one call: a buffer kept per thread between calls
 * (up to KILN_SORT_KEEP bytes), since touching fresh pages costs more than a
 * radix pass (the first touch of a page is a fault: ~1 ms per MB here).
 * Nothing in sort.c can unwind, so it is not tracked; kiln_sort_release
 * gives back a buffer above the limit. */
#define KILN_SORT_KEEP ((size_t)64 << 20)
static __thread void *kiln_sort_kept;
static __thread size_t kiln_sort_kept_bytes;
static void *kiln_sort_scratch(size_t bytes) {
  if (bytes > KILN_SORT_KEEP)
    return _mlir_memref_to_llvm_alloc(bytes);
  if (bytes > kiln_sort_kept_bytes) {
    _mlir_memref_to_llvm_free(kiln_sort_kept);
    kiln_sort_kept = malloc(bytes);
    kiln_sort_kept_bytes = kiln_sort_kept ? bytes : 0;
    if (!kiln_sort_kept)
      return _mlir_memref_to_llvm_alloc(bytes);
  }
  return kiln_sort_kept;
}
static void kiln_sort_release(void *p) {
  if (p != kiln_sort_kept)
    _mlir_memref_to_llvm_free(p);
}

/* ---- long rows on the thread pool -------------------------------------------
 *
 * NumPy sorts on one thread; a row of KILN_SORT_PARALLEL_MIN elements or more
 * is split into independent parts that support.c's pool runs (kiln_parallel_for:
 * the caller and the workers claim parts until none is left, so a worker that
 * is not scheduled never holds the caller up; see "Parallel loops" there).
 * The parts only read and write their own ranges of the output and of the
 * scratch row the caller allocated, and allocate nothing. Threads are not
 * used when the call runs inside a parallel body, with KILN_NUM_THREADS=1, or
 * while the pool backs off under load (the split would then be a pass for
 * nothing); kiln_parallel_for itself runs the parts in one call when another
 * thread holds the pool. */
#define KILN_SORT_PARALLEL_MIN ((int64_t)1 << 16)
#define KILN_SORT_PIECES 8 /* pieces of a parallel merge or copy (4 per thread of 2) */
static int kiln_sort_parallel(int64_t n) {
  return n >= KILN_SORT_PARALLEL_MIN && kiln_parallel_worth(n);
}

/* A copy of n elements of `size` bytes in KILN_SORT_PIECES pieces on the pool. */
typedef struct {
  char *dst;
  const char *src;
  int64_t n, size;
} kiln_sort_copy_job;
static void kiln_sort_copy_piece(void *ctx, int64_t lo, int64_t hi) {
  kiln_sort_copy_job *c = ctx;
  int64_t a = c->n * lo / KILN_SORT_PIECES, b = c->n * hi / KILN_SORT_PIECES;
  memcpy(c->dst + a * c->size, c->src + a * c->size, (size_t)((b - a) * c->size));
}
static void kiln_sort_copy(void *dst, const void *src, int64_t n, int64_t size) {
  if (!kiln_sort_parallel(n)) {
    memcpy(dst, src, (size_t)(n * size));
    return;
  }
  kiln_sort_copy_job c = {dst, src, n, size};
  kiln_parallel_for(kiln_sort_copy_piece, &c, 0, KILN_SORT_PIECES, n);
}

/* A run of positions for the stable merges of argsort: its i-th position is
 * p[i], or base + step * i when p is NULL (a run of the row itself, step -1
 * for a strictly decreasing run read backwards). */
typedef struct {
  const int64_t *p;
  int64_t base, step, n;
} kiln_posrun;
static inline int64_t kiln_posrun_at(const kiln_posrun *r, int64_t i) { return r->p ? r->p[i] : r->base + r->step * i; }

/* dst[0:n] <- the positions 0..n-1, or n-1..0 when `down`, in pieces on the pool for long rows. */
typedef struct {
  int64_t *dst, n;
  int down;
} kiln_iota_job;
static void kiln_iota_piece(void *ctx, int64_t lo, int64_t hi) {
  kiln_iota_job *j = ctx;
  int64_t a = j->n * lo / KILN_SORT_PIECES, b = j->n * hi / KILN_SORT_PIECES, *d = j->dst, last = j->n - 1;
  if (j->down)
    for (int64_t i = a; i < b; i++)
      d[i] = last - i;
  else
    for (int64_t i = a; i < b; i++)
      d[i] = i;
}
static void kiln_sort_iota(int64_t *dst, int64_t n, int down) {
  kiln_iota_job j = {dst, n, down};
  if (kiln_sort_parallel(n))
    kiln_parallel_for(kiln_iota_piece, &j, 0, KILN_SORT_PIECES, n);
  else
    kiln_iota_piece(&j, 0, KILN_SORT_PIECES);
}

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
    if (n > KILN_SORT_SHORT) { /* a bucket of one key (few distinct values): in order, no digit left */ \
      int64_t i = 1;                                                                                   \
      while (i < n && x[i].key == x[0].key)                                                            \
        i++;                                                                                           \
      if (i == n) {                                                                                    \
        if (to_y)                                                                                      \
          memcpy(y, x, (size_t)n * sizeof *x);                                                         \
        return;                                                                                        \
      }                                                                                                \
    }                                                                                                  \
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
  /* The same when every key's bits from `diff`'s highest set bit up are shared (diff: the OR of the   \
   * keys XOR their AND): the digits above it, a counting pass each, are skipped. */                  \
  static void kiln_radix_pairs_below_##BITS(kiln_pair_##BITS *p, kiln_pair_##BITS *tmp, int64_t n,    \
                                            U diff) {                                                  \
    int top = diff ? (63 - __builtin_clzll((unsigned long long)diff)) / 8 * 8 + 8 : 0;                 \
    kiln_msd_pairs_##BITS(p, tmp, n, top < BITS ? top : BITS, 0);                                      \
  }                                                                                                    \
  /* Partition x[lo:hi] so that each kth in kth[klo:khi] (sorted, in [lo, hi)) holds its sorted        \
   * element: quickselect with a median-of-three pivot and two branch-free passes (less than the      \
   * pivot, then equal to it); past `depth` bad splits, sort the range. */                             \
  KILN_SELECT(kiln_select_##BITS, U, KILN_KEY_SELF, kiln_radix_##BITS, kiln_insertion_##BITS)

#define KILN_KEY_SELF(e) (e)
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
  __attribute__((unused)) static void NAME(E *x, E *tmp, int64_t lo, int64_t hi, const int64_t *kth,      \
                                           int64_t klo, int64_t khi, int depth) {                      \
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

/* ---- LSD radix sort of 32- and 64-bit keys --------------------------------
 *
 * Keys relative to their minimum (so data of a narrow range, e.g. int64
 * straddling zero, needs only the passes of its range's bits), digits of up
 * to 11 bits (as few passes as the range allows: 24 bits take three 8-bit
 * passes, 32 bits three 11-bit ones, 64 bits six), every histogram in one
 * read, and a pass whose digit is the same for every key skipped. Each pass
 * scatters out of place in order, so the sort is stable. Returns the buffer
 * (k or tmp) that holds the sorted keys. */
#define KILN_LSD_MAX_PASSES 6
#define KILN_LSD(U, BITS)                                                                              \
  static U *kiln_lsd_##BITS(U *k, U *tmp, int64_t n, U lo, U hi) {                                     \
    U range = hi - lo;                                                                                 \
    if (range == 0 || n < 2)                                                                           \
      return k;                                                                                        \
    int width = BITS - (BITS == 64 ? __builtin_clzll((unsigned long long)range)                        \
                                   : __builtin_clz((unsigned)range));                                  \
    int passes = (width + 10) / 11, digit = (width + passes - 1) / passes;                             \
    int64_t buckets = (int64_t)1 << digit;                                                             \
    U mask = (U)(buckets - 1);                                                                         \
    /* ~100 KB of histograms: a plain malloc (this runs on pool workers too, where a failed tracked    \
     * allocation could not unwind); when it fails, the MSD radix sort, which needs only the stack */  \
    int64_t *count = (int64_t *)malloc((size_t)passes * (size_t)buckets * sizeof(int64_t));            \
    if (count == NULL) {                                                                               \
      kiln_msd_##BITS(k, tmp, n, BITS, 0);                                                             \
      return k;                                                                                        \
    }                                                                                                  \
    memset(count, 0, (size_t)passes * (size_t)buckets * sizeof(int64_t));                              \
    if (passes == 1) {                                                                                 \
      for (int64_t i = 0; i < n; i++)                                                                  \
        count[(U)(k[i] - lo)]++;                                                                       \
    } else if (passes == 2) {                                                                          \
      for (int64_t i = 0; i < n; i++) {                                                                \
        U d = (U)(k[i] - lo);                                                                          \
        count[d & mask]++;                                                                             \
        count[buckets + (d >> digit)]++;                                                               \
      }                                                                                                \
    } else if (passes == 3) {                                                                          \
      for (int64_t i = 0; i < n; i++) {                                                                \
        U d = (U)(k[i] - lo);                                                                          \
        count[d & mask]++;                                                                             \
        count[buckets + ((d >> digit) & mask)]++;                                                      \
        count[2 * buckets + (d >> 2 * digit)]++;                                                       \
      }                                                                                                \
    } else {                                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                                \
        U d = (U)(k[i] - lo);                                                                          \
        for (int p = 0; p < passes; p++)                                                               \
          count[p * buckets + ((d >> (p * digit)) & mask)]++;                                          \
      }                                                                                                \
    }                                                                                                  \
    U *src = k, *dst = tmp;                                                                            \
    for (int p = 0; p < passes; p++) {                                                                 \
      int64_t *c = count + p * buckets;                                                                \
      int shift = p * digit;                                                                           \
      if (c[((U)(src[0] - lo) >> shift) & mask] == n)                                                  \
        continue;                                                                                      \
      int64_t sum = 0;                                                                                 \
      for (int64_t b = 0; b < buckets; b++) {                                                          \
        int64_t t = c[b];                                                                              \
        c[b] = sum;                                                                                    \
        sum += t;                                                                                      \
      }                                                                                                \
      for (int64_t i = 0; i < n; i++) {                                                                \
        U v = src[i];                                                                                  \
        dst[c[((U)(v - lo) >> shift) & mask]++] = v;                                                   \
      }                                                                                                \
      U *t = src;                                                                                      \
      src = dst;                                                                                       \
      dst = t;                                                                                         \
    }                                                                                                  \
    free(count);                                                                                       \
    return src;                                                                                        \
  }
KILN_LSD(uint32_t, 32)
KILN_LSD(uint64_t, 64)

/* ---- packed positions: a (key, position) pair in one 64-bit word ----------
 *
 * A stable argsort orders (key, position) pairs lexicographically. When the
 * keys' range (max - min) takes kbits bits and the positions pbits, with
 * kbits + pbits <= 64, the word (key - min) << pbits | position orders the
 * same way: the pairs become 8-byte words (half the 16 bytes of a
 * kiln_pair_64, or of a padded kiln_pair_32), and an LSD radix sort of their
 * key bits alone sorts them stably (the positions start in order). The
 * histograms of every pass are counted while the words are made (one read
 * of the row), digits have at most KILN_PACK_DIGIT bits, a pass whose digit
 * every word shares is skipped, and the last pass stores the positions
 * themselves into the output. */
#define KILN_PACK_MIN 1024     /* shorter rows: (key, position) pairs, MSD radix */
#define KILN_PACK_DIGIT 11
#define KILN_PACK_COUNT ((size_t)KILN_LSD_MAX_PASSES << KILN_PACK_DIGIT) /* int64 of histograms */
/* The passes of kbits key bits; *digit: the bits of each. */
static int kiln_pack_plan(int kbits, int *digit) {
  int passes = (kbits + KILN_PACK_DIGIT - 1) / KILN_PACK_DIGIT;
  *digit = (kbits + passes - 1) / passes;
  return passes;
}
/* The words w[0:n] (their digits counted in count[p << digit ...]) sorted by their key bits; the
 * positions (the low pbits bits) end in dst. `other`: n words of scratch; w is dst itself or
 * `other` (then the first pass reads it; a scatter never writes the buffer it reads). */
static void kiln_lsd_words(uint64_t *w, uint64_t *other, int64_t *dst, int64_t n, int pbits, int passes, int digit,
                           int64_t *count) {
  const uint64_t mask = ((uint64_t)1 << digit) - 1, pmask = ((uint64_t)1 << pbits) - 1;
  const int64_t buckets = (int64_t)1 << digit;
  int live[KILN_LSD_MAX_PASSES], nlive = 0;
  for (int p = 0; p < passes; p++) /* the passes that move something */
    if (count[p * buckets + (int64_t)((w[0] >> (pbits + p * digit)) & mask)] != n)
      live[nlive++] = p;
  uint64_t *src = w;
  for (int q = 0; q < nlive; q++) {
    int64_t *c = count + live[q] * buckets, sum = 0;
    const int shift = pbits + live[q] * digit;
    for (int64_t b = 0; b < buckets; b++) {
      int64_t t = c[b];
      c[b] = sum;
      sum += t;
    }
    if (q == nlive - 1 && src != (uint64_t *)dst) { /* the last pass: the positions, into dst */
      for (int64_t i = 0; i < n; i++) {
        uint64_t v = src[i];
        dst[c[(v >> shift) & mask]++] = (int64_t)(v & pmask);
      }
      return;
    }
    for (int64_t i = 0; i < n; i++) {
      uint64_t v = src[i];
      other[c[(v >> shift) & mask]++] = v;
    }
    uint64_t *t = src;
    src = other;
    other = t;
  }
  for (int64_t i = 0; i < n; i++) /* the words ended in dst's buffer (in place) or in the scratch */
    dst[i] = (int64_t)(src[i] & pmask);
}

/* Sorting keys of any width: the LSD radix sort for 32 and 64 bits, the MSD
 * one (in place of the keys) below. */
static uint8_t *kiln_sortkeys_8(uint8_t *k, uint8_t *tmp, int64_t n, uint8_t lo, uint8_t hi) {
  (void)lo, (void)hi;
  kiln_radix_8(k, tmp, n);
  return k;
}
static uint16_t *kiln_sortkeys_16(uint16_t *k, uint16_t *tmp, int64_t n, uint16_t lo, uint16_t hi) {
  (void)lo, (void)hi;
  kiln_radix_16(k, tmp, n);
  return k;
}
#define kiln_sortkeys_32 kiln_lsd_32
#define kiln_sortkeys_64 kiln_lsd_64

/* ---- selection: Floyd-Rivest, out of place ---------------------------------
 *
 * select(src, dst, scratch, spare, n, kth): dst[0:n] <- src[0:n] partitioned
 * at each kth (positions minus `off`). Two pivots p1 <= p2 are read from a
 * sorted sample around the middle kth's rank, so that few elements lie
 * between them and the kth's element almost surely does; one branch-free
 * pass sends the elements less than p1 to the front of dst, those greater
 * than p2 to its back, and the others to scratch, which (and the front and
 * back parts, when a kth lies there) is selected the same way into its place
 * in dst. Each level costs one read and one write of its part, and the parts
 * shrink geometrically: ~1.2 passes over the row in all. When the pivots are
 * equal, the middle part is all equal values (done); when a level makes no
 * progress, the next one takes p1 = p2 (three-way); past `depth` levels the
 * part is sorted (radix, linear), so the worst case stays O(n). `spare` is a
 * writable buffer of n the children use as their scratch (src itself,
 * once it is read, below the first level). LESS is NumPy's order (NaNs
 * greatest). */
#define KILN_FR_SMALL 48
#define KILN_PAIR_LESS(a, b) ((a).key < (b).key)
#define KILN_NO_VPASS(src, n, dst, mid, p1, p2, mcount) ((int64_t)-1)
#define KILN_LESS_INT(a, b) ((a) < (b))
#define KILN_LESS_FLOAT(a, b) (((a) < (b)) | (((b) != (b)) & ((a) == (a))))
#define KILN_FR(NAME, E, LESS, SORT, VPASS)                                                                 \
  static void NAME##_insertion(E *x, int64_t n) {                                                      \
    for (int64_t i = 1; i < n; i++) {                                                                  \
      E v = x[i];                                                                                      \
      int64_t j = i;                                                                                   \
      while (j > 0 && LESS(v, x[j - 1])) {                                                             \
        x[j] = x[j - 1];                                                                               \
        j--;                                                                                           \
      }                                                                                                \
      x[j] = v;                                                                                        \
    }                                                                                                  \
  }                                                                                                    \
  static int64_t NAME##_pass(const E *src, int64_t n, E *dst, E *mid, E p1, E p2, int64_t *mcount) {   \
    int64_t l = VPASS(src, n, dst, mid, p1, p2, mcount), r = n, m = 0;                                 \
    if (l >= 0)                                                                                        \
      return l;                                                                                        \
    l = 0;                                                                                             \
    for (int64_t i = 0; i < n; i++) {                                                                  \
      E v = src[i];                                                                                    \
      int lt = LESS(v, p1), gt = LESS(p2, v);                                                          \
      dst[l] = v;                                                                                      \
      dst[r - 1] = v;                                                                                  \
      mid[m] = v;                                                                                      \
      l += lt;                                                                                         \
      r -= gt;                                                                                         \
      m += !(lt | gt);                                                                                 \
    }                                                                                                  \
    *mcount = m;                                                                                       \
    return l;                                                                                          \
  }                                                                                                    \
  /* The pivots around rank k of src[0:n]: a sample of 1023 (shell sorted, Ciura's gaps) from 2^18  \
   * elements, 255 from 16384, else 31; p1, p2 2.5 sigma of the kth's sample rank apart (~8%, ~16%,  \
   * ~32% of the part between them), equal when stalled. Not inlined: the sample is off the stack    \
   * before the selection recurses. */                                                                \
  static __attribute__((noinline)) void NAME##_pivots(const E *src, int64_t n, int64_t k, int stalled, E *p1, \
                                                      E *p2) {                                         \
    E sample[1023];                                                                                    \
    int64_t ns = n >= 262144 ? 1023 : n >= 16384 ? 255 : 31, step = n / ns;                           \
    int64_t spread = ns == 1023 ? 40 : ns == 255 ? 20 : 5;                                             \
    for (int64_t i = 0; i < ns; i++)                                                                   \
      sample[i] = src[i * step + step / 2];                                                            \
    static const int gaps_[] = {701, 301, 132, 57, 23, 10, 4};                                         \
    for (int g = 0; g < 7 && ns == 1023; g++)                                                          \
      for (int64_t i = gaps_[g]; i < ns; i++) {                                                        \
        E v = sample[i];                                                                               \
        int64_t q = i;                                                                                 \
        for (; q >= gaps_[g] && LESS(v, sample[q - gaps_[g]]); q -= gaps_[g])                          \
          sample[q] = sample[q - gaps_[g]];                                                            \
        sample[q] = v;                                                                                 \
      }                                                                                                \
    NAME##_insertion(sample, ns);                                                                      \
    int64_t j = k * ns / n, d = stalled ? 0 : spread;                                                  \
    *p1 = sample[j - d < 0 ? 0 : j - d], *p2 = sample[j + d >= ns ? ns - 1 : j + d];                   \
  }                                                                                                    \
  static void NAME(const E *src, E *dst, E *scratch, E *spare, int64_t n, const int64_t *kth, int64_t kc, \
                   int64_t off, int depth, int stalled) {                                              \
    if (kc == 0 || n <= KILN_FR_SMALL || depth <= 0) {                                                 \
      if (src != dst)                                                                                  \
        memcpy(dst, src, (size_t)n * sizeof(E));                                                       \
      if (kc == 0)                                                                                     \
        return;                                                                                        \
      if (n <= KILN_FR_SMALL)                                                                          \
        NAME##_insertion(dst, n);                                                                      \
      else                                                                                             \
        SORT(dst, scratch, n);                                                                         \
      return;                                                                                          \
    }                                                                                                  \
    E p1, p2;                                                                                          \
    NAME##_pivots(src, n, (kth[kc / 2] - off), stalled, &p1, &p2);                                     \
    int64_t m, l = NAME##_pass(src, n, dst, scratch, p1, p2, &m), r = l + m;                           \
    int64_t a = 0, b;                                                                                  \
    while (a < kc && kth[a] - off < l)                                                                 \
      a++;                                                                                             \
    b = a;                                                                                             \
    while (b < kc && kth[b] - off < r)                                                                 \
      b++;                                                                                             \
    if (!LESS(p1, p2))                                                                                 \
      memcpy(dst + l, scratch, (size_t)m * sizeof(E));                                                 \
    else                                                                                               \
      NAME(scratch, dst + l, spare + l, scratch, m, kth + a, b - a, off + l, depth - 1, m == n);       \
    if (a > 0) {                                                                                       \
      memcpy(spare, dst, (size_t)l * sizeof(E));                                                       \
      NAME(spare, dst, scratch, spare, l, kth, a, off, depth - 1, 0);                                  \
    }                                                                                                  \
    if (b < kc) {                                                                                      \
      memcpy(spare + r, dst + r, (size_t)(n - r) * sizeof(E));                                         \
      NAME(spare + r, dst + r, scratch + r, spare + r, n - r, kth + b, kc - b, off + r, depth - 1, 0); \
    }                                                                                                  \
  }

KILN_FR(kiln_frpairs_8, kiln_pair_8, KILN_PAIR_LESS, kiln_radix_pairs_8, KILN_NO_VPASS)
KILN_FR(kiln_frpairs_16, kiln_pair_16, KILN_PAIR_LESS, kiln_radix_pairs_16, KILN_NO_VPASS)
KILN_FR(kiln_frpairs_32, kiln_pair_32, KILN_PAIR_LESS, kiln_radix_pairs_32, KILN_NO_VPASS)
KILN_FR(kiln_frpairs_64, kiln_pair_64, KILN_PAIR_LESS, kiln_radix_pairs_64, KILN_NO_VPASS)

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
/* Zeros of either sign (floats). */
#define KILN_ZERO_KILN_FLOAT_NAN(BITS, b) kiln_iszero_##BITS(b)
#define KILN_ZERO_KILN_NEVER_NAN(BITS, b) 0

/* Rows of at most KILN_FEW distinct values (in a sample) are counted (kiln_vfewcount). */
#define KILN_FEW 16
#define KILN_FEW_MIN 2048

/* ---- AVX2 quicksort of values (x86-64 with AVX2, checked at run time) -----
 *
 * For int32, int64, float32 and float64 rows without NaNs (moved to the end
 * first): a quicksort whose partitions are out of place, between the output
 * and one scratch row. A pass loads a vector, compares it with the pivot
 * (one mask bit per lane), permutes it with the mask's entry of a table so
 * that the lanes less than the pivot come first, and stores the permuted
 * vector twice: at the front cursor (its first lanes are the less ones) and
 * ending at the back cursor (its last lanes are the others); each cursor
 * moves by its count, so every element lands on its side with no branch.
 * While 2 vectors or more remain the two stores cannot overlap each other's
 * kept lanes; the last few go one by one. Parts of KILN_VQS_SHORT or less
 * go through a sorting network (kiln_vnet_*) that writes them where they
 * belong. Pivot: median of 3, of 9 (512 or more), or of a leaf-sized sample
 * (8192 or more). The pass also keeps the part's maximum: when the pivot is
 * the maximum, the upper side is all equal to it (done); when nothing is
 * less than the pivot (it is the minimum), a second pass splits off the
 * elements equal to it (less than its successor), so few distinct values
 * cost a pass or two each; past `depth` levels a part is radix sorted
 * (linear worst case). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <math.h>
#define KILN_HAVE_AVX2_SORT 1
static int32_t kiln_perm32[256][8], kiln_perm64[16][8];
static int kiln_avx2;
__attribute__((constructor)) static void kiln_sort_init(void) {
  for (int m = 0; m < 256; m++) {
    int j = 0;
    for (int i = 0; i < 8; i++)
      if (m >> i & 1)
        kiln_perm32[m][j++] = i;
    for (int i = 0; i < 8; i++)
      if (!(m >> i & 1))
        kiln_perm32[m][j++] = i;
  }
  for (int m = 0; m < 16; m++) {
    int j = 0;
    for (int i = 0; i < 4; i++)
      if (m >> i & 1)
        kiln_perm64[m][j++] = 2 * i, kiln_perm64[m][j++] = 2 * i + 1;
    for (int i = 0; i < 4; i++)
      if (!(m >> i & 1))
        kiln_perm64[m][j++] = 2 * i, kiln_perm64[m][j++] = 2 * i + 1;
  }
  __builtin_cpu_init();
  /* KILN_SORT_PORTABLE=1 in the environment: the portable code (to test it on an AVX2 machine). */
  const char *portable = getenv("KILN_SORT_PORTABLE");
  kiln_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") && !(portable && *portable == '1');
}

/* Parts up to this long go to the sorting network (4 vectors). */
#define KILN_VQS_SHORT_f32 64
#define KILN_BUCKETS 2048
#define KILN_BUCKET_MIN 65536
/* The bits of a 4- or 8-byte value in every lane. */
#define KILN_SPLATBITS(v)                                                                              \
  ({                                                                                                   \
    __typeof__(v) v_ = (v);                                                                            \
    uint32_t b32_ = 0;                                                                                 \
    uint64_t b64_ = 0;                                                                                 \
    if (sizeof v_ == 4)                                                                                \
      memcpy(&b32_, &v_, 4);                                                                           \
    else                                                                                               \
      memcpy(&b64_, &v_, 8);                                                                           \
    sizeof v_ == 4 ? _mm256_set1_epi32((int)b32_) : _mm256_set1_epi64x((long long)b64_);               \
  })
#define KILN_RUNSIN_MIN 256 /* rows from this long: runs merged straight from the row (kiln_vrunsin) */
/* The median of three values (no NaNs). */
#define KILN_MED3(a, b, c)                                                                             \
  ({                                                                                                   \
    __typeof__(a) a_ = (a), b_ = (b), c_ = (c);                                                        \
    a_ < b_ ? (b_ < c_ ? b_ : (a_ < c_ ? c_ : a_)) : (a_ < c_ ? a_ : (b_ < c_ ? c_ : b_));              \
  })
#define KILN_VQS_SHORT_i32 64
#define KILN_VQS_SHORT_f64 32
#define KILN_VQS_SHORT_i64 32
#define KILN_AVX2 __attribute__((target("avx2,popcnt")))

/* A float value's zero sign noted (poszero: +0.0 seen, negzero: -0.0); nothing for integers. */
#define KILN_ZSIGN(v, poszero, negzero)                                                                \
  do {                                                                                                 \
    __typeof__(v) z_ = (v);                                                                            \
    if ((__typeof__(z_))0.5 != 0 && z_ == 0) {                                                         \
      unsigned char top_ = 0; /* the sign bit (x86: the last byte's top) */                            \
      memcpy(&top_, (const unsigned char *)&z_ + sizeof z_ - 1, 1);                                    \
      poszero |= !(top_ >> 7), negzero |= top_ >> 7;                                                   \
    }                                                                                                  \
  } while (0)

/* VT: the vector type; LANES; LOADV/STOREV; SPLAT; LTMASK(v, p): bit i set
 * when lane i of v is less than p; PERM(v, m): v permuted by table entry m;
 * SUCC(x): the least value greater than x (x is not the greatest). */
#define KILN_VQS(NAME, T, VT, LANES, LOADV, STOREV, SPLAT, LTMASK, PERM, MAXV, SUCC)                  \
  KILN_AVX2 static int64_t kiln_vpart_##NAME(const T *src, T *dst, int64_t n, T pivot, T *maxp) {     \
    VT p = SPLAT(pivot), mx = p;                                                                       \
    int64_t l = 0, r = n, i = 0;                                                                       \
    for (; n - i >= 4 * LANES; i += 2 * LANES) {                                                       \
      VT v0 = LOADV(src + i), v1 = LOADV(src + i + LANES);                                             \
      int m0 = LTMASK(v0, p), m1 = LTMASK(v1, p);                                                      \
      mx = KILN_MAXV_##NAME(mx, KILN_MAXV_##NAME(v0, v1));                                             \
      VT w0 = PERM(v0, m0), w1 = PERM(v1, m1);                                                         \
      int c0 = __builtin_popcount((unsigned)m0), c1 = __builtin_popcount((unsigned)m1);                \
      STOREV(dst + l, w0);                                                                             \
      STOREV(dst + r - LANES, w0);                                                                     \
      l += c0;                                                                                         \
      r -= LANES - c0;                                                                                 \
      STOREV(dst + l, w1);                                                                             \
      STOREV(dst + r - LANES, w1);                                                                     \
      l += c1;                                                                                         \
      r -= LANES - c1;                                                                                 \
    }                                                                                                  \
    for (; n - i >= 2 * LANES; i += LANES) {                                                           \
      VT v = LOADV(src + i);                                                                           \
      int m = LTMASK(v, p);                                                                            \
      VT w = PERM(v, m);                                                                               \
      mx = KILN_MAXV_##NAME(mx, v);                                                                    \
      STOREV(dst + l, w);                                                                              \
      STOREV(dst + r - LANES, w);                                                                      \
      int c = __builtin_popcount((unsigned)m);                                                         \
      l += c;                                                                                          \
      r -= LANES - c;                                                                                  \
    }                                                                                                  \
    T xs[LANES] __attribute__((aligned(32))), vmax = pivot;                                            \
    STOREV(xs, mx);                                                                                    \
    for (int q = 0; q < LANES; q++)                                                                    \
      vmax = xs[q] > vmax ? xs[q] : vmax;                                                              \
    for (; i < n; i++) {                                                                               \
      T v = src[i];                                                                                    \
      int lt = v < pivot;                                                                              \
      vmax = v > vmax ? v : vmax;                                                                      \
      dst[l] = v;                                                                                      \
      dst[r - 1] = v;                                                                                  \
      l += lt;                                                                                         \
      r -= !lt;                                                                                        \
    }                                                                                                  \
    *maxp = vmax;                                                                                      \
    return l;                                                                                          \
  }                                                                                                    \
  /* The part cur[0:n] sorted into the output: cur if in_out, else other. */                           \
  KILN_AVX2 static void kiln_vqs_##NAME(T *cur, T *other, int64_t n, int in_out, int depth) {          \
    for (;;) {                                                                                         \
      if (n <= KILN_VQS_SHORT_##NAME || depth-- <= 0) {                                                       \
        if (n <= KILN_VQS_SHORT_##NAME) {                                                              \
          kiln_vnet_##NAME(cur, in_out ? cur : other, n);                                              \
          return;                                                                                      \
        }                                                                                              \
        kiln_sortvalues_##NAME(cur, other, n);                                                         \
        if (!in_out)                                                                                   \
          memcpy(other, cur, (size_t)n * sizeof(T));                                                   \
        return;                                                                                        \
      }                                                                                                \
      T pivot;                                                                                         \
      if (n < 512) {                                                                                   \
        pivot = KILN_MED3(cur[0], cur[n / 2], cur[n - 1]);                                             \
      } else if (n >= 8192) { /* the median of a sample as large as a leaf, sorted by its network */   \
        T smp[KILN_VQS_SHORT_##NAME];                                                                  \
        int64_t step = n / KILN_VQS_SHORT_##NAME;                                                      \
        for (int k = 0; k < KILN_VQS_SHORT_##NAME; k++)                                                \
          smp[k] = cur[k * step + step / 2];                                                           \
        kiln_vnet_##NAME(smp, smp, KILN_VQS_SHORT_##NAME);                                                \
        pivot = smp[KILN_VQS_SHORT_##NAME / 2];                                                        \
      } else {                                                                                         \
        int64_t e = n / 8;                                                                             \
        T m1 = KILN_MED3(cur[0], cur[e], cur[2 * e]), m2 = KILN_MED3(cur[3 * e], cur[4 * e], cur[5 * e]); \
        T m3 = KILN_MED3(cur[6 * e], cur[7 * e], cur[n - 1]);                                          \
        pivot = KILN_MED3(m1, m2, m3);                                                                 \
      }                                                                                                \
      T vmax;                                                                                          \
      int64_t l = kiln_vpart_##NAME(cur, other, n, pivot, &vmax);                                      \
      if (!(pivot < vmax)) { /* the pivot is the maximum: other[l:n] all equal it, done */             \
        if (in_out)                                                                                    \
          memcpy(cur + l, other + l, (size_t)(n - l) * sizeof(T));                                     \
        if (l == 0)                                                                                    \
          return;                                                                                      \
        T *t = other;                                                                                  \
        other = cur;                                                                                   \
        cur = t;                                                                                       \
        n = l;                                                                                         \
        in_out = !in_out;                                                                              \
        continue;                                                                                      \
      }                                                                                                \
      if (l == 0) { /* pivot is the minimum: split off its equals */                                   \
        int64_t e = kiln_vpart_##NAME(other, cur, n, SUCC(pivot), &vmax);                              \
        if (!in_out)                                                                                   \
          memcpy(other, cur, (size_t)e * sizeof(T));                                                   \
        cur += e, other += e, n -= e;                                                                  \
        continue;                                                                                      \
      }                                                                                                \
      kiln_vqs_##NAME(other, cur, l, !in_out, depth);                                                  \
      T *t = other + l;                                                                                \
      other = cur + l;                                                                                 \
      cur = t;                                                                                         \
      n -= l;                                                                                          \
      in_out = !in_out;                                                                                \
    }                                                                                                  \
  }                                                                                                    \
  /* Long rows: one scatter into KILN_BUCKETS buckets by value (linear in [vmin, vmax], so monotone),   \
   * then each bucket quicksorted from the scratch into its place, in cache: in x, or in tmp when       \
   * into_tmp. 0: not done (short row, an infinite range). Allocates nothing (it runs on the pool). */  \
  static int kiln_vbuckets_##NAME(T *x, T *tmp, int64_t m, T vmin, T vmax, int into_tmp) {             \
    if (m < KILN_BUCKET_MIN)                                                                           \
      return 0;                                                                                        \
    int is_float = (T)0.5 != 0;                                                                        \
    double scale = 0;                                                                                  \
    int shift = 0;                                                                                     \
    if (is_float) {                                                                                    \
      double range = (double)vmax - (double)vmin;                                                      \
      if (!(range > 0) || range > 1e300)                                                               \
        return 0;                                                                                      \
      scale = KILN_BUCKETS / range;                                                                    \
    } else {                                                                                           \
      uint64_t range = (uint64_t)(int64_t)vmax - (uint64_t)(int64_t)vmin;                              \
      while ((range >> shift) >= KILN_BUCKETS)                                                         \
        shift++;                                                                                       \
    }                                                                                                  \
    int64_t start[KILN_BUCKETS + 1];                                                                   \
    memset(start, 0, sizeof start);                                                                    \
    if (!is_float && shift == 0) { /* fewer distinct values than buckets: count them */                \
      for (int64_t i = 0; i < m; i++)                                                                  \
        start[(uint64_t)(int64_t)x[i] - (uint64_t)(int64_t)vmin]++;                                    \
      T *res = into_tmp ? tmp : x;                                                                     \
      for (int64_t b = 0, i = 0; b < KILN_BUCKETS; b++)                                                \
        for (int64_t c = start[b]; c > 0; c--)                                                         \
          res[i++] = (T)((int64_t)vmin + b);                                                           \
      return 1;                                                                                        \
    }                                                                                                  \
    T smp[64];                                                                                         \
    int distinct = 0;                                                                                  \
    for (int i = 0; i < 64; i++) { /* a sample's distinct values (few: the quicksort takes them a pass each) */ \
      T v = x[(m / 64) * i];                                                                           \
      int j = 0;                                                                                       \
      while (j < distinct && smp[j] != v)                                                              \
        j++;                                                                                           \
      if (j == distinct)                                                                               \
        smp[distinct++] = v;                                                                           \
    }                                                                                                  \
    if (sizeof(T) < 8 || distinct <= 32) /* 32-bit: partitions cost less than the scatter */           \
      return 0;                                                                                        \
    _Pragma("GCC unroll 1") for (int pass = 0; pass < 2; pass++) {                                     \
      for (int64_t i = 0; i < m; i++) {                                                                \
        T v = x[i];                                                                                    \
        int64_t b;                                                                                     \
        if (is_float) {                                                                                \
          b = (int64_t)(((double)v - (double)vmin) * scale);                                           \
          b = b < KILN_BUCKETS - 1 ? b : KILN_BUCKETS - 1;                                             \
        } else {                                                                                       \
          b = (int64_t)(((uint64_t)(int64_t)v - (uint64_t)(int64_t)vmin) >> shift);                    \
        }                                                                                              \
        if (pass == 0)                                                                                 \
          start[b + 1]++;                                                                              \
        else                                                                                           \
          tmp[start[b]++] = v;                                                                         \
      }                                                                                                \
      if (pass == 0)                                                                                   \
        for (int b = 0; b < KILN_BUCKETS; b++)                                                         \
          start[b + 1] += start[b];                                                                    \
    }                                                                                                  \
    /* start[b] is now where bucket b ends */                                                          \
    int64_t lo = 0;                                                                                    \
    for (int b = 0; b < KILN_BUCKETS; b++) {                                                           \
      int64_t hi = start[b];                                                                           \
      if (hi > lo)                                                                                     \
        kiln_vqs_##NAME(tmp + lo, x + lo, hi - lo, into_tmp, kiln_depth_limit(hi - lo));                \
      lo = hi;                                                                                         \
    }                                                                                                  \
    return 1;                                                                                          \
  }                                                                                                    \
  /* Long rows on the pool: split into four parts by value, sorted in parallel. One partition pass  \
   * (x to tmp) around a pivot, then the two halves partitioned the same way in parallel (tmp back to  \
   * x), then the four parts sorted in parallel in place in x, each bucket-scattered or quicksorted as \
   * a row of its own (four parts on two threads: a thread that is descheduled holds up a quarter, not \
   * half). A pivot is the median of a sample of 255 of its part, or its successor when that splits   \
   * the sample closer to its middle (many equal values). 0: not done (a short row, no threads). */    \
  typedef struct {                                                                                     \
    T *x, *tmp;                                                                                        \
    int64_t cut[5];                                                                                    \
    T lo[4], hi[4];                                                                                    \
  } kiln_vparts_##NAME;                                                                                \
  static T kiln_vpivot_##NAME(const T *x, int64_t m, T lo, T hi) {                                     \
    T s[255];                                                                                          \
    int ns = m < 255 ? (int)m : 255;                                                                   \
    if (ns == 0)                                                                                       \
      return lo;                                                                                       \
    int64_t step = m / ns;                                                                             \
    for (int i = 0; i < ns; i++) {                                                                     \
      T v = x[i * step + step / 2];                                                                    \
      int j = i;                                                                                       \
      while (j > 0 && v < s[j - 1]) {                                                                  \
        s[j] = s[j - 1];                                                                               \
        j--;                                                                                           \
      }                                                                                                \
      s[j] = v;                                                                                        \
    }                                                                                                  \
    int mid = ns / 2, lt = mid, le = mid + 1;                                                          \
    T pivot = s[mid];                                                                                  \
    while (lt > 0 && s[lt - 1] == pivot)                                                               \
      lt--;                                                                                            \
    while (le < ns && s[le] == pivot)                                                                  \
      le++;                                                                                            \
    if (pivot < hi && le - mid < mid - lt) /* more equal values below the middle than above it */     \
      pivot = SUCC(pivot);                                                                             \
    return pivot;                                                                                      \
  }                                                                                                    \
  static void kiln_vquarter_##NAME(void *ctx, int64_t lo, int64_t hi) { /* halves of tmp into x */     \
    kiln_vparts_##NAME *h = ctx;                                                                       \
    for (int64_t t = lo; t < hi; t++) {                                                                \
      int64_t o = h->cut[2 * t], len = h->cut[2 * t + 2] - o;                                          \
      T pivot = kiln_vpivot_##NAME(h->tmp + o, len, h->lo[2 * t], h->hi[2 * t + 1]), part_max;         \
      h->cut[2 * t + 1] = o + kiln_vpart_##NAME(h->tmp + o, h->x + o, len, pivot, &part_max);           \
      h->hi[2 * t] = h->lo[2 * t + 1] = pivot;                                                         \
    }                                                                                                  \
  }                                                                                                    \
  static void kiln_vleaf_##NAME(void *ctx, int64_t lo, int64_t hi) { /* parts sorted in place in x */  \
    kiln_vparts_##NAME *h = ctx;                                                                       \
    for (int64_t t = lo; t < hi; t++) {                                                                \
      int64_t o = h->cut[t], len = h->cut[t + 1] - o;                                                  \
      if (len > 0 && !kiln_vbuckets_##NAME(h->x + o, h->tmp + o, len, h->lo[t], h->hi[t], 0))          \
        kiln_vqs_##NAME(h->x + o, h->tmp + o, len, 1, kiln_depth_limit(len));                          \
    }                                                                                                  \
  }                                                                                                    \
  static int kiln_vsplit_##NAME(T *x, T *tmp, int64_t m, T vmin, T vmax) {                             \
    if ((T)0.5 == 0 && (uint64_t)(int64_t)vmax - (uint64_t)(int64_t)vmin < KILN_BUCKETS)              \
      return 0; /* integers of a narrow range: counted (kiln_vbuckets), one pass */                    \
    if (!kiln_sort_parallel(m))                                                                        \
      return 0;                                                                                        \
    T pivot = kiln_vpivot_##NAME(x, m, vmin, vmax), part_max;                                          \
    kiln_vparts_##NAME h = {x, tmp, {0, 0, 0, 0, m}, {vmin, vmin, pivot, pivot}, {pivot, pivot, vmax, vmax}}; \
    h.cut[2] = kiln_vpart_##NAME(x, tmp, m, pivot, &part_max);                                         \
    kiln_parallel_for(kiln_vquarter_##NAME, &h, 0, 2, m);                                              \
    kiln_parallel_for(kiln_vleaf_##NAME, &h, 0, 4, m);                                                 \
    return 1;                                                                                          \
  }                                                                                                    \
  /* One round of pairwise merges of the runs src[b[r]:b[r+1]] (r < k; b[k] = m) into dst, as          \
   * KILN_SORT_PIECES pieces of the output, each found by two binary searches (the merge path). A run  \
   * r is read backwards when dir[r] (the first round, straight from the row; dir NULL: none is). */   \
  typedef struct {                                                                                     \
    const T *src;                                                                                      \
    T *dst;                                                                                            \
    const int64_t *b;                                                                                  \
    int k;                                                                                             \
    int64_t m;                                                                                         \
    const unsigned char *dir;                                                                          \
  } kiln_vround_##NAME##_job;                                                                          \
  static void kiln_vround_##NAME(void *ctx, int64_t lo, int64_t hi) {                                  \
    kiln_vround_##NAME##_job *j = ctx;                                                                 \
    int64_t s0 = j->m * lo / KILN_SORT_PIECES, e0 = j->m * hi / KILN_SORT_PIECES;                      \
    for (int r = 0; r < j->k; r += 2) {                                                                \
      int64_t o = j->b[r], mid = j->b[r + 1], end = r + 2 <= j->k ? j->b[r + 2] : mid;                \
      int64_t s = s0 > o ? s0 : o, e = e0 < end ? e0 : end;                                            \
      if (s >= e)                                                                                      \
        continue;                                                                                      \
      const T *a = j->src + o, *bb = j->src + mid;                                                     \
      int64_t na = mid - o, nb = end - mid;                                                            \
      int da = j->dir ? j->dir[r] : 0, db = j->dir && r + 1 < j->k ? j->dir[r + 1] : 0;                \
      if (r + 1 == j->k) { /* the odd run out: its values s - o .. e - o - 1 */                        \
        kiln_vruncopy_##NAME(da ? a + (na - (e - o)) : a + (s - o), e - s, da, j->dst + s);             \
        continue;                                                                                      \
      }                                                                                                \
      int64_t i0 = kiln_vcorank_##NAME(a, na, da, bb, nb, db, s - o);                                  \
      int64_t i1 = kiln_vcorank_##NAME(a, na, da, bb, nb, db, e - o), j0 = s - o - i0, j1 = e - o - i1; \
      kiln_vmergedir_##NAME(da ? a + (na - i1) : a + i0, i1 - i0, da, db ? bb + (nb - j1) : bb + j0, j1 - j0, \
                            db, j->dst + s);                                                           \
    }                                                                                                  \
  }                                                                                                    \
  /* Rows made of at most KILN_RUNS monotone runs (organ pipes, sorted blocks): the non-increasing  \
   * runs reversed, then merged pairwise through tmp (long rows: each round in pieces on the pool).  \
   * 0: more runs (x is then permuted, unsorted). */                                                  \
  KILN_AVX2 static int kiln_vruns_##NAME(T *x, T *tmp, int64_t m) {                                    \
    int64_t b[KILN_RUNS + 1];                                                                          \
    int k = 0;                                                                                         \
    b[0] = 0;                                                                                          \
    for (int64_t i = 0; i < m;) {                                                                      \
      if (k == KILN_RUNS)                                                                              \
        return 0;                                                                                      \
      int64_t j = i + 1;                                                                               \
      if (j < m && x[j] < x[i]) { /* a vector at a time while no lane rises */                         \
        for (; m - j >= LANES; j += LANES) {                                                           \
          __m256i up = KILN_LTV_##NAME(LOADV(x + j - 1), LOADV(x + j));                                \
          if (!_mm256_testz_si256(up, up))                                                             \
            break;                                                                                     \
        }                                                                                              \
        while (j < m && x[j] <= x[j - 1])                                                              \
          j++;                                                                                         \
        int64_t lo = i, hi = j;                                                                        \
        for (; hi - lo >= 2 * LANES; lo += LANES, hi -= LANES) {                                       \
          VT u = LOADV(x + lo), w = LOADV(x + hi - LANES);                                             \
          STOREV(x + lo, KILN_REV_##NAME(w));                                                          \
          STOREV(x + hi - LANES, KILN_REV_##NAME(u));                                                  \
        }                                                                                              \
        for (hi--; lo < hi; lo++, hi--) {                                                              \
          T t = x[lo];                                                                                 \
          x[lo] = x[hi];                                                                               \
          x[hi] = t;                                                                                   \
        }                                                                                              \
      } else {                                                                                         \
        for (; m - j >= LANES; j += LANES) {                                                           \
          __m256i down = KILN_LTV_##NAME(LOADV(x + j), LOADV(x + j - 1));                              \
          if (!_mm256_testz_si256(down, down))                                                         \
            break;                                                                                     \
        }                                                                                              \
        while (j < m && x[j] >= x[j - 1])                                                              \
          j++;                                                                                         \
      }                                                                                                \
      b[++k] = i = j;                                                                                  \
    }                                                                                                  \
    T *src = x, *dst = tmp;                                                                            \
    int par = k > 1 && kiln_sort_parallel(m);                                                          \
    if (k == 2 && !par) { /* organ pipes: the first run set apart, merged back in place */             \
      memcpy(tmp, x, (size_t)b[1] * sizeof(T));                                                        \
      kiln_vmergein_##NAME(tmp, b[1], x, m);                                                           \
      return 1;                                                                                        \
    }                                                                                                  \
    while (k > 1) {                                                                                    \
      kiln_vround_##NAME##_job job = {src, dst, b, k, m, NULL};                                        \
      if (par)                                                                                         \
        kiln_parallel_for(kiln_vround_##NAME, &job, 0, KILN_SORT_PIECES, m);                           \
      else                                                                                             \
        kiln_vround_##NAME(&job, 0, KILN_SORT_PIECES);                                                 \
      int nk = 0;                                                                                      \
      for (int r = 0; r < k; r += 2)                                                                   \
        b[nk++] = b[r];                                                                                \
      b[nk] = m;                                                                                       \
      k = nk;                                                                                          \
      T *t = src;                                                                                      \
      src = dst;                                                                                       \
      dst = t;                                                                                         \
    }                                                                                                  \
    if (src != x)                                                                                      \
      kiln_sort_copy(x, src, m, sizeof(T));                                                            \
    return 1;                                                                                          \
  }                                                                                                    \
  /* Rows of few distinct values: t[0:d] <- the distinct values of src[0:m] in order (at most KILN_FEW  \
   * in a sample of 256, compared bit for bit; no NaN), c[0:d] <- their counts (one read, a vector      \
   * compare per value); returns d, or 0: not few (more distinct values in the sample, a NaN in it, or  \
   * a value the sample missed: the counts fall short; a short row). */                               \
  KILN_AVX2 static int kiln_vfewcount_##NAME(const T *src, int64_t m, T *t, int64_t *c) {               \
    if (!kiln_avx2 || m < KILN_FEW_MIN)                                                                \
      return 0;                                                                                        \
    int d = 0;                                                                                         \
    for (int64_t q = 0; q < 256; q++) {                                                                \
      T v = src[(m / 256) * q + m / 512];                                                              \
      int j = 0;                                                                                       \
      while (j < d && memcmp(&t[j], &v, sizeof v) != 0)                                                \
        j++;                                                                                           \
      if (j == d) {                                                                                    \
        if (d == KILN_FEW || v != v)                                                                   \
          return 0;                                                                                    \
        t[d++] = v;                                                                                    \
      }                                                                                                \
    }                                                                                                  \
    for (int a = 1; a < d; a++) { /* the values in order (-0.0 and +0.0 in either) */                  \
      T v = t[a];                                                                                      \
      int b = a;                                                                                       \
      for (; b > 0 && v < t[b - 1]; b--)                                                               \
        t[b] = t[b - 1];                                                                               \
      t[b] = v;                                                                                        \
    }                                                                                                  \
    /* counts per lane (at most m / LANES), in registers: groups of 8 values over blocks of the row   \
     * that stay in L1 (the entries past d repeat t[0]; their counts are not read) */                  \
    __m256i tv[KILN_FEW], cnt[KILN_FEW];                                                               \
    for (int j = 0; j < KILN_FEW; j++) {                                                               \
      tv[j] = KILN_SPLATBITS(t[j < d ? j : 0]);                                                        \
      cnt[j] = _mm256_setzero_si256();                                                                 \
    }                                                                                                  \
    int64_t full = m - m % LANES, total = 0;                                                           \
    for (int64_t base = 0; base < full; base += 2048) {                                                \
      int64_t end = full - base > 2048 ? base + 2048 : full;                                           \
      for (int g = 0; g < d; g += 8) {                                                                 \
        __m256i c_[8], t_[8];                                                                          \
        _Pragma("GCC unroll 8") for (int q = 0; q < 8; q++) c_[q] = cnt[g + q], t_[q] = tv[g + q];     \
        for (int64_t i = base; i < end; i += LANES) {                                                  \
          __m256i v = _mm256_loadu_si256((const __m256i *)(src + i));                                  \
          _Pragma("GCC unroll 8") for (int q = 0; q < 8; q++)                                          \
            c_[q] = sizeof(T) == 4 ? _mm256_sub_epi32(c_[q], _mm256_cmpeq_epi32(v, t_[q]))             \
                                   : _mm256_sub_epi64(c_[q], _mm256_cmpeq_epi64(v, t_[q]));            \
        }                                                                                              \
        _Pragma("GCC unroll 8") for (int q = 0; q < 8; q++) cnt[g + q] = c_[q];                        \
      }                                                                                                \
    }                                                                                                  \
    for (int j = 0; j < d; j++) {                                                                      \
      c[j] = 0;                                                                                        \
      if (sizeof(T) == 4) {                                                                            \
        uint32_t l[8];                                                                                 \
        _mm256_storeu_si256((__m256i *)l, cnt[j]);                                                     \
        for (int q = 0; q < 8; q++)                                                                    \
          c[j] += l[q];                                                                                \
      } else {                                                                                         \
        int64_t l[4];                                                                                  \
        _mm256_storeu_si256((__m256i *)l, cnt[j]);                                                     \
        c[j] = l[0] + l[1] + l[2] + l[3];                                                              \
      }                                                                                                \
    }                                                                                                  \
    for (int64_t i = full; i < m; i++)                                                                 \
      for (int j = 0; j < d; j++)                                                                      \
        c[j] += memcmp(&t[j], &src[i], sizeof(T)) == 0;                                                \
    for (int j = 0; j < d; j++)                                                                        \
      total += c[j];                                                                                   \
    return total == m ? d : 0;                                                                         \
  }                                                                                                    \
  /* Rows of few distinct values (kiln_vfewcount) sorted from src into dst (src may be dst): each      \
   * value written out as many times as it was counted. *zerosp: both +0.0 and -0.0 were counted      \
   * (their order to fix). 0: not done (not few). */                                                  \
  KILN_AVX2 static int kiln_vfew_##NAME(const T *src, T *dst, int64_t m, int *zerosp) {                \
    T t[KILN_FEW];                                                                                     \
    int64_t c[KILN_FEW];                                                                               \
    int d = kiln_vfewcount_##NAME(src, m, t, c), poszero = 0, negzero = 0;                             \
    if (d == 0)                                                                                        \
      return 0;                                                                                        \
    for (int j = 0; j < d; j++)                                                                        \
      if (c[j])                                                                                        \
        KILN_ZSIGN(t[j], poszero, negzero);                                                            \
    *zerosp = poszero && negzero;                                                                      \
    int64_t o = 0;                                                                                     \
    for (int j = 0; j < d; j++) {                                                                      \
      __m256i v = KILN_SPLATBITS(t[j]);                                                                \
      int64_t e = o + c[j];                                                                            \
      for (; e - o >= LANES; o += LANES)                                                               \
        _mm256_storeu_si256((__m256i *)(dst + o), v);                                                  \
      for (; o < e; o++)                                                                               \
        dst[o] = t[j];                                                                                 \
    }                                                                                                  \
    return 1;                                                                                          \
  }                                                                                                    \
  /* A contiguous row of at most KILN_RUNS monotone runs without NaNs (organ pipes, sorted blocks,      \
   * sorted or reversed rows) sorted into outp straight from the row: one read finds the runs (a       \
   * vector at a time), the first round of merges reads them from the row (the non-increasing ones     \
   * backwards), the rounds alternate between tmp and outp so that the last writes outp; long rows     \
   * merge in pieces on the pool. *zerosp: the row holds zeros of both signs (their order to fix).     \
   * 0: not done (more than maxruns runs, found within a few dozen values of a random row; a NaN). */ \
  KILN_AVX2 static int kiln_vrunsin_##NAME(const T *row, T *outp, T *tmp, int64_t m, int maxruns, int *zerosp) { \
    int64_t b[KILN_RUNS + 1];                                                                          \
    unsigned char dir[KILN_RUNS];                                                                      \
    int k = 0, nan = row[0] != row[0], poszero = 0, negzero = 0, stored = 0;                           \
    __m256i pzv = _mm256_setzero_si256(), nzv = pzv;                                                   \
    b[0] = 0;                                                                                          \
    KILN_ZSIGN(row[0], poszero, negzero);                                                              \
    for (int64_t i = 0; i < m;) {                                                                      \
      if (k == maxruns || nan)                                                                         \
        return 0;                                                                                      \
      int64_t j = i + 1;                                                                               \
      int desc = j < m && row[j] < row[i];                                                             \
      /* the first run is stored where it goes when it looks like the whole row (9 values of the row  \
       * in its order): sorted and reversed rows are then done */                                      \
      int store = i == 0;                                                                              \
      for (int q = 1; q <= 8 && store; q++) {                                                          \
        T u = row[(m - 1) * (q - 1) / 8], w = row[(m - 1) * q / 8];                                    \
        store = desc ? w <= u : w >= u;                                                                \
      }                                                                                                \
      if (store)                                                                                       \
        outp[desc ? m - 1 : 0] = row[0];                                                               \
      for (; m - j >= LANES; j += LANES) { /* while no lane rises (desc) / descends */                 \
        VT v = LOADV(row + j), pv = LOADV(row + j - 1);                                                \
        __m256i bad = desc ? KILN_LTV_##NAME(pv, v) : KILN_LTV_##NAME(v, pv);                           \
        nan |= KILN_NANMASK_##NAME(v);                                                                 \
        pzv = _mm256_or_si256(pzv, KILN_POSZV_##NAME(v));                                              \
        nzv = _mm256_or_si256(nzv, KILN_NEGZV_##NAME(v));                                              \
        if (!_mm256_testz_si256(bad, bad))                                                             \
          break;                                                                                       \
        if (store && desc)                                                                             \
          STOREV(outp + m - j - LANES, KILN_REV_##NAME(v));                                               \
        else if (store)                                                                                \
          STOREV(outp + j, v);                                                                         \
      }                                                                                                \
      for (; j < m; j++) { /* every value is seen here or in a vector above */                         \
        T v = row[j];                                                                                  \
        nan |= v != v;                                                                                 \
        KILN_ZSIGN(v, poszero, negzero);                                                               \
        if (desc ? !(v <= row[j - 1]) : !(v >= row[j - 1]))                                            \
          break;                                                                                       \
        if (store)                                                                                     \
          outp[desc ? m - 1 - j : j] = v;                                                              \
      }                                                                                                \
      dir[k] = (unsigned char)desc;                                                                    \
      stored |= store;                                                                                 \
      b[++k] = i = j;                                                                                  \
    }                                                                                                  \
    if (nan)                                                                                           \
      return 0;                                                                                        \
    poszero |= !_mm256_testz_si256(pzv, pzv);                                                          \
    negzero |= !_mm256_testz_si256(nzv, nzv);                                                          \
    *zerosp = poszero && negzero;                                                                      \
    if (k == 1) { /* in order, or non-increasing: stored by the scan, or copied now */                 \
      if (!stored)                                                                                     \
        kiln_vruncopy_##NAME(row, m, dir[0], outp);                                                    \
      return 1;                                                                                        \
    }                                                                                                  \
    int rounds = 0;                                                                                    \
    while ((1 << rounds) < k)                                                                          \
      rounds++;                                                                                        \
    int par = kiln_sort_parallel(m);                                                                   \
    const T *src = row;                                                                                \
    T *dst = rounds % 2 ? outp : tmp;                                                                  \
    for (int first = 1; k > 1; first = 0) {                                                            \
      kiln_vround_##NAME##_job job = {src, dst, b, k, m, first ? dir : NULL};                          \
      if (par)                                                                                         \
        kiln_parallel_for(kiln_vround_##NAME, &job, 0, KILN_SORT_PIECES, m);                           \
      else                                                                                             \
        kiln_vround_##NAME(&job, 0, KILN_SORT_PIECES);                                                 \
      int nk = 0;                                                                                      \
      for (int r = 0; r < k; r += 2)                                                                   \
        b[nk++] = b[r];                                                                                \
      b[nk] = m;                                                                                       \
      k = nk;                                                                                          \
      src = dst;                                                                                       \
      dst = dst == outp ? tmp : outp;                                                                  \
    }                                                                                                  \
    return 1;                                                                                          \
  }                                                                                                    \
  /* The row's values sorted into outp (NaNs last, as they are), tmp: n values of scratch. */           \
  /* The first pass: the row's non-NaNs copied to outp (the NaNs, as they are, to tmp), their minimum,  \
   * maximum, and whether any neighbours descend / ascend. Contiguous rows go a vector at a time        \
   * (compared with the vector one element back); a vector with a NaN, or after one, goes one by one. */ \
  KILN_AVX2 static int64_t kiln_vscan_##NAME(const T *row, int64_t stride, T *outp, T *tmp, int64_t n, \
                                             int64_t *nansp, T *lo, T *hi, int *desc, int *asc, int *zerosp) { \
    int64_t m = 0, nans = 0, i = 0;                                                                    \
    int descents = 0, ascents = 0, vec = 0;                                                            \
    T vmin = 0, vmax = 0;                                                                              \
    VT mn = SPLAT(0), mx = mn;                                                                         \
    __m256i dv = _mm256_setzero_si256(), av = dv, pzv = dv, nzv = dv;                                  \
    int poszero = 0, negzero = 0;                                                                      \
    while (i < n) {                                                                                    \
      if (stride == 1)                                                                                 \
        for (; m > 0 && n - i >= LANES; i += LANES) {                                                  \
          VT v = LOADV(row + i);                                                                       \
          if (KILN_NANMASK_##NAME(v) || row[i - 1] != row[i - 1])                                      \
            break;                                                                                     \
          VT pv = LOADV(row + i - 1);                                                                  \
          dv = _mm256_or_si256(dv, KILN_LTV_##NAME(v, pv));                                            \
          av = _mm256_or_si256(av, KILN_LTV_##NAME(pv, v));                                            \
          pzv = _mm256_or_si256(pzv, KILN_POSZV_##NAME(v));                                            \
          nzv = _mm256_or_si256(nzv, KILN_NEGZV_##NAME(v));                                            \
          mn = vec ? KILN_MINV_##NAME(mn, v) : v;                                                      \
          mx = vec ? KILN_MAXV_##NAME(mx, v) : v;                                                      \
          STOREV(outp + m, v);                                                                         \
          m += LANES;                                                                                  \
          vec = 1;                                                                                     \
        }                                                                                              \
      if (i >= n)                                                                                      \
        break;                                                                                         \
      /* one element, or a vector's worth when a NaN stopped the vector loop */                        \
      for (int64_t e = i + (stride == 1 && m > 0 ? LANES : 1); i < n && i < e; i++) {                  \
        T v = row[i * stride];                                                                         \
        if (v != v) {                                                                                  \
          tmp[nans++] = v;                                                                             \
        } else {                                                                                       \
          outp[m] = v;                                                                                 \
          vmin = m == 0 || v < vmin ? v : vmin;                                                        \
          vmax = m == 0 || v > vmax ? v : vmax;                                                        \
          /* the previous non-NaN is outp[m - 1], whichever loop stored it */                          \
          descents |= m > 0 && v < outp[m - 1];                                                        \
          ascents |= m > 0 && v > outp[m - 1];                                                         \
          unsigned char top_ = 0; /* the sign bit (x86: the last byte's top) */                        \
          memcpy(&top_, (const unsigned char *)&v + sizeof v - 1, 1);                                  \
          poszero |= v == 0 && !(top_ >> 7);                                                           \
          negzero |= v == 0 && (top_ >> 7);                                                            \
          m++;                                                                                         \
        }                                                                                              \
      }                                                                                                \
    }                                                                                                  \
    if (vec) {                                                                                         \
      T a[LANES] __attribute__((aligned(32))), b[LANES] __attribute__((aligned(32)));                   \
      STOREV(a, mn);                                                                                   \
      STOREV(b, mx);                                                                                   \
      for (int q = 0; q < LANES; q++) {                                                                \
        vmin = a[q] < vmin ? a[q] : vmin;                                                              \
        vmax = b[q] > vmax ? b[q] : vmax;                                                              \
      }                                                                                                \
      descents |= !_mm256_testz_si256(dv, dv);                                                         \
      ascents |= !_mm256_testz_si256(av, av);                                                          \
      poszero |= !_mm256_testz_si256(pzv, pzv);                                                        \
      negzero |= !_mm256_testz_si256(nzv, nzv);                                                        \
    }                                                                                                  \
    *nansp = nans, *lo = vmin, *hi = vmax, *desc = descents, *asc = ascents;                           \
    *zerosp = poszero && negzero && (T)0.5 != 0; /* both signs: their order matters */                \
    return m;                                                                                          \
  }                                                                                                    \
  /* A contiguous row in order or non-increasing (no NaN), sorted into outp: one read, the values     \
   * stored as they are read (a partition's answer too). 0: not done (not one run). */                \
  static int kiln_vmonorow_##NAME(const T *row, int64_t stride, T *outp, int64_t n) {                  \
    int zeros, up = 1, down = 1;                                                                       \
    if (!kiln_avx2 || stride != 1 || n < KILN_RUNSIN_MIN)                                              \
      return 0;                                                                                        \
    for (int q = 1; q <= 8; q++) { /* 9 values of the row first: in order, or not (organ pipes) */     \
      T u = row[(n - 1) * (q - 1) / 8], w = row[(n - 1) * q / 8];                                      \
      up &= w >= u, down &= w <= u;                                                                    \
    }                                                                                                  \
    if (!(up | down) || !kiln_vrunsin_##NAME(row, outp, NULL, n, 1, &zeros))                           \
      return 0;                                                                                        \
    if (zeros)                                                                                         \
      kiln_fixzeros_##NAME(row, stride, outp, n);                                                      \
    return 1;                                                                                          \
  }                                                                                                    \
  /* The row's values sorted into outp (NaNs last, as they are), tmp: n values of scratch. */           \
  static int kiln_vsortrow_##NAME(const T *row, int64_t stride, T *outp, T *tmp, int64_t n) {          \
    if (!kiln_avx2)                                                                                    \
      return 0;                                                                                        \
    int zeros, few0;                                                                                   \
    if (stride == 1 && n >= KILN_RUNSIN_MIN &&                                                         \
        (kiln_vrunsin_##NAME(row, outp, tmp, n, KILN_RUNS, &zeros) || kiln_vfew_##NAME(row, outp, n, &zeros))) { \
      if (zeros)                                                                                       \
        kiln_fixzeros_##NAME(row, stride, outp, n);                                                    \
      return 1;                                                                                        \
    }                                                                                                  \
    int64_t nans;                                                                                      \
    int descents, ascents;                                                                             \
    T vmin, vmax;                                                                                      \
    int64_t m = kiln_vscan_##NAME(row, stride, outp, tmp, n, &nans, &vmin, &vmax, &descents, &ascents, \
                                  &zeros);                                                             \
    memcpy(outp + m, tmp, (size_t)nans * sizeof(T));                                                   \
    if (descents > 0 && ascents == 0) {                                                                \
      for (int64_t i = 0, j = m - 1; i < j; i++, j--) {                                                \
        T t = outp[i];                                                                                 \
        outp[i] = outp[j];                                                                             \
        outp[j] = t;                                                                                   \
      }                                                                                                \
    } else if (descents > 0 && !kiln_vruns_##NAME(outp, tmp, m) && !kiln_vfew_##NAME(outp, outp, m, &few0) && \
               !kiln_vsplit_##NAME(outp, tmp, m, vmin, vmax) &&                                        \
               !kiln_vbuckets_##NAME(outp, tmp, m, vmin, vmax, 0)) {                                   \
      kiln_vqs_##NAME(outp, tmp, m, 1, kiln_depth_limit(m));                                           \
    }                                                                                                  \
    if (zeros)                                                                                         \
      kiln_fixzeros_##NAME(row, stride, outp, m);                                                      \
    return 1;                                                                                          \
  }

/* The first pass's vector operations: NaN lanes (a mask), a < b (all ones), lane minimum / maximum. */
#define KILN_NANMASK_f32(v) _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))
#define KILN_NANMASK_f64(v) _mm256_movemask_pd(_mm256_cmp_pd(v, v, _CMP_UNORD_Q))
#define KILN_NANMASK_i32(v) 0
#define KILN_NANMASK_i64(v) 0
/* Lanes holding +0.0 (POSZ) or -0.0 (NEGZ), by their bits. */
#define KILN_POSZV_f32(v) _mm256_cmpeq_epi32(_mm256_castps_si256(v), _mm256_setzero_si256())
#define KILN_NEGZV_f32(v) _mm256_cmpeq_epi32(_mm256_castps_si256(v), _mm256_set1_epi32(INT32_MIN))
#define KILN_POSZV_f64(v) _mm256_cmpeq_epi64(_mm256_castpd_si256(v), _mm256_setzero_si256())
#define KILN_NEGZV_f64(v) _mm256_cmpeq_epi64(_mm256_castpd_si256(v), _mm256_set1_epi64x(INT64_MIN))
#define KILN_POSZV_i32(v) _mm256_setzero_si256()
#define KILN_NEGZV_i32(v) _mm256_setzero_si256()
#define KILN_POSZV_i64(v) _mm256_setzero_si256()
#define KILN_NEGZV_i64(v) _mm256_setzero_si256()
/* The lanes of a vector reversed. */
#define KILN_REV_f32(v) _mm256_permutevar8x32_ps(v, KILN_IDX(kiln_rev32))
#define KILN_REV_i32(v) _mm256_permutevar8x32_epi32(v, KILN_IDX(kiln_rev32))
#define KILN_REV_f64(v) _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(v), KILN_IDX(kiln_rev64)))
#define KILN_REV_i64(v) _mm256_permutevar8x32_epi32(v, KILN_IDX(kiln_rev64))
#define KILN_LTV_f32(a, b) _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_LT_OQ))
#define KILN_LTV_f64(a, b) _mm256_castpd_si256(_mm256_cmp_pd(a, b, _CMP_LT_OQ))
#define KILN_LTV_i32(a, b) _mm256_cmpgt_epi32(b, a)
#define KILN_LTV_i64(a, b) _mm256_cmpgt_epi64(b, a)
#define KILN_MINV_f32(a, b) _mm256_min_ps(a, b)
#define KILN_MAXV_f32(a, b) _mm256_max_ps(a, b)
#define KILN_MINV_f64(a, b) _mm256_min_pd(a, b)
#define KILN_MAXV_f64(a, b) _mm256_max_pd(a, b)
#define KILN_MINV_i32(a, b) _mm256_min_epi32(a, b)
#define KILN_MAXV_i32(a, b) _mm256_max_epi32(a, b)
/* (blendv_pd on 64-bit lanes: GCC turns blendv_epi8 into a byte compare more, on the critical path) */
#define KILN_BLENDV_I64(a, b, m)                                                                       \
  _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(a), _mm256_castsi256_pd(b), _mm256_castsi256_pd(m)))
#define KILN_MINV_i64(a, b) KILN_BLENDV_I64(a, b, _mm256_cmpgt_epi64(a, b))
#define KILN_MAXV_i64(a, b) KILN_BLENDV_I64(a, b, _mm256_cmpgt_epi64(b, a))
#define KILN_LOAD_PS(p) _mm256_loadu_ps(p)
#define KILN_STORE_PS(p, v) _mm256_storeu_ps(p, v)
#define KILN_LT_PS(v, p) _mm256_movemask_ps(_mm256_cmp_ps(v, p, _CMP_LT_OQ))
#define KILN_PERM_PS(v, m) _mm256_permutevar8x32_ps(v, _mm256_loadu_si256((const __m256i *)kiln_perm32[m]))
#define KILN_LOAD_PD(p) _mm256_loadu_pd(p)
#define KILN_STORE_PD(p, v) _mm256_storeu_pd(p, v)
#define KILN_LT_PD(v, p) _mm256_movemask_pd(_mm256_cmp_pd(v, p, _CMP_LT_OQ))
#define KILN_PERM_PD(v, m)                                                                             \
  _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(v),                             \
                                                  _mm256_loadu_si256((const __m256i *)kiln_perm64[m])))
#define KILN_LOAD_SI(p) _mm256_loadu_si256((const __m256i *)(p))
#define KILN_STORE_SI(p, v) _mm256_storeu_si256((__m256i *)(p), v)
#define KILN_LT_EPI32(v, p) _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(p, v)))
#define KILN_LT_EPI64(v, p) _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(p, v)))
#define KILN_PERM_EPI32(v, m) _mm256_permutevar8x32_epi32(v, _mm256_loadu_si256((const __m256i *)kiln_perm32[m]))
#define KILN_PERM_EPI64(v, m) _mm256_permutevar8x32_epi32(v, _mm256_loadu_si256((const __m256i *)kiln_perm64[m]))
#define KILN_SPLAT_EPI32(x) _mm256_set1_epi32(x)
#define KILN_SPLAT_EPI64(x) _mm256_set1_epi64x(x)
#define KILN_SUCC_INT(x) ((x) + 1)
#define KILN_SUCC_F32(x) nextafterf(x, INFINITY)
#define KILN_SUCC_F64(x) nextafter(x, INFINITY)

/* Leaves of the AVX2 quicksort: a bitonic sorting network on R vectors
 * (R * LANES values, the part padded with the dtype's greatest value). Each
 * vector is sorted in its lanes (a compare-exchange with the lanes at
 * distance j is a permute, a min, a max and a blend; 8 vectors sort their
 * columns instead, see KILN_COLS8), then runs of vectors are merged: the
 * second run reversed, a compare-exchange of the two, then of vectors at
 * halving distances, then of lanes. No NaN reaches a network. */
static const int32_t kiln_rev32[8] = {7, 6, 5, 4, 3, 2, 1, 0}, kiln_rev64[8] = {6, 7, 4, 5, 2, 3, 0, 1};
#define KILN_IDX(t) _mm256_loadu_si256((const __m256i *)(t))
/* Network steps: a compare-exchange of the lanes at distance 2^lj, the lesser to the lanes whose bit
 * lj equals their bit lk (ascending blocks of 2^lk), with immediate permutes and blends (lj, lk are
 * constants once the network is unrolled). Float min/max are vminp/vmaxp: no NaNs reach a network;
 * of two equal zeros either may come out twice, as in NumPy's own AVX2 sort (the values compare
 * equal: NumPy's unstable order). */
#define KILN_MINMAX_PS(a, b, mn, mx)                                                                   \
  do {                                                                                                 \
    __m256 a__ = (a), b__ = (b);                                                                       \
    mn = _mm256_min_ps(a__, b__);                                                                      \
    mx = _mm256_max_ps(a__, b__);                                                                      \
  } while (0)
#define KILN_MINMAX_PD(a, b, mn, mx)                                                                   \
  do {                                                                                                 \
    __m256d a__ = (a), b__ = (b);                                                                      \
    mn = _mm256_min_pd(a__, b__);                                                                      \
    mx = _mm256_max_pd(a__, b__);                                                                      \
  } while (0)
#define KILN_MINMAX_EPI32(a, b, mn, mx)                                                                \
  do {                                                                                                 \
    __m256i a__ = (a), b__ = (b);                                                                      \
    mn = _mm256_min_epi32(a__, b__);                                                                   \
    mx = _mm256_max_epi32(a__, b__);                                                                   \
  } while (0)
#define KILN_MINMAX_EPI64(a, b, mn, mx)                                                                \
  do {                                                                                                 \
    __m256i a__ = (a), b__ = (b), gt__ = _mm256_cmpgt_epi64(a__, b__);                                 \
    mn = KILN_BLENDV_I64(a__, b__, gt__);                                                              \
    mx = KILN_BLENDV_I64(b__, a__, gt__);                                                              \
  } while (0)
/* The blend immediates: lane i takes the greater value when bit lj of i differs from bit lk (8 lanes:
 * 0x66 for (0, 1), 0x3C (1, 2), 0x5A (0, 2), then the bit lj alone; 4 lanes: 0x6, then 0xC / 0xA). */
#define KILN_STEP8(x, lj, lk, PERM0, PERM1, PERM2, MINMAX, BLEND)                                      \
  switch ((lk) * 4 + (lj)) {                                                                           \
  case 4: { __typeof__(x) y = PERM0(x), mn, mx; MINMAX(x, y, mn, mx); return BLEND(mn, mx, 0x66); }     \
  case 9: { __typeof__(x) y = PERM1(x), mn, mx; MINMAX(x, y, mn, mx); return BLEND(mn, mx, 0x3C); }     \
  case 8: { __typeof__(x) y = PERM0(x), mn, mx; MINMAX(x, y, mn, mx); return BLEND(mn, mx, 0x5A); }     \
  default:                                                                                             \
    if ((lj) == 2) { __typeof__(x) y = PERM2(x), mn, mx; MINMAX(x, y, mn, mx); return BLEND(mn, mx, 0xF0); } \
    if ((lj) == 1) { __typeof__(x) y = PERM1(x), mn, mx; MINMAX(x, y, mn, mx); return BLEND(mn, mx, 0xCC); } \
    { __typeof__(x) y = PERM0(x), mn, mx; MINMAX(x, y, mn, mx); return BLEND(mn, mx, 0xAA); }          \
  }
#define KILN_STEP4(x, lj, lk, PERM0, PERM1, MINMAX, BLEND)                                             \
  switch ((lk) * 4 + (lj)) {                                                                           \
  case 4: { __typeof__(x) y = PERM0(x), mn, mx; MINMAX(x, y, mn, mx); return BLEND(mn, mx, 0x6); }      \
  default:                                                                                             \
    if ((lj) == 1) { __typeof__(x) y = PERM1(x), mn, mx; MINMAX(x, y, mn, mx); return BLEND(mn, mx, 0xC); } \
    { __typeof__(x) y = PERM0(x), mn, mx; MINMAX(x, y, mn, mx); return BLEND(mn, mx, 0xA); }           \
  }
#define KILN_P0_PS(x) _mm256_permute_ps(x, 0xB1)
#define KILN_P1_PS(x) _mm256_permute_ps(x, 0x4E)
#define KILN_P2_PS(x) _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(x), 0x4E))
#define KILN_P0_EPI32(x) _mm256_shuffle_epi32(x, 0xB1)
#define KILN_P1_EPI32(x) _mm256_shuffle_epi32(x, 0x4E)
#define KILN_P2_EPI32(x) _mm256_permute4x64_epi64(x, 0x4E)
#define KILN_P0_PD(x) _mm256_permute_pd(x, 0x5)
#define KILN_P1_PD(x) _mm256_permute4x64_pd(x, 0x4E)
#define KILN_P0_EPI64(x) _mm256_shuffle_epi32(x, 0x4E)
#define KILN_P1_EPI64(x) _mm256_permute4x64_epi64(x, 0x4E)
#define KILN_BLENDI_PS(a, b, m) _mm256_blend_ps(a, b, m)
#define KILN_BLENDI_EPI32(a, b, m) _mm256_blend_epi32(a, b, m)
#define KILN_BLENDI_PD(a, b, m) _mm256_blend_pd(a, b, m)
/* 4 lanes of 64 bits as 8 of 32: each mask bit doubled */
#define KILN_BLENDI_EPI64(a, b, m)                                                                     \
  _mm256_blend_epi32(a, b, ((m) & 1 ? 3 : 0) | ((m) & 2 ? 0xC : 0) | ((m) & 4 ? 0x30 : 0) | ((m) & 8 ? 0xC0 : 0))
KILN_AVX2 static inline __m256 kiln_step_f32(__m256 x, int lj, int lk) {
  KILN_STEP8(x, lj, lk, KILN_P0_PS, KILN_P1_PS, KILN_P2_PS, KILN_MINMAX_PS, KILN_BLENDI_PS)
}
KILN_AVX2 static inline __m256i kiln_step_i32(__m256i x, int lj, int lk) {
  KILN_STEP8(x, lj, lk, KILN_P0_EPI32, KILN_P1_EPI32, KILN_P2_EPI32, KILN_MINMAX_EPI32, KILN_BLENDI_EPI32)
}
KILN_AVX2 static inline __m256d kiln_step_f64(__m256d x, int lj, int lk) {
  KILN_STEP4(x, lj, lk, KILN_P0_PD, KILN_P1_PD, KILN_MINMAX_PD, KILN_BLENDI_PD)
}
KILN_AVX2 static inline __m256i kiln_step_i64(__m256i x, int lj, int lk) {
  KILN_STEP4(x, lj, lk, KILN_P0_EPI64, KILN_P1_EPI64, KILN_MINMAX_EPI64, KILN_BLENDI_EPI64)
}
/* The first k lanes of p (the rest the dtype's greatest value), and stored back. */
static const int32_t kiln_iota32[8] = {0, 1, 2, 3, 4, 5, 6, 7};
#define KILN_LANEMASK32(k) _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(k)), KILN_IDX(kiln_iota32)) /* k in [-64, 64] */
#define KILN_LANEMASK64(k) _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_setr_epi64x(0, 1, 2, 3))
#define KILN_MLOAD_f32(p, k)                                                                           \
  ({ __m256i m_ = KILN_LANEMASK32(k);                                                                  \
     _mm256_blendv_ps(_mm256_set1_ps(INFINITY), _mm256_maskload_ps(p, m_), _mm256_castsi256_ps(m_)); })
#define KILN_MLOAD_i32(p, k)                                                                           \
  ({ __m256i m_ = KILN_LANEMASK32(k);                                                                  \
     _mm256_blendv_epi8(_mm256_set1_epi32(INT32_MAX), _mm256_maskload_epi32((const int *)(p), m_), m_); })
#define KILN_MLOAD_f64(p, k)                                                                           \
  ({ __m256i m_ = KILN_LANEMASK64(k);                                                                  \
     _mm256_blendv_pd(_mm256_set1_pd(INFINITY), _mm256_maskload_pd(p, m_), _mm256_castsi256_pd(m_)); })
#define KILN_MLOAD_i64(p, k)                                                                           \
  ({ __m256i m_ = KILN_LANEMASK64(k);                                                                  \
     _mm256_blendv_epi8(_mm256_set1_epi64x(INT64_MAX), _mm256_maskload_epi64((const long long *)(p), m_), m_); })
#define KILN_MSTORE_f32(p, k, v) _mm256_maskstore_ps(p, KILN_LANEMASK32(k), v)
#define KILN_MSTORE_i32(p, k, v) _mm256_maskstore_epi32((int *)(p), KILN_LANEMASK32(k), v)
#define KILN_MSTORE_f64(p, k, v) _mm256_maskstore_pd(p, KILN_LANEMASK64(k), v)
#define KILN_MSTORE_i64(p, k, v) _mm256_maskstore_epi64((long long *)(p), KILN_LANEMASK64(k), v)
/* Networks of 8 vectors start with the columns: an 8-input sorting network (19 compare-exchanges) across
 * the vectors sorts each lane's column, and a transpose makes the columns vectors (8 lanes: each vector
 * sorted; 4 lanes: each pair of vectors one sorted run), in place of the shuffle steps within vectors. */
#define KILN_CX8(MINMAX, r, a, b)                                                                      \
  do {                                                                                                 \
    __typeof__(r[0]) lo_, hi_;                                                                         \
    MINMAX(r[a], r[b], lo_, hi_);                                                                      \
    r[a] = lo_, r[b] = hi_;                                                                            \
  } while (0)
#define KILN_COLS8(MINMAX, r)                                                                          \
  do {                                                                                                 \
    KILN_CX8(MINMAX, r, 0, 2); KILN_CX8(MINMAX, r, 1, 3); KILN_CX8(MINMAX, r, 4, 6); KILN_CX8(MINMAX, r, 5, 7); \
    KILN_CX8(MINMAX, r, 0, 4); KILN_CX8(MINMAX, r, 1, 5); KILN_CX8(MINMAX, r, 2, 6); KILN_CX8(MINMAX, r, 3, 7); \
    KILN_CX8(MINMAX, r, 0, 1); KILN_CX8(MINMAX, r, 2, 3); KILN_CX8(MINMAX, r, 4, 5); KILN_CX8(MINMAX, r, 6, 7); \
    KILN_CX8(MINMAX, r, 2, 4); KILN_CX8(MINMAX, r, 3, 5); KILN_CX8(MINMAX, r, 1, 4); KILN_CX8(MINMAX, r, 3, 6); \
    KILN_CX8(MINMAX, r, 1, 2); KILN_CX8(MINMAX, r, 3, 4); KILN_CX8(MINMAX, r, 5, 6);                    \
  } while (0)
/* 8 x 8 lanes of 32 bits: vector i <- lane i of every vector. */
KILN_AVX2 static inline void kiln_transpose8(__m256 *r) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}
/* 4 x 4 lanes of 64 bits, the rows r[0], r[s], r[2s], r[3s] (in place). */
KILN_AVX2 static inline void kiln_transpose4(__m256d *r, int s) {
  __m256d t0 = _mm256_unpacklo_pd(r[0], r[s]), t1 = _mm256_unpackhi_pd(r[0], r[s]);
  __m256d t2 = _mm256_unpacklo_pd(r[2 * s], r[3 * s]), t3 = _mm256_unpackhi_pd(r[2 * s], r[3 * s]);
  r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[s] = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[2 * s] = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[3 * s] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
/* The columns of 8 vectors sorted and made runs (see above); returns log2 of the runs' vectors. */
#define KILN_COLSORT32(NAME, VT, MINMAX, TOPS, FROMPS)                                                  \
  KILN_AVX2 static inline int kiln_colsort_##NAME(VT *r) {                                             \
    KILN_COLS8(MINMAX, r);                                                                             \
    __m256 f[8] = {TOPS(r[0]), TOPS(r[1]), TOPS(r[2]), TOPS(r[3]), TOPS(r[4]), TOPS(r[5]), TOPS(r[6]), TOPS(r[7])}; \
    kiln_transpose8(f);                                                                                \
    r[0] = FROMPS(f[0]), r[1] = FROMPS(f[1]), r[2] = FROMPS(f[2]), r[3] = FROMPS(f[3]);                \
    r[4] = FROMPS(f[4]), r[5] = FROMPS(f[5]), r[6] = FROMPS(f[6]), r[7] = FROMPS(f[7]);                \
    return 0;                                                                                          \
  }
/* 64-bit lanes: rows 0-3 and 4-7 transposed; column q (block 0 row q, block 1 row q) -> r[2q], r[2q+1]. */
#define KILN_COLSORT64(NAME, VT, MINMAX, TOPD, FROMPD)                                                  \
  KILN_AVX2 static inline int kiln_colsort_##NAME(VT *r) {                                             \
    KILN_COLS8(MINMAX, r);                                                                             \
    __m256d d[8] = {TOPD(r[0]), TOPD(r[1]), TOPD(r[2]), TOPD(r[3]), TOPD(r[4]), TOPD(r[5]), TOPD(r[6]), TOPD(r[7])}; \
    kiln_transpose4(d, 1);                                                                             \
    kiln_transpose4(d + 4, 1);                                                                         \
    r[0] = FROMPD(d[0]), r[1] = FROMPD(d[4]), r[2] = FROMPD(d[1]), r[3] = FROMPD(d[5]);                \
    r[4] = FROMPD(d[2]), r[5] = FROMPD(d[6]), r[6] = FROMPD(d[3]), r[7] = FROMPD(d[7]);                \
    return 1;                                                                                          \
  }
#define KILN_SAME(x) (x)
#define KILN_COLSORT_f32(NAME, VT, MINMAX) KILN_COLSORT32(NAME, VT, MINMAX, KILN_SAME, KILN_SAME)
#define KILN_COLSORT_i32(NAME, VT, MINMAX) KILN_COLSORT32(NAME, VT, MINMAX, _mm256_castsi256_ps, _mm256_castps_si256)
#define KILN_COLSORT_f64(NAME, VT, MINMAX) KILN_COLSORT64(NAME, VT, MINMAX, KILN_SAME, KILN_SAME)
#define KILN_COLSORT_i64(NAME, VT, MINMAX) KILN_COLSORT64(NAME, VT, MINMAX, _mm256_castsi256_pd, _mm256_castpd_si256)
/* LOG: log2(LANES); REVT: the lane-reversing index of the lane width. */
#define KILN_LOG2_1 0
#define KILN_LOG2_2 1
#define KILN_LOG2_4 2
#define KILN_LOG2_8 3
#define KILN_NETR(NAME, T, VT, LANES, LOG, R, LOADV, STOREV, MINMAX, PERMI, REVT, MAXV)         \
  KILN_AVX2 static void kiln_vnet##R##_##NAME(const T *x, T *y, int64_t n) {                         \
    VT r[R], t[R];                                                                                     \
    _Pragma("GCC unroll 8") for (int q = 0; q < R; q++)                                                \
      r[q] = KILN_MLOAD_##NAME(x + q * LANES, n - q * LANES);                                          \
    int ls0 = 0;                                                                                       \
    if (R == 8)                                                                                        \
      ls0 = kiln_colsort_##NAME(r);                                                                    \
    else                                                                                               \
      _Pragma("GCC unroll 8") for (int q = 0; q < R; q++)                                              \
        _Pragma("GCC unroll 4") for (int lk = 1; lk <= LOG; lk++)                                      \
          _Pragma("GCC unroll 4") for (int lj = lk - 1; lj >= 0; lj--)                                 \
            r[q] = kiln_step_##NAME(r[q], lj, lk);                                                     \
    _Pragma("GCC unroll 4") for (int ls = ls0; ls < KILN_LOG2_##R; ls++)                               \
      _Pragma("GCC unroll 8") for (int b = 0; b < R; b += 2 << ls) {                                   \
        const int s = 1 << ls;                                                                         \
        _Pragma("GCC unroll 8") for (int q = 0; q < s; q++)                                                                    \
          t[q] = r[b + s + q];                                                                         \
        _Pragma("GCC unroll 8") for (int q = 0; q < s; q++)                                                                    \
          MINMAX(r[b + q], PERMI(t[s - 1 - q], KILN_IDX(REVT)), r[b + q], r[b + s + q]);               \
        _Pragma("GCC unroll 4") for (int ld = ls - 1; ld >= 0; ld--)                                   \
          _Pragma("GCC unroll 8") for (int q = b; q < b + 2 * s; q++)                                                          \
            if (!((q - b) & (1 << ld))) {                                                              \
              const int d = 1 << ld;                                                                   \
              VT a_ = r[q], c_ = r[q + d];                                                             \
              MINMAX(a_, c_, r[q], r[q + d]);                                                          \
            }                                                                                          \
        _Pragma("GCC unroll 8") for (int q = b; q < b + 2 * s; q++)                                                            \
          _Pragma("GCC unroll 4") for (int lj = LOG - 1; lj >= 0; lj--)                                                        \
            r[q] = kiln_step_##NAME(r[q], lj, LOG + 1);                                                \
      }                                                                                                \
    _Pragma("GCC unroll 8") for (int q = 0; q < R; q++)                                                \
      KILN_MSTORE_##NAME(y + q * LANES, n - q * LANES, r[q]);                                          \
  }
/* The network of the least number of vectors (1, 2, 4 or 8) that holds the part. */
#define KILN_NET(NAME, T, VT, LANES, LOG, LOADV, STOREV, MINMAX, PERMI, REVT, MAXV)             \
  KILN_COLSORT_##NAME(NAME, VT, MINMAX)                                                                 \
  KILN_NETR(NAME, T, VT, LANES, LOG, 1, LOADV, STOREV, MINMAX, PERMI, REVT, MAXV)         \
  KILN_NETR(NAME, T, VT, LANES, LOG, 2, LOADV, STOREV, MINMAX, PERMI, REVT, MAXV)         \
  KILN_NETR(NAME, T, VT, LANES, LOG, 4, LOADV, STOREV, MINMAX, PERMI, REVT, MAXV)         \
  KILN_NETR(NAME, T, VT, LANES, LOG, 8, LOADV, STOREV, MINMAX, PERMI, REVT, MAXV)         \
  /* a[0:na] and b[0:nb] (each sorted, na >= 1) merged into dst (apart from both), a vector at a time: \
   * the next vector comes from the run whose next value is less (a run's tail padded with the        \
   * greatest value), is merged with the kept vector of the greatest values so far (reversed, a        \
   * min/max, then half-cleaners), and the lesser half is stored. No NaNs; equal values in any order. */ \
  /* One step of the vector merge: `v` (the next vector of either run) against the held vector *hi \
   * (the greater values so far); returns the lesser half, sorted, and keeps the greater one. */       \
  KILN_AVX2 static inline VT kiln_vmerge_step_##NAME(VT *hi, VT v) {                                   \
    VT mn, mx;                                                                                         \
    MINMAX(*hi, PERMI(v, KILN_IDX(REVT)), mn, mx);                                                     \
    _Pragma("GCC unroll 4") for (int lj = LOG - 1; lj >= 0; lj--) {                                    \
      mn = kiln_step_##NAME(mn, lj, LOG + 1);                                                          \
      mx = kiln_step_##NAME(mx, lj, LOG + 1);                                                          \
    }                                                                                                  \
    *hi = mx;                                                                                          \
    return mn;                                                                                         \
  }                                                                                                    \
  /* A run of the merges: p[0:n], read backwards when d (a non-increasing run of the row itself). */  \
  static inline __attribute__((always_inline)) T kiln_vrunat_##NAME(const T *p, int64_t n, int d, int64_t i) { \
    return d ? p[n - 1 - i] : p[i];                                                                    \
  }                                                                                                    \
  /* The run's values i, i+1, ... as a vector (past its end: the greatest value). */                   \
  KILN_AVX2 static inline __attribute__((always_inline)) VT kiln_vrunload_##NAME(const T *p, int64_t n, int d, \
                                                                                 int64_t i) {          \
    if (n - i >= LANES) /* masked loads and stores only at the ends: slow */                           \
      return d ? PERMI(LOADV(p + n - i - LANES), KILN_IDX(REVT)) : LOADV(p + i);                       \
    T t[LANES];                                                                                        \
    for (int64_t q = 0; q < n - i; q++)                                                                \
      t[q] = kiln_vrunat_##NAME(p, n, d, i + q);                                                       \
    return KILN_MLOAD_##NAME(t, n - i);                                                                \
  }                                                                                                    \
  /* One merge in progress: runs a (na values, i read) and b (nb, j read) into dst (o written of      \
   * total), hi: the held vector of the greatest values so far. */                                     \
  typedef struct {                                                                                     \
    const T *a, *b;                                                                                    \
    T *dst;                                                                                            \
    int64_t na, nb, i, j, o, total;                                                                    \
    VT hi;                                                                                             \
  } kiln_vms_##NAME;                                                                                   \
  KILN_AVX2 static inline __attribute__((always_inline)) void kiln_vms_start_##NAME(                   \
      kiln_vms_##NAME *s, const T *a, int64_t na, const int da, const T *b, int64_t nb, T *dst) {      \
    s->a = a, s->b = b, s->dst = dst, s->na = na, s->nb = nb, s->i = LANES, s->j = 0, s->o = 0;        \
    s->total = na + nb;                                                                                \
    s->hi = kiln_vrunload_##NAME(a, na, da, 0);                                                        \
  }                                                                                                    \
  /* One step: the next vector of the run whose next value is less, merged with hi; the lesser half   \
   * stored. */                                                                                        \
  KILN_AVX2 static inline __attribute__((always_inline)) void kiln_vms_step_##NAME(kiln_vms_##NAME *s, \
                                                                                   const int da, const int db) { \
    VT v;                                                                                              \
    if (s->j < s->nb &&                                                                                \
        (s->i >= s->na || kiln_vrunat_##NAME(s->b, s->nb, db, s->j) < kiln_vrunat_##NAME(s->a, s->na, da, s->i))) { \
      v = kiln_vrunload_##NAME(s->b, s->nb, db, s->j);                                                 \
      s->j += LANES;                                                                                   \
    } else {                                                                                           \
      v = kiln_vrunload_##NAME(s->a, s->na, da, s->i);                                                 \
      s->i += LANES;                                                                                   \
    }                                                                                                  \
    VT mn = kiln_vmerge_step_##NAME(&s->hi, v);                                                        \
    if (s->total - s->o >= LANES)                                                                      \
      STOREV(s->dst + s->o, mn);                                                                       \
    else                                                                                               \
      KILN_MSTORE_##NAME(s->dst + s->o, s->total - s->o, mn);                                          \
    s->o += LANES;                                                                                     \
  }                                                                                                    \
  KILN_AVX2 static inline __attribute__((always_inline)) int kiln_vms_more_##NAME(const kiln_vms_##NAME *s) { \
    return s->i < s->na || s->j < s->nb;                                                               \
  }                                                                                                    \
  KILN_AVX2 static inline __attribute__((always_inline)) void kiln_vms_end_##NAME(kiln_vms_##NAME *s) { \
    KILN_MSTORE_##NAME(s->dst + s->o, s->total - s->o, s->hi);                                         \
  }                                                                                                    \
  /* How many of the first k values of the merge of runs a and b (backwards when da, db) come from a   \
   * (ties from a): the merge path's binary search. */                                                 \
  static int64_t kiln_vcorank_##NAME(const T *a, int64_t na, int da, const T *b, int64_t nb, int db, int64_t k) { \
    KILN_CORANK(na, nb, k, kiln_vrunat_##NAME(a, na, da, i_) <= kiln_vrunat_##NAME(b, nb, db, j_));    \
  }                                                                                                    \
  /* The merge of a (na >= 1 values) and b into dst. A step waits for the one before it (the held      \
   * vector), so long merges run as two halves (split by the merge path) whose steps alternate: two    \
   * chains of dependent steps in flight instead of one. */                                            \
  KILN_AVX2 static inline __attribute__((always_inline)) void kiln_vmerge_body_##NAME(                 \
      const T *a, int64_t na, const int da, const T *b, int64_t nb, const int db, T *dst) {            \
    int64_t total = na + nb, h = total / 2;                                                            \
    if (total >= 1024 * LANES) { /* long: four quarters, four chains (when none is a copy) */           \
      int64_t off[5], ix[5], ok = 1;                                                                   \
      for (int k = 0; k <= 4; k++)                                                                     \
        off[k] = total / 4 * k + (k == 4 ? total % 4 : 0);                                             \
      ix[0] = 0, ix[4] = na;                                                                           \
      for (int k = 1; k < 4; k++)                                                                      \
        ix[k] = kiln_vcorank_##NAME(a, na, da, b, nb, db, off[k]);                                     \
      for (int k = 0; k < 4; k++)                                                                      \
        ok &= ix[k + 1] > ix[k] && off[k + 1] - ix[k + 1] > off[k] - ix[k];                            \
      if (ok) {                                                                                        \
        kiln_vms_##NAME q[4];                                                                          \
        _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) {                                          \
          int64_t x0 = ix[k], x1 = ix[k + 1], y0 = off[k] - ix[k], y1 = off[k + 1] - ix[k + 1];        \
          kiln_vms_start_##NAME(&q[k], da ? a + (na - x1) : a + x0, x1 - x0, da, db ? b + (nb - y1) : b + y0, \
                                y1 - y0, dst + off[k]);                                                \
        }                                                                                              \
        while (kiln_vms_more_##NAME(&q[0]) && kiln_vms_more_##NAME(&q[1]) && kiln_vms_more_##NAME(&q[2]) && \
               kiln_vms_more_##NAME(&q[3])) {                                                          \
          kiln_vms_step_##NAME(&q[0], da, db);                                                         \
          kiln_vms_step_##NAME(&q[1], da, db);                                                         \
          kiln_vms_step_##NAME(&q[2], da, db);                                                         \
          kiln_vms_step_##NAME(&q[3], da, db);                                                         \
        }                                                                                              \
        _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) {                                          \
          while (kiln_vms_more_##NAME(&q[k]))                                                          \
            kiln_vms_step_##NAME(&q[k], da, db);                                                       \
          kiln_vms_end_##NAME(&q[k]);                                                                  \
        }                                                                                              \
        return;                                                                                        \
      }                                                                                                \
    }                                                                                                  \
    int64_t ia = total >= 32 * LANES ? kiln_vcorank_##NAME(a, na, da, b, nb, db, h) : 0, jb = h - ia;  \
    if (ia == 0 || ia == na || jb == 0 || jb == nb) { /* short, or a half is a copy: one chain */       \
      kiln_vms_##NAME s;                                                                               \
      kiln_vms_start_##NAME(&s, a, na, da, b, nb, dst);                                                \
      while (kiln_vms_more_##NAME(&s))                                                                 \
        kiln_vms_step_##NAME(&s, da, db);                                                              \
      kiln_vms_end_##NAME(&s);                                                                         \
      return;                                                                                          \
    }                                                                                                  \
    kiln_vms_##NAME s0, s1; /* the values 0..h-1 and h..total-1 */                                     \
    kiln_vms_start_##NAME(&s0, da ? a + (na - ia) : a, ia, da, db ? b + (nb - jb) : b, jb, dst);         \
    kiln_vms_start_##NAME(&s1, da ? a : a + ia, na - ia, da, db ? b : b + jb, nb - jb, dst + h);       \
    while (kiln_vms_more_##NAME(&s0) && kiln_vms_more_##NAME(&s1)) {                                   \
      kiln_vms_step_##NAME(&s0, da, db);                                                               \
      kiln_vms_step_##NAME(&s1, da, db);                                                               \
    }                                                                                                  \
    while (kiln_vms_more_##NAME(&s0))                                                                  \
      kiln_vms_step_##NAME(&s0, da, db);                                                               \
    while (kiln_vms_more_##NAME(&s1))                                                                  \
      kiln_vms_step_##NAME(&s1, da, db);                                                               \
    kiln_vms_end_##NAME(&s0);                                                                          \
    kiln_vms_end_##NAME(&s1);                                                                          \
  }                                                                                                    \
  /* A run copied into dst in its order (a reversed copy when d). */                                   \
  KILN_AVX2 static void kiln_vruncopy_##NAME(const T *p, int64_t n, int d, T *dst) {                   \
    if (!d) {                                                                                          \
      memcpy(dst, p, (size_t)n * sizeof(T));                                                           \
      return;                                                                                          \
    }                                                                                                  \
    int64_t i = 0;                                                                                     \
    for (; n - i >= LANES; i += LANES)                                                                 \
      STOREV(dst + i, PERMI(LOADV(p + n - i - LANES), KILN_IDX(REVT)));                                \
    for (; i < n; i++)                                                                                 \
      dst[i] = p[n - 1 - i];                                                                           \
  }                                                                                                    \
  /* The runs a (na values, backwards when da) and b merged into dst; either may be empty. */          \
  KILN_AVX2 static void kiln_vmergedir_##NAME(const T *a, int64_t na, int da, const T *b, int64_t nb, int db, \
                                              T *dst) {                                                \
    if (na == 0)                                                                                       \
      kiln_vruncopy_##NAME(b, nb, db, dst);                                                            \
    else if (nb == 0)                                                                                  \
      kiln_vruncopy_##NAME(a, na, da, dst);                                                            \
    else if (!da && !db)                                                                               \
      kiln_vmerge_body_##NAME(a, na, 0, b, nb, 0, dst);                                                \
    else if (!da)                                                                                      \
      kiln_vmerge_body_##NAME(a, na, 0, b, nb, 1, dst);                                                \
    else if (!db)                                                                                      \
      kiln_vmerge_body_##NAME(a, na, 1, b, nb, 0, dst);                                                \
    else                                                                                               \
      kiln_vmerge_body_##NAME(a, na, 1, b, nb, 1, dst);                                                \
  }                                                                                                    \
  /* a[0:na] (a buffer apart) merged with x[na:m] (sorted, in place) into x[0:m]: no copy back. While \
   * both runs have a full vector left, the vector merge (a store ends at most where the unread part   \
   * of x's run starts: a is never read past its end); then the held vector and the short side go    \
   * through a small buffer, merged with the rest (in place when that is x's run). */                 \
  KILN_AVX2 static void kiln_vmergein_##NAME(const T *a, int64_t na, T *x, int64_t m) {                \
    const T *b = x + na;                                                                               \
    int64_t nb = m - na, i = 0, j = 0, o = 0;                                                          \
    T h[LANES] __attribute__((aligned(32))), t[LANES];                                                 \
    int64_t nh = 0;                                                                                    \
    if (na >= LANES && nb >= LANES) {                                                                  \
      VT hi = LOADV(a);                                                                                \
      i = LANES;                                                                                       \
      while (na - i >= LANES && nb - j >= LANES) {                                                     \
        VT v;                                                                                          \
        if (b[j] < a[i]) {                                                                             \
          v = LOADV(b + j);                                                                            \
          j += LANES;                                                                                  \
        } else {                                                                                       \
          v = LOADV(a + i);                                                                            \
          i += LANES;                                                                                  \
        }                                                                                              \
        STOREV(x + o, kiln_vmerge_step_##NAME(&hi, v));                                                \
        o += LANES;                                                                                    \
      }                                                                                                \
      STOREV(h, hi);                                                                                   \
      nh = LANES;                                                                                      \
    }                                                                                                  \
    /* h: the held values (sorted); the side with less than a vector left joins them */              \
    const T *s;                                                                                        \
    int64_t ns;                                                                                        \
    if (na - i < LANES) { /* a's rest into the small buffer: then x's run, in place */                 \
      s = a + i, ns = na - i, i = na;                                                                  \
    } else { /* x's run's rest (short) into the small buffer: then a's rest, apart */                  \
      memcpy(t, b + j, (size_t)(nb - j) * sizeof(T));                                                  \
      s = t, ns = nb - j, j = nb;                                                                      \
    }                                                                                                  \
    T u[2 * LANES];                                                                                    \
    int64_t p = 0, q = 0, nu = 0;                                                                      \
    while (p < nh && q < ns)                                                                           \
      u[nu++] = s[q] < h[p] ? s[q++] : h[p++];                                                         \
    while (p < nh)                                                                                     \
      u[nu++] = h[p++];                                                                                \
    while (q < ns)                                                                                     \
      u[nu++] = s[q++];                                                                                \
    /* u[0:nu] merged with the run left: a's rest (apart) or x's (in place, just after the output) */  \
    const T *r = i < na ? a + i : b + j;                                                               \
    int64_t nr = i < na ? na - i : nb - j;                                                             \
    p = q = 0;                                                                                         \
    while (p < nu && q < nr)                                                                           \
      x[o++] = r[q] < u[p] ? r[q++] : u[p++];                                                          \
    while (p < nu)                                                                                     \
      x[o++] = u[p++];                                                                                 \
    if (i < na)                                                                                        \
      memcpy(x + o, r + q, (size_t)(nr - q) * sizeof(T));                                              \
  }                                                                                                    \
  /* x[0:n] sorted into y (x itself or a buffer apart from it). */                                     \
  KILN_AVX2 static void kiln_vnet_##NAME(const T *x, T *y, int64_t n) {                                \
    if (n <= LANES)                                                                                    \
      kiln_vnet1_##NAME(x, y, n);                                                                      \
    else if (n <= 2 * LANES)                                                                           \
      kiln_vnet2_##NAME(x, y, n);                                                                      \
    else if (n <= 4 * LANES)                                                                           \
      kiln_vnet4_##NAME(x, y, n);                                                                      \
    else                                                                                               \
      kiln_vnet8_##NAME(x, y, n);                                                                      \
  }
/* MINMAX(a, b, mn, mx): mn, mx <- the lesser and the greater of each lane. */
#define KILN_PERMI_PS(x, i) _mm256_permutevar8x32_ps(x, i)
#define KILN_PERMI_PD(x, i) _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(x), i))
#define KILN_PERMI_SI(x, i) _mm256_permutevar8x32_epi32(x, i)
KILN_NET(f32, float, __m256, 8, 3, KILN_LOAD_PS, KILN_STORE_PS, KILN_MINMAX_PS, KILN_PERMI_PS, kiln_rev32, INFINITY)
KILN_NET(f64, double, __m256d, 4, 2, KILN_LOAD_PD, KILN_STORE_PD, KILN_MINMAX_PD, KILN_PERMI_PD, kiln_rev64, INFINITY)
KILN_NET(i32, int32_t, __m256i, 8, 3, KILN_LOAD_SI, KILN_STORE_SI, KILN_MINMAX_EPI32, KILN_PERMI_SI, kiln_rev32,
         INT32_MAX)
KILN_NET(i64, int64_t, __m256i, 4, 2, KILN_LOAD_SI, KILN_STORE_SI, KILN_MINMAX_EPI64, KILN_PERMI_SI, kiln_rev64,
         INT64_MAX)
#endif

/* The three-way pass of the selection (values less than p1 to the front of
 * dst, greater than p2, NaNs included, to its back, the others to mid) with
 * the same permute-and-store-twice scheme, a third store for mid; -1 when
 * it does not apply (no AVX2, a NaN pivot). */
#define KILN_VPASS3(NAME, T, VT, LANES, LOADV, STOREV, SPLAT, LTMASK, GTMASK, PERM)                    \
  KILN_AVX2 static int64_t kiln_vpass3_##NAME(const T *src, int64_t n, T *dst, T *mid, T p1, T p2,     \
                                              int64_t *mcount) {                                       \
    if (!kiln_avx2 || p1 != p1 || p2 != p2)                                                            \
      return -1;                                                                                       \
    VT a = SPLAT(p1), b = SPLAT(p2);                                                                   \
    const int full = (1 << LANES) - 1;                                                                 \
    int64_t l = 0, r = n, m = 0, i = 0;                                                                \
    for (; n - i >= 2 * LANES; i += LANES) {                                                           \
      VT v = LOADV(src + i);                                                                           \
      int lt = LTMASK(v, a), gt = GTMASK(v, b), md = full & ~(lt | gt);                                \
      STOREV(dst + l, PERM(v, lt));                                                                    \
      STOREV(dst + r - LANES, PERM(v, full & ~gt));                                                    \
      STOREV(mid + m, PERM(v, md));                                                                    \
      l += __builtin_popcount((unsigned)lt);                                                           \
      r -= __builtin_popcount((unsigned)gt);                                                           \
      m += __builtin_popcount((unsigned)md);                                                           \
    }                                                                                                  \
    for (; i < n; i++) {                                                                               \
      T v = src[i];                                                                                    \
      int lt = v < p1, gt = !(v <= p2);                                                                \
      dst[l] = v;                                                                                      \
      dst[r - 1] = v;                                                                                  \
      mid[m] = v;                                                                                      \
      l += lt;                                                                                         \
      r -= gt;                                                                                         \
      m += !(lt | gt);                                                                                 \
    }                                                                                                  \
    *mcount = m;                                                                                       \
    return l;                                                                                          \
  }
/* Lanes equal (all ones), as NumPy compares: -0.0 equals +0.0, a NaN nothing. */
#define KILN_EQV_f32(a, b) _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_EQ_OQ))
#define KILN_EQV_f64(a, b) _mm256_castpd_si256(_mm256_cmp_pd(a, b, _CMP_EQ_OQ))
#define KILN_EQV_i32(a, b) _mm256_cmpeq_epi32(a, b)
#define KILN_EQV_i64(a, b) _mm256_cmpeq_epi64(a, b)
#define KILN_GT_PS(v, p) _mm256_movemask_ps(_mm256_cmp_ps(v, p, _CMP_NLE_UQ))
#define KILN_GT_PD(v, p) _mm256_movemask_pd(_mm256_cmp_pd(v, p, _CMP_NLE_UQ))
#define KILN_GT_EPI32(v, p) _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(v, p)))
#define KILN_GT_EPI64(v, p) _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(v, p)))
/* The first pass of argpartition on the values themselves (AVX2): the
 * positions of the values less than p1 to the front of dst, of those
 * greater than p2 (NaNs included) to its back, the others' values and
 * positions to midv and midi; positions are permuted with the values'
 * table (32-bit values carry 32-bit positions, widened as they are stored). */
#define KILN_VARGPASS(NAME, T, VT, LANES, LOADV, SPLAT, LTMASK, GTMASK, PERM, STOREV, IDX0, IDXSTEP, IDXADD,  \
                      STOREIDX)                                                                        \
  static const int kiln_has_vargpass_##NAME = 1;                                                       \
  /* Stable positions of a contiguous row of few distinct values (at most 16 in a sample of 256, none  \
   * a NaN; -0.0 equals +0.0): each value's rank among them, a vector at a time (a compare per value, \
   * tagging the lanes equal to it), as a byte per element; then the ranks counted and the positions   \
   * scattered in input order. 0: not done (more values, a NaN, a value the sample missed: a lane      \
   * left untagged; a short row). `ids`: scratch of n bytes. */                                        \
  KILN_AVX2 static int kiln_vargfew_##NAME(const T *row, int64_t n, int64_t *dst, uint8_t *ids) {      \
    if (!kiln_avx2 || n < 4096)                                                                        \
      return 0;                                                                                        \
    T t[16];                                                                                           \
    int d = 0;                                                                                         \
    for (int64_t q = 0; q < 256; q++) {                                                                \
      T v = row[(n / 256) * q + n / 512];                                                              \
      int j = 0;                                                                                       \
      while (j < d && !(t[j] == v))                                                                    \
        j++;                                                                                           \
      if (j == d) {                                                                                    \
        if (d == 16 || v != v)                                                                         \
          return 0;                                                                                    \
        t[d++] = v;                                                                                    \
      }                                                                                                \
    }                                                                                                  \
    for (int a = 1; a < d; a++) {                                                                      \
      T v = t[a];                                                                                      \
      int b = a;                                                                                       \
      for (; b > 0 && v < t[b - 1]; b--)                                                               \
        t[b] = t[b - 1];                                                                               \
      t[b] = v;                                                                                        \
    }                                                                                                  \
    VT tv[16];                                                                                         \
    __m256i tag[16], bad = _mm256_setzero_si256(), zero = bad;                                         \
    for (int j = 0; j < 16; j++) { /* rank j tagged j + 1; the entries past d tag nothing */           \
      tv[j] = SPLAT(t[j < d ? j : 0]);                                                                 \
      tag[j] = sizeof(T) == 4 ? _mm256_set1_epi32(j < d ? j + 1 : 0) : _mm256_set1_epi64x(j < d ? j + 1 : 0); \
    }                                                                                                  \
    /* each lane's tag to byte 0 of its 128-bit half (4-byte lanes: 4 bytes there; 8-byte: 2, the high \
     * half's at bytes 2-3), then the halves' first words side by side */                              \
    const __m256i pick = sizeof(T) == 4                                                                \
        ? _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,                \
                           0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1)                \
        : _mm256_setr_epi8(0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,                \
                           -1, -1, 0, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);              \
    int64_t i = 0;                                                                                     \
    for (; n - i >= LANES; i += LANES) {                                                               \
      VT v = LOADV(row + i);                                                                           \
      __m256i id = zero;                                                                               \
      if (d <= 8) {                                                                                    \
        _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++)                                            \
          id = _mm256_or_si256(id, _mm256_and_si256(KILN_EQV_##NAME(v, tv[j]), tag[j]));               \
      } else {                                                                                         \
        _Pragma("GCC unroll 16") for (int j = 0; j < 16; j++)                                          \
          id = _mm256_or_si256(id, _mm256_and_si256(KILN_EQV_##NAME(v, tv[j]), tag[j]));               \
      }                                                                                                \
      bad = _mm256_or_si256(bad, sizeof(T) == 4 ? _mm256_cmpeq_epi32(id, zero) : _mm256_cmpeq_epi64(id, zero)); \
      __m256i by = _mm256_shuffle_epi8(id, pick);                                                      \
      __m128i lo = _mm256_castsi256_si128(by), hi = _mm256_extracti128_si256(by, 1);                   \
      if (sizeof(T) == 4)                                                                              \
        _mm_storel_epi64((__m128i *)(ids + i), _mm_unpacklo_epi32(lo, hi));                            \
      else {                                                                                           \
        int w = _mm_cvtsi128_si32(_mm_or_si128(lo, hi));                                               \
        memcpy(ids + i, &w, 4);                                                                        \
      }                                                                                                \
    }                                                                                                  \
    if (!_mm256_testz_si256(bad, bad))                                                                 \
      return 0;                                                                                        \
    for (; i < n; i++) {                                                                               \
      int j = 0;                                                                                       \
      while (j < d && !(t[j] == row[i]))                                                               \
        j++;                                                                                           \
      if (j == d)                                                                                      \
        return 0;                                                                                      \
      ids[i] = (uint8_t)(j + 1);                                                                       \
    }                                                                                                  \
    int64_t c4[4][17] = {{0}}, start[17], sum = 0;                                                     \
    for (i = 0; n - i >= 4; i += 4)                                                                    \
      c4[0][ids[i]]++, c4[1][ids[i + 1]]++, c4[2][ids[i + 2]]++, c4[3][ids[i + 3]]++;                  \
    for (; i < n; i++)                                                                                 \
      c4[0][ids[i]]++;                                                                                 \
    for (int j = 1; j <= d; j++) {                                                                     \
      start[j] = sum;                                                                                  \
      sum += c4[0][j] + c4[1][j] + c4[2][j] + c4[3][j];                                                \
    }                                                                                                  \
    for (i = 0; i < n; i++)                                                                            \
      dst[start[ids[i]]++] = i;                                                                        \
    return 1;                                                                                          \
  }                                                                                                    \
  KILN_AVX2 static int64_t kiln_vargpass_##NAME(const T *src, int64_t n, int64_t *dst, T *midv, int64_t *midi, \
                                                T p1, T p2, int64_t *mcount) {                         \
    VT a = SPLAT(p1), b = SPLAT(p2);                                                                   \
    __m256i iv = IDX0, step = IDXSTEP;                                                                 \
    const int full = (1 << LANES) - 1;                                                                 \
    int64_t l = 0, r = n, m = 0, i = 0;                                                                \
    for (; n - i >= 2 * LANES; i += LANES, iv = IDXADD(iv, step)) {                                    \
      VT v = LOADV(src + i);                                                                           \
      int lt = LTMASK(v, a), gt = GTMASK(v, b), md = full & ~(lt | gt);                                \
      STOREIDX(dst + l, _mm256_permutevar8x32_epi32(iv, KILN_IDX(KILN_PERMT_##NAME[lt])));              \
      STOREIDX(dst + r - LANES, _mm256_permutevar8x32_epi32(iv, KILN_IDX(KILN_PERMT_##NAME[full & ~gt]))); \
      STOREIDX(midi + m, _mm256_permutevar8x32_epi32(iv, KILN_IDX(KILN_PERMT_##NAME[md])));             \
      STOREV(midv + m, PERM(v, md));                                                                   \
      l += __builtin_popcount((unsigned)lt);                                                           \
      r -= __builtin_popcount((unsigned)gt);                                                           \
      m += __builtin_popcount((unsigned)md);                                                           \
    }                                                                                                  \
    for (; i < n; i++) {                                                                               \
      T v = src[i];                                                                                    \
      int lt = v < p1, gt = !(v <= p2);                                                                \
      dst[l] = i;                                                                                      \
      dst[r - 1] = i;                                                                                  \
      midv[m] = v;                                                                                     \
      midi[m] = i;                                                                                     \
      l += lt;                                                                                         \
      r -= gt;                                                                                         \
      m += !(lt | gt);                                                                                 \
    }                                                                                                  \
    *mcount = m;                                                                                       \
    return l;                                                                                          \
  }
#define KILN_PERMT_f32 kiln_perm32
#define KILN_PERMT_i32 kiln_perm32
#define KILN_PERMT_f64 kiln_perm64
#define KILN_PERMT_i64 kiln_perm64
#define KILN_IDX0_32 _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define KILN_IDX0_64 _mm256_setr_epi64x(0, 1, 2, 3)
#define KILN_STOREIDX_32(p, w)                                                                         \
  do {                                                                                                 \
    __m256i w_ = (w);                                                                                  \
    _mm256_storeu_si256((__m256i *)(p), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(w_)));            \
    _mm256_storeu_si256((__m256i *)(p) + 1, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(w_, 1)));   \
  } while (0)
#define KILN_STOREIDX_64(p, w) _mm256_storeu_si256((__m256i *)(p), w)
/* Whether row[lo-1:hi] (contiguous) descends somewhere (bit 0) and rises or stays somewhere (bit 1)
 * in NumPy's order for positions (NaNs greatest and equal, -0.0 equal to +0.0), a vector at a time,
 * checked every 1024 elements; -1 without AVX2. LTV(b, a): lanes where b precedes a. */
#define KILN_VMONO(NAME, T, VT, LANES, LOADV, LTV)                                                     \
  KILN_AVX2 static int kiln_vmono_##NAME(const T *row, int64_t lo, int64_t hi) {                      \
    if (!kiln_avx2)                                                                                    \
      return -1;                                                                                       \
    __m256i dv = _mm256_setzero_si256(), uv = dv, ones = _mm256_cmpeq_epi32(dv, dv);                   \
    int64_t i = lo;                                                                                    \
    while (hi - i >= LANES) {                                                                          \
      for (int64_t e = hi - i > 1024 ? i + 1024 : hi; e - i >= LANES; i += LANES) {                    \
        __m256i lt = LTV(LOADV(row + i), LOADV(row + i - 1));                                          \
        dv = _mm256_or_si256(dv, lt);                                                                  \
        uv = _mm256_or_si256(uv, _mm256_andnot_si256(lt, ones));                                       \
      }                                                                                                \
      if (!_mm256_testz_si256(dv, dv) && !_mm256_testz_si256(uv, uv))                                  \
        return 3;                                                                                      \
    }                                                                                                  \
    T last[LANES] __attribute__((aligned(32))), prev[LANES] __attribute__((aligned(32)));             \
    int64_t rest = hi - i;                                                                             \
    for (int64_t q = 0; q < LANES; q++) { /* the tail padded with copies of its first pair */          \
      last[q] = row[q < rest ? i + q : i - 1];                                                         \
      prev[q] = row[q < rest ? i + q - 1 : i - 1];                                                     \
    }                                                                                                  \
    if (rest > 0) {                                                                                    \
      __m256i lt = LTV(LOADV(last), LOADV(prev));                                                      \
      __m256i valid = KILN_VMONO_LANES_##NAME(rest);                                                   \
      dv = _mm256_or_si256(dv, _mm256_and_si256(lt, valid));                                           \
      uv = _mm256_or_si256(uv, _mm256_andnot_si256(lt, valid));                                        \
    }                                                                                                  \
    return (!_mm256_testz_si256(dv, dv)) | (!_mm256_testz_si256(uv, uv)) << 1;                             \
  }                                                                                                    \
  /* Where the run continued at j (non-decreasing, or strictly decreasing when desc) may end: the      \
   * first vector of row[j:n] holding its end (the scalar scan goes on from there). */                 \
  KILN_AVX2 static int64_t kiln_vrunend_##NAME(const T *row, int64_t j, int64_t n, int desc) {        \
    if (!kiln_avx2)                                                                                    \
      return j;                                                                                        \
    for (; n - j >= LANES; j += LANES) {                                                               \
      int lt = _mm256_movemask_ps(_mm256_castsi256_ps(LTV(LOADV(row + j), LOADV(row + j - 1))));       \
      if (desc ? lt != 0xff : lt != 0)                                                                 \
        break;                                                                                         \
    }                                                                                                  \
    return j;                                                                                          \
  }
#define KILN_VMONO_LANES_f32(k) KILN_LANEMASK32(k)
#define KILN_VMONO_LANES_i32(k) KILN_LANEMASK32(k)
#define KILN_VMONO_LANES_f64(k) KILN_LANEMASK64(k)
#define KILN_VMONO_LANES_i64(k) KILN_LANEMASK64(k)
/* b precedes a: b < a, or a is a NaN and b is not. */
#define KILN_LTN_PS(b, a)                                                                              \
  _mm256_castps_si256(_mm256_or_ps(_mm256_cmp_ps(b, a, _CMP_LT_OQ),                                    \
                                   _mm256_and_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_cmp_ps(b, b, _CMP_ORD_Q))))
#define KILN_LTN_PD(b, a)                                                                              \
  _mm256_castpd_si256(_mm256_or_pd(_mm256_cmp_pd(b, a, _CMP_LT_OQ),                                    \
                                   _mm256_and_pd(_mm256_cmp_pd(a, a, _CMP_UNORD_Q), _mm256_cmp_pd(b, b, _CMP_ORD_Q))))
#define KILN_LTN_EPI32(b, a) _mm256_cmpgt_epi32(a, b)
#define KILN_LTN_EPI64(b, a) _mm256_cmpgt_epi64(a, b)
#ifndef KILN_HAVE_AVX2_SORT
static const int kiln_avx2 = 0; /* the portable code only */
#endif
#define KILN_VEC_NONE_SORT(NAME, T)                                                                    \
  static int kiln_vmonorow_##NAME(const T *row, int64_t stride, T *outp, int64_t n) {                  \
    (void)row, (void)stride, (void)outp, (void)n;                                                      \
    return 0;                                                                                          \
  }                                                                                                    \
  static int kiln_vfewcount_##NAME(const T *src, int64_t m, T *t, int64_t *c) {                        \
    (void)src, (void)m, (void)t, (void)c;                                                              \
    return 0;                                                                                          \
  }                                                                                                    \
  static int kiln_vsortrow_##NAME(const T *row, int64_t stride, T *outp, T *tmp, int64_t n) {          \
    (void)row, (void)stride, (void)outp, (void)tmp, (void)n;                                           \
    return 0;                                                                                          \
  }
#define KILN_VEC_NONE_PASS(NAME, T)                                                                    \
  __attribute__((unused)) static int64_t kiln_vpass3_##NAME(const T *src, int64_t n, T *dst, T *mid, T p1,  \
                                                             T p2, int64_t *mc) {                     \
    (void)src, (void)n, (void)dst, (void)mid, (void)p1, (void)p2, (void)mc;                            \
    return -1;                                                                                         \
  }
#define KILN_VEC_NONE_ARGPASS(NAME, T)                                                                 \
  static const int kiln_has_vargpass_##NAME = 0;                                                       \
  static int kiln_vargfew_##NAME(const T *row, int64_t n, int64_t *dst, uint8_t *ids) {                \
    (void)row, (void)n, (void)dst, (void)ids;                                                          \
    return 0;                                                                                          \
  }                                                                                                    \
  static int64_t kiln_vargpass_##NAME(const T *src, int64_t n, int64_t *dst, T *midv, int64_t *midi, T p1, \
                                      T p2, int64_t *mc) {                                             \
    (void)src, (void)n, (void)dst, (void)midv, (void)midi, (void)p1, (void)p2, (void)mc;               \
    return -1;                                                                                         \
  }
#define KILN_VEC_NONE_MONO(NAME, T)                                                                    \
  static int kiln_vmono_##NAME(const T *row, int64_t lo, int64_t hi) {                                \
    (void)row, (void)lo, (void)hi;                                                                     \
    return -1;                                                                                         \
  }                                                                                                    \
  static int64_t kiln_vrunend_##NAME(const T *row, int64_t j, int64_t n, int desc) {                  \
    (void)row, (void)n, (void)desc;                                                                    \
    return j;                                                                                          \
  }
/* VEC(SORT, NAME, T): kiln_vsortrow_<T>; VEC(PASS, NAME, T): kiln_vpass3_<T>; VEC(MONO, NAME, T): kiln_vmono_<T>;
 * VEC(ARGPASS, NAME, T): kiln_vargpass_<T>. */
#define KILN_VEC_NONE(WHAT, NAME, T) KILN_VEC_NONE_##WHAT(NAME, T)
#ifdef KILN_HAVE_AVX2_SORT
#define KILN_VEC_F32_SORT(NAME, T)                                                                     \
  KILN_VQS(NAME, T, __m256, 8, KILN_LOAD_PS, KILN_STORE_PS, _mm256_set1_ps, KILN_LT_PS, KILN_PERM_PS,   \
           INFINITY, KILN_SUCC_F32)
#define KILN_VEC_F32_PASS(NAME, T)                                                                     \
  KILN_VPASS3(NAME, T, __m256, 8, KILN_LOAD_PS, KILN_STORE_PS, _mm256_set1_ps, KILN_LT_PS, KILN_GT_PS,  \
              KILN_PERM_PS)
#define KILN_VEC_F64_SORT(NAME, T)                                                                     \
  KILN_VQS(NAME, T, __m256d, 4, KILN_LOAD_PD, KILN_STORE_PD, _mm256_set1_pd, KILN_LT_PD, KILN_PERM_PD,  \
           INFINITY, KILN_SUCC_F64)
#define KILN_VEC_F64_PASS(NAME, T)                                                                     \
  KILN_VPASS3(NAME, T, __m256d, 4, KILN_LOAD_PD, KILN_STORE_PD, _mm256_set1_pd, KILN_LT_PD, KILN_GT_PD, \
              KILN_PERM_PD)
#define KILN_VEC_I32_SORT(NAME, T)                                                                     \
  KILN_VQS(NAME, T, __m256i, 8, KILN_LOAD_SI, KILN_STORE_SI, KILN_SPLAT_EPI32, KILN_LT_EPI32,          \
           KILN_PERM_EPI32, INT32_MAX, KILN_SUCC_INT)
#define KILN_VEC_I32_PASS(NAME, T)                                                                     \
  KILN_VPASS3(NAME, T, __m256i, 8, KILN_LOAD_SI, KILN_STORE_SI, KILN_SPLAT_EPI32, KILN_LT_EPI32,       \
              KILN_GT_EPI32, KILN_PERM_EPI32)
#define KILN_VEC_I64_SORT(NAME, T)                                                                     \
  KILN_VQS(NAME, T, __m256i, 4, KILN_LOAD_SI, KILN_STORE_SI, KILN_SPLAT_EPI64, KILN_LT_EPI64,          \
           KILN_PERM_EPI64, INT64_MAX, KILN_SUCC_INT)
#define KILN_VEC_I64_PASS(NAME, T)                                                                     \
  KILN_VPASS3(NAME, T, __m256i, 4, KILN_LOAD_SI, KILN_STORE_SI, KILN_SPLAT_EPI64, KILN_LT_EPI64,       \
              KILN_GT_EPI64, KILN_PERM_EPI64)
#define KILN_VEC_F32_ARGPASS(NAME, T)                                                                  \
  KILN_VARGPASS(NAME, T, __m256, 8, KILN_LOAD_PS, _mm256_set1_ps, KILN_LT_PS, KILN_GT_PS, KILN_PERM_PS,   \
                KILN_STORE_PS, KILN_IDX0_32, _mm256_set1_epi32(8), _mm256_add_epi32, KILN_STOREIDX_32)
#define KILN_VEC_I32_ARGPASS(NAME, T)                                                                  \
  KILN_VARGPASS(NAME, T, __m256i, 8, KILN_LOAD_SI, KILN_SPLAT_EPI32, KILN_LT_EPI32, KILN_GT_EPI32,       \
                KILN_PERM_EPI32, KILN_STORE_SI, KILN_IDX0_32, _mm256_set1_epi32(8), _mm256_add_epi32,    \
                KILN_STOREIDX_32)
#define KILN_VEC_F64_ARGPASS(NAME, T)                                                                  \
  KILN_VARGPASS(NAME, T, __m256d, 4, KILN_LOAD_PD, _mm256_set1_pd, KILN_LT_PD, KILN_GT_PD, KILN_PERM_PD,  \
                KILN_STORE_PD, KILN_IDX0_64, _mm256_set1_epi64x(4), _mm256_add_epi64, KILN_STOREIDX_64)
#define KILN_VEC_I64_ARGPASS(NAME, T)                                                                  \
  KILN_VARGPASS(NAME, T, __m256i, 4, KILN_LOAD_SI, KILN_SPLAT_EPI64, KILN_LT_EPI64, KILN_GT_EPI64,       \
                KILN_PERM_EPI64, KILN_STORE_SI, KILN_IDX0_64, _mm256_set1_epi64x(4), _mm256_add_epi64,   \
                KILN_STOREIDX_64)
#define KILN_VEC_F32_MONO(NAME, T) KILN_VMONO(NAME, T, __m256, 8, KILN_LOAD_PS, KILN_LTN_PS)
#define KILN_VEC_F64_MONO(NAME, T) KILN_VMONO(NAME, T, __m256d, 4, KILN_LOAD_PD, KILN_LTN_PD)
#define KILN_VEC_I32_MONO(NAME, T) KILN_VMONO(NAME, T, __m256i, 8, KILN_LOAD_SI, KILN_LTN_EPI32)
#define KILN_VEC_I64_MONO(NAME, T) KILN_VMONO(NAME, T, __m256i, 4, KILN_LOAD_SI, KILN_LTN_EPI64)
#define KILN_VEC_F32(WHAT, NAME, T) KILN_VEC_F32_##WHAT(NAME, T)
#define KILN_VEC_F64(WHAT, NAME, T) KILN_VEC_F64_##WHAT(NAME, T)
#define KILN_VEC_I32(WHAT, NAME, T) KILN_VEC_I32_##WHAT(NAME, T)
#define KILN_VEC_I64(WHAT, NAME, T) KILN_VEC_I64_##WHAT(NAME, T)
#else
#define KILN_VEC_F32 KILN_VEC_NONE
#define KILN_VEC_F64 KILN_VEC_NONE
#define KILN_VEC_I32 KILN_VEC_NONE
#define KILN_VEC_I64 KILN_VEC_NONE
#endif

/* The values of a row (stride apart) sorted into out[0:n] (in place when
 * row == out, stride 1): one pass makes the keys of the non-NaNs (and their
 * minimum, maximum, and whether they are already in order or in reverse
 * order) and keeps the NaNs as they are for the end; tmp holds n keys. */
#define KILN_SORT_ROW(NAME, T, U, BITS, TO_KEY, FROM_KEY, ISNAN)                                            \
  /* The zeros of a sorted row (out[0:m], no NaNs) rewritten in the row's order: -0.0 and +0.0 are     \
   * equal, and NumPy's stable sort keeps them in input order (so sorted values are bit for bit those  \
   * of kind='stable'; a sort of keys puts every -0.0 first, a quicksort any order). */               \
  __attribute__((unused)) static void kiln_fixzeros_##NAME(const T *row, int64_t stride, T *outp, int64_t m) { \
    const U sign = (U)((U)1 << (BITS - 1));                                                            \
    int64_t lo = 0, hi = m;                                                                            \
    while (lo < hi) { /* the first value not below zero */                                             \
      int64_t mid = lo + (hi - lo) / 2;                                                                \
      U b;                                                                                             \
      memcpy(&b, &outp[mid], sizeof b);                                                                \
      if ((b & sign) && !KILN_ZERO_##ISNAN(BITS, b))                                                   \
        lo = mid + 1;                                                                                  \
      else                                                                                             \
        hi = mid;                                                                                      \
    }                                                                                                  \
    int64_t z = lo;                                                                                    \
    hi = m;                                                                                            \
    while (lo < hi) { /* the first value above zero */                                                 \
      int64_t mid = lo + (hi - lo) / 2;                                                                \
      U b;                                                                                             \
      memcpy(&b, &outp[mid], sizeof b);                                                                \
      if (KILN_ZERO_##ISNAN(BITS, b))                                                                  \
        lo = mid + 1;                                                                                  \
      else                                                                                             \
        hi = mid;                                                                                      \
    }                                                                                                  \
    for (int64_t i = 0, end = lo; z < end; i++) { /* the row holds exactly end - z zeros */           \
      U b;                                                                                             \
      memcpy(&b, &row[i * stride], sizeof b);                                                          \
      if (KILN_ZERO_##ISNAN(BITS, b))                                                                  \
        memcpy(&outp[z++], &b, sizeof b);                                                              \
    }                                                                                                  \
  }                                                                                                    \
  static void kiln_sortrow_##NAME(const T *row, int64_t stride, T *outp, U *tmp, int64_t n) {         \
    U *k = (U *)outp, lo = (U)~(U)0, hi = 0, prev = 0;                                                 \
    int64_t m = 0, nans = 0, descents = 0, ascents = 0;                                                \
    int poszero = 0, negzero = 0;                                                                      \
    for (int64_t i = 0; i < n; i++) {                                                                  \
      T v = row[i * stride];                                                                           \
      U bits;                                                                                          \
      memcpy(&bits, &v, sizeof v);                                                                     \
      if (ISNAN(BITS, bits)) {                                                                         \
        tmp[nans++] = bits;                                                                            \
      } else {                                                                                         \
        U key = TO_KEY(bits);                                                                          \
        poszero |= KILN_ZERO_##ISNAN(BITS, bits) && bits == 0;                                         \
        negzero |= KILN_ZERO_##ISNAN(BITS, bits) && bits != 0;                                         \
        k[m] = key;                                                                                    \
        lo = key < lo ? key : lo;                                                                      \
        hi = key > hi ? key : hi;                                                                      \
        descents += m > 0 && key < prev;                                                               \
        ascents += m > 0 && key > prev;                                                                \
        prev = key;                                                                                    \
        m++;                                                                                           \
      }                                                                                                \
    }                                                                                                  \
    memcpy(k + m, tmp, (size_t)nans * sizeof(U));                                                      \
    U *sorted = k;                                                                                     \
    if (descents > 0 && ascents == 0) {                                                                \
      for (int64_t i = 0, j = m - 1; i < j; i++, j--) {                                                \
        U t = k[i];                                                                                    \
        k[i] = k[j];                                                                                   \
        k[j] = t;                                                                                      \
      }                                                                                                \
    } else if (descents > 0) {                                                                         \
      sorted = kiln_sortkeys_##BITS(k, tmp, m, lo, hi);                                                \
    }                                                                                                  \
    for (int64_t i = 0; i < m; i++)                                                                    \
      k[i] = FROM_KEY(sorted[i]);                                                                      \
    if (poszero && negzero)                                                                            \
      kiln_fixzeros_##NAME(row, stride, outp, m);                                                      \
  }

/* kiln_partrow_<T>(row, stride, out, n, kth, kcount, a, b): the row
 * partitioned at the kths into out[0:n]; a and b are scratch of n values.
 * KILN_PART_FR: Floyd-Rivest selection on the values themselves (NumPy's
 * order as LESS), straight from the row. KILN_PART_KEYS (8- and 16-bit
 * dtypes): quickselect on the keys in out. */
#define KILN_PART_FR(NAME, T, U, BITS, TO_KEY, FROM_KEY, ISNAN, LESS)                                      \
  static void kiln_sortvalues_##NAME(T *x, T *scratch, int64_t n) {                                    \
    kiln_sortrow_##NAME(x, 1, x, (U *)scratch, n);                                                     \
  }                                                                                                    \
  KILN_FR(kiln_frvalues_##NAME, T, LESS, kiln_sortvalues_##NAME, kiln_vpass3_##NAME)                                     \
  static void kiln_partrow_##NAME(const T *row, int64_t stride, T *outp, int64_t n, const int64_t *ks,  \
                                  int64_t kcount, T *a, T *b) {                                        \
    const T *src = row;                                                                                \
    if (stride != 1) {                                                                                 \
      for (int64_t i = 0; i < n; i++)                                                                  \
        b[i] = row[i * stride];                                                                        \
      src = b;                                                                                         \
    }                                                                                                  \
    kiln_frvalues_##NAME(src, outp, a, b, n, ks, kcount, 0, kiln_depth_limit(n), 0);                   \
  }
#define KILN_PART_KEYS(NAME, T, U, BITS, TO_KEY, FROM_KEY, ISNAN, LESS)                                    \
  static void kiln_partrow_##NAME(const T *row, int64_t stride, T *outp, int64_t n, const int64_t *ks,  \
                                  int64_t kcount, T *a, T *b) {                                        \
    (void)b;                                                                                           \
    U *k = (U *)outp, *tmp = (U *)a;                                                                   \
    int64_t m = 0, nans = 0;                                                                           \
    for (int64_t i = 0; i < n; i++) {                                                                  \
      T v = row[i * stride];                                                                           \
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
    kiln_select_##BITS(k, tmp, 0, m, ks, 0, klimit, kiln_depth_limit(m));                              \
    for (int64_t i = 0; i < m; i++)                                                                    \
      k[i] = FROM_KEY(k[i]);                                                                           \
  }

/* The linkage of the two entries: one of them alone with KILN_SORT_ENTRY_<ENTRY>. */
#if defined(KILN_SORT_ENTRY_ARGSORT)
#define KILN_SORT_LINKAGE static __attribute__((unused))
#else
#define KILN_SORT_LINKAGE
#endif
#if defined(KILN_SORT_ENTRY_SORT)
#define KILN_ARGSORT_LINKAGE static __attribute__((unused))
#else
#define KILN_ARGSORT_LINKAGE
#endif

#define KILN_SORT_ENTRIES(NAME, T, U, BITS, TO_KEY, FROM_KEY, POS_KEY, ISNAN, PART, LESS, VEC)             \
  KILN_SORT_ROW(NAME, T, U, BITS, TO_KEY, FROM_KEY, ISNAN)                                                  \
  VEC(PASS, NAME, T)                                                                                        \
  static int kiln_vfewcount_##NAME(const T *src, int64_t m, T *t, int64_t *c);                              \
  /* A selection's pivots when the row has few distinct values (kiln_vfewcount): *p1, *p2 <- the values   \
   * at the first and the last kth, exactly, so the first three-way pass leaves every kth in the        \
   * middle part, and when they are equal the middle part is all that value (done). 0: not few. */     \
  static int kiln_fewpivots_##NAME(const T *row, int64_t n, const int64_t *ks, int64_t kc, T *p1, T *p2) { \
    T t[KILN_FEW];                                                                                          \
    int64_t c[KILN_FEW], below = 0;                                                                         \
    int d = kiln_vfewcount_##NAME(row, n, t, c), got = 0;                                                   \
    for (int j = 0; j < d && got < 2; j++) {                                                                \
      below += c[j]; /* the values up to t[j] hold ranks below `below` */                                   \
      if (got == 0 && ks[0] < below)                                                                        \
        *p1 = t[j], got = 1;                                                                                \
      if (got == 1 && ks[kc - 1] < below)                                                                   \
        *p2 = t[j], got = 2;                                                                                \
    }                                                                                                       \
    return got == 2;                                                                                        \
  }                                                                                                         \
  PART(NAME, T, U, BITS, TO_KEY, FROM_KEY, ISNAN, LESS)                                                     \
  VEC(SORT, NAME, T)                                                                                        \
  KILN_SORT_LINKAGE void kiln_sort_##NAME(KILN_MEMREF2_ARGS(i), KILN_MEMREF2_ARGS(o), KILN_MEMREF1_ARGS(k)) { \
    kiln_memref2 in_ = KILN_MEMREF2(i), out_ = KILN_MEMREF2(o), *in = &in_, *out = &out_;                \
    kiln_memref1 kth_ = KILN_MEMREF1(k), *kth = &kth_;                                                   \
    int64_t rows = in->sizes[0], n = in->sizes[1], kcount = kth->sizes[0];                               \
    if (rows == 0 || n == 0)                                                                             \
      return;                                                                                            \
    const T *base = (const T *)in->aligned + in->offset;                                                 \
    const int64_t *ks = (const int64_t *)kth->aligned + kth->offset;                                     \
    /* scratch pages are touched only as far as they are used */                                       \
    T *a = (T *)kiln_sort_scratch(2 * (size_t)n * sizeof(T)), *b = a + n;                                  \
    for (int64_t r = 0; r < rows; r++) {                                                                 \
      const T *row = base + r * in->strides[0];                                                          \
      T *dst = (T *)out->aligned + out->offset + r * out->strides[0];                                    \
      if (kcount == 0) {                                                                                 \
        if (!kiln_vsortrow_##NAME(row, in->strides[1], dst, a, n))                                       \
          kiln_sortrow_##NAME(row, in->strides[1], dst, (U *)a, n);                                      \
      } else if (!kiln_vmonorow_##NAME(row, in->strides[1], dst, n)) /* in order: partitioned */          \
        kiln_partrow_##NAME(row, in->strides[1], dst, n, ks, kcount, a, b);                              \
    }                                                                                                    \
    kiln_sort_release(a);                                                                                \
  }                                                                                                      \
  VEC(ARGPASS, NAME, T)                                                                                     \
  VEC(MONO, NAME, T)                                                                                        \
  /* argpartition of a contiguous row (AVX2): the first three-way pass on the values (pivots from a     \
   * sample, as kiln_frpairs'), then (key, position) pairs only for the parts holding a kth. 0: not     \
   * done (no AVX2, a strided or short row, a NaN pivot). */                                           \
  static int kiln_vargpart_##NAME(const T *row, int64_t stride, int64_t n, int64_t *dst, const int64_t *ks, \
                                  int64_t kc, kiln_pair_##BITS *p) {                                   \
    if (!kiln_has_vargpass_##NAME || !kiln_avx2 || stride != 1 || n < 4096 || n > INT32_MAX)           \
      return 0;                                                                                        \
    T p1, p2;                                                                                          \
    if (!kiln_fewpivots_##NAME(row, n, ks, kc, &p1, &p2)) {                                            \
      /* a sample of 1023, shell sorted (Ciura's gaps): the pivots 40 apart around the kth's rank hold \
       * the kth between them almost surely (2.5 sigma) and ~8% of the row (255, 20 apart: ~16%) */    \
      T s[1023];                                                                                       \
      static const int gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};                                     \
      int64_t ns = 1023, step = n / ns;                                                                \
      for (int64_t i = 0; i < ns; i++)                                                                 \
        s[i] = row[i * step + step / 2];                                                               \
      for (int g = 0; g < 8; g++)                                                                      \
        for (int64_t i = gaps[g]; i < ns; i++) {                                                       \
          T v = s[i];                                                                                  \
          int64_t j = i;                                                                               \
          for (; j >= gaps[g] && LESS(v, s[j - gaps[g]]); j -= gaps[g])                                \
            s[j] = s[j - gaps[g]];                                                                     \
          s[j] = v;                                                                                    \
        }                                                                                              \
      int64_t j = ks[kc / 2] * ns / n;                                                                 \
      p1 = s[j - 40 < 0 ? 0 : j - 40], p2 = s[j + 40 >= ns ? ns - 1 : j + 40];                         \
    }                                                                                                  \
    if (p1 != p1 || p2 != p2)                                                                          \
      return 0;                                                                                        \
    kiln_pair_##BITS *P = p, *D = p + n, *S = p + 2 * n;                                               \
    int64_t *midi = (int64_t *)S, m;                                                                   \
    T *midv = (T *)(midi + n);                                                                         \
    int64_t l = kiln_vargpass_##NAME(row, n, dst, midv, midi, p1, p2, &m), r = l + m, a = 0, b;         \
    while (a < kc && ks[a] < l)                                                                        \
      a++;                                                                                             \
    b = a;                                                                                             \
    while (b < kc && ks[b] < r)                                                                        \
      b++;                                                                                             \
    if (b > a && LESS(p1, p2)) {                                                                       \
      for (int64_t i = 0; i < m; i++) {                                                                \
        U bits;                                                                                        \
        memcpy(&bits, &midv[i], sizeof bits);                                                          \
        P[i].key = POS_KEY(bits);                                                                      \
        P[i].pos = midi[i];                                                                            \
      }                                                                                                \
      kiln_frpairs_##BITS(P, D, S, P, m, ks + a, b - a, l, kiln_depth_limit(m), 0);                     \
      for (int64_t i = 0; i < m; i++)                                                                  \
        dst[l + i] = D[i].pos;                                                                         \
    } else {                                                                                           \
      memcpy(dst + l, midi, (size_t)m * sizeof(int64_t));                                              \
    }                                                                                                  \
    int64_t lo_[2] = {0, r}, hi_[2] = {l, n}, k0[2] = {0, b}, k1[2] = {a, kc};                         \
    for (int side = 0; side < 2; side++) {                                                             \
      int64_t o = lo_[side], len = hi_[side] - o;                                                      \
      if (k1[side] == k0[side])                                                                        \
        continue;                                                                                      \
      for (int64_t i = 0; i < len; i++) {                                                              \
        U bits;                                                                                        \
        memcpy(&bits, &row[dst[o + i]], sizeof bits);                                                  \
        P[i].key = POS_KEY(bits);                                                                      \
        P[i].pos = dst[o + i];                                                                         \
      }                                                                                                \
      kiln_frpairs_##BITS(P, D, S, P, len, ks + k0[side], k1[side] - k0[side], o, kiln_depth_limit(len), 0); \
      for (int64_t i = 0; i < len; i++)                                                                \
        dst[o + i] = D[i].pos;                                                                         \
    }                                                                                                  \
    return 1;                                                                                          \
  }                                                                                                    \
  /* Stable positions of a row of at most 256 distinct keys of any range (few distinct floats): each   \
   * key's number in a small hash table, noted per element (a byte), then the numbers ranked by key,   \
   * counted, and the positions scattered in input order. A sample of 64 keys with at most 16         \
   * distinct decides first; a 257th distinct key gives up (0). `ids`: scratch of n bytes. */         \
  static int kiln_argrank_##NAME(const T *row, int64_t stride, int64_t n, int64_t *dst, uint8_t *ids) { \
    if (n < 4096)                                                                                      \
      return 0;                                                                                        \
    U smp[64], key;                                                                                    \
    int d = 0;                                                                                         \
    for (int64_t s = 0; s < 64 && d <= 16; s++) {                                                      \
      T v = row[(n / 64) * s * stride];                                                                \
      memcpy(&key, &v, sizeof v);                                                                      \
      key = POS_KEY(key);                                                                              \
      int j = 0;                                                                                       \
      while (j < d && smp[j] != key)                                                                   \
        j++;                                                                                           \
      if (j == d)                                                                                      \
        smp[d++] = key;                                                                                \
    }                                                                                                  \
    if (d > 16)                                                                                        \
      return 0;                                                                                        \
    enum { SLOTS = 1024, MAXKEYS = 256 };                                                              \
    U slot_key[SLOTS], table[MAXKEYS];                                                                 \
    int16_t slot_id[SLOTS];                                                                            \
    memset(slot_id, 0xff, sizeof slot_id);                                                             \
    int keys = 0;                                                                                      \
    for (int64_t i = 0; i < n; i++) {                                                                  \
      T v = row[i * stride];                                                                           \
      memcpy(&key, &v, sizeof v);                                                                      \
      key = POS_KEY(key);                                                                              \
      unsigned h = (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 54);                          \
      while (slot_id[h] >= 0 && slot_key[h] != key)                                                    \
        h = (h + 1) & (SLOTS - 1);                                                                     \
      if (slot_id[h] < 0) {                                                                            \
        if (keys == MAXKEYS)                                                                           \
          return 0;                                                                                    \
        slot_id[h] = (int16_t)keys;                                                                    \
        slot_key[h] = key;                                                                             \
        table[keys++] = key;                                                                           \
      }                                                                                                \
      ids[i] = (uint8_t)slot_id[h];                                                                    \
    }                                                                                                  \
    int order[MAXKEYS]; /* the key numbers by key */                                                   \
    for (int a = 0; a < keys; a++) {                                                                   \
      int b = a;                                                                                       \
      while (b > 0 && table[order[b - 1]] > table[a]) {                                                \
        order[b] = order[b - 1];                                                                       \
        b--;                                                                                           \
      }                                                                                                \
      order[b] = a;                                                                                    \
    }                                                                                                  \
    int64_t start[MAXKEYS] = {0}, sum = 0;                                                             \
    for (int64_t i = 0; i < n; i++)                                                                    \
      start[ids[i]]++;                                                                                 \
    for (int a = 0; a < keys; a++) {                                                                   \
      int64_t c = start[order[a]];                                                                     \
      start[order[a]] = sum;                                                                           \
      sum += c;                                                                                        \
    }                                                                                                  \
    for (int64_t i = 0; i < n; i++)                                                                    \
      dst[start[ids[i]]++] = i;                                                                        \
    return 1;                                                                                          \
  }                                                                                                    \
  /* Stable positions of a row whose keys span fewer than min(n, 2^16) values (few distinct integers, \
   * bools, 8-bit values): a counting sort of the positions by key, no pairs (a count pass and a       \
   * scatter in input order). A sample of 64 keys decides first, so other rows pay 64 reads. 0: not    \
   * done (a wide range). `count`: scratch of n + 1 int64. */                                          \
  static int kiln_argcount_##NAME(const T *row, int64_t stride, int64_t n, int64_t *dst, int64_t *count) { \
    if (n < 1024)                                                                                      \
      return 0;                                                                                        \
    U lo = (U)~(U)0, hi = 0, key;                                                                      \
    for (int64_t s = 0; s < 64; s++) {                                                                 \
      T v = row[(n / 64) * s * stride];                                                                \
      memcpy(&key, &v, sizeof v);                                                                      \
      key = POS_KEY(key);                                                                              \
      lo = key < lo ? key : lo;                                                                        \
      hi = key > hi ? key : hi;                                                                        \
    }                                                                                                  \
    uint64_t limit = (uint64_t)(n < 65536 ? n : 65536); /* U may be narrower than the limit */         \
    if ((uint64_t)(U)(hi - lo) >= limit)                                                               \
      return 0;                                                                                        \
    for (int64_t i = 0; i < n; i++) {                                                                  \
      T v = row[i * stride];                                                                           \
      memcpy(&key, &v, sizeof v);                                                                      \
      key = POS_KEY(key);                                                                              \
      lo = key < lo ? key : lo;                                                                        \
      hi = key > hi ? key : hi;                                                                        \
    }                                                                                                  \
    if ((uint64_t)(U)(hi - lo) >= limit)                                                               \
      return 0;                                                                                        \
    int64_t range = (int64_t)(U)(hi - lo) + 1;                                                         \
    memset(count, 0, (size_t)(range + 1) * sizeof *count);                                             \
    for (int64_t i = 0; i < n; i++) {                                                                  \
      T v = row[i * stride];                                                                           \
      memcpy(&key, &v, sizeof v);                                                                      \
      count[(U)(POS_KEY(key) - lo) + 1]++;                                                             \
    }                                                                                                  \
    for (int64_t b = 1; b <= range; b++)                                                               \
      count[b] += count[b - 1];                                                                        \
    for (int64_t i = 0; i < n; i++) {                                                                  \
      T v = row[i * stride];                                                                           \
      memcpy(&key, &v, sizeof v);                                                                      \
      dst[count[(U)(POS_KEY(key) - lo)]++] = i;                                                        \
    }                                                                                                  \
    return 1;                                                                                          \
  }                                                                                                    \
  static inline U kiln_poskey_##NAME(const T *row, int64_t stride, int64_t p) {                        \
    T v = row[p * stride];                                                                             \
    U bits;                                                                                            \
    memcpy(&bits, &v, sizeof v);                                                                       \
    return POS_KEY(bits);                                                                              \
  }                                                                                                    \
  /* Stable positions by packed words (see "packed positions" above): one read for the keys' range,     \
   * one that makes the words (into dst or tmp: where the passes make the last one read tmp) and       \
   * counts their digits, then the LSD passes. 0: not done (a short row, a range of keys too wide for  \
   * the positions, e.g. float64 keys). `tmp`: n words of scratch; `count`: KILN_PACK_COUNT int64. */  \
  static int kiln_argpack_##NAME(const T *row, int64_t stride, int64_t n, int64_t *dst, uint64_t *tmp,  \
                                 int64_t *count) {                                                     \
    if (n < KILN_PACK_MIN)                                                                             \
      return 0;                                                                                        \
    int pbits = 64 - __builtin_clzll((unsigned long long)(n - 1));                                     \
    U lo = (U)~(U)0, hi = 0;                                                                           \
    if (sizeof(U) * 8 + pbits > 64) { /* 64-bit keys: a sample's range too wide already gives up */    \
      for (int64_t q = 0; q < 64; q++) {                                                               \
        U key = kiln_poskey_##NAME(row, stride, (n / 64) * q);                                         \
        lo = key < lo ? key : lo;                                                                      \
        hi = key > hi ? key : hi;                                                                      \
      }                                                                                                \
      uint64_t r = (uint64_t)(U)(hi - lo);                                                             \
      if (r && 64 - __builtin_clzll((unsigned long long)r) + pbits > 64)                               \
        return 0;                                                                                      \
    }                                                                                                  \
    for (int64_t i = 0; i < n; i++) {                                                                  \
      U key = kiln_poskey_##NAME(row, stride, i);                                                      \
      lo = key < lo ? key : lo;                                                                        \
      hi = key > hi ? key : hi;                                                                        \
    }                                                                                                  \
    uint64_t range = (uint64_t)(U)(hi - lo);                                                           \
    int kbits = range ? 64 - __builtin_clzll((unsigned long long)range) : 0;                           \
    if (kbits == 0 || kbits + pbits > 64)                                                              \
      return 0;                                                                                        \
    int digit, passes = kiln_pack_plan(kbits, &digit);                                                 \
    const int64_t buckets = (int64_t)1 << digit;                                                       \
    const uint64_t mask = (uint64_t)buckets - 1;                                                       \
    memset(count, 0, (size_t)passes * (size_t)buckets * sizeof *count);                                \
    uint64_t *w = passes % 2 ? tmp : (uint64_t *)dst;                                                  \
    if (passes == 1) {                                                                                 \
      for (int64_t i = 0; i < n; i++) {                                                                \
        uint64_t k = (uint64_t)(U)(kiln_poskey_##NAME(row, stride, i) - lo);                           \
        w[i] = k << pbits | (uint64_t)i;                                                               \
        count[k]++;                                                                                    \
      }                                                                                                \
    } else if (passes == 2) {                                                                          \
      for (int64_t i = 0; i < n; i++) {                                                                \
        uint64_t k = (uint64_t)(U)(kiln_poskey_##NAME(row, stride, i) - lo);                           \
        w[i] = k << pbits | (uint64_t)i;                                                               \
        count[k & mask]++;                                                                             \
        count[buckets + (int64_t)(k >> digit)]++;                                                      \
      }                                                                                                \
    } else if (passes == 3) {                                                                          \
      for (int64_t i = 0; i < n; i++) {                                                                \
        uint64_t k = (uint64_t)(U)(kiln_poskey_##NAME(row, stride, i) - lo);                           \
        w[i] = k << pbits | (uint64_t)i;                                                               \
        count[k & mask]++;                                                                             \
        count[buckets + (int64_t)((k >> digit) & mask)]++;                                             \
        count[2 * buckets + (int64_t)(k >> 2 * digit)]++;                                              \
      }                                                                                                \
    } else {                                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                                \
        uint64_t k = (uint64_t)(U)(kiln_poskey_##NAME(row, stride, i) - lo);                           \
        w[i] = k << pbits | (uint64_t)i;                                                               \
        for (int p = 0; p < passes; p++)                                                               \
          count[p * buckets + (int64_t)((k >> (p * digit)) & mask)]++;                                 \
      }                                                                                                \
    }                                                                                                  \
    kiln_lsd_words(w, w == tmp ? (uint64_t *)dst : tmp, dst, n, pbits, passes, digit, count);          \
    return 1;                                                                                          \
  }                                                                                                    \
  /* Whether the keys of row[lo-1:hi] descend somewhere (bit 0) and rise or stay somewhere (bit 1), in  \
   * pieces on the pool (the positions of a row in order or strictly decreasing are then written      \
   * without sorting). */                                                                              \
  typedef struct {                                                                                     \
    const T *row;                                                                                      \
    int64_t stride, n;                                                                                 \
    _Atomic int flags;                                                                                 \
    int64_t *dst; /* when not NULL: the positions written as each piece is checked */                  \
    int down;                                                                                          \
  } kiln_argmono_##NAME##_job;                                                                         \
  static int kiln_argmono_range_##NAME(const T *row, int64_t stride, int64_t lo, int64_t hi) {         \
    int down = 0, up = 0, f = stride == 1 ? kiln_vmono_##NAME(row, lo, hi) : -1;                        \
    if (f >= 0)                                                                                        \
      return f;                                                                                        \
    U prev = kiln_poskey_##NAME(row, stride, lo - 1);                                                  \
    for (int64_t i = lo; i < hi && !(down & up); i++) {                                                \
      U key = kiln_poskey_##NAME(row, stride, i);                                                      \
      down |= key < prev;                                                                              \
      up |= key >= prev;                                                                               \
      prev = key;                                                                                      \
    }                                                                                                  \
    return down | up << 1;                                                                             \
  }                                                                                                    \
  static void kiln_argmono_piece_##NAME(void *ctx, int64_t lo, int64_t hi) {                           \
    kiln_argmono_##NAME##_job *j = ctx;                                                                \
    for (int64_t t = lo; t < hi; t++) {                                                                \
      int64_t a = 1 + (j->n - 1) * t / KILN_SORT_PIECES, b = 1 + (j->n - 1) * (t + 1) / KILN_SORT_PIECES; \
      if (a >= b || atomic_load_explicit(&j->flags, memory_order_relaxed) == 3)                        \
        continue;                                                                                      \
      atomic_fetch_or_explicit(&j->flags, kiln_argmono_range_##NAME(j->row, j->stride, a, b),         \
                               memory_order_relaxed);                                                  \
      int64_t *d = j->dst, last = j->n - 1; /* locals: stores through d cannot change them */         \
      if (d && j->down)                                                                                \
        for (int64_t i = a; i < b; i++)                                                                \
          d[i] = last - i;                                                                             \
      else if (d)                                                                                      \
        for (int64_t i = a; i < b; i++)                                                                \
          d[i] = i;                                                                                    \
    }                                                                                                  \
  }                                                                                                    \
  /* Whether 9 keys of the row, evenly spaced, are in order (1) or in reverse order (2), both (3: all   \
   * equal) or neither (0): a hint. */                                                                 \
  static int kiln_argmono9_##NAME(const T *row, int64_t stride, int64_t n) {                           \
    int up = 1, down = 1;                                                                              \
    for (int q = 1; q <= 8; q++) {                                                                     \
      U u = kiln_poskey_##NAME(row, stride, (n - 1) * (q - 1) / 8), w = kiln_poskey_##NAME(row, stride, (n - 1) * q / 8); \
      up &= w >= u, down &= w <= u;                                                                    \
    }                                                                                                  \
    return up | down << 1;                                                                             \
  }                                                                                                    \
  /* 0: the row's keys rise and descend; 1: in order (non-decreasing); 2: strictly decreasing. When    \
   * dst is not NULL and 9 keys of the row say which, the positions for that answer are written into   \
   * dst as the row is checked (one pass for a row in order or reversed); *written: they were, and    \
   * they are the answer. */                                                                           \
  static int kiln_argmono_##NAME(const T *row, int64_t stride, int64_t n, int64_t *dst, int *written) { \
    int64_t head = n < 4096 ? n : 4096;                                                                \
    int f = kiln_argmono_range_##NAME(row, stride, 1, head), hint = 0;                                 \
    *written = 0;                                                                                      \
    if (f != 3 && head < n) {                                                                          \
      hint = dst ? kiln_argmono9_##NAME(row, stride, n) : 0;                                           \
      kiln_argmono_##NAME##_job j = {row, stride, n, f, hint ? dst : NULL, hint == 2};                 \
      if (kiln_sort_parallel(n))                                                                       \
        kiln_parallel_for(kiln_argmono_piece_##NAME, &j, 0, KILN_SORT_PIECES, n);                      \
      else                                                                                             \
        kiln_argmono_piece_##NAME(&j, 0, KILN_SORT_PIECES);                                            \
      f |= atomic_load_explicit(&j.flags, memory_order_relaxed);                                       \
    }                                                                                                  \
    int mono = f == 3 ? 0 : f & 1 ? 2 : 1;                                                             \
    if (hint && mono == (hint == 2 ? 2 : 1)) {                                                         \
      dst[0] = mono == 2 ? n - 1 : 0;                                                                  \
      *written = 1;                                                                                    \
    }                                                                                                  \
    return mono;                                                                                       \
  }                                                                                                    \
  /* How many of the first k positions of the stable merge of runs a and b come from a. */             \
  static int64_t kiln_poscorank_##NAME(const T *row, int64_t stride, const kiln_posrun *a,             \
                                       const kiln_posrun *b, int64_t k) {                              \
    KILN_CORANK(a->n, b->n, k,                                                                         \
                kiln_poskey_##NAME(row, stride, kiln_posrun_at(a, i_)) <=                              \
                    kiln_poskey_##NAME(row, stride, kiln_posrun_at(b, j_)));                           \
  }                                                                                                    \
  /* The stable merge of a[ia:ia+na] and b[ib:ib+nb] into dst (ties from a); `stored`: both runs are  \
   * stored positions, else both runs of the row (a constant once inlined). */                         \
  static inline __attribute__((always_inline)) void kiln_posmerge_loop_##NAME(                          \
      const T *row, int64_t stride, const kiln_posrun *a, int64_t ia, int64_t na, const kiln_posrun *b, \
      int64_t ib, int64_t nb, int64_t *dst, const int stored) {                                        \
    int64_t ea = ia + na, eb = ib + nb;                                                                \
    if (ia < ea && ib < eb) {                                                                          \
      int64_t pa = stored ? a->p[ia] : a->base + a->step * ia;                                         \
      int64_t pb = stored ? b->p[ib] : b->base + b->step * ib;                                         \
      U ka = kiln_poskey_##NAME(row, stride, pa), kb = kiln_poskey_##NAME(row, stride, pb);            \
      for (;;) {                                                                                       \
        if (kb < ka) {                                                                                 \
          *dst++ = pb;                                                                                 \
          if (++ib == eb)                                                                              \
            break;                                                                                     \
          pb = stored ? b->p[ib] : pb + b->step;                                                       \
          kb = kiln_poskey_##NAME(row, stride, pb);                                                    \
        } else {                                                                                       \
          *dst++ = pa;                                                                                 \
          if (++ia == ea)                                                                              \
            break;                                                                                     \
          pa = stored ? a->p[ia] : pa + a->step;                                                       \
          ka = kiln_poskey_##NAME(row, stride, pa);                                                    \
        }                                                                                              \
      }                                                                                                \
    }                                                                                                  \
    for (; ia < ea; ia++)                                                                              \
      *dst++ = kiln_posrun_at(a, ia);                                                                  \
    for (; ib < eb; ib++)                                                                              \
      *dst++ = kiln_posrun_at(b, ib);                                                                  \
  }                                                                                                    \
  static void kiln_posmerge_##NAME(const T *row, int64_t stride, const kiln_posrun *a, int64_t ia,      \
                                   int64_t na, const kiln_posrun *b, int64_t ib, int64_t nb, int64_t *dst) { \
    if (a->p) /* the runs of a round are all stored (later rounds) or all of the row (the first) */  \
      kiln_posmerge_loop_##NAME(row, stride, a, ia, na, b, ib, nb, dst, 1);                            \
    else                                                                                               \
      kiln_posmerge_loop_##NAME(row, stride, a, ia, na, b, ib, nb, dst, 0);                            \
  }                                                                                                    \
  /* One round of pairwise stable merges of runs[0:k] (run r's positions go to out[b[r]:b[r+1]]), as   \
   * KILN_SORT_PIECES pieces of the output (the merge path: two binary searches per piece). */         \
  typedef struct {                                                                                     \
    const T *row;                                                                                      \
    int64_t stride, n;                                                                                 \
    const kiln_posrun *runs;                                                                           \
    const int64_t *b;                                                                                  \
    int k;                                                                                             \
    int64_t *out;                                                                                      \
  } kiln_posround_##NAME##_job;                                                                        \
  static void kiln_posround_##NAME(void *ctx, int64_t lo, int64_t hi) {                                \
    kiln_posround_##NAME##_job *j = ctx;                                                               \
    int64_t s0 = j->n * lo / KILN_SORT_PIECES, e0 = j->n * hi / KILN_SORT_PIECES;                      \
    for (int r = 0; r < j->k; r += 2) {                                                                \
      int64_t o = j->b[r], end = r + 2 <= j->k ? j->b[r + 2] : j->b[r + 1];                           \
      int64_t s = s0 > o ? s0 : o, e = e0 < end ? e0 : end;                                            \
      if (s >= e)                                                                                      \
        continue;                                                                                      \
      const kiln_posrun *a = &j->runs[r];                                                              \
      if (r + 1 == j->k) {                                                                             \
        for (int64_t i = s; i < e; i++)                                                                \
          j->out[i] = kiln_posrun_at(a, i - o);                                                        \
        continue;                                                                                      \
      }                                                                                                \
      const kiln_posrun *b = &j->runs[r + 1];                                                          \
      int64_t i0 = kiln_poscorank_##NAME(j->row, j->stride, a, b, s - o);                              \
      int64_t i1 = kiln_poscorank_##NAME(j->row, j->stride, a, b, e - o);                              \
      kiln_posmerge_##NAME(j->row, j->stride, a, i0, i1 - i0, b, s - o - i0, (e - o - i1) - (s - o - i0), \
                           j->out + s);                                                                \
    }                                                                                                  \
  }                                                                                                    \
  /* Stable positions of a row of at most KILN_RUNS runs of keys (non-decreasing, or strictly          \
   * decreasing: read backwards, which keeps them stable), straight from the row: no (key, position)   \
   * pairs; rounds of pairwise merges of positions (keys looked up in the row) between dst and tmp,    \
   * the first from the runs themselves, the last into dst; long rows merge in pieces on the pool.     \
   * 0: more runs (a scan of a few dozen keys on random rows). `tmp`: scratch of n int64. */           \
  static int kiln_argruns_##NAME(const T *row, int64_t stride, int64_t n, int64_t *dst, int64_t *tmp) { \
    int64_t b[KILN_RUNS + 1];                                                                          \
    kiln_posrun runs[KILN_RUNS];                                                                       \
    int k = 0;                                                                                         \
    b[0] = 0;                                                                                          \
    for (int64_t i = 0; i < n;) {                                                                      \
      if (k == KILN_RUNS)                                                                              \
        return 0;                                                                                      \
      int64_t j = i + 1;                                                                               \
      int desc = 0;                                                                                    \
      if (j < n) {                                                                                     \
        U prev = kiln_poskey_##NAME(row, stride, i), key = kiln_poskey_##NAME(row, stride, j);         \
        desc = key < prev;                                                                             \
        if (stride == 1) {                                                                             \
          j = kiln_vrunend_##NAME(row, j, n, desc);                                                    \
          prev = kiln_poskey_##NAME(row, 1, j - 1);                                                    \
        }                                                                                              \
        while (j < n && (key = kiln_poskey_##NAME(row, stride, j), desc ? key < prev : key >= prev)) {  \
          prev = key;                                                                                  \
          j++;                                                                                         \
        }                                                                                              \
      }                                                                                                \
      runs[k] = (kiln_posrun){NULL, desc ? j - 1 : i, desc ? -1 : 1, j - i};                           \
      b[++k] = i = j;                                                                                  \
    }                                                                                                  \
    int rounds = 0; /* the last round writes dst, the one before tmp, ... */                          \
    while ((1 << rounds) < k)                                                                          \
      rounds++;                                                                                        \
    int par = kiln_sort_parallel(n);                                                                   \
    for (int t = rounds > 0 ? rounds : 1; t >= 1; t--) {                                               \
      int64_t *out = t % 2 ? dst : tmp;                                                                \
      kiln_posround_##NAME##_job job = {row, stride, n, runs, b, k, out};                              \
      if (par)                                                                                         \
        kiln_parallel_for(kiln_posround_##NAME, &job, 0, KILN_SORT_PIECES, n);                         \
      else                                                                                             \
        kiln_posround_##NAME(&job, 0, KILN_SORT_PIECES);                                               \
      int nk = 0;                                                                                      \
      for (int r = 0; r < k; r += 2) {                                                                 \
        runs[nk] = (kiln_posrun){out + b[r], 0, 1, (r + 2 <= k ? b[r + 2] : b[r + 1]) - b[r]};         \
        b[nk++] = b[r];                                                                                \
      }                                                                                                \
      b[nk] = n;                                                                                       \
      k = nk;                                                                                          \
    }                                                                                                  \
    return 1;                                                                                          \
  }                                                                                                    \
  /* Stable positions of rows made of at most KILN_RUNS runs (non-decreasing, or strictly decreasing:  \\
   * reversed, which keeps them stable), merged pairwise (ties from the left run); the sorted pairs,   \
   * in p or tmp, or NULL when there are more runs. */                                                 \
  static kiln_pair_##BITS *kiln_pairruns_##NAME(kiln_pair_##BITS *p, kiln_pair_##BITS *tmp, int64_t n) { \
    int64_t b[KILN_RUNS + 1];                                                                          \
    int k = 0;                                                                                         \
    b[0] = 0;                                                                                          \
    for (int64_t i = 0; i < n;) {                                                                      \
      if (k == KILN_RUNS)                                                                              \
        return NULL;                                                                                   \
      int64_t j = i + 1;                                                                               \
      if (j < n && p[j].key < p[i].key) {                                                              \
        while (j < n && p[j].key < p[j - 1].key)                                                       \
          j++;                                                                                         \
        for (int64_t lo = i, hi = j - 1; lo < hi; lo++, hi--) {                                        \
          kiln_pair_##BITS t = p[lo];                                                                  \
          p[lo] = p[hi];                                                                               \
          p[hi] = t;                                                                                   \
        }                                                                                              \
      } else {                                                                                         \
        while (j < n && p[j].key >= p[j - 1].key)                                                      \
          j++;                                                                                         \
      }                                                                                                \
      b[++k] = i = j;                                                                                  \
    }                                                                                                  \
    kiln_pair_##BITS *src = p, *dst = tmp;                                                             \
    while (k > 1) {                                                                                    \
      int nk = 0;                                                                                      \
      for (int r = 0; r < k; r += 2) {                                                                 \
        if (r + 1 == k) {                                                                              \
          memcpy(dst + b[r], src + b[r], (size_t)(b[r + 1] - b[r]) * sizeof *p);                       \
        } else {                                                                                       \
          int64_t x = b[r], xe = b[r + 1], y = xe, ye = b[r + 2], o = x;                               \
          while (x < xe && y < ye) {                                                                   \
            int t = src[y].key < src[x].key;                                                           \
            dst[o++] = t ? src[y] : src[x];                                                            \
            x += !t;                                                                                   \
            y += t;                                                                                    \
          }                                                                                            \
          memcpy(dst + o, src + x, (size_t)(xe - x) * sizeof *p);                                      \
          o += xe - x;                                                                                 \
          memcpy(dst + o, src + y, (size_t)(ye - y) * sizeof *p);                                      \
        }                                                                                              \
        b[nk++] = b[r];                                                                                \
      }                                                                                                \
      b[nk] = n;                                                                                       \
      k = nk;                                                                                          \
      kiln_pair_##BITS *t = src;                                                                       \
      src = dst;                                                                                       \
      dst = t;                                                                                         \
    }                                                                                                  \
    return src;                                                                                        \
  }                                                                                                    \
  KILN_ARGSORT_LINKAGE void kiln_argsort_##NAME(KILN_MEMREF2_ARGS(i), KILN_MEMREF2_ARGS(o), KILN_MEMREF1_ARGS(k)) { \
    kiln_memref2 in_ = KILN_MEMREF2(i), out_ = KILN_MEMREF2(o), *in = &in_, *out = &out_;                \
    kiln_memref1 kth_ = KILN_MEMREF1(k), *kth = &kth_;                                                   \
    int64_t rows = in->sizes[0], n = in->sizes[1], kcount = kth->sizes[0];                               \
    if (rows == 0 || n == 0)                                                                             \
      return;                                                                                            \
    const T *base = (const T *)in->aligned + in->offset;                                                 \
    const int64_t *ks = (const int64_t *)kth->aligned + kth->offset;                                     \
    size_t pair_bytes = (kcount ? 3 : 2) * (size_t)n * sizeof(kiln_pair_##BITS);                          \
    kiln_pair_##BITS *p = (kiln_pair_##BITS *)kiln_sort_scratch(pair_bytes + KILN_PACK_COUNT * sizeof(int64_t)); \
    int64_t *count = (int64_t *)((char *)p + pair_bytes);                                                \
    for (int64_t r = 0; r < rows; r++) {                                                                 \
      const T *row = base + r * in->strides[0];                                                          \
      int64_t *dst = (int64_t *)out->aligned + out->offset + r * out->strides[0];                        \
      if (kcount > 0 && n >= 4096 && kiln_argmono9_##NAME(row, in->strides[1], n)) {                    \
        /* in order, or strictly decreasing: the stable positions partition */                           \
        int written, mono = kiln_argmono_##NAME(row, in->strides[1], n, dst, &written);                  \
        if (mono) {                                                                                      \
          if (!written)                                                                                  \
            kiln_sort_iota(dst, n, mono == 2);                                                           \
          continue;                                                                                      \
        }                                                                                                \
      }                                                                                                  \
      if (kcount > 0 && kiln_vargpart_##NAME(row, in->strides[1], n, dst, ks, kcount, p))                \
        continue;                                                                                        \
      if (kcount == 0 && n > 1) { /* in order, or strictly decreasing: positions without pairs */       \
        int written, mono = kiln_argmono_##NAME(row, in->strides[1], n, dst, &written);                  \
        if (mono) {                                                                                      \
          if (!written)                                                                                  \
            kiln_sort_iota(dst, n, mono == 2);                                                           \
          continue;                                                                                      \
        }                                                                                                \
        if (kiln_argruns_##NAME(row, in->strides[1], n, dst, (int64_t *)p))                              \
          continue;                                                                                      \
      }                                                                                                  \
      if (kcount == 0 && (kiln_argcount_##NAME(row, in->strides[1], n, dst, (int64_t *)p) ||             \
                          (in->strides[1] == 1 && kiln_vargfew_##NAME(row, n, dst, (uint8_t *)p)) ||     \
                          kiln_argrank_##NAME(row, in->strides[1], n, dst, (uint8_t *)p) ||              \
                          kiln_argpack_##NAME(row, in->strides[1], n, dst, (uint64_t *)p, count)))       \
        continue;                                                                                        \
      int64_t descents = 0, rises = 0; /* key < previous; key >= previous */                             \
      U kor = 0, kand = (U)~(U)0; /* the bits set in some key; in every key */                          \
      for (int64_t i = 0; i < n; i++) {                                                                  \
        T v = row[i * in->strides[1]];                                                                   \
        U bits;                                                                                          \
        memcpy(&bits, &v, sizeof v);                                                                     \
        p[i].key = POS_KEY(bits);                                                                        \
        p[i].pos = i;                                                                                    \
        kor |= p[i].key;                                                                                 \
        kand &= p[i].key;                                                                                \
        descents += i > 0 && p[i].key < p[i - 1].key;                                                    \
        rises += i > 0 && p[i].key >= p[i - 1].key;                                                      \
      }                                                                                                  \
      kiln_pair_##BITS *sorted = p;                                                                      \
      if (kcount == 0 && descents == 0) { /* in order: the stable positions are 0..n-1 */                \
        for (int64_t i = 0; i < n; i++)                                                                  \
          dst[i] = i;                                                                                    \
        continue;                                                                                        \
      }                                                                                                  \
      if (kcount == 0 && rises == 0) { /* strictly decreasing: n-1..0 */                                 \
        for (int64_t i = 0; i < n; i++)                                                                  \
          dst[i] = n - 1 - i;                                                                            \
        continue;                                                                                        \
      }                                                                                                  \
      if (kcount == 0) {                                                                                 \
        if ((sorted = kiln_pairruns_##NAME(p, p + n, n)) == NULL) {                                      \
          sorted = p;                                                                                    \
          kiln_radix_pairs_below_##BITS(p, p + n, n, (U)(kor ^ kand));                                   \
        }                                                                                                \
      } else {                                                                                           \
        sorted = p + n;                                                                                  \
        kiln_frpairs_##BITS(p, sorted, p + 2 * n, p, n, ks, kcount, 0, kiln_depth_limit(n), 0);          \
      }                                                                                                  \
      for (int64_t i = 0; i < n; i++)                                                                    \
        dst[i] = sorted[i].pos;                                                                          \
    }                                                                                                    \
    kiln_sort_release(p);                                                                                \
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

#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_bool)
KILN_SORT_ENTRIES(bool, uint8_t, uint8_t, 8, KILN_BOOL, KILN_ID, KILN_BOOL, KILN_NEVER_NAN, KILN_PART_KEYS, KILN_LESS_INT, KILN_VEC_NONE)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_u8)
KILN_SORT_ENTRIES(u8, uint8_t, uint8_t, 8, KILN_ID, KILN_ID, KILN_ID, KILN_NEVER_NAN, KILN_PART_KEYS, KILN_LESS_INT, KILN_VEC_NONE)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_u16)
KILN_SORT_ENTRIES(u16, uint16_t, uint16_t, 16, KILN_ID, KILN_ID, KILN_ID, KILN_NEVER_NAN, KILN_PART_KEYS, KILN_LESS_INT, KILN_VEC_NONE)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_u32)
KILN_SORT_ENTRIES(u32, uint32_t, uint32_t, 32, KILN_ID, KILN_ID, KILN_ID, KILN_NEVER_NAN, KILN_PART_FR, KILN_LESS_INT, KILN_VEC_NONE)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_u64)
KILN_SORT_ENTRIES(u64, uint64_t, uint64_t, 64, KILN_ID, KILN_ID, KILN_ID, KILN_NEVER_NAN, KILN_PART_FR, KILN_LESS_INT, KILN_VEC_NONE)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_i8)
KILN_SORT_ENTRIES(i8, int8_t, uint8_t, 8, KILN_SIGNED_8, KILN_SIGNED_8, KILN_SIGNED_8, KILN_NEVER_NAN, KILN_PART_KEYS, KILN_LESS_INT, KILN_VEC_NONE)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_i16)
KILN_SORT_ENTRIES(i16, int16_t, uint16_t, 16, KILN_SIGNED_16, KILN_SIGNED_16, KILN_SIGNED_16, KILN_NEVER_NAN, KILN_PART_KEYS, KILN_LESS_INT, KILN_VEC_NONE)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_i32)
KILN_SORT_ENTRIES(i32, int32_t, uint32_t, 32, KILN_SIGNED_32, KILN_SIGNED_32, KILN_SIGNED_32, KILN_NEVER_NAN, KILN_PART_FR, KILN_LESS_INT, KILN_VEC_I32)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_i64)
KILN_SORT_ENTRIES(i64, int64_t, uint64_t, 64, KILN_SIGNED_64, KILN_SIGNED_64, KILN_SIGNED_64, KILN_NEVER_NAN, KILN_PART_FR, KILN_LESS_INT, KILN_VEC_I64)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_f16)
KILN_SORT_ENTRIES(f16, uint16_t, uint16_t, 16, kiln_fkey_16, kiln_funkey_16, KILN_FPOS_16, KILN_FLOAT_NAN, KILN_PART_KEYS, KILN_LESS_INT, KILN_VEC_NONE)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_f32)
KILN_SORT_ENTRIES(f32, float, uint32_t, 32, kiln_fkey_32, kiln_funkey_32, KILN_FPOS_32, KILN_FLOAT_NAN, KILN_PART_FR, KILN_LESS_FLOAT, KILN_VEC_F32)
#endif
#if !defined(KILN_SORT_ONE) || defined(KILN_SORT_ONLY_f64)
KILN_SORT_ENTRIES(f64, double, uint64_t, 64, kiln_fkey_64, kiln_funkey_64, KILN_FPOS_64, KILN_FLOAT_NAN, KILN_PART_FR, KILN_LESS_FLOAT, KILN_VEC_F64)
#endif
