/* kiln runtime support, linked into every compiled library.
 *
 * kiln_invoke calls a compiled entry point (its packed form, void **args)
 * under setjmp; a failed run-time check calls kiln_check_failed, which
 * records the check's kind code (1 + the position of its exception in
 * kiln.errors.CHECK_ERRORS), two values and the address of its
 * message (a NUL-terminated constant of the compiled library) and unwinds back
 * to kiln_invoke, so no code after a failed check runs. Every buffer the
 * compiled code allocates is recorded until it frees it, so an unwinding call
 * frees what it had allocated: a failed call leaks nothing. Loops of the
 * compiled code poll kiln_interrupt_flag, which a watchdog thread raises while
 * a call of the thread that runs Python's signal handlers lasts; kiln_poll then
 * runs the pending handlers, and one that raises unwinds the call (see
 * "Interrupts" below). State is per thread.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KILN_MAX_WARNINGS 3 /* distinct warning messages reported per call */

/* One thread's calls: the innermost kiln_invoke's jump target, the failure
 * record, the warnings of the call (message addresses), and the buffers the
 * compiled code allocated and has not freed (kiln_invoke owns those from its
 * entry's `live_count` on). */
static __thread struct {
  jmp_buf *active_jmp;
  int64_t failure[4];
  const char *warnings[KILN_MAX_WARNINGS];
  void **live;
  size_t live_count, live_capacity;
} kiln_thread;

void kiln_check_failed(int64_t kind, const char *message, int64_t value0, int64_t value1) {
  kiln_thread.failure[0] = kind;
  kiln_thread.failure[1] = value0;
  kiln_thread.failure[2] = value1;
  kiln_thread.failure[3] = (int64_t)(intptr_t)message;
  if (kiln_thread.active_jmp == NULL) {
    fprintf(stderr, "kiln: run-time check failed outside kiln_invoke: %s (values %lld, %lld)\n",
            message ? message : "(no message)", (long long)value0, (long long)value1);
    abort();
  }
  longjmp(*kiln_thread.active_jmp, 1);
}

/* A check of a warning kind failed (an integer division by zero): remember
 * its message; kiln_invoke reports each distinct one once, after the call. */
void kiln_warn(const char *message) {
  for (int i = 0; i < KILN_MAX_WARNINGS; i++) {
    if (kiln_thread.warnings[i] == message)
      return;
    if (kiln_thread.warnings[i] == NULL) {
      kiln_thread.warnings[i] = message;
      return;
    }
  }
}

/* Heap allocation of the compiled code (finalize-memref-to-llvm with
 * use-generic-functions calls these instead of malloc/free). An allocation
 * that fails, e.g. for a huge or negative computed size, unwinds like a failed
 * check of kind KILN_OUT_OF_MEMORY (the runtime raises MemoryError) instead of
 * letting the code write through a null pointer. */
#define KILN_OUT_OF_MEMORY (-1)
/* A Python signal handler raised while the call ran: failure[1..3] hold the
 * exception's (type, value, traceback) references, for PyErr_Restore. */
#define KILN_PYTHON_ERROR (-2)

/* Record a fresh buffer of a call in progress (outside kiln_invoke nothing can
 * unwind, so nothing is recorded). */
static void *kiln_track(void *p, size_t size) {
  if (p == NULL) {
    if (size != 0)
      kiln_check_failed(KILN_OUT_OF_MEMORY, NULL, (int64_t)size, 0);
    return p;
  }
  if (kiln_thread.active_jmp == NULL)
    return p;
  if (kiln_thread.live_count == kiln_thread.live_capacity) {
    size_t capacity = kiln_thread.live_capacity ? 2 * kiln_thread.live_capacity : 64;
    void **grown = realloc(kiln_thread.live, capacity * sizeof(void *));
    if (grown == NULL) {
      free(p);
      kiln_check_failed(KILN_OUT_OF_MEMORY, NULL, (int64_t)(capacity * sizeof(void *)), 0);
    }
    kiln_thread.live = grown;
    kiln_thread.live_capacity = capacity;
  }
  kiln_thread.live[kiln_thread.live_count++] = p;
  return p;
}

void *_mlir_memref_to_llvm_alloc(size_t size) { return kiln_track(malloc(size), size); }

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size) != 0)
    p = NULL;
  return kiln_track(p, size);
}

/* Buffers die mostly in reverse order of birth: search from the newest. */
void _mlir_memref_to_llvm_free(void *p) {
  for (size_t i = kiln_thread.live_count; i-- > 0;) {
    if (kiln_thread.live[i] == p) {
      kiln_thread.live[i] = kiln_thread.live[--kiln_thread.live_count];
      break;
    }
  }
  free(p);
}

/* ---- Interrupts -------------------------------------------------------------
 *
 * Python runs signal handlers (SIGINT's KeyboardInterrupt, a handler of
 * signal.alarm) in its main thread, between bytecodes: never while that thread
 * is inside compiled code, which runs with the GIL released. So kiln-poll-interrupts
 * puts into every loop of the compiled code a volatile load of
 * kiln_interrupt_flag and, when it is set, a call of kiln_poll. The flag is
 * raised by a watchdog thread every KILN_WATCH_NANOS while one call of the
 * main thread lasts (short calls never see it); kiln_poll takes the GIL, runs
 * the pending handlers (PyErr_CheckSignals) and, if one raised, unwinds the
 * call like a failed check (its buffers freed) with the exception as the
 * failure. In a tight loop the poll is a load and a branch never taken.
 *
 * The runtime hands every library it loads one process-wide block (the
 * functions of the Python C API it needs, the main thread's id) through
 * kiln_set_interrupt_hooks; libraries called without it (kiln.export from C)
 * never raise the flag. The block also holds what the libraries share: the flag
 * of the call the main thread is in, a count of its calls, the watchdog state.
 */
#define KILN_WATCH_NANOS 20000000L /* 20 ms */
#define KILN_WATCH_IDLE_TICKS 50   /* park after 1 s without a call of the main thread */

enum { KILN_WATCHDOG_NONE, KILN_WATCHDOG_RUNNING, KILN_WATCHDOG_PARKED };

typedef struct {
  /* Filled by the runtime (runtime/executable.py: interrupt_hooks). */
  int (*gil_ensure)(void);       /* PyGILState_Ensure */
  void (*gil_release)(int);      /* PyGILState_Release */
  int (*check_signals)(void);    /* PyErr_CheckSignals */
  void (*fetch_error)(void **, void **, void **); /* PyErr_Fetch */
  uint64_t main_thread;          /* pthread_self() of Python's main thread */
  /* Shared by the libraries. */
  volatile int32_t *active_flag; /* kiln_interrupt_flag of the main thread's call, or NULL */
  uint64_t calls;                /* main-thread calls started */
  int64_t watchdog;              /* KILN_WATCHDOG_* */
  void (*wake_watchdog)(void);   /* in the library whose watchdog runs */
  /* Filled by the runtime (later than the words above, so older libraries still agree). */
  void *(*capsule_pointer)(void *, const char *); /* PyCapsule_GetPointer */
  /* Shared by the libraries. */
  uint64_t released;             /* buffers kiln_release_buffer freed */
} kiln_interrupt_hooks;

volatile int32_t kiln_interrupt_flag;
static kiln_interrupt_hooks *kiln_hooks;
static pthread_mutex_t kiln_watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kiln_watch_wake = PTHREAD_COND_INITIALIZER;

void kiln_set_interrupt_hooks(kiln_interrupt_hooks *hooks) { kiln_hooks = hooks; }

static void *kiln_watchdog(void *arg) {
  kiln_interrupt_hooks *h = arg;
  uint64_t seen_calls = UINT64_MAX;
  int idle_ticks = 0;
  for (;;) {
    struct timespec tick = {0, KILN_WATCH_NANOS};
    nanosleep(&tick, NULL);
    volatile int32_t *flag = __atomic_load_n(&h->active_flag, __ATOMIC_SEQ_CST);
    uint64_t calls = __atomic_load_n(&h->calls, __ATOMIC_SEQ_CST);
    if (flag != NULL && calls == seen_calls)
      *flag = 1; /* the same call since the last tick: let it poll */
    seen_calls = calls;
    idle_ticks = flag != NULL ? 0 : idle_ticks + 1;
    if (idle_ticks < KILN_WATCH_IDLE_TICKS)
      continue;
    /* Park. A call that starts meanwhile either sees PARKED and wakes us, or
     * published its flag before we look again below (both sides seq_cst). */
    pthread_mutex_lock(&kiln_watch_lock);
    __atomic_store_n(&h->watchdog, KILN_WATCHDOG_PARKED, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&h->active_flag, __ATOMIC_SEQ_CST) == NULL) {
      while (__atomic_load_n(&h->watchdog, __ATOMIC_SEQ_CST) == KILN_WATCHDOG_PARKED)
        pthread_cond_wait(&kiln_watch_wake, &kiln_watch_lock);
    }
    __atomic_store_n(&h->watchdog, KILN_WATCHDOG_RUNNING, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&kiln_watch_lock);
    idle_ticks = 0;
  }
  return NULL;
}

static void kiln_wake_watchdog(void) {
  pthread_mutex_lock(&kiln_watch_lock);
  __atomic_store_n(&kiln_hooks->watchdog, KILN_WATCHDOG_RUNNING, __ATOMIC_SEQ_CST);
  pthread_cond_signal(&kiln_watch_wake);
  pthread_mutex_unlock(&kiln_watch_lock);
}

/* The child of fork() has no watchdog, and its main thread is the one that forked. */
static void kiln_watchdog_after_fork(void) {
  pthread_mutex_init(&kiln_watch_lock, NULL);
  pthread_cond_init(&kiln_watch_wake, NULL);
  kiln_hooks->active_flag = NULL;
  kiln_hooks->watchdog = KILN_WATCHDOG_NONE;
  kiln_hooks->main_thread = (uint64_t)pthread_self();
}

static void kiln_start_watchdog(kiln_interrupt_hooks *h) {
  int64_t none = KILN_WATCHDOG_NONE;
  if (!__atomic_compare_exchange_n(&h->watchdog, &none, KILN_WATCHDOG_RUNNING, 0, __ATOMIC_SEQ_CST,
                                   __ATOMIC_SEQ_CST))
    return;
  h->wake_watchdog = kiln_wake_watchdog;
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&thread, &attr, kiln_watchdog, h) == 0)
    pthread_atfork(NULL, NULL, kiln_watchdog_after_fork);
  else
    __atomic_store_n(&h->watchdog, KILN_WATCHDOG_NONE, __ATOMIC_SEQ_CST); /* no interrupts, still correct */
  pthread_attr_destroy(&attr);
}

/* Called by compiled loops when kiln_interrupt_flag is set. */
void kiln_poll(void) {
  kiln_interrupt_flag = 0;
  kiln_interrupt_hooks *h = kiln_hooks;
  if (h == NULL || kiln_thread.active_jmp == NULL || (uint64_t)pthread_self() != h->main_thread)
    return;
  int gil = h->gil_ensure();
  void *type = NULL, *value = NULL, *traceback = NULL;
  int raised = h->check_signals() != 0;
  if (raised)
    h->fetch_error(&type, &value, &traceback);
  h->gil_release(gil);
  if (raised) {
    kiln_thread.failure[0] = KILN_PYTHON_ERROR;
    kiln_thread.failure[1] = (int64_t)(intptr_t)type;
    kiln_thread.failure[2] = (int64_t)(intptr_t)value;
    kiln_thread.failure[3] = (int64_t)(intptr_t)traceback;
    longjmp(*kiln_thread.active_jmp, 1);
  }
}

/* The destructor of the capsule that owns a result buffer on the runtime's
 * Python call path (runtime/memref.py, OwnedBuffer): the buffer is freed
 * without running Python code, so a KeyboardInterrupt can never land in (and
 * be swallowed by) the owner's death. Called with the GIL held. */
#define KILN_BUFFER_CAPSULE "kiln.buffer"
void kiln_release_buffer(void *capsule) {
  kiln_interrupt_hooks *h = kiln_hooks;
  if (h == NULL || h->capsule_pointer == NULL)
    return; /* never: the runtime makes these capsules only after handing over the hooks */
  free(h->capsule_pointer(capsule, KILN_BUFFER_CAPSULE));
  __atomic_add_fetch(&h->released, 1, __ATOMIC_RELAXED);
}

/* Returns 0 on success, else the failed check's kind code, with failure[0..3]
 * = (kind, value0, value1, message address). On success failure[0] is 0 and
 * failure[1..3] hold the messages of the warnings the call raised (0: none).
 * On success the buffers the call still holds are its results (the caller's);
 * on failure they are freed. */
int64_t kiln_invoke(void (*packed)(void **), void **args, int64_t *failure) {
  jmp_buf here;
  jmp_buf *outer = kiln_thread.active_jmp;
  size_t first_live = kiln_thread.live_count;
  const char *outer_warnings[KILN_MAX_WARNINGS];
  for (int i = 0; i < KILN_MAX_WARNINGS; i++) {
    outer_warnings[i] = kiln_thread.warnings[i];
    kiln_thread.warnings[i] = NULL;
  }
  kiln_interrupt_hooks *h = kiln_hooks;
  int watched = h != NULL && (uint64_t)pthread_self() == h->main_thread;
  volatile int32_t *outer_flag = NULL;
  if (watched) {
    outer_flag = h->active_flag;
    __atomic_store_n(&h->active_flag, &kiln_interrupt_flag, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&h->calls, 1, __ATOMIC_RELAXED);
    int64_t state = __atomic_load_n(&h->watchdog, __ATOMIC_SEQ_CST);
    if (state == KILN_WATCHDOG_NONE)
      kiln_start_watchdog(h);
    else if (state == KILN_WATCHDOG_PARKED)
      h->wake_watchdog();
  }
  kiln_thread.active_jmp = &here;
  if (setjmp(here)) {
    kiln_thread.active_jmp = outer;
    if (watched)
      __atomic_store_n(&h->active_flag, outer_flag, __ATOMIC_SEQ_CST);
    for (size_t i = first_live; i < kiln_thread.live_count; i++)
      free(kiln_thread.live[i]);
    kiln_thread.live_count = first_live;
    for (int i = 0; i < KILN_MAX_WARNINGS; i++)
      kiln_thread.warnings[i] = outer_warnings[i];
    for (int i = 0; i < 4; i++)
      failure[i] = kiln_thread.failure[i];
    return failure[0];
  }
  packed(args);
  kiln_thread.active_jmp = outer;
  if (watched)
    __atomic_store_n(&h->active_flag, outer_flag, __ATOMIC_SEQ_CST);
  kiln_thread.live_count = first_live;
  failure[0] = 0;
  for (int i = 0; i < KILN_MAX_WARNINGS; i++) {
    failure[1 + i] = (int64_t)(intptr_t)kiln_thread.warnings[i];
    kiln_thread.warnings[i] = outer_warnings[i];
  }
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
 * Dispatch backs off under load. A worker that claimed a chunk and was then
 * descheduled by the OS (other processes on the cores) holds the caller up
 * for up to a time slice: on a loaded 2-core machine that made loops of
 * ~80k iterations several times slower than serial (docs/benchmarks.md,
 * "Parallel dispatch under load"). So each dispatch times the caller's own
 * chunks and its wait for the workers' ones; when the wait exceeded what the
 * workers' chunks would have cost the caller (the loop ran slower than it
 * would have serially), the next loops of the library run serially for a
 * back-off period (1 ms, doubling with each loss up to 1 s; a dispatch
 * that pays off halves it). A time loop of parallel statements
 * thus turns serial as a whole after one lost dispatch, and tries threads
 * again after the period (KILN_PARALLEL_BACKOFF=0: never back off). While it
 * waits, the caller spins briefly and then yields its core (a descheduled
 * worker may be waiting for that core).
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
#define KILN_WAIT_SPINS 2000                 /* pauses before the caller yields */
#define KILN_BACKOFF_MIN_NS INT64_C(1000000) /* 1 ms */
#define KILN_BACKOFF_MAX_NS INT64_C(1000000000)

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
  /* Back-off (read and written under `dispatch`, or read racily as a hint):
   * loops run serially until `serial_until` (CLOCK_MONOTONIC ns); `backoff`
   * is the next period. */
  int64_t serial_until;
  int64_t backoff;
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

static int64_t kiln_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Runs chunks of generation `gen` until none is left; returns how many. */
static int64_t kiln_run_chunks(uint64_t gen) {
  int64_t chunk, nchunks, ran = 0;
  while ((chunk = kiln_claim(gen, &nchunks)) >= 0) {
    ran++;
    /* An unfinished claimed chunk keeps the job (fn/ctx/lo/hi) in place:
     * the caller waits for it before it publishes another job. */
    int64_t n = kiln_pool.hi - kiln_pool.lo;
    int64_t lo = kiln_pool.lo + n * chunk / nchunks;
    int64_t hi = kiln_pool.lo + n * (chunk + 1) / nchunks;
    if (lo < hi)
      kiln_pool.fn(kiln_pool.ctx, lo, hi);
    atomic_fetch_add_explicit(&kiln_pool.finished, 1, memory_order_acq_rel);
  }
  return ran;
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
static int64_t kiln_settings_threads, kiln_settings_min_work, kiln_settings_backoff;

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
  kiln_settings_backoff = kiln_env_int("KILN_PARALLEL_BACKOFF", 1);
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

/* The least work (innermost iterations) a loop nest inside a loop needs to
 * be handed to kiln_parallel_for; compiled code runs smaller nests inline.
 * Only nests in loops ask (once per call of the compiled function): each
 * iteration then pays a dispatch and a wait for the workers' chunks, and on
 * the 2-core machine of docs/benchmarks.md ("Parallel dispatch in time
 * loops") statements of 55k-61k iterations ran 2-5x faster serially while
 * 121k ran 2x faster in parallel, so the bar is twice KILN_PARALLEL_MIN_WORK. */
int64_t kiln_parallel_min_work(void) {
  pthread_once(&kiln_settings_once, kiln_read_settings);
  if (kiln_settings_threads < 2)
    return INT64_MAX;
  return kiln_settings_min_work > INT64_MAX / 2 ? INT64_MAX : 2 * kiln_settings_min_work;
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
  int64_t start = kiln_now_ns();
  if (start < kiln_pool.serial_until) {
    pthread_mutex_unlock(&kiln_pool.dispatch);
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
  int64_t own = kiln_run_chunks(gen);
  kiln_in_parallel_body = 0;
  /* Only chunks a worker has claimed can still be running. */
  int64_t ran = kiln_now_ns();
  for (int spins = 0; atomic_load_explicit(&kiln_pool.finished, memory_order_acquire) < nchunks; spins++) {
    if (spins < KILN_WAIT_SPINS)
      kiln_cpu_relax();
    else
      sched_yield();
  }
  int64_t done = kiln_now_ns();
  /* What the workers' chunks would have cost the caller, at its own rate
   * (all of them if it ran none: the workers were fast, a win). */
  int64_t serial_rest = own > 0 ? (ran - start) / own * (nchunks - own) : INT64_MAX;
  if (kiln_settings_backoff && done - ran > serial_rest) {
    int64_t period = kiln_pool.backoff < KILN_BACKOFF_MIN_NS ? KILN_BACKOFF_MIN_NS : kiln_pool.backoff;
    kiln_pool.serial_until = done + period;
    kiln_pool.backoff = period < KILN_BACKOFF_MAX_NS / 2 ? 2 * period : KILN_BACKOFF_MAX_NS;
  } else {
    kiln_pool.backoff /= 2; /* under steady load losses recur: forget them slowly */
  }
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

/* ---- Sorting ----------------------------------------------------------------
 * The routines `kiln.sort` lowers to (kiln-lower-sorts) live in sort.c, which
 * is not part of this file: it is compiled on demand, one object per dtype,
 * and linked only into the libraries that sort that dtype (runtime/toolchain.py,
 * `sort_object`). It reaches the thread pool through kiln_parallel_for and this. */

/* Whether splitting `work` units of a call across the pool is worth it now:
 * not inside a parallel body, more than one thread, at least the minimum
 * work, and the pool not backing off under load (a racy read: a hint). */
int kiln_parallel_worth(int64_t work) {
  if (kiln_in_parallel_body || kiln_num_threads() < 2)
    return 0;
  pthread_once(&kiln_settings_once, kiln_read_settings);
  if (work < kiln_settings_min_work)
    return 0;
  return kiln_now_ns() >= kiln_pool.serial_until;
}

/* ---- Size-1 broadcasts -------------------------------------------------------
 * The copy the size-1 path of a broadcast calls (kiln-legalize-dynamic)
 * lives in broadcast.c. */
#include "broadcast.c"

/* ---- Matrix-vector pairs -----------------------------------------------------
 * `A @ x` and `u @ A` in one pass over A (kiln-pair-matvecs) live in
 * matvec.c. */
#include "matvec.c"
