/* The one rule for the structs a caller fills in (rp_exec_opts,
 * rp_read_opts, rp_analysis_opts, rp_model_opts, rp_op_opts, rp_kernel:
 * record/kernel_in.c; docs/design.md, "Versioned structs"): the first
 * member is
 * `size_t size`, which the type's init function or INIT macro sets to
 * sizeof the struct as the caller was compiled. The library
 *   - refuses size 0: a struct zero-filled without its init (an older
 *     rule read 0 as "this header's size", and so read an older binary's
 *     struct past its end);
 *   - refuses a size below the first released layout's, or above its
 *     own (a header newer than the library);
 *   - reads the caller's first `size` bytes over its own defaults, so
 *     that a member the caller's header did not have keeps its default;
 *   - writes back (the functions that fill a caller's struct in) no more
 *     than the caller's `size` bytes. */
#include <string.h>
#include "core/core.h"

rp_status rp__versioned_load(void *dst, size_t have, const void *src,
                             size_t min, const char *what) {
  size_t n;
  memcpy(&n, src, sizeof n);
  if (n == 0) {
    rp__set_last_errorf("%s: size is 0: initialise it with its _init "
                        "function or _INIT macro (it sets the size)",
                        what);
    return RP_EINVAL;
  }
  if (n < min || n > have) {
    rp__set_last_errorf("%s: size %zu is not a size of this struct that "
                        "this library knows (%zu to %zu bytes)",
                        what, n, min, have);
    return RP_EINVAL;
  }
  memcpy(dst, src, n);
  memcpy(dst, &have, sizeof have);
  return RP_OK;
}

void rp__versioned_store(void *dst, const void *src) {
  size_t n;
  memcpy(&n, dst, sizeof n);
  memcpy(dst, src, n);
  memcpy(dst, &n, sizeof n);
}
