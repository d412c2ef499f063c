/* kiln runtime: two matrix-vector products that read the same matrix, in one
 * pass over it (included by support.c, so it is part of every compiled
 * library, after its thread pool: kiln_parallel_for, kiln_num_threads;
 * kiln-pair-matvecs emits the calls).
 *
 * In: A (m x n, any strides), x (n x 1), u (1 x m), and two fresh results
 * y (m x 1) and v (1 x n). Out: y = A @ x and v = u @ A.
 *
 * NumPy (and BLAS) computes such a pair, e.g. `x1 += A @ y1; x2 += y2 @ A`,
 * as two gemv calls, each streaming all of A from memory: for a matrix that
 * does not fit in cache both are bound by memory bandwidth. Here each row of
 * A is loaded once and feeds both products: its dot product with x (four
 * rows at a time, one vector accumulator per row) and its multiple of u[i]
 * added into v (which stays in cache). Rows are split into one block per
 * thread of kiln's pool; each block adds into its own copy of v, summed in
 * block order at the end.
 *
 * The shapes are checked again here: the call runs before the compiled
 * code's own check of the second product's shapes (kiln-pair-matvecs moves
 * it up to the first product), so on a mismatch it writes zeros and returns,
 * and that check then raises NumPy's error.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KILN_MATVEC_MAX_BLOCKS 64

/* One kernel per element type T, vector type V of W lanes. `rows` of A from
 * `row0`, each `lda` elements apart with unit column stride: y[i] = A[i] . x
 * and v += u[i] * A[i]. */
#define KILN_MATVEC_KERNEL(NAME, T, W, TARGET)                                                                \
  typedef T NAME##_vec __attribute__((vector_size(W * sizeof(T)), aligned(sizeof(T))));                         \
  TARGET static void NAME(const T *a, int64_t lda, int64_t row0, int64_t rows, int64_t n, const T *x, const T *u, \
                          T *y, T *v) {                                                                          \
    int64_t i = row0, end = row0 + rows;                                                                         \
    for (; i + 4 <= end; i += 4) {                                                                               \
      const T *r0 = a + i * lda, *r1 = r0 + lda, *r2 = r1 + lda, *r3 = r2 + lda;                                 \
      T c0 = u[i], c1 = u[i + 1], c2 = u[i + 2], c3 = u[i + 3];                                                  \
      NAME##_vec s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};                                                         \
      int64_t j = 0;                                                                                             \
      for (; j + W <= n; j += W) {                                                                               \
        NAME##_vec xv = *(const NAME##_vec *)(x + j), vv = *(NAME##_vec *)(v + j);                               \
        NAME##_vec a0 = *(const NAME##_vec *)(r0 + j), a1 = *(const NAME##_vec *)(r1 + j);                      \
        NAME##_vec a2 = *(const NAME##_vec *)(r2 + j), a3 = *(const NAME##_vec *)(r3 + j);                      \
        s0 += a0 * xv;                                                                                           \
        s1 += a1 * xv;                                                                                           \
        s2 += a2 * xv;                                                                                           \
        s3 += a3 * xv;                                                                                           \
        vv += c0 * a0;                                                                                           \
        vv += c1 * a1;                                                                                           \
        vv += c2 * a2;                                                                                           \
        vv += c3 * a3;                                                                                           \
        *(NAME##_vec *)(v + j) = vv;                                                                             \
      }                                                                                                          \
      T t0 = 0, t1 = 0, t2 = 0, t3 = 0;                                                                          \
      for (int k = 0; k < W; k++) {                                                                              \
        t0 += s0[k];                                                                                             \
        t1 += s1[k];                                                                                             \
        t2 += s2[k];                                                                                             \
        t3 += s3[k];                                                                                             \
      }                                                                                                          \
      for (; j < n; j++) {                                                                                       \
        t0 += r0[j] * x[j];                                                                                      \
        t1 += r1[j] * x[j];                                                                                      \
        t2 += r2[j] * x[j];                                                                                      \
        t3 += r3[j] * x[j];                                                                                      \
        v[j] += c0 * r0[j] + c1 * r1[j] + c2 * r2[j] + c3 * r3[j];                                               \
      }                                                                                                          \
      y[i] = t0;                                                                                                 \
      y[i + 1] = t1;                                                                                             \
      y[i + 2] = t2;                                                                                             \
      y[i + 3] = t3;                                                                                             \
    }                                                                                                            \
    for (; i < end; i++) {                                                                                       \
      const T *r = a + i * lda;                                                                                  \
      T t = 0, c = u[i];                                                                                         \
      for (int64_t j = 0; j < n; j++) {                                                                          \
        t += r[j] * x[j];                                                                                        \
        v[j] += c * r[j];                                                                                        \
      }                                                                                                          \
      y[i] = t;                                                                                                  \
    }                                                                                                            \
  }

#if defined(__x86_64__) && defined(__GNUC__)
#define KILN_MATVEC_AVX2 __attribute__((target("avx2,fma")))
#else
#define KILN_MATVEC_AVX2
#endif

KILN_MATVEC_KERNEL(kiln_matvec_rows_f64_avx2, double, 4, KILN_MATVEC_AVX2)
KILN_MATVEC_KERNEL(kiln_matvec_rows_f64_portable, double, 2, )
KILN_MATVEC_KERNEL(kiln_matvec_rows_f32_avx2, float, 8, KILN_MATVEC_AVX2)
KILN_MATVEC_KERNEL(kiln_matvec_rows_f32_portable, float, 4, )

/* The chained pair `(A @ x) @ A` (NPBench's atax; kiln-pair-matvecs emits
 * kiln_matvec_chain_<T>): y = A @ x, then v = y @ A. v needs every y[i]
 * before it, but only row i of A with it, so a row-major A is read from
 * memory once: four rows' dot products with x, then the same four rows
 * (still in cache) times their y added into v. NumPy runs two gemv calls,
 * each streaming all of A. The row blocks and threads are the pair's
 * (kiln_matvec_rows_<T> with u NULL). A column-major A (a transposed view)
 * takes two passes through the pair kernel (its second product on a vector
 * of zeros), as NumPy would; A strided both ways, plain loops. */
#define KILN_MATVEC_CHAIN_KERNEL(NAME, T, W, TARGET)                                                          \
  typedef T NAME##_vec __attribute__((vector_size(W * sizeof(T)), aligned(sizeof(T))));                         \
  TARGET static void NAME(const T *a, int64_t lda, int64_t row0, int64_t rows, int64_t n, const T *x, T *y,     \
                          T *v) {                                                                                \
    int64_t i = row0, end = row0 + rows;                                                                         \
    for (; i < end; i += 4) {                                                                                    \
      int64_t count = end - i < 4 ? end - i : 4;                                                                 \
      const T *r[4];                                                                                             \
      T t[4] = {0, 0, 0, 0};                                                                                     \
      for (int k = 0; k < 4; k++)                                                                                \
        r[k] = a + (i + (k < count ? k : 0)) * lda; /* a short group repeats its first row, unused */         \
      NAME##_vec s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};                                                         \
      int64_t j = 0;                                                                                             \
      for (; j + W <= n; j += W) {                                                                               \
        NAME##_vec xv = *(const NAME##_vec *)(x + j);                                                            \
        s0 += *(const NAME##_vec *)(r[0] + j) * xv;                                                              \
        s1 += *(const NAME##_vec *)(r[1] + j) * xv;                                                              \
        s2 += *(const NAME##_vec *)(r[2] + j) * xv;                                                              \
        s3 += *(const NAME##_vec *)(r[3] + j) * xv;                                                              \
      }                                                                                                          \
      for (int k = 0; k < W; k++) {                                                                              \
        t[0] += s0[k];                                                                                           \
        t[1] += s1[k];                                                                                           \
        t[2] += s2[k];                                                                                           \
        t[3] += s3[k];                                                                                           \
      }                                                                                                          \
      for (; j < n; j++)                                                                                         \
        for (int k = 0; k < 4; k++)                                                                              \
          t[k] += r[k][j] * x[j];                                                                                \
      for (int k = count; k < 4; k++)                                                                            \
        t[k] = 0; /* the repeated rows add nothing to v */                                                       \
      for (int k = 0; k < count; k++)                                                                            \
        y[i + k] = t[k];                                                                                         \
      T c0 = t[0], c1 = t[1], c2 = t[2], c3 = t[3];                                                              \
      j = 0;                                                                                                     \
      for (; j + W <= n; j += W) {                                                                               \
        NAME##_vec vv = *(NAME##_vec *)(v + j);                                                                  \
        vv += c0 * *(const NAME##_vec *)(r[0] + j);                                                              \
        vv += c1 * *(const NAME##_vec *)(r[1] + j);                                                              \
        vv += c2 * *(const NAME##_vec *)(r[2] + j);                                                              \
        vv += c3 * *(const NAME##_vec *)(r[3] + j);                                                              \
        *(NAME##_vec *)(v + j) = vv;                                                                             \
      }                                                                                                          \
      for (; j < n; j++)                                                                                         \
        v[j] += c0 * r[0][j] + c1 * r[1][j] + c2 * r[2][j] + c3 * r[3][j];                                       \
    }                                                                                                            \
  }

KILN_MATVEC_CHAIN_KERNEL(kiln_matvec_chain_rows_f64_avx2, double, 4, KILN_MATVEC_AVX2)
KILN_MATVEC_CHAIN_KERNEL(kiln_matvec_chain_rows_f64_portable, double, 2, )
KILN_MATVEC_CHAIN_KERNEL(kiln_matvec_chain_rows_f32_avx2, float, 8, KILN_MATVEC_AVX2)
KILN_MATVEC_CHAIN_KERNEL(kiln_matvec_chain_rows_f32_portable, float, 4, )

static int kiln_matvec_has_avx2(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  static int known = -1;
  if (known < 0)
    known = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return known;
#else
  return 0;
#endif
}

/* How many row blocks (one per thread of kiln's pool, at most
 * KILN_MATVEC_MAX_BLOCKS, none under 64 rows), and block b's rows [first,
 * last): a multiple of 4 apart but for the last. */
static int64_t kiln_matvec_blocks(int64_t m) {
  int64_t blocks = kiln_num_threads();
  if (blocks > KILN_MATVEC_MAX_BLOCKS)
    blocks = KILN_MATVEC_MAX_BLOCKS;
  if (blocks > m / 64)
    blocks = m / 64; /* rows too few to share */
  return blocks < 1 ? 1 : blocks;
}

static void kiln_matvec_block_rows(int64_t m, int64_t blocks, int64_t b, int64_t *first, int64_t *last) {
  int64_t per = (m / blocks + 3) / 4 * 4;
  *first = b * per < m ? b * per : m;
  *last = *first + per < m && b + 1 < blocks ? *first + per : m;
}

/* Everything after the dtype is the same for f32 and f64. */
#define KILN_MATVEC_ENTRY(T, SUFFIX)                                                                             \
  typedef struct {                                                                                               \
    const T *a, *x, *u;                                                                                          \
    T *y, *v, *partial;                                                                                          \
    int64_t lda, m, n, blocks;                                                                                   \
  } kiln_matvec_job_##SUFFIX;                                                                                    \
                                                                                                                 \
  static void kiln_matvec_block_##SUFFIX(void *ctx, int64_t lo, int64_t hi) {                                    \
    kiln_matvec_job_##SUFFIX *job = ctx;                                                                         \
    for (int64_t b = lo; b < hi; b++) {                                                                          \
      int64_t first, last;                                                                                       \
      kiln_matvec_block_rows(job->m, job->blocks, b, &first, &last);                                             \
      T *v = b == 0 ? job->v : job->partial + (b - 1) * job->n;                                                  \
      memset(v, 0, (size_t)job->n * sizeof(T));                                                                  \
      int avx2 = kiln_matvec_has_avx2();                                                                         \
      if (job->u == NULL && avx2)                                                                                \
        kiln_matvec_chain_rows_##SUFFIX##_avx2(job->a, job->lda, first, last - first, job->n, job->x, job->y, v); \
      else if (job->u == NULL)                                                                                   \
        kiln_matvec_chain_rows_##SUFFIX##_portable(job->a, job->lda, first, last - first, job->n, job->x, job->y, \
                                                   v);                                                           \
      else if (avx2)                                                                                             \
        kiln_matvec_rows_##SUFFIX##_avx2(job->a, job->lda, first, last - first, job->n, job->x, job->u, job->y,  \
                                         v);                                                                     \
      else                                                                                                       \
        kiln_matvec_rows_##SUFFIX##_portable(job->a, job->lda, first, last - first, job->n, job->x, job->u,      \
                                             job->y, v);                                                         \
    }                                                                                                            \
  }                                                                                                              \
                                                                                                                 \
  /* y (m, contiguous) = A @ x and v (n, contiguous) = u @ A for a row-major A (unit column stride); with     \
   * u NULL, the chain: y = A @ x, then v = y @ A. */                                                            \
  static void kiln_matvec_rows_##SUFFIX(const T *a, int64_t lda, int64_t m, int64_t n, const T *x, const T *u,   \
                                        T *y, T *v) {                                                            \
    int64_t blocks = kiln_matvec_blocks(m);                                                                      \
    T *partial = NULL;                                                                                           \
    if (blocks > 1) {                                                                                            \
      partial = malloc((size_t)(blocks - 1) * (size_t)n * sizeof(T));                                            \
      if (partial == NULL)                                                                                       \
        blocks = 1;                                                                                              \
    }                                                                                                            \
    kiln_matvec_job_##SUFFIX job = {a, x, u, y, v, partial, lda, m, n, blocks};                                  \
    kiln_parallel_for(kiln_matvec_block_##SUFFIX, &job, 0, blocks, m * n);                                       \
    for (int64_t b = 1; b < blocks; b++)                                                                         \
      for (int64_t j = 0; j < n; j++)                                                                            \
        v[j] += partial[(b - 1) * n + j];                                                                        \
    free(partial);                                                                                               \
  }                                                                                                              \
                                                                                                                 \
  /* A vector of `count` elements `stride` apart, contiguous: itself or a copy in `*owned`. */                   \
  static const T *kiln_matvec_packed_##SUFFIX(const T *p, int64_t count, int64_t stride, T **owned) {            \
    *owned = NULL;                                                                                               \
    if (stride == 1 || count <= 1)                                                                               \
      return p;                                                                                                  \
    T *copy = malloc((size_t)count * sizeof(T));                                                                 \
    if (copy == NULL)                                                                                            \
      return NULL;                                                                                               \
    for (int64_t k = 0; k < count; k++)                                                                          \
      copy[k] = p[k * stride];                                                                                   \
    *owned = copy;                                                                                               \
    return copy;                                                                                                 \
  }                                                                                                              \
                                                                                                                 \
  void kiln_matvec_pair_##SUFFIX(T *a_a, T *a_p, int64_t a_o, int64_t m, int64_t n, int64_t a_t0, int64_t a_t1,  \
                                 T *x_a, T *x_p, int64_t x_o, int64_t x_s0, int64_t x_s1, int64_t x_t0,          \
                                 int64_t x_t1, T *u_a, T *u_p, int64_t u_o, int64_t u_s0, int64_t u_s1,          \
                                 int64_t u_t0, int64_t u_t1, T *y_a, T *y_p, int64_t y_o, int64_t y_s0,          \
                                 int64_t y_s1, int64_t y_t0, int64_t y_t1, T *v_a, T *v_p, int64_t v_o,          \
                                 int64_t v_s0, int64_t v_s1, int64_t v_t0, int64_t v_t1) {                       \
    (void)a_a, (void)x_a, (void)u_a, (void)y_a, (void)v_a, (void)x_s1, (void)x_t1, (void)u_s0, (void)u_t0;     \
    T *y = y_p + y_o, *v = v_p + v_o;                                                                            \
    /* y and v are fresh contiguous buffers of m and n elements (y_t0, v_t1 == 1). */                            \
    (void)y_s1, (void)v_s0, (void)y_t0, (void)y_t1, (void)v_t0, (void)v_t1;                                      \
    if (x_s0 != n || u_s1 != m || y_s0 != m || v_s1 != n) {                                                      \
      memset(y, 0, (size_t)(y_s0 > 0 ? y_s0 : 0) * sizeof(T));                                                   \
      memset(v, 0, (size_t)(v_s1 > 0 ? v_s1 : 0) * sizeof(T));                                                   \
      return;                                                                                                    \
    }                                                                                                            \
    T *x_owned, *u_owned;                                                                                        \
    const T *x = kiln_matvec_packed_##SUFFIX(x_p + x_o, n, x_t0, &x_owned);                                      \
    const T *u = kiln_matvec_packed_##SUFFIX(u_p + u_o, m, u_t1, &u_owned);                                      \
    const T *a = a_p + a_o;                                                                                      \
    if (m == 0 || n == 0 || x == NULL || u == NULL || (a_t1 != 1 && a_t0 != 1)) {                                \
      /* Empty, out of memory for a packed copy, or A strided both ways: plain loops. */                        \
      const T *xs = x_p + x_o, *us = u_p + u_o;                                                                  \
      memset(v, 0, (size_t)n * sizeof(T));                                                                       \
      for (int64_t i = 0; i < m; i++) {                                                                          \
        T t = 0;                                                                                                 \
        for (int64_t j = 0; j < n; j++) {                                                                        \
          T e = a[i * a_t0 + j * a_t1];                                                                          \
          t += e * xs[j * x_t0];                                                                                 \
          v[j] += us[i * u_t1] * e;                                                                              \
        }                                                                                                        \
        y[i] = t;                                                                                                \
      }                                                                                                          \
    } else if (a_t1 == 1) {                                                                                      \
      kiln_matvec_rows_##SUFFIX(a, a_t0, m, n, x, u, y, v);                                                      \
    } else {                                                                                                     \
      /* A column-major (a transposed view): its transpose B (n x m) is row-major, A @ x = x @ B and u @ A = B @ u. */ \
      kiln_matvec_rows_##SUFFIX(a, a_t1, n, m, u, x, v, y);                                                      \
    }                                                                                                            \
    free(x_owned);                                                                                               \
    free(u_owned);                                                                                               \
  }

KILN_MATVEC_ENTRY(double, f64)
KILN_MATVEC_ENTRY(float, f32)

#define KILN_MATVEC_CHAIN_ENTRY(T, SUFFIX)                                                                       \
  void kiln_matvec_chain_##SUFFIX(T *a_a, T *a_p, int64_t a_o, int64_t m, int64_t n, int64_t a_t0, int64_t a_t1, \
                                  T *x_a, T *x_p, int64_t x_o, int64_t x_s0, int64_t x_s1, int64_t x_t0,         \
                                  int64_t x_t1, T *y_a, T *y_p, int64_t y_o, int64_t y_s0, int64_t y_s1,         \
                                  int64_t y_t0, int64_t y_t1, T *v_a, T *v_p, int64_t v_o, int64_t v_s0,         \
                                  int64_t v_s1, int64_t v_t0, int64_t v_t1) {                                    \
    (void)a_a, (void)x_a, (void)y_a, (void)v_a, (void)x_s1, (void)x_t1;                                          \
    (void)y_s1, (void)v_s0, (void)y_t0, (void)y_t1, (void)v_t0, (void)v_t1;                                      \
    T *y = y_p + y_o, *v = v_p + v_o; /* fresh contiguous buffers of m and n elements */                         \
    if (x_s0 != n || y_s0 != m || v_s1 != n) {                                                                   \
      /* Not reached from compiled code (the first product's shape check runs before the call): zeros. */      \
      memset(y, 0, (size_t)(y_s0 > 0 ? y_s0 : 0) * sizeof(T));                                                  \
      memset(v, 0, (size_t)(v_s1 > 0 ? v_s1 : 0) * sizeof(T));                                                   \
      return;                                                                                                    \
    }                                                                                                            \
    const T *a = a_p + a_o;                                                                                      \
    T *x_owned;                                                                                                  \
    const T *x = kiln_matvec_packed_##SUFFIX(x_p + x_o, n, x_t0, &x_owned);                                      \
    T *zeros = a_t1 == 1 || m == 0 || n == 0 ? NULL : calloc((size_t)(m > n ? m : n) * 2, sizeof(T));          \
    if (m == 0 || n == 0 || x == NULL || (a_t1 != 1 && (a_t0 != 1 || zeros == NULL))) {                         \
      /* Empty, out of memory, or A strided both ways: plain loops. */                                          \
      const T *xs = x_p + x_o;                                                                                   \
      memset(v, 0, (size_t)(n > 0 ? n : 0) * sizeof(T));                                                         \
      for (int64_t i = 0; i < m; i++) {                                                                          \
        T t = 0;                                                                                                 \
        for (int64_t j = 0; j < n; j++)                                                                          \
          t += a[i * a_t0 + j * a_t1] * xs[j * x_t0];                                                            \
        y[i] = t;                                                                                                \
        for (int64_t j = 0; j < n; j++)                                                                          \
          v[j] += t * a[i * a_t0 + j * a_t1];                                                                    \
      }                                                                                                          \
    } else if (a_t1 == 1) {                                                                                      \
      kiln_matvec_rows_##SUFFIX(a, a_t0, m, n, x, NULL, y, v);                                                   \
    } else {                                                                                                     \
      /* A column-major: its transpose B (n x m) is row-major. y = x @ B (B's rows times x), then v = B @ y;     \
       * each pass the pair kernel with the other product on zeros (its result in the scratch half). */         \
      T *scratch = zeros + (m > n ? m : n);                                                                      \
      kiln_matvec_rows_##SUFFIX(a, a_t1, n, m, zeros, x, scratch, y);                                            \
      kiln_matvec_rows_##SUFFIX(a, a_t1, n, m, y, zeros, v, scratch);                                            \
    }                                                                                                            \
    free(zeros);                                                                                                 \
    free(x_owned);                                                                                               \
  }

KILN_MATVEC_CHAIN_ENTRY(double, f64)
KILN_MATVEC_CHAIN_ENTRY(float, f32)

/* The strictly lower triangle of the n x n row-major matrix `c` (rows `ld`
 * apart) copied from its upper triangle, in 32 x 32 tiles so that the
 * column reads stay in cache: a BLAS syrk computes one triangle of the
 * symmetric product `X.T @ X`, kiln-linalg-to-blas calls this for the other. */
#define KILN_MIRROR_UPPER(T, SUFFIX)                                                                             \
  void kiln_mirror_upper_##SUFFIX(T *c, int64_t n, int64_t ld) {                                                 \
    for (int64_t ib = 0; ib < n; ib += 32) {                                                                     \
      int64_t i_end = ib + 32 < n ? ib + 32 : n;                                                                 \
      for (int64_t jb = 0; jb <= ib; jb += 32)                                                                   \
        for (int64_t i = ib; i < i_end; i++) {                                                                   \
          int64_t j_end = jb + 32 < i ? jb + 32 : i;                                                             \
          for (int64_t j = jb; j < j_end; j++)                                                                   \
            c[i * ld + j] = c[j * ld + i];                                                                       \
        }                                                                                                        \
    }                                                                                                            \
  }

KILN_MIRROR_UPPER(double, f64)
KILN_MIRROR_UPPER(float, f32)

/* C = alpha * A @ B + beta * C in f32 for an A of at most KILN_SMALL_M rows
 * (m x k), B (k x n) and C (m x n), all with unit column stride
 * (kiln-linalg-to-blas calls it instead of sgemm when A's rows are that
 * few). OpenBLAS's sgemm packs B before it multiplies, which with a few rows
 * of A costs more than the product: 8 x 30000 @ 30000 x 2000 (NPBench's
 * mlp) takes it ~24 ms where its gemv, one row, reads the same B in ~8 ms.
 * Here B is read once, four rows at a time (each vector of them feeding
 * every row of A), into m rows of sums of at most KILN_SMALL_M_COLUMNS
 * columns (64 KB, in L2); each thread of kiln's pool takes its block of
 * columns. (In f64 OpenBLAS's dgemm was as fast or faster: not used.)
 * beta 0 never reads C (BLAS's rule, which kiln-linalg-to-blas relies on
 * for NumPy's NaN semantics). Each element of C sums its k products in
 * order, as one dot product. */
#define KILN_SMALL_M 8
#define KILN_SMALL_M_COLUMNS 2048

#define KILN_SMALL_M_KERNEL(NAME, T, W, TARGET)                                                                  \
  typedef T NAME##_vec __attribute__((vector_size(W * sizeof(T)), aligned(sizeof(T))));                         \
  TARGET static void NAME(int64_t m, int64_t j0, int64_t j1, int64_t k, T alpha, const T *a, int64_t lda,       \
                          const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {                                  \
    T acc[KILN_SMALL_M][KILN_SMALL_M_COLUMNS] __attribute__((aligned(64)));                                     \
    for (int64_t js = j0; js < j1; js += KILN_SMALL_M_COLUMNS) {                                                 \
      int64_t w = j1 - js < KILN_SMALL_M_COLUMNS ? j1 - js : KILN_SMALL_M_COLUMNS, wv = w / W * W;              \
      for (int64_t i = 0; i < m; i++)                                                                            \
        memset(acc[i], 0, (size_t)w * sizeof(T));                                                                \
      int64_t p = 0;                                                                                             \
      for (; p + 4 <= k; p += 4) {                                                                               \
        const T *b0 = b + p * ldb + js, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;                          \
        const T *ap = a + p;                                                                                     \
        int64_t j = 0;                                                                                           \
        for (; j < wv; j += W) {                                                                                 \
          NAME##_vec v0 = *(const NAME##_vec *)(b0 + j), v1 = *(const NAME##_vec *)(b1 + j);                     \
          NAME##_vec v2 = *(const NAME##_vec *)(b2 + j), v3 = *(const NAME##_vec *)(b3 + j);                     \
          for (int64_t i = 0; i < m; i++) {                                                                      \
            const T *ai = ap + i * lda;                                                                          \
            NAME##_vec s = *(NAME##_vec *)(acc[i] + j);                                                          \
            s += ai[0] * v0;                                                                                     \
            s += ai[1] * v1;                                                                                     \
            s += ai[2] * v2;                                                                                     \
            s += ai[3] * v3;                                                                                     \
            *(NAME##_vec *)(acc[i] + j) = s;                                                                     \
          }                                                                                                      \
        }                                                                                                        \
        for (; j < w; j++)                                                                                       \
          for (int64_t i = 0; i < m; i++) {                                                                      \
            const T *ai = ap + i * lda;                                                                          \
            acc[i][j] = (((acc[i][j] + ai[0] * b0[j]) + ai[1] * b1[j]) + ai[2] * b2[j]) + ai[3] * b3[j];         \
          }                                                                                                      \
      }                                                                                                          \
      for (; p < k; p++) {                                                                                       \
        const T *b0 = b + p * ldb + js;                                                                          \
        for (int64_t i = 0; i < m; i++) {                                                                        \
          T c0 = a[i * lda + p];                                                                                 \
          for (int64_t j = 0; j < w; j++)                                                                        \
            acc[i][j] += c0 * b0[j];                                                                             \
        }                                                                                                        \
      }                                                                                                          \
      for (int64_t i = 0; i < m; i++) {                                                                          \
        T *row = c + i * ldc + js;                                                                               \
        if (beta == 0)                                                                                           \
          for (int64_t j = 0; j < w; j++)                                                                        \
            row[j] = alpha * acc[i][j];                                                                          \
        else                                                                                                     \
          for (int64_t j = 0; j < w; j++)                                                                        \
            row[j] = alpha * acc[i][j] + beta * row[j];                                                          \
      }                                                                                                          \
    }                                                                                                            \
  }

KILN_SMALL_M_KERNEL(kiln_small_m_block_f32_avx2, float, 8, KILN_MATVEC_AVX2)
KILN_SMALL_M_KERNEL(kiln_small_m_block_f32_portable, float, 4, )

#define KILN_SMALL_M_ENTRY(T, SUFFIX)                                                                            \
  typedef struct {                                                                                               \
    const T *a, *b;                                                                                              \
    T *c, alpha, beta;                                                                                           \
    int64_t m, n, k, lda, ldb, ldc, blocks;                                                                      \
  } kiln_small_m_job_##SUFFIX;                                                                                   \
                                                                                                                 \
  static void kiln_small_m_blocks_##SUFFIX(void *ctx, int64_t lo, int64_t hi) {                                  \
    kiln_small_m_job_##SUFFIX *job = ctx;                                                                        \
    /* Block b: columns [b * per, (b + 1) * per), per a multiple of 16. */                                       \
    int64_t per = (job->n / job->blocks + 15) / 16 * 16;                                                         \
    int64_t j0 = lo * per < job->n ? lo * per : job->n, j1 = hi * per < job->n && hi < job->blocks ? hi * per   \
                                                                                                  : job->n;      \
    (kiln_matvec_has_avx2() ? kiln_small_m_block_##SUFFIX##_avx2 : kiln_small_m_block_##SUFFIX##_portable)(     \
        job->m, j0, j1, job->k, job->alpha, job->a, job->lda, job->b, job->ldb, job->beta, job->c, job->ldc);  \
  }                                                                                                              \
                                                                                                                 \
  void kiln_gemm_small_m_##SUFFIX(int64_t m, int64_t n, int64_t k, T alpha, const T *a, int64_t lda,            \
                                  const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {                          \
    if (m <= 0 || n <= 0)                                                                                        \
      return;                                                                                                    \
    if (m > KILN_SMALL_M) { /* not reached: the caller checks m */                                               \
      for (int64_t i = 0; i < m; i += KILN_SMALL_M)                                                              \
        kiln_gemm_small_m_##SUFFIX(m - i < KILN_SMALL_M ? m - i : KILN_SMALL_M, n, k, alpha, a + i * lda, lda,   \
                                   b, ldb, beta, c + i * ldc, ldc);                                              \
      return;                                                                                                    \
    }                                                                                                            \
    /* One block of columns per thread of kiln's pool, none under 128 columns. */                                \
    int64_t blocks = kiln_num_threads();                                                                         \
    if (blocks > n / 128)                                                                                        \
      blocks = n / 128;                                                                                          \
    if (blocks < 1)                                                                                              \
      blocks = 1;                                                                                                \
    kiln_small_m_job_##SUFFIX job = {a, b, c, alpha, beta, m, n, k, lda, ldb, ldc, blocks};                      \
    kiln_parallel_for(kiln_small_m_blocks_##SUFFIX, &job, 0, blocks, m * n * (k > 0 ? k : 1));                   \
  }

KILN_SMALL_M_ENTRY(float, f32)
