/* kiln runtime support, linked into every compiled library.
 *
 * kiln_invoke calls a compiled entry point (its packed form, void **args)
 * under setjmp; a failed run-time check calls kiln_check_failed, which
 * records the check id and two values and unwinds back to kiln_invoke, so
 * no code after a failed check runs. State is per thread.
 */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static __thread jmp_buf *kiln_active_jmp;
static __thread int64_t kiln_failure[3];

void kiln_check_failed(int64_t check_id, int64_t value0, int64_t value1) {
  kiln_failure[0] = check_id;
  kiln_failure[1] = value0;
  kiln_failure[2] = value1;
  if (kiln_active_jmp == NULL) {
    fprintf(stderr, "kiln: run-time check %lld failed (values %lld, %lld) outside kiln_invoke\n",
            (long long)check_id, (long long)value0, (long long)value1);
    abort();
  }
  longjmp(*kiln_active_jmp, 1);
}

/* Heap allocation of the compiled code (finalize-memref-to-llvm with
 * use-generic-functions calls these instead of malloc/free). An allocation
 * that fails, e.g. for a huge or negative computed size, unwinds like a failed
 * check with id KILN_OUT_OF_MEMORY (the runtime raises MemoryError) instead of
 * letting the code write through a null pointer. */
#define KILN_OUT_OF_MEMORY (-1)

void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *p = malloc(size);
  if (p == NULL && size != 0)
    kiln_check_failed(KILN_OUT_OF_MEMORY, (int64_t)size, 0);
  return p;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size) != 0)
    p = NULL;
  if (p == NULL && size != 0)
    kiln_check_failed(KILN_OUT_OF_MEMORY, (int64_t)size, 0);
  return p;
}

void _mlir_memref_to_llvm_free(void *p) { free(p); }

/* Returns 0 on success, else the failing check id (failure[0..2] filled). */
int64_t kiln_invoke(void (*packed)(void **), void **args, int64_t *failure) {
  jmp_buf here;
  jmp_buf *outer = kiln_active_jmp;
  kiln_active_jmp = &here;
  if (setjmp(here)) {
    kiln_active_jmp = outer;
    failure[0] = kiln_failure[0];
    failure[1] = kiln_failure[1];
    failure[2] = kiln_failure[2];
    return failure[0];
  }
  packed(args);
  kiln_active_jmp = outer;
  return 0;
}
