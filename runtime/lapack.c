/* kiln's LAPACK kernels, linked into every compiled library with support.c.
 *
 * In: `kiln-lower-lapack` calls `kiln_lapack_<kernel>_<f64|c128>` (each
 * memref as its expanded descriptor, MLIR's default calling convention)
 * with the kernel's operands and preallocated results, every
 * array batch-first (a stack of B matrices is a rank-3 memref of any
 * strides). Out: the results written, and per matrix a LAPACK `info` (0:
 * success; > 0: the factorization failed, its results are NaN as NumPy's
 * gufuncs leave them), which the traced code turns into LinAlgError.
 *
 * Each kernel copies a matrix into a column-major scratch buffer, calls the
 * ILP64 LAPACK of the OpenBLAS that NumPy's wheel ships (symbols
 * `scipy_<routine>_64_`, weak: a library that calls no kernel is not linked
 * with it), and copies the results back. Real kernels run in double and
 * complex ones in double complex, as NumPy's linalg computes (float32 is
 * cast by the traced code). Workspaces come from a size query (lwork = -1)
 * and the tracking allocator of support.c, so a failed malloc raises
 * MemoryError and unwinds like a failed check.
 */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef int64_t lint;
typedef size_t flen; /* the hidden length of a Fortran CHARACTER argument */

void *_mlir_memref_to_llvm_alloc(size_t size);
void _mlir_memref_to_llvm_free(void *p);
void kiln_check_failed(int64_t kind, const char *message, int64_t value0, int64_t value1);

/* MLIR memref descriptors (elements are 1 double, or 2 for complex). */
typedef struct { double *allocated, *aligned; int64_t offset; } memref0;
typedef struct { double *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } memref1;
typedef struct { double *allocated, *aligned; int64_t offset, sizes[2], strides[2]; } memref2;
typedef struct { double *allocated, *aligned; int64_t offset, sizes[3], strides[3]; } memref3;
typedef struct { int64_t *allocated, *aligned; int64_t offset, sizes[1], strides[1]; } imemref1;

#define LAPACK(name) extern void scipy_##name##_64_() __attribute__((weak))
LAPACK(dgesv); LAPACK(zgesv); LAPACK(dgetrf); LAPACK(zgetrf); LAPACK(dpotrf); LAPACK(zpotrf);
LAPACK(dgeqrf); LAPACK(zgeqrf); LAPACK(dorgqr); LAPACK(zungqr); LAPACK(dsyevd); LAPACK(zheevd);
LAPACK(dgeev); LAPACK(zgeev); LAPACK(dgesdd); LAPACK(zgesdd); LAPACK(dgelsd); LAPACK(zgelsd);
#undef LAPACK
#define CALL(w, real, cplx) ((w) == 2 ? (void (*)())scipy_##cplx##_64_ : (void (*)())scipy_##real##_64_)

/* A library that calls a kernel is linked with the OpenBLAS; one without a
 * routine (KILN_BLAS naming another library) must fail the call, not crash:
 * kind 1 is ValueError (kiln.errors.CHECK_ERRORS). */
static void require(void (*routine)(), const char *message) {
  if (routine == NULL)
    kiln_check_failed(1, message, 0, 0);
}
#define REQUIRE(w, real, cplx)                                                                                     \
  require(CALL(w, real, cplx), "np.linalg: the BLAS library kiln linked (KILN_BLAS) has no LAPACK routine "        \
                               "scipy_" #real "_64_ / scipy_" #cplx "_64_; unset KILN_BLAS to use NumPy's OpenBLAS")

static lint max_l(lint a, lint b) { return a > b ? a : b; }
static lint min_l(lint a, lint b) { return a < b ? a : b; }

static void *scratch(lint count, size_t size) {
  return _mlir_memref_to_llvm_alloc((size_t)max_l(count, 1) * size);
}

static double *at3(const memref3 *d, int w, lint b, lint i, lint j) {
  return d->aligned + w * (d->offset + b * d->strides[0] + i * d->strides[1] + j * d->strides[2]);
}
static double *at2(const memref2 *d, int w, lint b, lint i) {
  return d->aligned + w * (d->offset + b * d->strides[0] + i * d->strides[1]);
}
static int64_t *info_at(const imemref1 *d, lint b) { return d->aligned + d->offset + b * d->strides[0]; }

/* Matrix b of `d` (rows x cols) into / out of a column-major buffer with
 * leading dimension ld: a transpose, done in square tiles so that both the
 * strided side and the contiguous side stay in cache, with element copies
 * the compiler sees the size of (a memcpy per element was a call per
 * element: on a 1000 x 1000 matrix 6 ms of a 27 ms Cholesky). */
#define KILN_TILE 32
static void copy_tiles(const memref3 *d, int w, lint b, lint rows, lint cols, double *buf, lint ld, int to_buf) {
  for (lint i0 = 0; i0 < rows; i0 += KILN_TILE)
    for (lint j0 = 0; j0 < cols; j0 += KILN_TILE) {
      lint i1 = min_l(i0 + KILN_TILE, rows), j1 = min_l(j0 + KILN_TILE, cols);
      for (lint i = i0; i < i1; i++) {
        double *row = at3(d, w, b, i, 0);
        lint step = w * d->strides[2];
        if (w == 1) {
          for (lint j = j0; j < j1; j++) {
            if (to_buf)
              buf[i + j * ld] = row[j * step];
            else
              row[j * step] = buf[i + j * ld];
          }
        } else {
          for (lint j = j0; j < j1; j++) {
            double *x = row + j * step, *y = buf + 2 * (i + j * ld);
            if (to_buf) {
              y[0] = x[0];
              y[1] = x[1];
            } else {
              x[0] = y[0];
              x[1] = y[1];
            }
          }
        }
      }
    }
}
static void load(const memref3 *d, int w, lint b, lint rows, lint cols, double *buf, lint ld) {
  copy_tiles(d, w, b, rows, cols, buf, ld, 1);
}
static void store(const memref3 *d, int w, lint b, lint rows, lint cols, const double *buf, lint ld) {
  copy_tiles(d, w, b, rows, cols, (double *)buf, ld, 0);
}
/* Matrix b of `d` into / out of a row-major buffer (row i at buf + w*i*ld):
 * no transpose; one memcpy per row when the rows are contiguous. */
static void copy_rows(const memref3 *d, int w, lint b, lint rows, lint cols, double *buf, lint ld, int to_buf) {
  for (lint i = 0; i < rows; i++) {
    double *row = at3(d, w, b, i, 0), *line = buf + w * i * ld;
    if (d->strides[2] == 1 || cols < 2) {
      if (to_buf)
        memcpy(line, row, (size_t)(cols * w) * sizeof(double));
      else
        memcpy(row, line, (size_t)(cols * w) * sizeof(double));
      continue;
    }
    for (lint j = 0; j < cols; j++)
      for (int c = 0; c < w; c++) {
        if (to_buf)
          line[w * j + c] = row[w * j * d->strides[2] + c];
        else
          row[w * j * d->strides[2] + c] = line[w * j + c];
      }
  }
}

static void fill3(const memref3 *d, int w, lint b, double value) {
  for (lint i = 0; i < d->sizes[1]; i++)
    for (lint j = 0; j < d->sizes[2]; j++)
      for (int c = 0; c < w; c++)
        at3(d, w, b, i, j)[c] = value;
}
static void fill2(const memref2 *d, int w, lint b, double value) {
  for (lint i = 0; i < d->sizes[1]; i++)
    for (int c = 0; c < w; c++)
      at2(d, w, b, i)[c] = value;
}
static lint work_size(const double *query) { return max_l((lint)query[0], 1); }

/* solve: x = a^-1 b by gesv; inv: b is the identity. */
static void solve(int w, const memref3 *a, const memref3 *rhs, memref3 *x, imemref1 *info) {
  REQUIRE(w, dgesv, zgesv);
  lint n = a->sizes[1], k = x->sizes[2], ld = max_l(n, 1);
  double *lu = scratch(n * n * w, sizeof(double)), *bx = scratch(n * k * w, sizeof(double));
  lint *pivots = scratch(n, sizeof(lint));
  for (lint b = 0; b < a->sizes[0]; b++) {
    lint status = 0;
    load(a, w, b, n, n, lu, ld);
    if (rhs)
      load(rhs, w, b, n, k, bx, ld);
    else {
      memset(bx, 0, (size_t)(n * k * w) * sizeof(double));
      for (lint i = 0; i < n; i++)
        bx[w * (i + i * ld)] = 1.0;
    }
    if (n > 0 && k > 0)
      CALL(w, dgesv, zgesv)(&n, &k, lu, &ld, pivots, bx, &ld, &status);
    if (status != 0)
      fill3(x, w, b, NAN);
    else
      store(x, w, b, n, k, bx, ld);
    *info_at(info, b) = status;
  }
  _mlir_memref_to_llvm_free(lu);
  _mlir_memref_to_llvm_free(bx);
  _mlir_memref_to_llvm_free(pivots);
}

/* cholesky: the lower (upper) factor by potrf, the other triangle zeroed.
 * The matrix is copied row by row, untransposed: read column-major, the
 * buffer holds A^T, whose upper triangle is A's lower one (for complex
 * Hermitian A, A^T = conj(A)), so potrf with the opposite `uplo` factors it
 * as A^T = U^H U (A^T = L^H L), and the factor read back row-major is
 * U^T = L (L^T = U) with A = L L^H: the same factor without the two
 * transposes of a column-major round trip. */
static void cholesky(int w, const memref3 *a, memref3 *l, imemref1 *info, int64_t upper) {
  REQUIRE(w, dpotrf, zpotrf);
  lint n = a->sizes[1], ld = max_l(n, 1);
  char uplo = upper ? 'L' : 'U';
  double *buf = scratch(n * n * w, sizeof(double));
  for (lint b = 0; b < a->sizes[0]; b++) {
    lint status = 0;
    copy_rows(a, w, b, n, n, buf, ld, 1);
    if (n > 0)
      CALL(w, dpotrf, zpotrf)(&uplo, &n, buf, &ld, &status, (flen)1);
    for (lint i = 0; i < n; i++) { /* row i of the result */
      lint from = upper ? 0 : i + 1, to = upper ? i : n;
      if (from < to)
        memset(buf + w * (i * ld + from), 0, (size_t)(w * (to - from)) * sizeof(double));
    }
    if (status != 0)
      fill3(l, w, b, NAN);
    else
      copy_rows(l, w, b, n, n, buf, ld, 0);
    *info_at(info, b) = status;
  }
  _mlir_memref_to_llvm_free(buf);
}

/* slogdet by getrf: sign (a unit complex number for complex input), log|det|
 * and det = sign * exp(logdet), accumulated along the diagonal as NumPy does. */
static void slogdet(int w, const memref3 *a, memref2 *sign, memref2 *logdet, memref2 *det) {
  REQUIRE(w, dgetrf, zgetrf);
  lint n = a->sizes[1], ld = max_l(n, 1);
  double *lu = scratch(n * n * w, sizeof(double));
  lint *pivots = scratch(n, sizeof(lint));
  for (lint b = 0; b < a->sizes[0]; b++) {
    lint status = 0;
    load(a, w, b, n, n, lu, ld);
    if (n > 0)
      CALL(w, dgetrf, zgetrf)(&n, &n, lu, &ld, pivots, &status);
    double complex s = 1.0;
    double log_abs = 0.0;
    if (status > 0) {
      s = 0.0;
      log_abs = -INFINITY;
    } else {
      int swaps = 0;
      for (lint i = 0; i < n; i++) {
        swaps ^= pivots[i] != i + 1;
        double *d = lu + w * (i + i * ld);
        if (w == 2) {
          double complex z = d[0] + d[1] * I;
          double size = cabs(z);
          s *= z / size;
          log_abs += log(size);
        } else {
          if (d[0] < 0)
            s = -s;
          log_abs += log(fabs(d[0]));
        }
      }
      if (swaps)
        s = -s;
    }
    double *sp = at2(sign, w, b, 0), *dp = at2(det, w, b, 0), scale = exp(log_abs);
    sp[0] = creal(s);
    dp[0] = creal(s) * scale;
    if (w == 2) {
      sp[1] = cimag(s);
      dp[1] = cimag(s) * scale;
    }
    *at2(logdet, 1, b, 0) = log_abs;
  }
  _mlir_memref_to_llvm_free(lu);
  _mlir_memref_to_llvm_free(pivots);
}

/* qr by geqrf then orgqr/ungqr: mode 0 reduced (q m x k), 1 complete
 * (q m x m), 2 r only; r is the upper triangle of the first rows. Mode 3 is
 * NumPy's 'raw': q (n x m) gets geqrf's output transposed (the Householder
 * vectors below the diagonal, r on and above it) and r (1 x k) the
 * reflectors' scales tau. */
static void qr(int w, const memref3 *a, memref3 *q, memref3 *r, imemref1 *info, int64_t mode) {
  REQUIRE(w, dgeqrf, zgeqrf);
  REQUIRE(w, dorgqr, zungqr);
  lint m = a->sizes[1], n = a->sizes[2], k = min_l(m, n), ld = max_l(m, 1);
  lint qcols = mode >= 2 ? 0 : q->sizes[2], cols = max_l(n, qcols), lwork = -1, status = 0;
  double *buf = scratch(ld * cols * w, sizeof(double)), *tau = scratch(k * w, sizeof(double));
  double query[2] = {1, 0}, query2[2] = {1, 0};
  if (m > 0 && n > 0) {
    CALL(w, dgeqrf, zgeqrf)(&m, &n, buf, &ld, tau, query, &lwork, &status);
    if (qcols > 0 && k > 0)
      CALL(w, dorgqr, zungqr)(&m, &qcols, &k, buf, &ld, tau, query2, &lwork, &status);
  }
  lwork = max_l(work_size(query), work_size(query2));
  double *work = scratch(lwork * w, sizeof(double));
  for (lint b = 0; b < a->sizes[0]; b++) {
    status = 0;
    memset(buf, 0, (size_t)(ld * cols * w) * sizeof(double));
    load(a, w, b, m, n, buf, ld);
    if (m > 0 && n > 0)
      CALL(w, dgeqrf, zgeqrf)(&m, &n, buf, &ld, tau, work, &lwork, &status);
    if (mode == 3) {
      for (lint j = 0; j < n; j++)
        for (lint i = 0; i < m; i++)
          memcpy(at3(q, w, b, j, i), buf + w * (i + j * ld), w * sizeof(double));
      for (lint i = 0; i < k; i++)
        memcpy(at3(r, w, b, 0, i), tau + w * i, w * sizeof(double));
      *info_at(info, b) = status;
      continue;
    }
    lint rrows = r->sizes[1];
    for (lint i = 0; i < rrows; i++)
      for (lint j = 0; j < n; j++) {
        double *out = at3(r, w, b, i, j);
        if (i > j)
          memset(out, 0, w * sizeof(double));
        else
          memcpy(out, buf + w * (i + j * ld), w * sizeof(double));
      }
    if (qcols > 0) {
      if (k > 0)
        CALL(w, dorgqr, zungqr)(&m, &qcols, &k, buf, &ld, tau, work, &lwork, &status);
      else /* nothing to reflect: q is the identity */
        for (lint j = 0; j < qcols; j++)
          for (lint i = 0; i < m; i++) {
            memset(buf + w * (i + j * ld), 0, w * sizeof(double));
            buf[w * (i + j * ld)] = i == j;
          }
      store(q, w, b, m, qcols, buf, ld);
    }
    *info_at(info, b) = status;
  }
  _mlir_memref_to_llvm_free(buf);
  _mlir_memref_to_llvm_free(tau);
  _mlir_memref_to_llvm_free(work);
}

/* eigh by syevd/heevd: ascending eigenvalues and (vectors) the eigenvectors in columns. */
static void eigh(int w, const memref3 *a, memref2 *values, memref3 *vectors, imemref1 *info, int64_t upper,
                 int64_t want_vectors) {
  REQUIRE(w, dsyevd, zheevd);
  lint n = a->sizes[1], ld = max_l(n, 1), lwork = -1, lrwork = -1, liwork = -1, status = 0;
  char jobz = want_vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
  double *buf = scratch(n * n * w, sizeof(double)), *eig = scratch(n, sizeof(double));
  double query[2] = {1, 0}, rquery = 1;
  lint iquery = 1;
  if (n > 0) {
    if (w == 2)
      scipy_zheevd_64_(&jobz, &uplo, &n, buf, &ld, eig, query, &lwork, &rquery, &lrwork, &iquery, &liwork, &status,
                       (flen)1, (flen)1);
    else
      scipy_dsyevd_64_(&jobz, &uplo, &n, buf, &ld, eig, query, &lwork, &iquery, &liwork, &status, (flen)1, (flen)1);
  }
  lwork = work_size(query);
  lrwork = work_size(&rquery);
  liwork = max_l(iquery, 1);
  double *work = scratch(lwork * w, sizeof(double)), *rwork = scratch(lrwork, sizeof(double));
  lint *iwork = scratch(liwork, sizeof(lint));
  for (lint b = 0; b < a->sizes[0]; b++) {
    status = 0;
    load(a, w, b, n, n, buf, ld);
    if (n > 0) {
      if (w == 2)
        scipy_zheevd_64_(&jobz, &uplo, &n, buf, &ld, eig, work, &lwork, rwork, &lrwork, iwork, &liwork, &status,
                         (flen)1, (flen)1);
      else
        scipy_dsyevd_64_(&jobz, &uplo, &n, buf, &ld, eig, work, &lwork, iwork, &liwork, &status, (flen)1, (flen)1);
    }
    if (status != 0) {
      fill2(values, 1, b, NAN);
      if (want_vectors)
        fill3(vectors, w, b, NAN);
    } else {
      for (lint i = 0; i < n; i++)
        *at2(values, 1, b, i) = eig[i];
      if (want_vectors)
        store(vectors, w, b, n, n, buf, ld);
    }
    *info_at(info, b) = status;
  }
  _mlir_memref_to_llvm_free(buf);
  _mlir_memref_to_llvm_free(eig);
  _mlir_memref_to_llvm_free(work);
  _mlir_memref_to_llvm_free(rwork);
  _mlir_memref_to_llvm_free(iwork);
}

/* eig by geev: complex eigenvalues and right eigenvectors (columns); a real
 * matrix's conjugate pairs are assembled from LAPACK's (re, im) columns. */
static void eig(int w, const memref3 *a, memref2 *values, memref3 *vectors, imemref1 *info, int64_t want_vectors) {
  REQUIRE(w, dgeev, zgeev);
  lint n = a->sizes[1], ld = max_l(n, 1), one = 1, lwork = -1, status = 0;
  char jobvl = 'N', jobvr = want_vectors ? 'V' : 'N';
  lint ldvr = want_vectors ? ld : 1;
  double *buf = scratch(n * n * w, sizeof(double)), *vr = scratch(ldvr * n * w, sizeof(double));
  double *wr = scratch(2 * n, sizeof(double)), *wi = scratch(n, sizeof(double)), *rwork = scratch(2 * n, sizeof(double));
  double query[2] = {1, 0}, dummy[2];
  if (n > 0) {
    if (w == 2)
      scipy_zgeev_64_(&jobvl, &jobvr, &n, buf, &ld, wr, dummy, &one, vr, &ldvr, query, &lwork, rwork, &status,
                      (flen)1, (flen)1);
    else
      scipy_dgeev_64_(&jobvl, &jobvr, &n, buf, &ld, wr, wi, dummy, &one, vr, &ldvr, query, &lwork, &status,
                      (flen)1, (flen)1);
  }
  lwork = work_size(query);
  double *work = scratch(lwork * w, sizeof(double));
  for (lint b = 0; b < a->sizes[0]; b++) {
    status = 0;
    load(a, w, b, n, n, buf, ld);
    if (n > 0) {
      if (w == 2)
        scipy_zgeev_64_(&jobvl, &jobvr, &n, buf, &ld, wr, dummy, &one, vr, &ldvr, work, &lwork, rwork, &status,
                        (flen)1, (flen)1);
      else
        scipy_dgeev_64_(&jobvl, &jobvr, &n, buf, &ld, wr, wi, dummy, &one, vr, &ldvr, work, &lwork, &status,
                        (flen)1, (flen)1);
    }
    if (status != 0) {
      fill2(values, 2, b, NAN);
      if (want_vectors)
        fill3(vectors, 2, b, NAN);
      *info_at(info, b) = status;
      continue;
    }
    for (lint j = 0; j < n; j++) {
      double *v = at2(values, 2, b, j);
      v[0] = w == 2 ? wr[2 * j] : wr[j];
      v[1] = w == 2 ? wr[2 * j + 1] : wi[j];
    }
    if (want_vectors) {
      if (w == 2)
        store(vectors, 2, b, n, n, vr, ld);
      for (lint j = 0; w == 1 && j < n; j++) {
        int pair = wi[j] != 0.0 && j + 1 < n;
        for (lint i = 0; i < n; i++) {
          double re = vr[i + j * ld], im = pair ? vr[i + (j + 1) * ld] : 0.0;
          double *out = at3(vectors, 2, b, i, j);
          out[0] = re;
          out[1] = im;
          if (pair) {
            out = at3(vectors, 2, b, i, j + 1);
            out[0] = re;
            out[1] = -im;
          }
        }
        j += pair;
      }
    }
    *info_at(info, b) = 0;
  }
  _mlir_memref_to_llvm_free(buf);
  _mlir_memref_to_llvm_free(vr);
  _mlir_memref_to_llvm_free(wr);
  _mlir_memref_to_llvm_free(wi);
  _mlir_memref_to_llvm_free(rwork);
  _mlir_memref_to_llvm_free(work);
}

/* svd by gesdd: jobz 'A' (full), 'S' (reduced) or 'N' (values only). */
static void svd(int w, const memref3 *a, memref3 *u, memref2 *s, memref3 *vt, imemref1 *info, int64_t full,
                int64_t want_uv) {
  REQUIRE(w, dgesdd, zgesdd);
  lint m = a->sizes[1], n = a->sizes[2], k = min_l(m, n), ld = max_l(m, 1), lwork = -1, status = 0;
  char jobz = !want_uv ? 'N' : full ? 'A' : 'S';
  lint ucols = !want_uv ? 1 : full ? m : k, vtrows = !want_uv ? 1 : full ? n : k;
  lint ldu = ld, ldvt = max_l(vtrows, 1);
  double *buf = scratch(m * n * w, sizeof(double)), *sv = scratch(k, sizeof(double));
  double *ub = scratch(ldu * ucols * w, sizeof(double)), *vb = scratch(ldvt * n * w, sizeof(double));
  lint *iwork = scratch(8 * k, sizeof(lint));
  lint lrwork = want_uv ? max_l(5 * k * k + 5 * k, 2 * max_l(m, n) * k + 2 * k * k + k) : 7 * k;
  double *rwork = scratch(w == 2 ? lrwork : 1, sizeof(double));
  double query[2] = {1, 0};
  if (k > 0) {
    if (w == 2)
      scipy_zgesdd_64_(&jobz, &m, &n, buf, &ld, sv, ub, &ldu, vb, &ldvt, query, &lwork, rwork, iwork, &status,
                       (flen)1);
    else
      scipy_dgesdd_64_(&jobz, &m, &n, buf, &ld, sv, ub, &ldu, vb, &ldvt, query, &lwork, iwork, &status, (flen)1);
  }
  lwork = work_size(query);
  double *work = scratch(lwork * w, sizeof(double));
  for (lint b = 0; b < a->sizes[0]; b++) {
    status = 0;
    load(a, w, b, m, n, buf, ld);
    if (k > 0) {
      if (w == 2)
        scipy_zgesdd_64_(&jobz, &m, &n, buf, &ld, sv, ub, &ldu, vb, &ldvt, work, &lwork, rwork, iwork, &status,
                         (flen)1);
      else
        scipy_dgesdd_64_(&jobz, &m, &n, buf, &ld, sv, ub, &ldu, vb, &ldvt, work, &lwork, iwork, &status, (flen)1);
    } else if (want_uv) {
      /* An empty matrix: the singular vectors that exist are the identity's. */
      memset(ub, 0, (size_t)(ldu * ucols * w) * sizeof(double));
      memset(vb, 0, (size_t)(ldvt * n * w) * sizeof(double));
      for (lint i = 0; i < min_l(m, ucols); i++)
        ub[w * (i + i * ldu)] = 1.0;
      for (lint i = 0; i < min_l(vtrows, n); i++)
        vb[w * (i + i * ldvt)] = 1.0;
    }
    if (status != 0) {
      fill2(s, 1, b, NAN);
      if (want_uv) {
        fill3(u, w, b, NAN);
        fill3(vt, w, b, NAN);
      }
    } else {
      for (lint i = 0; i < k; i++)
        *at2(s, 1, b, i) = sv[i];
      if (want_uv) {
        store(u, w, b, m, ucols, ub, ldu);
        store(vt, w, b, vtrows, n, vb, ldvt);
      }
    }
    *info_at(info, b) = status;
  }
  _mlir_memref_to_llvm_free(buf);
  _mlir_memref_to_llvm_free(sv);
  _mlir_memref_to_llvm_free(ub);
  _mlir_memref_to_llvm_free(vb);
  _mlir_memref_to_llvm_free(iwork);
  _mlir_memref_to_llvm_free(rwork);
  _mlir_memref_to_llvm_free(work);
}

/* lstsq by gelsd (one matrix): the solution, the singular values, the rank
 * and the squared residual of each column (rows n.. of the solved rhs). */
static void lstsq(int w, const memref3 *a, const memref3 *rhs, const memref0 *rcond_in, memref3 *x, memref2 *s,
                  imemref1 *rank_out, memref2 *resid, imemref1 *info) {
  REQUIRE(w, dgelsd, zgelsd);
  lint m = a->sizes[1], n = a->sizes[2], k = x->sizes[2], mn = min_l(m, n), status = 0, rank = 0, lwork = -1;
  lint nrhs = max_l(k, 1), ldb = max_l(max_l(m, n), 1), lda = max_l(m, 1);
  double rcond = rcond_in->aligned[rcond_in->offset];
  double *abuf = scratch(lda * n * w, sizeof(double)), *bbuf = scratch(ldb * nrhs * w, sizeof(double));
  double *sv = scratch(mn, sizeof(double)), query[2] = {1, 0}, rquery = 1;
  lint iquery = 1;
  int solvable = m > 0 && n > 0;
  if (solvable) {
    if (w == 2)
      scipy_zgelsd_64_(&m, &n, &nrhs, abuf, &lda, bbuf, &ldb, sv, &rcond, &rank, query, &lwork, &rquery, &iquery,
                       &status);
    else
      scipy_dgelsd_64_(&m, &n, &nrhs, abuf, &lda, bbuf, &ldb, sv, &rcond, &rank, query, &lwork, &iquery, &status);
  }
  lwork = work_size(query);
  double *work = scratch(lwork * w, sizeof(double)), *rwork = scratch(work_size(&rquery), sizeof(double));
  lint *iwork = scratch(max_l(iquery, 1), sizeof(lint));
  for (lint b = 0; b < a->sizes[0]; b++) {
    status = 0;
    rank = 0;
    memset(bbuf, 0, (size_t)(ldb * nrhs * w) * sizeof(double));
    load(a, w, b, m, n, abuf, lda);
    load(rhs, w, b, m, k, bbuf, ldb);
    if (solvable) {
      if (w == 2)
        scipy_zgelsd_64_(&m, &n, &nrhs, abuf, &lda, bbuf, &ldb, sv, &rcond, &rank, work, &lwork, rwork, iwork,
                         &status);
      else
        scipy_dgelsd_64_(&m, &n, &nrhs, abuf, &lda, bbuf, &ldb, sv, &rcond, &rank, work, &lwork, iwork, &status);
    } /* else x is empty (n == 0: every row of b is residual) or zero (m == 0), as NumPy's */
    if (status != 0) {
      fill3(x, w, b, NAN);
      fill2(s, 1, b, NAN);
      fill2(resid, 1, b, NAN);
    } else {
      store(x, w, b, n, k, bbuf, ldb);
      for (lint i = 0; i < mn; i++)
        *at2(s, 1, b, i) = sv[i];
      for (lint j = 0; j < k; j++) {
        double sum = 0.0;
        for (lint i = n; i < m; i++)
          for (int c = 0; c < w; c++)
            sum += bbuf[w * (i + j * ldb) + c] * bbuf[w * (i + j * ldb) + c];
        *at2(resid, 1, b, j) = sum;
      }
    }
    *info_at(rank_out, b) = rank;
    *info_at(info, b) = status;
  }
  _mlir_memref_to_llvm_free(abuf);
  _mlir_memref_to_llvm_free(bbuf);
  _mlir_memref_to_llvm_free(sv);
  _mlir_memref_to_llvm_free(work);
  _mlir_memref_to_llvm_free(rwork);
  _mlir_memref_to_llvm_free(iwork);
}

/* The entry points, one per kernel and dtype. A memref argument reaches a C
 * function as its expanded descriptor (allocated, aligned, offset, sizes...,
 * strides...), which M0..M3 spell and rebuild. */
#define M0(x) double *x##_a, double *x##_p, int64_t x##_o
#define M1(x) M0(x), int64_t x##_s0, int64_t x##_t0
#define M2(x) M0(x), int64_t x##_s0, int64_t x##_s1, int64_t x##_t0, int64_t x##_t1
#define M3(x) M0(x), int64_t x##_s0, int64_t x##_s1, int64_t x##_s2, int64_t x##_t0, int64_t x##_t1, int64_t x##_t2
#define I1(x) int64_t *x##_a, int64_t *x##_p, int64_t x##_o, int64_t x##_s0, int64_t x##_t0
#define V0(x) (&(memref0){x##_a, x##_p, x##_o})
#define V1(x) (&(memref1){x##_a, x##_p, x##_o, {x##_s0}, {x##_t0}})
#define V2(x) (&(memref2){x##_a, x##_p, x##_o, {x##_s0, x##_s1}, {x##_t0, x##_t1}})
#define V3(x) (&(memref3){x##_a, x##_p, x##_o, {x##_s0, x##_s1, x##_s2}, {x##_t0, x##_t1, x##_t2}})
#define VI(x) (&(imemref1){x##_a, x##_p, x##_o, {x##_s0}, {x##_t0}})

#define ENTRIES(dtype, w)                                                                                          \
  void kiln_lapack_solve_##dtype(M3(a), M3(b), M3(x), I1(info)) { solve(w, V3(a), V3(b), V3(x), VI(info)); }      \
  void kiln_lapack_inv_##dtype(M3(a), M3(x), I1(info)) { solve(w, V3(a), NULL, V3(x), VI(info)); }                \
  void kiln_lapack_cholesky_##dtype(M3(a), M3(l), I1(info), int64_t upper) {                                       \
    cholesky(w, V3(a), V3(l), VI(info), upper);                                                                    \
  }                                                                                                                \
  void kiln_lapack_slogdet_##dtype(M3(a), M2(sign), M2(logdet), M2(det)) {                                         \
    slogdet(w, V3(a), V2(sign), V2(logdet), V2(det));                                                              \
  }                                                                                                                \
  void kiln_lapack_qr_##dtype(M3(a), M3(q), M3(r), I1(info), int64_t mode) {                                       \
    qr(w, V3(a), V3(q), V3(r), VI(info), mode);                                                                    \
  }                                                                                                                \
  void kiln_lapack_eigh_##dtype(M3(a), M2(values), M3(vectors), I1(info), int64_t upper, int64_t want_vectors) {    \
    eigh(w, V3(a), V2(values), V3(vectors), VI(info), upper, want_vectors);                                        \
  }                                                                                                                \
  void kiln_lapack_eig_##dtype(M3(a), M2(values), M3(vectors), I1(info), int64_t want_vectors) {                   \
    eig(w, V3(a), V2(values), V3(vectors), VI(info), want_vectors);                                                \
  }                                                                                                                \
  void kiln_lapack_svd_##dtype(M3(a), M3(u), M2(s), M3(vt), I1(info), int64_t full, int64_t want_uv) {             \
    svd(w, V3(a), V3(u), V2(s), V3(vt), VI(info), full, want_uv);                                                  \
  }                                                                                                                \
  void kiln_lapack_lstsq_##dtype(M3(a), M3(b), M0(rcond), M3(x), M2(s), I1(rank), M2(resid), I1(info)) {          \
    lstsq(w, V3(a), V3(b), V0(rcond), V3(x), V2(s), VI(rank), V2(resid), VI(info));                                \
  }

ENTRIES(f64, 1)
ENTRIES(c128, 2)
