/* kiln runtime support, linked into every compiled library.
 *
 * kiln_invoke calls a compiled entry point (its packed form, void **args)
 * under setjmp; a failed run-time check calls kiln_check_failed, which
 * records the check's kind code (1 + the position of its exception in
 * kiln.errors.CHECK_ERRORS), two values and the address of its
 * message (a NUL-terminated constant of the compiled library) and unwinds back
 * to kiln_invoke, so no code after a failed check runs. State is per thread.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static __thread jmp_buf *kiln_active_jmp;
static __thread int64_t kiln_failure[4];

void kiln_check_failed(int64_t kind, const char *message, int64_t value0, int64_t value1) {
  kiln_failure[0] = kind;
  kiln_failure[1] = value0;
  kiln_failure[2] = value1;
  kiln_failure[3] = (int64_t)(intptr_t)message;
  if (kiln_active_jmp == NULL) {
    fprintf(stderr, "kiln: run-time check failed outside kiln_invoke: %s (values %lld, %lld)\n",
            message ? message : "(no message)", (long long)value0, (long long)value1);
    abort();
  }
  longjmp(*kiln_active_jmp, 1);
}

/* Heap allocation of the compiled code (finalize-memref-to-llvm with
 * use-generic-functions calls these instead of malloc/free). An allocation
 * that fails, e.g. for a huge or negative computed size, unwinds like a failed
 * check of kind KILN_OUT_OF_MEMORY (the runtime raises MemoryError) instead of
 * letting the code write through a null pointer. */
#define KILN_OUT_OF_MEMORY (-1)

void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *p = malloc(size);
  if (p == NULL && size != 0)
    kiln_check_failed(KILN_OUT_OF_MEMORY, NULL, (int64_t)size, 0);
  return p;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size) != 0)
    p = NULL;
  if (p == NULL && size != 0)
    kiln_check_failed(KILN_OUT_OF_MEMORY, NULL, (int64_t)size, 0);
  return p;
}

void _mlir_memref_to_llvm_free(void *p) { free(p); }

/* Returns 0 on success, else the failed check's kind code, with failure[0..3]
 * = (kind, value0, value1, message address). */
int64_t kiln_invoke(void (*packed)(void **), void **args, int64_t *failure) {
  jmp_buf here;
  jmp_buf *outer = kiln_active_jmp;
  kiln_active_jmp = &here;
  if (setjmp(here)) {
    kiln_active_jmp = outer;
    failure[0] = kiln_failure[0];
    failure[1] = kiln_failure[1];
    failure[2] = kiln_failure[2];
    failure[3] = kiln_failure[3];
    return failure[0];
  }
  packed(args);
  kiln_active_jmp = outer;
  return 0;
}

/* ---- Parallel loops ------------------------------------------------------
 *
 * kiln-parallelize outlines the outermost parallel loop of a loop nest into
 * `void body(void *ctx, int64_t lo, int64_t hi)` (iterations [lo, hi) of its
 * first dimension) and calls kiln_parallel_for with an estimate of the work
 * (innermost iterations). The range is cut into a few chunks per thread;
 * the calling thread and the pool's workers claim chunks until none is left,
 * so a worker the OS has not scheduled yet never holds the caller up (the
 * caller then runs the chunks itself). The caller waits only for chunks a
 * worker has already claimed.
 *
 * Runs the body serially, in one call, when: the work is below
 * KILN_PARALLEL_MIN_WORK (default 32768) or the range has fewer than two
 * iterations; KILN_NUM_THREADS=1; another thread is already dispatching on
 * this library's pool (concurrent callers do not wait for each other); or
 * the call comes from inside a parallel body.
 *
 * Bodies contain no calls and no allocations (the pass refuses them), so a
 * body cannot fail a check or longjmp on a worker thread.
 *
 * The pool is static to each compiled library, started on first use with
 * min(KILN_NUM_THREADS or the CPU count, 64) - 1 workers. Idle workers spin
 * briefly (back-to-back calls find them awake) and then sleep on a
 * condition variable. After fork() the child starts a fresh pool.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

typedef void (*kiln_body_fn)(void *, int64_t, int64_t);

#define KILN_MAX_THREADS 64
#define KILN_CHUNKS_PER_THREAD 4
#define KILN_SPIN_ROUNDS 20000

/* A job's claim word: generation (bits 32-63), chunk count (16-31), next
 * chunk (0-15). One word, so a claim that succeeds is a claim on the job
 * whose chunk count it compared against. */
#define KILN_GEN_SHIFT 32
#define KILN_COUNT_SHIFT 16
#define KILN_FIELD_MASK UINT64_C(0xffff)

static struct {
  pthread_mutex_t dispatch; /* held by the thread running a parallel loop */
  pthread_mutex_t sleep_lock;
  pthread_cond_t wake;
  int nthreads;
  /* The current job; stable while any of its chunks is unfinished. */
  kiln_body_fn fn;
  void *ctx;
  int64_t lo, hi;
  _Atomic uint64_t claim;    /* see KILN_GEN_SHIFT */
  _Atomic int64_t finished;  /* chunks of the current job done */
} kiln_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1};

static pthread_once_t kiln_pool_once = PTHREAD_ONCE_INIT;
static __thread int kiln_in_parallel_body;

static inline void kiln_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Claim the next chunk of generation `gen`; -1 when none is left (or the
 * job is no longer `gen`). */
static int64_t kiln_claim(uint64_t gen, int64_t *nchunks) {
  uint64_t word = atomic_load_explicit(&kiln_pool.claim, memory_order_acquire);
  for (;;) {
    if ((word >> KILN_GEN_SHIFT) != gen)
      return -1;
    int64_t chunk = (int64_t)(word & KILN_FIELD_MASK);
    int64_t count = (int64_t)((word >> KILN_COUNT_SHIFT) & KILN_FIELD_MASK);
    if (chunk >= count)
      return -1;
    if (atomic_compare_exchange_weak_explicit(&kiln_pool.claim, &word, word + 1, memory_order_acq_rel,
                                              memory_order_acquire)) {
      *nchunks = count;
      return chunk;
    }
  }
}

static void kiln_run_chunks(uint64_t gen) {
  int64_t chunk, nchunks;
  while ((chunk = kiln_claim(gen, &nchunks)) >= 0) {
    /* An unfinished claimed chunk keeps the job (fn/ctx/lo/hi) in place:
     * the caller waits for it before it publishes another job. */
    int64_t n = kiln_pool.hi - kiln_pool.lo;
    int64_t lo = kiln_pool.lo + n * chunk / nchunks;
    int64_t hi = kiln_pool.lo + n * (chunk + 1) / nchunks;
    if (lo < hi)
      kiln_pool.fn(kiln_pool.ctx, lo, hi);
    atomic_fetch_add_explicit(&kiln_pool.finished, 1, memory_order_acq_rel);
  }
}

static void *kiln_worker(void *arg) {
  (void)arg;
  uint64_t seen = 0;
  kiln_in_parallel_body = 1;
  for (;;) {
    uint64_t gen;
    int spins = 0;
    while ((gen = atomic_load_explicit(&kiln_pool.claim, memory_order_acquire) >> KILN_GEN_SHIFT) == seen) {
      if (++spins < KILN_SPIN_ROUNDS) {
        kiln_cpu_relax();
        continue;
      }
      pthread_mutex_lock(&kiln_pool.sleep_lock);
      while ((atomic_load_explicit(&kiln_pool.claim, memory_order_acquire) >> KILN_GEN_SHIFT) == seen)
        pthread_cond_wait(&kiln_pool.wake, &kiln_pool.sleep_lock);
      pthread_mutex_unlock(&kiln_pool.sleep_lock);
    }
    seen = gen;
    kiln_run_chunks(gen);
  }
  return NULL;
}

static int64_t kiln_env_int(const char *name, int64_t fallback) {
  const char *text = getenv(name);
  if (text == NULL || *text == '\0')
    return fallback;
  char *end;
  long long v = strtoll(text, &end, 10);
  return (*end == '\0' && v >= 0) ? (int64_t)v : fallback;
}

/* Settings read once from the environment (the pool starts later, at the
 * first loop that runs in parallel). */
static pthread_once_t kiln_settings_once = PTHREAD_ONCE_INIT;
static int64_t kiln_settings_threads, kiln_settings_min_work;

static void kiln_read_settings(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    cpus = CPU_COUNT(&set);
#endif
  int64_t want = kiln_env_int("KILN_NUM_THREADS", cpus > 0 ? cpus : 1);
  kiln_settings_threads = want < 1 ? 1 : (want > KILN_MAX_THREADS ? KILN_MAX_THREADS : want);
  kiln_settings_min_work = kiln_env_int("KILN_PARALLEL_MIN_WORK", 32768);
}

static void kiln_pool_after_fork(void) {
  /* The child has only the forking thread: forget the workers. */
  kiln_pool.nthreads = 1;
  kiln_pool_once = (pthread_once_t)PTHREAD_ONCE_INIT;
  pthread_mutex_init(&kiln_pool.dispatch, NULL);
  pthread_mutex_init(&kiln_pool.sleep_lock, NULL);
  pthread_cond_init(&kiln_pool.wake, NULL);
}

static void kiln_pool_start(void) {
  pthread_once(&kiln_settings_once, kiln_read_settings);
  int64_t want = kiln_settings_threads;
  kiln_pool.nthreads = 1;
  for (int w = 1; w < want; w++) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int failed = pthread_create(&thread, &attr, kiln_worker, NULL);
    pthread_attr_destroy(&attr);
    if (failed)
      break; /* run with the workers that did start */
    kiln_pool.nthreads = w + 1;
  }
  pthread_atfork(NULL, NULL, kiln_pool_after_fork);
}

/* The least work (innermost iterations) a loop needs to be handed to
 * kiln_parallel_for; compiled code runs smaller loops inline. */
int64_t kiln_parallel_min_work(void) {
  pthread_once(&kiln_settings_once, kiln_read_settings);
  return kiln_settings_threads < 2 ? INT64_MAX : kiln_settings_min_work;
}

/* The number of threads parallel loops of this library use (1 = serial). */
int64_t kiln_num_threads(void) {
  pthread_once(&kiln_pool_once, kiln_pool_start);
  return kiln_pool.nthreads;
}

void kiln_parallel_for(kiln_body_fn fn, void *ctx, int64_t lo, int64_t hi, int64_t work) {
  if (hi - lo < 2 || kiln_in_parallel_body) {
    fn(ctx, lo, hi);
    return;
  }
  pthread_once(&kiln_pool_once, kiln_pool_start);
  if (kiln_pool.nthreads < 2 || work < kiln_settings_min_work || pthread_mutex_trylock(&kiln_pool.dispatch) != 0) {
    fn(ctx, lo, hi);
    return;
  }
  int64_t nchunks = (int64_t)kiln_pool.nthreads * KILN_CHUNKS_PER_THREAD; /* <= 256 */
  if (nchunks > hi - lo)
    nchunks = hi - lo;
  kiln_pool.fn = fn;
  kiln_pool.ctx = ctx;
  kiln_pool.lo = lo;
  kiln_pool.hi = hi;
  atomic_store_explicit(&kiln_pool.finished, 0, memory_order_relaxed);
  uint64_t gen = ((atomic_load_explicit(&kiln_pool.claim, memory_order_relaxed) >> KILN_GEN_SHIFT) + 1) & 0xffffffffu;
  pthread_mutex_lock(&kiln_pool.sleep_lock);
  atomic_store_explicit(&kiln_pool.claim, (gen << KILN_GEN_SHIFT) | ((uint64_t)nchunks << KILN_COUNT_SHIFT),
                        memory_order_release);
  pthread_cond_broadcast(&kiln_pool.wake);
  pthread_mutex_unlock(&kiln_pool.sleep_lock);

  kiln_in_parallel_body = 1;
  kiln_run_chunks(gen);
  kiln_in_parallel_body = 0;
  /* Only chunks a worker has claimed can still be running. */
  while (atomic_load_explicit(&kiln_pool.finished, memory_order_acquire) < nchunks)
    kiln_cpu_relax();
  pthread_mutex_unlock(&kiln_pool.dispatch);
}

/* ---- debug_print ---------------------------------------------------------
 *
 * kiln-lower-prints turns each kiln.print into kiln_print_begin(), one
 * kiln_print_word per 64-bit word of its record (per value: rank, dims,
 * then the elements in row-major order; integers and bools widened, floats
 * by their bits, complex as real then imaginary) and kiln_print_emit(text),
 * where text is a constant of the library: the values' NumPy dtype names,
 * space separated, a newline, then the format (Python str.format with
 * numbered fields). The Python runtime installs a hook that formats the
 * values as NumPy prints them onto sys.stdout; a library called from C has
 * none, and kiln_print_plain writes the record to stdout with printf
 * formats instead (format specs ignored). The record is per thread.
 */
#include <math.h>
#include <string.h>

typedef void (*kiln_print_hook_fn)(const char *text, const int64_t *words, int64_t count);

static kiln_print_hook_fn kiln_print_hook;
static __thread int64_t *kiln_print_words;
static __thread int64_t kiln_print_count, kiln_print_capacity;

void kiln_set_print_hook(kiln_print_hook_fn hook) { kiln_print_hook = hook; }

static void kiln_print_reset(void) {
  free(kiln_print_words);
  kiln_print_words = NULL;
  kiln_print_count = kiln_print_capacity = 0;
}

/* A record left by a call that unwound (a failed check) is dropped here. */
void kiln_print_begin(void) { kiln_print_reset(); }

void kiln_print_word(int64_t word) {
  if (kiln_print_count == kiln_print_capacity) {
    int64_t capacity = kiln_print_capacity ? 2 * kiln_print_capacity : 64;
    int64_t *words = realloc(kiln_print_words, (size_t)capacity * sizeof(int64_t));
    if (words == NULL) {
      kiln_print_reset();
      kiln_check_failed(KILN_OUT_OF_MEMORY, NULL, capacity * (int64_t)sizeof(int64_t), 0);
    }
    kiln_print_words = words;
    kiln_print_capacity = capacity;
  }
  kiln_print_words[kiln_print_count++] = word;
}

/* One element of dtype kind `kind` ('b', 'i', 'u', 'f', 'c') and `bits`
 * per part; returns the words it used. */
static int64_t kiln_print_scalar(char kind, int bits, const int64_t *words) {
  uint64_t word = (uint64_t)words[0];
  uint64_t mask = bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
  if (kind == 'b') {
    fputs(word ? "True" : "False", stdout);
  } else if (kind == 'i') {
    printf("%lld", (long long)words[0]);
  } else if (kind == 'u') {
    printf("%llu", (unsigned long long)(word & mask));
  } else if (kind == 'f' || kind == 'c') {
    double parts[2];
    for (int p = 0; p < (kind == 'c' ? 2 : 1); ++p) {
      uint64_t bits_of = (uint64_t)words[p] & mask;
      if (bits == 64) {
        memcpy(&parts[p], &bits_of, sizeof(double));
      } else if (bits == 32) {
        float f;
        uint32_t b32 = (uint32_t)bits_of;
        memcpy(&f, &b32, sizeof(float));
        parts[p] = f;
      } else { /* binary16 */
        int exponent = (int)((bits_of >> 10) & 0x1f);
        double magnitude = exponent == 0 ? ldexp((double)(bits_of & 0x3ff), -24)
                           : exponent == 31 ? ((bits_of & 0x3ff) ? NAN : INFINITY)
                                            : ldexp((double)((bits_of & 0x3ff) | 0x400), exponent - 25);
        parts[p] = (bits_of & 0x8000) ? -magnitude : magnitude;
      }
    }
    if (kind == 'c')
      printf("(%g%+gj)", parts[0], parts[1]);
    else
      printf("%g", parts[0]);
    return kind == 'c' ? 2 : 1;
  }
  return 1;
}

/* Elements of dims `dims[0..rank)` in brackets, as nested lists. */
static const int64_t *kiln_print_nested(char kind, int bits, int64_t rank, const int64_t *dims,
                                        const int64_t *words) {
  if (rank == 0)
    return words + kiln_print_scalar(kind, bits, words);
  putchar('[');
  for (int64_t i = 0; i < dims[0]; ++i) {
    if (i)
      putchar(' ');
    words = kiln_print_nested(kind, bits, rank - 1, dims + 1, words);
  }
  putchar(']');
  return words;
}

static void kiln_print_plain(const char *text, const int64_t *words, int64_t count) {
  enum { MAX_VALUES = 64 };
  char kinds[MAX_VALUES];
  int bits[MAX_VALUES];
  const int64_t *starts[MAX_VALUES];
  int nvalues = 0;
  /* The dtype line: "float64 uint8 ...". */
  while (*text && *text != '\n') {
    char name[32];
    int length = 0;
    while (*text == ' ')
      ++text;
    while (*text && *text != ' ' && *text != '\n' && length < 31)
      name[length++] = *text++;
    name[length] = 0;
    if (length == 0 || nvalues == MAX_VALUES)
      continue;
    const char *digits = name + strcspn(name, "0123456789");
    kinds[nvalues] = name[0] == 'b' ? 'b' : name[0] == 'i' ? 'i' : name[0] == 'u' ? 'u' : name[0] == 'f' ? 'f' : 'c';
    bits[nvalues] = kinds[nvalues] == 'b' ? 8 : kinds[nvalues] == 'c' ? atoi(digits) / 2 : atoi(digits);
    ++nvalues;
  }
  if (*text == '\n')
    ++text;
  /* Where each value's record starts. */
  const int64_t *cursor = words, *end = words + count;
  int recorded = 0;
  for (; recorded < nvalues && cursor < end; ++recorded) {
    int v = recorded;
    starts[v] = cursor;
    int64_t rank = cursor[0], elements = 1;
    for (int64_t d = 0; d < rank; ++d)
      elements *= cursor[1 + d];
    cursor += 1 + rank + elements * (kinds[v] == 'c' ? 2 : 1);
  }
  for (; *text; ++text) {
    if ((text[0] == '{' && text[1] == '{') || (text[0] == '}' && text[1] == '}')) {
      putchar(*text++);
      continue;
    }
    if (*text != '{') {
      putchar(*text);
      continue;
    }
    int v = atoi(text + 1);
    while (*text && *text != '}')
      ++text;
    if (v < recorded)
      kiln_print_nested(kinds[v], bits[v], starts[v][0], starts[v] + 1, starts[v] + 1 + starts[v][0]);
    if (!*text)
      break;
  }
  putchar('\n');
  fflush(stdout);
}

void kiln_print_emit(const char *text) {
  if (kiln_print_hook)
    kiln_print_hook(text, kiln_print_words, kiln_print_count);
  else
    kiln_print_plain(text, kiln_print_words, kiln_print_count);
  kiln_print_reset();
}
