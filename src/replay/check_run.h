/* Checking mode (replay/check_run.c): running one plan node on shadow
 * images that catch accesses outside its declared regions. */
#ifndef RP_CHECK_RUN_H
#define RP_CHECK_RUN_H

#include "reprise/backend.h"

/* As rp_plan_run_on_host(), a kernel or host task on shadows of its
 * images (copies run as they are): RP_OK (its results written to the
 * images), RP_EACCESS with @p msg naming the operation, the parameter and
 * the byte, RP_ENOKERNEL, RP_ENOMEM. @p cache: the exec's mappings
 * (rp__check_cache_new(plan's nimage)). A failure the body reports stays for
 * rp_task_take_failure(). Not thread-safe with itself: it changes the
 * process' SIGSEGV and SIGBUS handlers while a body runs. */
/* The shadows' mappings, one per plan image, kept across operations. */
typedef struct rp__check_cache rp__check_cache;
rp__check_cache *rp__check_cache_new(uint32_t nimage);
void rp__check_cache_free(rp__check_cache *k);

rp_status rp__run_checked(rp_exec *x, uint32_t node, rp_image_addr_fn addr,
                          void *ctx, void **scratch, rp__check_cache *cache,
                          char *msg, size_t n);

/* The reference replay with every kernel and host task checked: the
 * backend rp_exec_create() runs instead of a CPU backend in checking mode
 * (replay/reference.c). */
extern const rp_backend rp__backend_checked;

#endif
