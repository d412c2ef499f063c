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
